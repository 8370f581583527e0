"""GS-InfoNCE against a direct computation with the same noise draw, its invariances, and the
combination with MixCSE."""
from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F

from cselab.model.config import ConfigError, load_config
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss, cosine_matrix
from cselab.model.methods import build_components
from cselab.model.methods.gs_infonce import GSInfoNCE, GSInfoNCEParams, gaussian_noise
from cselab.model.methods.mixcse import MixCSEParams
from cselab.model.train import train


def random_views(b=6, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, d, generator=g), torch.randn(b, d, generator=g)


def gs_loss(z1, z2, tau=0.05, seed=0, **params):
    torch.manual_seed(seed)
    return ContrastiveLoss(tau, [GSInfoNCE(GSInfoNCEParams(**params))])(ContrastiveBatch(z1, z2))


def direct_gs_loss(z1, z2, noise, tau, weight):
    """ℓ_i = −log e^{s(h_i,h_i+)/τ} / (Σ_j e^{s(h_i,h_j+)/τ} + λ Σ_k e^{s(g_k,h_i)/τ}), term by term."""
    losses = []
    for i in range(len(z1)):
        inbatch = sum(math.exp(F.cosine_similarity(z1[i], z2[j], dim=0).item() / tau) for j in range(len(z2)))
        smooth = sum(math.exp(F.cosine_similarity(g, z1[i], dim=0).item() / tau) for g in noise)
        positive = math.exp(F.cosine_similarity(z1[i], z2[i], dim=0).item() / tau)
        losses.append(-math.log(positive / (inbatch + weight * smooth)))
    return sum(losses) / len(losses)


def test_loss_equals_the_direct_computation_with_the_same_draw():
    z1, z2 = random_views(6, 5)
    out = gs_loss(z1, z2, tau=0.1, seed=3, noise_ratio=2.0, noise_mean=0.3, noise_std=0.7, noise_weight=1.5)
    torch.manual_seed(3)
    noise = 0.3 + 0.7 * torch.randn(12, 5)      # M = 2 × 6
    assert out.loss.item() == pytest.approx(direct_gs_loss(z1, z2, noise, 0.1, 1.5), rel=1e-5)
    assert out.stats["gs_infonce.noise_cos"] == pytest.approx(cosine_matrix(z1, noise).mean().item(), abs=1e-6)
    assert set(out.parts) == {"info_nce"}       # forward direction only


def test_sigma_cannot_matter_with_zero_mean_but_does_with_nonzero_mean():
    z1, z2 = random_views()
    centred = [gs_loss(z1, z2, seed=5, noise_std=s).loss.item() for s in (0.01, 1.0, 50.0)]
    assert centred[0] == pytest.approx(centred[1], rel=1e-6) and centred[1] == pytest.approx(centred[2], rel=1e-6)
    # with μ ≠ 0 the same draw ε gives μ + σε, whose direction depends on σ
    shifted = [gs_loss(z1, z2, seed=5, noise_mean=0.5, noise_std=s).loss.item() for s in (0.01, 1.0, 50.0)]
    assert abs(shifted[0] - shifted[1]) > 1e-2 and abs(shifted[1] - shifted[2]) > 1e-3


def test_zero_noise_is_exactly_simcse():
    z1, z2 = random_views()
    simcse = ContrastiveLoss(0.05)(ContrastiveBatch(z1, z2)).loss
    for params in ({"noise_ratio": 0.0}, {"num_noise": 0}):
        out = gs_loss(z1, z2, **params)
        assert torch.equal(out.loss, simcse) and "gs_infonce.noise_cos" not in out.stats


def test_number_of_noise_vectors():
    assert GSInfoNCEParams().num_vectors(64) == 192
    assert [GSInfoNCEParams(noise_ratio=r).num_vectors(64) for r in (0, 0.5, 1, 2, 3, 4, 8, 16)] == \
        [0, 32, 64, 128, 192, 256, 512, 1024]
    assert GSInfoNCEParams(noise_ratio=0.5).num_vectors(5) == 3      # 2.5 rounds up
    assert GSInfoNCEParams(noise_ratio=0.5, num_noise=7).num_vectors(5) == 7
    z1, z2 = random_views(4, 3)
    contrib = GSInfoNCE(GSInfoNCEParams(noise_ratio=1.5)).contribute(ContrastiveBatch(z1, z2), None, 0.05)
    (block,) = contrib.negatives
    assert block.logits.shape == (4, 6) and block.direction == "forward" and block.log_weight == 0.0


def test_noise_is_fresh_each_step_reproducible_from_the_seed_and_follows_dtype():
    like = torch.zeros(1, dtype=torch.float64)
    torch.manual_seed(0)
    first, second = gaussian_noise(3, 4, 0.0, 1.0, like), gaussian_noise(3, 4, 0.0, 1.0, like)
    torch.manual_seed(0)
    again = gaussian_noise(3, 4, 0.0, 1.0, like)
    assert not torch.equal(first, second) and torch.equal(first, again)
    assert first.dtype == torch.float64 and first.device == like.device


def test_gradient_reaches_the_anchors_only():
    z1, z2 = random_views(4, 3)
    a, b = z1.clone().requires_grad_(), z2.clone().requires_grad_()
    (block,) = GSInfoNCE().contribute(ContrastiveBatch(a, b), None, 0.05).negatives
    grad_a, grad_b = torch.autograd.grad(block.logits.sum(), (a, b), allow_unused=True)
    assert grad_a.abs().sum() > 1e-3 and grad_b is None


def test_combined_with_mixcse_sums_both_blocks():
    z1, z2 = random_views(5, 4, seed=2)
    tau, lam, weight = 0.05, 0.2, 2.0
    components = build_components(["mixcse", "gs_infonce"],
                                  {"mixcse": MixCSEParams(mix_lambda=lam),
                                   "gs_infonce": GSInfoNCEParams(noise_ratio=1.0, noise_weight=weight)})
    torch.manual_seed(9)
    out = ContrastiveLoss(tau, components)(ContrastiveBatch(z1, z2))
    torch.manual_seed(9)
    noise = torch.randn(5, 4)

    def direction(a, c, with_noise):
        a, c = F.normalize(a, dim=-1), F.normalize(c, dim=-1)
        rows = []
        for i in range(len(a)):
            terms = [a[i] @ c[j] / tau for j in range(len(c))]
            terms += [a[i] @ F.normalize(lam * c[i] + (1 - lam) * c[j], dim=0) / tau for j in range(len(c)) if j != i]
            if with_noise:
                terms += [F.cosine_similarity(g, a[i], dim=0) / tau + math.log(weight) for g in noise]
            rows.append(torch.logsumexp(torch.stack(terms), 0) - a[i] @ c[i] / tau)
        return torch.stack(rows).mean()

    forward, reverse = direction(z1, z2, True), direction(z2, z1, False)
    assert out.parts["info_nce_forward"].item() == pytest.approx(forward.item(), rel=1e-5)
    assert out.parts["info_nce_reverse"].item() == pytest.approx(reverse.item(), rel=1e-5)
    assert out.loss.item() == pytest.approx((forward + reverse).item() / 2, rel=1e-5)
    assert {"mixcse.mixed_cos", "mixcse.mixed_cos_reverse", "gs_infonce.noise_cos"} <= set(out.stats)


def test_bad_parameters_name_the_key():
    for kwargs, key in (({"noise_std": 0.0}, "noise_std"), ({"noise_weight": 0.0}, "noise_weight"),
                        ({"noise_ratio": -1.0}, "noise_ratio"), ({"num_noise": -2}, "num_noise"),
                        ({"noise_mean": float("nan")}, "noise_mean")):
        with pytest.raises(ValueError, match=key):
            GSInfoNCEParams(**kwargs)
    with pytest.raises(ConfigError, match=r"gs_infonce.num_noise"):
        load_config({"method": "gs_infonce", "gs_infonce": {"num_noise": 1.5}})
    with pytest.raises(ConfigError, match="gs_infonce"):
        load_config({"method": "gs_infonce", "gs_infonce": {"noise_std": -1}})


@pytest.mark.parametrize("method", ["gs_infonce", ["mixcse", "gs_infonce"]])
def test_training_logs_noise_statistics(tiny_config, data_dir, method):
    cfg = load_config({**tiny_config, "method": method, "max_steps": 2, "eval_every": 2, "log_every": 1})
    run = train(cfg, data_dir=data_dir, progress=False)
    steps = [r for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "train"]
    assert [r["step"] for r in steps] == [1, 2]
    expected = {"sim/gs_infonce.noise_cos", "sim/pos_cos", "sim/neg_cos"}
    if method != "gs_infonce":
        expected |= {"sim/mixcse.mixed_cos", "sim/mixcse.mixed_cos_reverse", "loss/info_nce_reverse"}
    for r in steps:
        assert expected <= set(r)
        # 32-wide random Gaussian noise vs embeddings: near-orthogonal on average
        assert abs(r["sim/gs_infonce.noise_cos"]) < 0.5 and math.isfinite(r["loss"])
