"""Precision: the ``auto`` rule, evaluation's own switch, what the results record, exact resume
within a precision and the refusal to resume across one."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import cselab.model.utils as utils
from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.io import read_jsonl
from cselab.model.train import train
from cselab.model.utils import precision_name, resolve_precision

CPU, CUDA, MPS = torch.device("cpu"), torch.device("cuda"), torch.device("mps")


def test_auto_is_bf16_where_the_cpu_has_native_bf16(monkeypatch):
    """Training (autocast) and evaluation (bf16 weights) alike: on any CPU with native bf16, AMX
    or AVX-512 BF16 alone; fp32 on a CPU without it and on MPS."""
    for native, amx, dtype in ((True, True, torch.bfloat16), (True, False, torch.bfloat16), (False, False, None)):
        monkeypatch.setattr(utils, "cpu_supports_bf16", lambda: native)
        monkeypatch.setattr(utils, "cpu_has_amx", lambda: amx)
        monkeypatch.delenv(utils.NATIVE_BF16_ENV, raising=False)
        assert resolve_precision("auto", CPU) is dtype
        assert resolve_precision("auto", CPU, evaluation=True) is dtype
        assert resolve_precision("auto", MPS) is None and resolve_precision("auto", MPS, evaluation=True) is None
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        assert utils.native_bf16() == ("amx" if amx else "avx512_bf16" if native else "none")
        monkeypatch.undo()
    assert resolve_precision("bf16", CPU) is torch.bfloat16     # explicit: emulated where not native
    assert resolve_precision("bf16", CPU, evaluation=True) is torch.bfloat16
    assert resolve_precision("fp32", CUDA) is None
    with pytest.raises(ValueError, match="precision fp16 needs a CUDA device"):
        resolve_precision("fp16", CPU)
    assert [precision_name(d) for d in (None, torch.bfloat16, torch.float16)] == ["fp32", "bf16", "fp16"]


def test_native_bf16_detection_follows_what_torch_reports(monkeypatch):
    monkeypatch.delenv(utils.NATIVE_BF16_ENV, raising=False)   # as the machine is (the suite may run with --native-bf16)
    amx = torch.backends.mkldnn.is_available() and torch.cpu._is_amx_tile_supported()
    assert utils.cpu_has_amx() == amx
    assert utils.cpu_supports_bf16() == (amx or (torch.backends.mkldnn.is_available()
                                                 and torch.cpu._is_avx512_bf16_supported()))


def test_the_native_bf16_switch_runs_every_cpu_as_another_kind(monkeypatch):
    """CSELAB_NATIVE_BF16 (the tests' --native-bf16): `on` makes `auto` mean bf16 on any CPU, named
    `emulated` where torch reports no native bf16; `off` makes it fp32 even on AMX; a typo is refused."""
    hardware = utils._hardware_bf16()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv(utils.NATIVE_BF16_ENV, "on")
    assert resolve_precision("auto", CPU) is torch.bfloat16 and resolve_precision("auto", CPU, evaluation=True) is torch.bfloat16
    assert utils.native_bf16() in (("amx", "avx512_bf16") if hardware else ("emulated",))
    monkeypatch.setenv(utils.NATIVE_BF16_ENV, "off")
    assert resolve_precision("auto", CPU) is None and not utils.cpu_has_amx() and utils.native_bf16() == "none"
    assert resolve_precision("bf16", CPU) is torch.bfloat16     # an explicit precision is not overridden
    monkeypatch.setenv(utils.NATIVE_BF16_ENV, "")
    assert utils.native_bf16_override() == "auto"
    monkeypatch.setenv(utils.NATIVE_BF16_ENV, "yes")
    with pytest.raises(ValueError, match="CSELAB_NATIVE_BF16='yes': expected auto, on or off"):
        resolve_precision("auto", CPU)


def test_eval_precision_runs_bf16_weights_without_autocast(tiny_model, monkeypatch):
    """bf16 evaluation multiplies bf16 weights (no autocast: no casts of the activations); the
    pooler sees fp32 states, the vectors are fp32 and close to the fp32 ones."""
    seen = []
    forward_eval = SentenceEncoder.forward_eval

    def recording(self, inputs, output_hidden_states=False):
        out = forward_eval(self, inputs, output_hidden_states)
        seen.append((torch.is_autocast_enabled("cpu"), self.backbone.embeddings.word_embeddings.weight.dtype,
                     out.backbone.last_hidden_state.dtype, out.pooled.dtype))
        return out

    monkeypatch.setattr(SentenceEncoder, "forward_eval", recording)
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg")
    sentences = ["a cat sits on the mat", "a dog runs", "the sky is blue today"]
    encoder.eval_precision = "fp32"
    full = encoder.encode(sentences)
    encoder.eval_precision = "bf16"
    half = encoder.encode(sentences)
    assert seen == [(False, torch.float32, torch.float32, torch.float32),
                    (False, torch.bfloat16, torch.float32, torch.float32)]
    assert half.dtype == np.float32 and not np.array_equal(full, half)
    assert np.abs(full - half).max() < 0.05 * np.abs(full).max()   # bf16 keeps ~3 significant digits
    assert encoder.resolved_eval_precision() == "bf16"
    assert encoder.backbone.embeddings.word_embeddings.weight.dtype == torch.float32   # the encoder's own, back


def test_bf16_evaluation_leaves_the_fp32_masters_untouched(tiny_model, data_dir):
    """An evaluation in bf16 weights between optimizer steps: the encoder's weights stay fp32 and
    bit-identical, training continues from them exactly as without the evaluation, and the next
    evaluation sees the updated weights (the cached bf16 copy is rebuilt after a step)."""
    from cselab.model.evaluate import evaluate_sts

    def step(encoder, optimizer, batch):
        inputs = encoder.training_inputs(batch, 16)
        z = encoder(inputs).embeddings
        loss = (1 - torch.nn.functional.cosine_similarity(z[:2], z[2:])).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    batch = ["a cat sits on the mat", "the sky is blue today"]
    sentences = ["a dog runs", "a man plays a guitar", "two men ride bikes"]
    models = []
    for evaluate in (False, True):
        torch.manual_seed(0)
        encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg", dropout=0.0)
        encoder.eval_precision = "bf16"
        optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-2)
        step(encoder, optimizer, batch)
        if evaluate:
            before = {k: v.clone() for k, v in encoder.state_dict().items()}
            first = encoder.encode(sentences)
            assert all(torch.equal(before[k], v) for k, v in encoder.state_dict().items())
            assert all(p.dtype == torch.float32 for p in encoder.parameters())
            assert np.array_equal(encoder.encode(sentences), first)   # the cached copy, same weights
        step(encoder, optimizer, batch)
        if evaluate:
            assert not np.array_equal(encoder.encode(sentences), first)   # a step later: a fresh copy
        models.append(encoder)
    plain, evaluated = models
    for (name, a), b in zip(plain.state_dict().items(), evaluated.state_dict().values()):
        assert torch.equal(a, b), name

    # the scores of a whole suite agree with fp32's on the tiny model
    evaluated.eval_precision = "fp32"
    full = evaluate_sts(evaluated, data_dir=data_dir, tasks=["STS16"])
    evaluated.eval_precision = "bf16"
    half = evaluate_sts(evaluated, data_dir=data_dir, tasks=["STS16"])
    assert abs(full["scores"]["STS16"] - half["scores"]["STS16"]) < 1.0
    assert full["scores"]["STS16"] != half["scores"]["STS16"]


def test_cli_eval_records_the_precision(tiny_model, data_dir, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["eval", str(tiny_model), "--pooler", "avg", "--tasks", "STS16", "--precision", "fp32",
                 "--data-dir", str(data_dir), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["precision"] == "fp32" and "precision=fp32" in capsys.readouterr().out
    assert main(["eval", str(tiny_model), "--suite", "geometry", "--split", "dev", "--precision", "bf16",
                 "--data-dir", str(data_dir), "--output", str(out)]) == 0
    assert json.loads(out.read_text())["precision"] == "bf16"


def test_results_and_checkpoint_record_the_precisions(tiny_config, data_dir):
    run = train(load_config({**tiny_config, "precision": "bf16", "eval_precision": "fp32", "max_steps": 2,
                             "eval_every": 2}), data_dir=data_dir, progress=False)
    results = json.loads((run / "results.json").read_text())
    assert (results["precision"], results["eval_precision"], results["world_size"]) == ("bf16", "fp32", 1)
    assert results["native_bf16"] == utils.native_bf16()   # what auto was resolved against
    from cselab.model.rundir import RunDir

    assert RunDir(run).load_checkpoint_state()["precision"] == {"precision": "bf16", "eval_precision": "fp32"}


def test_eval_precision_is_part_of_the_run_identity():
    assert load_config({"eval_precision": "fp32"}).config_hash() != load_config({}).config_hash()


class Crash(Exception):
    pass


def test_resume_refuses_a_precision_change(tiny_config, data_dir, monkeypatch):
    """``precision: auto`` started on a CPU with native bf16 cannot continue where auto means fp32."""
    monkeypatch.setattr(utils, "cpu_has_amx", lambda: False)
    monkeypatch.setattr(utils, "cpu_supports_bf16", lambda: True)
    cfg = load_config({**tiny_config, "max_steps": 4, "eval_every": 2})

    def crash(state, record):
        if state.step == 3:
            raise Crash

    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, callbacks=[crash], progress=False)
    monkeypatch.setattr(utils, "cpu_supports_bf16", lambda: False)
    with pytest.raises(ValueError, match=r"written with \{'precision': 'bf16', .*continue with \{'precision': 'fp32'"):
        train(cfg, data_dir=data_dir, resume=True, progress=False)
    monkeypatch.setattr(utils, "cpu_supports_bf16", lambda: True)
    run = train(cfg, data_dir=data_dir, resume=True, progress=False)   # the same machine kind: fine
    assert [r["step"] for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == "eval"] == [0, 2, 4]


def test_a_fused_adamw_step_needs_weights_changed_to_refresh_the_bf16_copy(tiny_model):
    """torch's fused AdamW (the trainer's on CPU) writes the weights without bumping their version
    counters, so the cached bf16 copy's key cannot see the step: ``weights_changed`` drops it."""
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg", dropout=0.0)
    encoder.eval_precision = "bf16"
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-2, fused=True)
    sentences = ["a dog runs", "a man plays a guitar"]
    before = encoder.encode(sentences)
    z = encoder(encoder.training_inputs(["a cat sits on the mat", "the sky is blue"], 16)).embeddings
    z.sum().backward()
    versions = [p._version for p in encoder.parameters()]
    optimizer.step()
    assert [p._version for p in encoder.parameters()] == versions   # what makes the key blind to the step
    assert np.array_equal(encoder.encode(sentences), before)         # so the stale copy is still served
    encoder.weights_changed()
    assert not np.array_equal(encoder.encode(sentences), before)     # until the trainer says so


def test_mid_training_probes_and_dev_evaluations_see_the_trained_weights_in_bf16(tiny_config, data_dir):
    """Through the trainer (fused AdamW): with bf16 evaluation, each probe and dev evaluation is of
    the weights at its step — on AMX the step-40 records of 80-step runs were the untuned model's
    until the loop called ``weights_changed``."""
    run = train(load_config({**tiny_config, "precision": "fp32", "eval_precision": "bf16", "max_steps": 4,
                             "eval_every": 2, "probe_every": 2, "probe_sentences": 32}),
                data_dir=data_dir, progress=False)
    records = read_jsonl(run / "metrics.jsonl")
    probes = {r["step"]: r for r in records if r["kind"] == "probe"}
    evals = {r["step"]: r["stsb_dev"] for r in records if r["kind"] == "eval"}
    assert sorted(probes) == [0, 2, 4]
    assert len({probes[s]["uniformity"] for s in (0, 2, 4)}) == 3
    assert len({probes[s]["alignment"] for s in (0, 2, 4)}) == 3
    assert sorted(evals) == [0, 2, 4] and len(set(evals.values())) == 3
