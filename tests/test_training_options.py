"""Training options checked against what they must do: symmetric InfoNCE, warm-up, decoupled weight
decay, the final STS evaluation, and the reduced-precision paths (a bf16 CPU step with the
components that run encoder parts themselves; fp16 with the gradient scaler)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder.pooling import MLPHead
from cselab.model.evaluate import evaluate_sts
from cselab.model.io import read_json, read_jsonl
from cselab.model.rundir import RunDir
from cselab.model.train import train


def records(run, kind="train"):
    return [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == kind]


def test_symmetric_averages_the_two_directions(tiny_config, data_dir):
    run = train(load_config({**tiny_config, "symmetric": True, "max_steps": 2, "eval_every": 2, "log_every": 1}),
                data_dir=data_dir, progress=False)
    for r in records(run):
        assert r["loss"] == pytest.approx((r["loss/info_nce_forward"] + r["loss/info_nce_reverse"]) / 2, rel=1e-6)
        assert r["loss/info_nce_forward"] != r["loss/info_nce_reverse"]


def test_warmup_then_linear_decay(tiny_config, data_dir):
    run = train(load_config({**tiny_config, "max_steps": 10, "warmup_ratio": 0.2, "lr": 1e-3, "log_every": 1,
                             "eval_every": 10}), data_dir=data_dir, progress=False)
    # 2 warm-up steps of 10: the rate logged after step s is lr·s/2 while s < 2, then lr·(10 − s)/8
    expected = [1e-3 * (s / 2 if s < 2 else (10 - s) / 8) for s in range(1, 11)]
    assert [r["lr"] for r in records(run)] == pytest.approx(expected, rel=1e-9)


def test_weight_decay_is_decoupled(tiny_config, data_dir, tmp_path):
    """AdamW: p ← p·(1 − lr·wd) − lr·adam_update, so after one step the two runs differ by exactly
    −lr·wd·p₀ in every weight (same gradients, same Adam update)."""
    base = {**tiny_config, "max_steps": 1, "eval_every": 1, "lr": 1e-2}
    plain = train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)
    decayed = train(load_config({**base, "weight_decay": 0.5, "output_dir": str(tmp_path / "b")}), data_dir=data_dir,
                    progress=False)
    start = SentenceEncoder.from_pretrained(tiny_config["model"]).backbone.state_dict()
    a, b = (load_file(str(run / "last" / "model.safetensors")) for run in (plain, decayed))
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query.weight"):
        assert torch.allclose(b[name] - a[name], -1e-2 * 0.5 * start[name], atol=1e-7), name
    assert not torch.allclose(a[name], start[name])


def test_final_eval_scores_the_best_checkpoint(tiny_config, thin_data):
    run = train(load_config({**tiny_config, "max_steps": 2, "eval_every": 1, "final_eval": True}), data_dir=thin_data,
                progress=False)
    results = read_json(run / "results.json")
    assert set(results["sts"]["scores"]) == {"STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
                                             "SICKRelatedness"}
    # all seven again: a subset would batch (and pad) the sentences differently, and a random tiny
    # model's ranks move with rounding
    again = evaluate_sts(SentenceEncoder.from_pretrained(run / "best"), data_dir=thin_data)
    assert results["sts"]["scores"] == pytest.approx(again["scores"], abs=1e-9)
    assert results["sts"]["avg"] == pytest.approx(np.mean(list(again["scores"].values())))


def test_bf16_step_on_cpu_runs_every_encoder_part_in_bf16(tiny_config, data_dir, monkeypatch):
    seen = {"head": set(), "backbone": set()}
    head_forward, run_backbone = MLPHead.forward, SentenceEncoder.run_backbone

    def precision() -> str:
        return str(torch.get_autocast_dtype("cpu")) if torch.is_autocast_enabled("cpu") else "fp32"

    def head(self, x):   # recorded in training steps (the dev evaluation is another switch)
        if self.training:
            seen["head"].add(precision())
        return head_forward(self, x)

    def backbone(self, inputs, output_hidden_states=False):
        if self.training:
            seen["backbone"].add(precision())
        return run_backbone(self, inputs, output_hidden_states)

    monkeypatch.setattr(MLPHead, "forward", head)
    monkeypatch.setattr(SentenceEncoder, "run_backbone", backbone)
    cfg = load_config({**tiny_config, "precision": "bf16", "max_steps": 2, "eval_every": 2, "log_every": 1,
                       "method": ["mixcse", "gs_infonce", "interlayer_negative", "mlm"],
                       "interlayer_negative": {"interlayer": 1, "project_negative": True}})
    run = train(cfg, data_dir=data_dir, progress=False)
    # the encoder's pass, the interlayer projection through the head and the MLM pass: all bf16
    assert seen == {"head": {"torch.bfloat16"}, "backbone": {"torch.bfloat16"}}
    for r in records(run):
        assert math.isfinite(r["loss"]) and r["loss/mlm.mlm"] > 0 and r["loss/interlayer_negative.l_n"] > 0
    saved = load_file(str(run / "last" / "model.safetensors"))
    assert all(v.dtype == torch.float32 for v in saved.values())    # master weights stay fp32


def test_fp16_uses_the_gradient_scaler(tiny_config, data_dir, monkeypatch):
    """fp16 gradients of the tiny model overflow at the scaler's initial scale (2^16): the scaler must
    skip those steps and halve its scale until the steps go through, and then the weights move."""
    # fp16 is a CUDA precision; the scaler path is the same code on the CPU, so force it here.
    monkeypatch.setattr("cselab.model.train.loop.resolve_precision",
                        lambda precision, device, evaluation=False: None if evaluation else torch.float16)
    run = train(load_config({**tiny_config, "max_steps": 8, "eval_every": 8, "log_every": 1}), data_dir=data_dir,
                progress=False)
    assert all(math.isfinite(r["loss"]) for r in records(run))
    scaler = RunDir(run).load_checkpoint_state()["scaler"]
    skipped = round(math.log2(65536.0 / scaler["scale"]))
    # the scale was halved at each skipped step, and the steps since the last skip went through
    assert 1 <= skipped < 8 and 1 <= scaler["_growth_tracker"] <= 8 - skipped
    start = SentenceEncoder.from_pretrained(tiny_config["model"]).backbone.state_dict()
    trained = load_file(str(run / "last" / "model.safetensors"))
    assert not torch.equal(trained["embeddings.word_embeddings.weight"], start["embeddings.word_embeddings.weight"])


def test_snapshots_are_model_only_and_change_nothing(tiny_config, data_dir, tmp_path):
    base = {**tiny_config, "max_steps": 4, "eval_every": 4, "log_every": 1}
    plain = train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)
    snap = train(load_config({**base, "snapshot_every": 2, "output_dir": str(tmp_path / "b")}), data_dir=data_dir,
                 progress=False)
    snapshots = RunDir(snap).snapshots()
    assert list(snapshots) == [0, 2, 4] and RunDir(plain).snapshots() == {}
    assert not (snapshots[2] / "trainer_state.json").exists()            # model only
    assert json.loads((snapshots[2] / "cselab.json").read_text())["step"] == 2
    assert [r["loss"] for r in records(snap)] == [r["loss"] for r in records(plain)]   # observation only
    final = load_file(str(snapshots[4] / "model.safetensors"))
    last = load_file(str(snap / "last" / "model.safetensors"))
    assert all(torch.equal(final[k], last[k]) for k in last)
