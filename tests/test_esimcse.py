"""ESimCSE (Wu et al., COLING 2022): the word-repetition rule and its rate, the momentum queue's
order and size, the EMA update, no gradient into the momentum encoder, the loss by hand, and
training through the CLI (alone and combined with MixCSE), saved and resumed, never exported."""
from __future__ import annotations

import json
import math
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
import yaml
from safetensors.torch import load_file
from torch import nn

from cselab.cli import main
from cselab.model.config import ConfigError, load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.io import read_jsonl
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.methods import METHODS, display_names
from cselab.model.methods.esimcse import (ESimCSE, ESimCSEParams, draw_repeated_positions, repeat_tokens,
                                    repetition_bounds, word_repetition)

TAU = 0.05


# ============================================================================ word repetition
@pytest.mark.parametrize("n, rule, bounds", [
    (10, "paper", (0, 3)),      # max(2, int(0.32·10) = 3)
    (3, "paper", (0, 2)),       # max(2, int(0.96) = 0) = 2
    (1, "paper", (0, 1)),       # never more than the one subword there is
    (10, "official", (0, 2)),   # randrange(min(10, int(0.32·12) = 3)) → 0…2
    (3, "official", (0, 0)),    # int(0.32·5) = 1 → randrange(1) = 0
    (100, "official", (0, 9)),  # capped at 10 → 0…9
])
def test_repetition_bounds_by_hand(n, rule, bounds):
    assert repetition_bounds(n, 0.32, rule) == bounds


def test_repetition_count_is_uniform_and_positions_uniform_without_replacement():
    g = torch.Generator().manual_seed(0)
    draws = [draw_repeated_positions(10, 0.32, "paper", g) for _ in range(4000)]
    counts = Counter(len(d) for d in draws)
    assert sorted(counts) == [0, 1, 2, 3]
    for k in range(4):   # uniform on {0, 1, 2, 3}: 1000 each, binomial sd ≈ 27
        assert abs(counts[k] - 1000) < 120, counts
    assert all(len(set(d)) == len(d) and all(0 <= i < 10 for i in d) for d in draws)
    # each subword is doubled with probability E[dup_len] / N = 1.5 / 10: 600 of 4000, sd ≈ 23
    per_index = Counter(i for d in draws for i in d)
    assert all(abs(per_index[i] - 600) < 100 for i in range(10)), per_index


def test_repeat_tokens_doubles_in_place():
    assert repeat_tokens([101, 7, 8, 9, 102], {1, 3}) == [101, 7, 7, 8, 9, 9, 102]
    assert repeat_tokens([101, 7, 102], set()) == [101, 7, 102]


def test_special_tokens_and_padding_are_never_repeated():
    g = torch.Generator().manual_seed(1)
    ids = torch.tensor([[101, 7, 8, 102, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    seen = set()
    for _ in range(200):
        row = word_repetition(ids, mask, {0, 101, 102}, 1.0, "paper", g)[0]
        assert row[0] == 101 and row[-1] == 102 and row.count(101) == 1 and row.count(102) == 1 and 0 not in row
        assert row[1:-1] in ([7, 8], [7, 7, 8], [7, 8, 8], [7, 7, 8, 8])
        seen.add(tuple(row))
    assert len(seen) == 4   # N = 2: dup_len ∈ {0, 1, 2}, every subset reached


def test_build_views_repeats_view_2_only(tiny_model):
    encoder = SentenceEncoder.from_pretrained(tiny_model)
    loss_fn = ContrastiveLoss(TAU, [ESimCSE(ESimCSEParams(dup_rate=0.5, queue_size=0),
                                            generator=torch.Generator().manual_seed(0))])
    loss_fn.setup(encoder)
    sentences = ["a cat sat on the mat", "dogs bark loudly at night", "rain"]
    plain = encoder.training_inputs(sentences, 32)
    views = loss_fn.training_inputs(encoder, sentences, 32)
    n = len(sentences)
    for i in range(n):
        original = plain["input_ids"][i][plain["attention_mask"][i].bool()].tolist()
        assert views["input_ids"][i][views["attention_mask"][i].bool()].tolist() == original   # view 1 as it is
        repeated = views["input_ids"][n + i][views["attention_mask"][n + i].bool()].tolist()
        deduplicated = [t for j, t in enumerate(repeated) if j == 0 or t != repeated[j - 1]]
        assert deduplicated == [t for j, t in enumerate(original) if j == 0 or t != original[j - 1]]
        assert len(repeated) - len(original) <= max(2, int(0.5 * (len(original) - 2)))
    assert views["input_ids"].shape == views["attention_mask"].shape == views["token_type_ids"].shape


# ============================================================================ momentum queue, by hand
class ToyEncoder(nn.Module):
    """The embedding of a row is a learnt 2-vector of its token at position 1."""

    device = torch.device("cpu")
    tokenizer = SimpleNamespace(all_special_ids=[0, 1], pad_token_id=0)

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.tensor([[0., 0.], [0., 0.], [1., 0.], [0., 1.], [1., 1.], [-1., 0.]]))

    def embedding_dim(self) -> int:
        return 2

    def forward(self, inputs, output_hidden_states=False):
        return SimpleNamespace(embeddings=self.table[inputs["input_ids"][:, 1]])


def _step(encoder, loss_fn, tokens):
    ids = torch.tensor([[1, t] for t in tokens] * 2)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    z = encoder(inputs).embeddings
    n = len(tokens)
    return loss_fn(ContrastiveBatch(z[:n], z[n:], inputs=inputs))


def test_queue_order_size_loss_and_ema_by_hand():
    encoder = ToyEncoder()
    tau = 0.5   # a loss well away from 0, so that fp32 rounding cannot hide an error
    esim = ESimCSE(ESimCSEParams(queue_size=3, momentum=0.5, repeat=False))
    loss_fn = ContrastiveLoss(tau, [esim])
    loss_fn.setup(encoder)

    first = _step(encoder, loss_fn, [2, 3])   # empty queue: plain SimCSE
    assert first.parts == {"info_nce": first.loss}
    assert esim.queue.filled().tolist() == [[1., 0.], [0., 1.]]
    assert first.stats["esimcse.queue_fill"] == pytest.approx(2 / 3)

    second = _step(encoder, loss_fn, [4, 5])  # anchors (1, 1), (−1, 0) against the queue (1, 0), (0, 1)
    r = 1 / math.sqrt(2)
    row0 = -1 / tau + math.log(sum(math.exp(c / tau) for c in (1, -r, r, r)))    # in-batch (1, −r), queue (r, r)
    row1 = -1 / tau + math.log(sum(math.exp(c / tau) for c in (-r, 1, -1, 0)))   # in-batch (−r, 1), queue (−1, 0)
    assert second.loss.item() == pytest.approx((row0 + row1) / 2, rel=1e-5)
    assert (row0 + row1) / 2 == pytest.approx(0.46738, abs=1e-5)
    assert second.stats["esimcse.queue_cos"] == pytest.approx((r + r - 1 + 0) / 4)
    # size 3: the oldest row (1, 0) dropped, the newest last
    assert esim.queue.filled().tolist() == [[0., 1.], [1., 1.], [-1., 0.]]

    # gradients reach the online encoder and nothing of the momentum copy or the queue
    second.loss.backward()
    assert encoder.table.grad is not None and encoder.table.grad[4:].abs().sum() > 0
    assert esim.momentum.copy.table.grad is None and not esim.momentum.copy.table.requires_grad
    assert not esim.queue.entries.requires_grad

    # EMA after the optimizer step: θ_m ← 0.5·θ_m + 0.5·θ
    before = esim.momentum.copy.table.detach().clone()
    with torch.no_grad():
        encoder.table.add_(1.0)
    loss_fn.after_optimizer_step()
    assert torch.allclose(esim.momentum.copy.table, 0.5 * before + 0.5 * encoder.table.detach())
    assert esim.momentum.copy.table[2].tolist() == [1.5, 0.5]   # 0.5·(1, 0) + 0.5·(2, 1)


def test_paper_defaults_and_identity():
    p = ESimCSEParams()
    assert (p.dup_rate, p.queue_size, p.momentum, p.repetition, p.momentum_head) == (
        0.32, 160, 0.995, "paper", "momentum")
    assert display_names()["esimcse"] == "ESimCSE"
    about = METHODS["esimcse"].about
    assert about.cost_factor == pytest.approx(0.05 + 1 / 6)   # its own work plus the momentum pass
    with pytest.raises(ValueError, match="queue_size"):
        load_config({"method": "esimcse", "batch_size": 64, "esimcse": {"queue_size": 32}})
    with pytest.raises(ValueError, match="momentum encoder"):
        load_config({"method": "esimcse", "batch_size": 64, "mini_batch_size": 16})


# ============================================================================ training through the CLI
def _run(tiny_config, tmp_path, data_dir, name, settings, *extra):
    config = tmp_path / f"{name}.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, **settings}))
    assert main(["train", str(config), "max_steps=4", f"run_name={name}", *extra, "--data-dir", str(data_dir)]) == 0
    return tmp_path / "runs" / name


def test_trains_through_the_cli_saves_the_momentum_encoder_and_exports_without_it(tiny_config, tmp_path,
                                                                                  data_dir):
    run = _run(tiny_config, tmp_path, data_dir, "esim",
               {"method": "esimcse", "esimcse": {"queue_size": 32, "dup_rate": 0.32}, "log_every": 1})
    records = [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == "train"]
    assert [r["sim/esimcse.queue_fill"] for r in records] == pytest.approx([0.5, 1.0, 1.0, 1.0])   # 16 per step
    assert "sim/esimcse.queue_cos" not in records[0] and all("sim/esimcse.queue_cos" in r for r in records[1:])
    assert all(math.isfinite(r["loss"]) and r["sim/esimcse.extra_tokens"] >= 0 for r in records)
    state = (run / "last" / "trainer_state.json").read_text()   # the loss's state: resumed with the run
    assert "components.0.momentum.copy.backbone.embeddings.word_embeddings.weight" in state
    assert "components.0.queue.entries" in state
    for folder in (run / "best", run / "last"):   # the exported encoder is the encoder alone
        model = {k for f in ("model.safetensors", "cselab_modules.safetensors") for k in load_file(folder / f)}
        assert "embeddings.word_embeddings.weight" in model and not any("momentum" in k for k in model)
    config = json.loads((run / "config.json").read_text())["config"]
    assert config["method"] == ["esimcse"] and config["esimcse"]["momentum"] == 0.995


def test_combines_with_mixcse(tiny_config, tmp_path, data_dir):
    run = _run(tiny_config, tmp_path, data_dir, "esim-mix",
               {"method": ["esimcse", "mixcse"], "esimcse": {"queue_size": 32}, "log_every": 1})
    last = [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == "train"][-1]
    assert {"loss/info_nce_forward", "loss/info_nce_reverse", "sim/mixcse.mixed_cos",
            "sim/esimcse.queue_cos"} <= set(last)


class _Crash(Exception):
    pass


def test_resume_after_a_kill_gives_the_same_run(tiny_config, data_dir, tmp_path):
    """The momentum encoder, the queue and the repetition's random stream come back with the run:
    a run killed after its step-3 checkpoint and resumed logs what the straight run logs."""
    from cselab.model.train import train

    base = {**tiny_config, "max_sentences": 96, "eval_every": 3, "log_every": 1, "precision": "fp32",
            "eval_precision": "fp32", "method": "esimcse", "esimcse": {"queue_size": 32}}
    straight = train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)

    def kill_at_step_5(state, record):
        if state.step == 5:
            raise _Crash

    cfg = load_config({**base, "output_dir": str(tmp_path / "b")})
    with pytest.raises(_Crash):
        train(cfg, data_dir=data_dir, callbacks=[kill_at_step_5], progress=False)
    resumed = train(cfg, data_dir=data_dir, resume=True, progress=False)
    a, b = list(read_jsonl(straight / "metrics.jsonl")), list(read_jsonl(resumed / "metrics.jsonl"))
    assert [r["step"] for r in a] == [r["step"] for r in b]
    for ra, rb in zip(a, b):
        for key in ra:
            if isinstance(ra[key], float):
                assert ra[key] == pytest.approx(rb[key], abs=1e-6), (ra["step"], key)


def _without_clock(state):
    """A checkpoint's JSON skeleton without its ``train_seconds`` entry (the one clock reading in it)."""
    if isinstance(state, dict) and "__dict__" in state:
        return {k: _without_clock(v) for k, v in state["__dict__"] if k != "train_seconds"}
    if isinstance(state, dict):
        return {k: _without_clock(v) for k, v in state.items()}
    if isinstance(state, list):
        return [_without_clock(v) for v in state]
    return state


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kill_step, during_write", [(2, False), (5, False), (4, True)])
def test_a_resumed_run_equals_the_uninterrupted_one_in_every_file(kill_step, during_write, tiny_config, data_dir,
                                                                  tmp_path, monkeypatch):
    """Every file of the run, last/trainer_state.safetensors included (the momentum copy's unused
    backbone pooler used to be averaged with the online one, which a resume loads from last/, where
    it holds SimCSE's head); only the clock (config.json's created, results.json's train_seconds)
    may differ, and where the run lies."""
    import json

    from cselab.model.train import train

    base = {**tiny_config, "max_sentences": 96, "eval_every": 2, "log_every": 1, "precision": "fp32",
            "eval_precision": "fp32", "method": "esimcse", "esimcse": {"queue_size": 32}, "run_name": "r"}
    straight = train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)

    def kill(state, record):
        if state.step == kill_step:
            raise _Crash

    cfg = load_config({**base, "output_dir": str(tmp_path / "b")})
    if during_write:   # killed while last/ of step 4 is written: its trainer state is in the staging folder
        import cselab.model.train.checkpoints as checkpoints

        def save_then_die(state, folder, *args, **kwargs):
            real_save_state(state, folder, *args, **kwargs)
            if state["train_state"]["step"] == kill_step:
                raise _Crash

        real_save_state = checkpoints.save_state
        monkeypatch.setattr(checkpoints, "save_state", save_then_die)
        with pytest.raises(_Crash):
            train(cfg, data_dir=data_dir, progress=False)
        monkeypatch.setattr(checkpoints, "save_state", real_save_state)
    else:
        with pytest.raises(_Crash):
            train(cfg, data_dir=data_dir, callbacks=[kill], progress=False)
    resumed = train(cfg, data_dir=data_dir, resume=True, progress=False)
    a, b = _files(straight), _files(resumed)
    assert sorted(a) == sorted(b)
    clock = {"config.json": ("created",), "results.json": ("train_seconds",)}
    for name in a:
        if name == "last/trainer_state.json":   # the checkpoint's structure, its counters among it
            assert _without_clock(json.loads(a[name])) == _without_clock(json.loads(b[name]))
        elif name in clock:
            ja, jb = json.loads(a[name]), json.loads(b[name])
            for key in clock[name]:
                ja.pop(key), jb.pop(key)
            if name == "config.json":   # the two runs' folders
                assert ja["config"].pop("output_dir") == str(tmp_path / "a")
                assert jb["config"].pop("output_dir") == str(tmp_path / "b")
            assert ja == jb, name
        else:
            assert a[name] == b[name], name


@pytest.mark.parametrize("overrides, message", [
    (["esimcse.queue_size=0", "esimcse.repeat=false"],
     "esimcse: queue_size: 0 with repeat: false switches off both of ESimCSE's changes, which trains plain SimCSE "
     "under ESimCSE's name; keep one of them, or use method: simcse"),
    (["esimcse.queue_size=100000000"],
     "esimcse: queue_size must be <= 65,536 (MoCo's dictionary, the largest queue of these methods; the queue is "
     "allocated whole before training), got 100,000,000"),
    (["pooler=prompt"],
     "esimcse: word repetition (repeat: true) doubles subwords of plain token rows, and pooler 'prompt' rewrites its "
     "input rows itself; use another pooler or repeat: false"),
])
def test_settings_that_train_something_else_or_eat_memory_are_refused_at_load(overrides, message):
    """Refused when the config is read (no run folder, no step-0 evaluation first), in one line."""
    with pytest.raises(ConfigError) as err:
        load_config(None, ["method=esimcse", *overrides])
    assert str(err.value) == message


def test_each_change_alone_and_the_largest_queue_still_load():
    assert load_config(None, ["method=esimcse", "esimcse.queue_size=0"]).method_params["esimcse"].repeat
    assert load_config(None, ["method=esimcse", "esimcse.repeat=false"]).method_params["esimcse"].queue_size == 160
    assert load_config(None, ["method=esimcse", "esimcse.queue_size=65536"]).method_params["esimcse"].queue_size == 65536
    assert load_config(None, ["method=esimcse", "pooler=prompt", "esimcse.repeat=false"]).pooler == "prompt"
    with pytest.raises(ConfigError, match=r"^augmented_positive: queue_size must be <= 65,536 .* got 1,000,000$"):
        load_config(None, ["pooler=layer_attention", "method=augmented_positive",
                           "augmented_positive.queue_size=1000000"])
