"""Training probes and the embedding-gradient log: the probe set, the probe values against the
geometry functions, ‖∂L/∂z‖ against the analytic InfoNCE gradient, and a real run with both on
(probe records written, training itself unchanged)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from cselab.model.train.probes import embedding_grad_norms, probe, stsb_probe_set
from cselab.model.config import ConfigError, load_config
from cselab.model.data import STSPairs, load_stsb
from cselab.model.encoder import SentenceEncoder
from cselab.model.io import read_jsonl
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.train import train


def test_probe_set_takes_pairs_in_file_order():
    pairs = STSPairs("toy", ("a", "c", "a", "e"), ("b", "d", "b", "f"), np.array([4.5, 2.0, 5.0, 4.8]))
    ps = stsb_probe_set(pairs, n_sentences=4)
    assert ps.sentences == ("a", "b", "c", "d")
    assert ps.positive_pairs == ((0, 1), (0, 1))    # the third pair repeats the first; (e, f) is outside
    assert stsb_probe_set(pairs, 3).positive_pairs == ((0, 1), (0, 1))
    with pytest.raises(ValueError, match="n_sentences must be >= 2"):
        stsb_probe_set(pairs, 1)


def test_probe_set_on_stsb_dev(data_dir):
    dev = load_stsb(data_dir)["dev"]
    ps = stsb_probe_set(dev, 256)
    assert len(ps.sentences) == 256 and len(set(ps.sentences)) == 256
    assert ps.sentences[:2] == (dev.sentences1[0], dev.sentences2[0])
    inside = set(ps.sentences)
    expected = sum(1 for a, b, s in zip(dev.sentences1, dev.sentences2, dev.scores)
                   if s > 4 and a in inside and b in inside and a != b)
    assert len(ps.positive_pairs) == expected > 0


def test_probe_values_by_direct_formulas(tiny_model, data_dir):
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls_before_pooler")
    encoder.eval_precision = "fp32"   # an oracle comparison; the bf16 path has its own test below
    ps = stsb_probe_set(load_stsb(data_dir)["dev"], 40)
    encoder.train()
    result = probe(encoder, ps, batch_size=16)
    assert encoder.training                                  # mode restored
    # Independent of cselab's geometry code: the backbone run by hand, formulas written out.
    encoder.eval()
    with torch.no_grad():
        tok = encoder.tokenizer(list(ps.sentences), padding=True, truncation=True, return_tensors="pt")
        hidden = encoder.backbone(**tok, output_hidden_states=True).hidden_states
    cls = torch.stack([h[:, 0] for h in hidden], dim=1).double()       # (n, 3, H)
    u = torch.nn.functional.normalize(cls[:, -1], dim=-1).numpy()      # cls_before_pooler embeddings
    rows = np.asarray(ps.positive_pairs)
    i, j = np.triu_indices(len(u), 1)
    pair_cos = np.sum(u[i] * u[j], axis=1)
    assert result["alignment"] == pytest.approx(np.mean(np.sum((u[rows[:, 0]] - u[rows[:, 1]]) ** 2, 1)), rel=1e-4)
    assert result["uniformity"] == pytest.approx(np.log(np.mean(np.exp(-2 * (2 - 2 * pair_cos)))), rel=1e-4)
    assert result["mean_cos"] == pytest.approx(pair_cos.mean(), rel=1e-4)
    assert result["largest_angle"] == pytest.approx(np.degrees(np.arccos(pair_cos.min())), rel=1e-4)
    # hidden states 0 (embeddings), 1, 2 of the 2-layer model; the last equals itself
    expected_profile = torch.nn.functional.cosine_similarity(cls, cls[:, -1:], dim=-1).mean(0).numpy()
    assert np.allclose(result["layer_cls_sim"], expected_profile, atol=1e-5)
    assert result["layer_cls_sim"][-1] == pytest.approx(1.0)
    assert result["sentences"] == 40 and result["positive_pairs"] == len(ps.positive_pairs)


def test_probe_values_in_bf16_stay_within_their_tolerance_of_fp32(tiny_model, data_dir):
    """The bf16 path (`auto` where bf16 is native, emulated elsewhere): the probe statistics move by
    bf16's rounding of the backbone's weights, a few thousandths on the tiny model (measured on an AMX
    CPU: 2.7e-5 against 4.4e-6 for a near-zero quantity), so the tolerance is absolute."""
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls_before_pooler")
    ps = stsb_probe_set(load_stsb(data_dir)["dev"], 40)
    encoder.eval_precision = "fp32"
    fp32 = probe(encoder, ps, batch_size=16)
    encoder.eval_precision = "bf16"
    bf16 = probe(encoder, ps, batch_size=16)
    for key in ("alignment", "uniformity", "mean_cos"):
        assert bf16[key] == pytest.approx(fp32[key], abs=0.02), key
    assert bf16["largest_angle"] == pytest.approx(fp32["largest_angle"], abs=1.0)   # degrees
    assert np.allclose(bf16["layer_cls_sim"], fp32["layer_cls_sim"], atol=0.02)
    assert any(bf16[k] != fp32[k] for k in ("alignment", "uniformity", "mean_cos"))   # bf16 did run


def _analytic_grads(z1: np.ndarray, z2: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """∂L/∂z of SimCSE's loss L = mean_i[−s_ii + log Σ_j e^{s_ij}], s_ij = cos(z1_i, z2_j)/τ:
    ∂L/∂h1_i = (Σ_j p_ij h2_j − h2_i)/(Bτ), ∂L/∂h2_j = (Σ_i p_ij h1_i − h1_j)/(Bτ), and
    ∂L/∂z = (I − h hᵀ) ∂L/∂h / ‖z‖ for h = z/‖z‖."""
    b = len(z1)
    n1, n2 = np.linalg.norm(z1, axis=1, keepdims=True), np.linalg.norm(z2, axis=1, keepdims=True)
    h1, h2 = z1 / n1, z2 / n2
    s = h1 @ h2.T / tau
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    g_h1 = (p @ h2 - h2) / (b * tau)
    g_h2 = (p.T @ h1 - h1) / (b * tau)
    project = lambda h, g, n: (g - h * np.sum(h * g, axis=1, keepdims=True)) / n  # noqa: E731
    return project(h1, g_h1, n1), project(h2, g_h2, n2)


def test_embedding_grad_norms_equal_the_analytic_gradient():
    torch.manual_seed(0)
    base = torch.randn(6, 5, dtype=torch.float64, requires_grad=True)
    z1, z2 = base * 1.5, base + 0.3 * torch.randn(6, 5, dtype=torch.float64)   # non-leaf, as in training
    z1.retain_grad()
    z2.retain_grad()
    out = ContrastiveLoss(0.05)(ContrastiveBatch(z1, z2))
    (8.0 * out.loss).backward()                   # as if a GradScaler had scaled the loss by 8
    norms = embedding_grad_norms(z1, z2, loss_scale=8.0)
    g1, g2 = _analytic_grads(z1.detach().numpy(), z2.detach().numpy(), 0.05)
    assert norms["grad/z1_norm"] == pytest.approx(np.linalg.norm(g1, axis=1).mean(), rel=1e-6)
    assert norms["grad/z2_norm"] == pytest.approx(np.linalg.norm(g2, axis=1).mean(), rel=1e-6)
    with pytest.raises(RuntimeError, match="retain_grad"):
        embedding_grad_norms(torch.zeros(2, 2), torch.zeros(2, 2))


def _records(run, kind):
    return [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == kind]


def test_training_with_probes_and_grad_norms(tiny_config, data_dir, tmp_path):
    base = {**tiny_config, "max_steps": 2, "log_every": 1, "eval_every": 2}
    plain = train(load_config(base), data_dir=data_dir, progress=False)
    observed_cfg = load_config({**base, "probe_every": 1, "probe_sentences": 24, "log_embedding_grad_norm": True,
                                "run_name": "observed"})
    assert observed_cfg.config_hash() == load_config(base).config_hash()   # observation keys: not identity
    observed = train(observed_cfg, data_dir=data_dir, progress=False)
    probes = _records(observed, "probe")
    assert [r["step"] for r in probes] == [0, 1, 2]   # step 0: the model before training
    for r in probes:
        assert {"alignment", "uniformity", "mean_cos", "largest_angle", "layer_cls_sim", "seconds"} <= set(r)
        assert r["sentences"] == 24 and len(r["layer_cls_sim"]) == 3
        assert -4.0 <= r["uniformity"] <= 0.0 and 0.0 <= r["largest_angle"] <= 180.0
    trains = _records(observed, "train")
    assert all(r["grad/z1_norm"] > 0 and r["grad/z2_norm"] > 0 for r in trains)
    # Probes and gradient logging observe only: the run's losses are exactly those of the plain run.
    assert [r["loss"] for r in trains] == [r["loss"] for r in _records(plain, "train")]
    assert not _records(plain, "probe") and "grad/z1_norm" not in _records(plain, "train")[0]


def test_evaluations_during_training_see_the_updated_weights(tiny_config, data_dir):
    """The trainer's fused AdamW changes the weights in place without bumping their version
    counters, the key of the evaluation path's cached bf16 copy: the trainer drops the copy after
    every step. (It did not: the probes and dev scores of a run whose pooler puts no head into the
    backbone when saved, APINCSE's layer attention, all read the weights of step 0.)"""
    cfg = load_config({**tiny_config, "pooler": "avg", "precision": "fp32", "eval_precision": "bf16", "lr": 1e-3,
                       "max_steps": 4, "eval_every": 4, "probe_every": 4, "probe_sentences": 24})
    run = train(cfg, data_dir=data_dir, progress=False)
    probes = _records(run, "probe")
    assert [r["step"] for r in probes] == [0, 4]
    last = SentenceEncoder.from_pretrained(run / "last")
    last.eval_precision = "bf16"
    fresh = probe(last, stsb_probe_set(load_stsb(data_dir)["dev"], 24))
    assert probes[1]["uniformity"] == pytest.approx(fresh["uniformity"], abs=1e-6)     # the weights of step 4
    assert abs(probes[1]["uniformity"] - probes[0]["uniformity"]) > 1e-4             # not those of step 0


def test_probe_config_validation(tiny_config):
    with pytest.raises(ConfigError, match="probe_every: must be >= 1 or null, got 0"):
        load_config({**tiny_config, "probe_every": 0})
    with pytest.raises(ConfigError, match="probe_sentences: must be >= 2, got 1"):
        load_config({**tiny_config, "probe_every": 5, "probe_sentences": 1})
    with pytest.raises(ConfigError, match="log_embedding_grad_norm: expected true/false"):
        load_config({**tiny_config, "log_embedding_grad_norm": "yes"})
