"""End-to-end training on the tiny model: run directory, resume equality, non-finite loss."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.io import read_jsonl
from cselab.model.train import NonFiniteLossError, RunExistsError, train
from cselab.model.train.loop import batches_per_epoch, epoch_order
from cselab.model.utils import native_bf16


def _records(run, kind):
    return [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == kind]


def test_short_run_writes_a_complete_run_directory(tiny_config, data_dir):
    run = train(load_config(tiny_config), data_dir=data_dir, progress=False)
    config = json.loads((run / "config.json").read_text())
    assert config["config"]["batch_size"] == 16 and len(config["config_hash"]) == 10
    assert config["versions"]["torch"] == torch.__version__
    assert "git_commit" in config
    train_records = _records(run, "train")
    assert [r["step"] for r in train_records] == [1, 2, 4, 6, 8]  # 128 sentences / 16 = 8 steps
    for r in train_records:
        assert {"loss", "loss/info_nce", "sim/pos_cos", "sim/neg_cos", "lr"} <= set(r)
        assert r["loss"] == pytest.approx(r["loss/info_nce"])
        assert -1 <= r["sim/neg_cos"] <= r["sim/pos_cos"] + 0.2 <= 1.2
    assert train_records[-1]["lr"] == 0.0  # linear decay to zero, no warm-up
    evals = _records(run, "eval")
    assert [r["step"] for r in evals] == [0, 4, 8]   # step 0: the model before training, a reference
    assert evals[0]["before_training"] is True and "improved" not in evals[0] and "best_stsb_dev" not in evals[0]
    results = json.loads((run / "results.json").read_text())
    assert results["steps"] == 8
    assert results["best_stsb_dev"] == max(r["stsb_dev"] for r in evals[1:])
    best = SentenceEncoder.from_pretrained(run / "best")
    assert json.loads((run / "best" / "cselab.json").read_text())["stsb_dev"] == results["best_stsb_dev"]
    assert best.encode(["hello world"]).shape == (1, 32)
    assert (run / "last" / "trainer_state.safetensors").is_file()


def test_never_overwrites_a_run_silently(tiny_config, data_dir):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    train(cfg, data_dir=data_dir, progress=False)
    with pytest.raises(RunExistsError, match="finished run is already there"):
        train(cfg, data_dir=data_dir, progress=False)
    run = train(cfg, data_dir=data_dir, overwrite=True, progress=False)
    assert [r["step"] for r in _records(run, "eval")] == [0, 2]


class Crash(Exception):
    pass


# bf16 without native support (AVX2 only) is emulated, minutes per run, and never what `auto` picks
# there: the slow tests cover it on such a CPU
@pytest.mark.parametrize("precision", ["fp32", pytest.param("bf16", marks=() if native_bf16() != "none" else pytest.mark.slow)])
def test_resume_after_a_kill_gives_the_same_run(tiny_config, data_dir, tmp_path, precision):
    base = {**tiny_config, "max_sentences": 96, "epochs": 2, "eval_every": 3, "log_every": 1, "precision": precision,
            "eval_precision": precision}
    # 96 / 16 = 6 batches per epoch, 12 steps; checkpoints at 3, 6, 9, 12.
    straight = train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)

    def kill_at_step_8(state, record):
        if state.step == 8:
            raise Crash

    cfg = load_config({**base, "output_dir": str(tmp_path / "b")})
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, callbacks=[kill_at_step_8], progress=False)
    assert max(r["step"] for r in read_jsonl(tmp_path / "b" / cfg.default_run_name() / "metrics.jsonl")) == 8
    resumed = train(cfg, data_dir=data_dir, resume=True, progress=False)

    def strip(records):
        return [{k: v for k, v in r.items()} for r in records]

    a, b = strip(read_jsonl(straight / "metrics.jsonl")), strip(read_jsonl(resumed / "metrics.jsonl"))
    assert [r["step"] for r in a] == [r["step"] for r in b]  # steps 7-8 were rolled back and redone
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys()
        for key in ra:
            assert ra[key] == pytest.approx(rb[key], abs=1e-6), (ra["step"], key)
    wa, wb = load_file(str(straight / "last" / "model.safetensors")), load_file(str(resumed / "last" / "model.safetensors"))
    for key in wa:
        assert torch.allclose(wa[key], wb[key], atol=1e-6), key
    ra, rb = (json.loads((p / "results.json").read_text()) for p in (straight, resumed))
    assert ra["best_stsb_dev"] == pytest.approx(rb["best_stsb_dev"]) and ra["best_step"] == rb["best_step"]


def test_resume_refuses_a_different_config(tiny_config, data_dir):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "fixed"})
    train(cfg, data_dir=data_dir, progress=False)
    other = load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "fixed", "lr": 1e-3})
    with pytest.raises(RunExistsError, match="config .* differs"):
        train(other, data_dir=data_dir, resume=True, progress=False)


def test_non_finite_loss_stops_and_keeps_the_last_checkpoint(tiny_config, data_dir, monkeypatch):
    from cselab.model.losses import ContrastiveLoss

    original = ContrastiveLoss.forward

    def poisoned(self, batch, compute_stats=True):
        out = original(self, batch, compute_stats)
        if batch.step == 5:  # the sixth step
            out.loss = out.loss * float("nan")
        return out

    monkeypatch.setattr(ContrastiveLoss, "forward", poisoned)
    cfg = load_config(tiny_config)
    with pytest.raises(NonFiniteLossError, match=r"step 6: the loss is nan .*checkpoint .*step 4\) is intact"):
        train(cfg, data_dir=data_dir, progress=False)
    run = cfg.output_dir + "/" + cfg.default_run_name()
    from cselab.model.rundir import load_state

    assert load_state(run + "/last")["train_state"]["step"] == 4
    from pathlib import Path

    assert not (Path(run) / "results.json").exists()


def test_epoch_order_is_a_seeded_permutation():
    a, b = epoch_order(10, 42, 0, True), epoch_order(10, 42, 1, True)
    assert sorted(a) == list(range(10)) and a == epoch_order(10, 42, 0, True) and a != b
    assert epoch_order(5, 42, 0, False) == [0, 1, 2, 3, 4]
    assert batches_per_epoch(100, 64, False) == 2 and batches_per_epoch(100, 64, True) == 1


def test_tiny_corpus_is_a_clear_error(tiny_config, data_dir, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("one\ntwo\nthree\n")
    with pytest.raises(ValueError, match="corpus has 3 sentences, fewer than one batch of 16"):
        train(load_config({**tiny_config, "corpus": str(corpus), "drop_last": True}), data_dir=data_dir,
              progress=False)
    assert [p for p in (tmp_path / "runs").iterdir() if p.is_dir()] == []  # no run folder left behind


def test_early_stopping_after_patience_evaluations_without_improvement(tiny_config, data_dir, monkeypatch):
    import dataclasses

    from cselab.model.evaluate.suites import SUITES

    # training's dev score is the registry's sts suite scoring the dev pairs (cselab.model.train.dev_evaluation)
    scores = iter([99.0, 50.0, 40.0, 45.0, 30.0, 99.0])
    monkeypatch.setitem(SUITES, "sts", dataclasses.replace(SUITES["sts"], score_pairs=lambda *a, **k: next(scores)))
    cfg = load_config({**tiny_config, "eval_every": 1, "early_stopping_patience": 2})
    run = train(cfg, data_dir=data_dir, progress=False)
    results = json.loads((run / "results.json").read_text())
    # step 0 (99, before training) is a reference: neither best/ nor counted by early stopping;
    # 50 (best) → 40 (1 without improvement) → 45 (2: stop); the fourth evaluation never happens
    assert results["stopped_early"] and results["steps"] == 3
    assert results["best_step"] == 1 and results["best_stsb_dev"] == 50.0
    assert [r["stsb_dev"] for r in _records(run, "eval")] == [99.0, 50.0, 40.0, 45.0]


def test_resume_before_the_first_checkpoint_starts_over_cleanly(tiny_config, data_dir):
    def kill_at_step_2(state, record):
        if state.step == 2:
            raise Crash

    cfg = load_config({**tiny_config, "max_steps": 4, "eval_every": 4, "log_every": 1})
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, callbacks=[kill_at_step_2], progress=False)
    run = train(cfg, data_dir=data_dir, resume=True, progress=False)
    assert [r["step"] for r in _records(run, "train")] == [1, 2, 3, 4]  # no stale records of the killed run
    assert [r["step"] for r in _records(run, "eval")] == [0, 4]          # its step-0 record not twice
