"""Precision: the ``auto`` rule, evaluation's own switch, what the results record, exact resume
within a precision and the refusal to resume across one."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import cselab.utils as utils
from cselab.cli import main
from cselab.config import load_config
from cselab.encoder import SentenceEncoder
from cselab.io import read_jsonl
from cselab.train import train
from cselab.utils import precision_name, resolve_precision

CPU, CUDA, MPS = torch.device("cpu"), torch.device("cuda"), torch.device("mps")


def test_auto_is_bf16_where_it_is_faster(monkeypatch):
    """Training: on any CPU with native bf16; evaluation (autocast inference): only with AMX."""
    for native, amx, train_dtype, eval_dtype in ((True, True, torch.bfloat16, torch.bfloat16),
                                                 (True, False, torch.bfloat16, None),
                                                 (False, False, None, None)):
        monkeypatch.setattr(utils, "cpu_supports_bf16", lambda: native)
        monkeypatch.setattr(utils, "cpu_has_amx", lambda: amx)
        assert resolve_precision("auto", CPU) is train_dtype
        assert resolve_precision("auto", CPU, evaluation=True) is eval_dtype
        assert resolve_precision("auto", MPS) is None and resolve_precision("auto", MPS, evaluation=True) is None
    assert resolve_precision("bf16", CPU) is torch.bfloat16     # explicit: emulated where not native
    assert resolve_precision("bf16", CPU, evaluation=True) is torch.bfloat16
    assert resolve_precision("fp32", CUDA) is None
    with pytest.raises(ValueError, match="precision fp16 needs a CUDA device"):
        resolve_precision("fp16", CPU)
    assert [precision_name(d) for d in (None, torch.bfloat16, torch.float16)] == ["fp32", "bf16", "fp16"]


def test_native_bf16_detection_follows_what_torch_reports():
    amx = torch.backends.mkldnn.is_available() and torch.cpu._is_amx_tile_supported()
    assert utils.cpu_has_amx() == amx
    assert utils.cpu_supports_bf16() == (amx or (torch.backends.mkldnn.is_available()
                                                 and torch.cpu._is_avx512_bf16_supported()))


def test_eval_precision_switches_the_autocast_of_every_evaluation_pass(tiny_model, monkeypatch):
    seen = []
    forward_eval = SentenceEncoder.forward_eval

    def recording(self, inputs, output_hidden_states=False):
        seen.append(torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else None)
        return forward_eval(self, inputs, output_hidden_states)

    monkeypatch.setattr(SentenceEncoder, "forward_eval", recording)
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg")
    sentences = ["a cat sits on the mat", "a dog runs", "the sky is blue today"]
    encoder.eval_precision = "fp32"
    full = encoder.encode(sentences)
    encoder.eval_precision = "bf16"
    half = encoder.encode(sentences)
    assert seen == [None, torch.bfloat16]
    assert half.dtype == np.float32 and not np.array_equal(full, half)
    assert np.abs(full - half).max() < 0.05 * np.abs(full).max()   # bf16 keeps ~3 significant digits
    assert encoder.resolved_eval_precision() == "bf16"


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
    from cselab.rundir import RunDir

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
    assert [r["step"] for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == "eval"] == [2, 4]
