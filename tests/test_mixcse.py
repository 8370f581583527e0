"""MixCSE against hand computations, a direct slow (materialised) implementation and the released
code's construction written out by hand."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from cselab.model.config import ConfigError, load_config
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss, cosine_matrix
from cselab.workbench.analysis.mixcse import mixcse_pair_scores, mixcse_scores
from cselab.model.encoder import SentenceEncoder
from cselab.model.methods.mixcse import (MixCSE, MixCSEParams, mixed_negative_logits,
                                   official_mixed_logits)
from cselab.model.train import train


def lse(*xs):
    return math.log(sum(math.exp(x) for x in xs))


def mixcse_loss(z1, z2, tau, symmetric=False, **params):
    return ContrastiveLoss(tau, [MixCSE(MixCSEParams(**params))], symmetric=symmetric)(ContrastiveBatch(z1, z2))


# ----------------------------------------------------------------- slow references
def materialised_mixed_logits(anchors, candidates, lam, tau):
    """B×B×d mixtures built explicitly: logits[i, j] = a_i · normalize(λ c_i + (1−λ) c_j) / τ."""
    a, c = F.normalize(anchors, dim=-1), F.normalize(candidates, dim=-1)
    mixtures = F.normalize(lam * c[:, None, :] + (1 - lam) * c[None, :, :], dim=-1)   # B×B×d
    logits = torch.einsum("id,ijd->ij", a, mixtures) / tau
    return logits.masked_fill(torch.eye(len(a), dtype=torch.bool), float("-inf"))


def slow_mixcse_loss(z1, z2, lam, tau, stop_grad=True, reverse=True):
    """The paper's loss, one term at a time."""
    u, v = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
    b = len(u)

    def direction(a, c):
        frozen = c.detach() if stop_grad else c
        losses = []
        for i in range(b):
            terms = [a[i] @ c[j] / tau for j in range(b)]
            for j in range(b):
                if j != i:
                    mixture = F.normalize(lam * frozen[i] + (1 - lam) * frozen[j], dim=0)
                    terms.append(a[i] @ mixture / tau)
            losses.append(torch.logsumexp(torch.stack(terms), 0) - a[i] @ c[i] / tau)
        return torch.stack(losses).mean()

    forward = direction(u, v)
    return (forward + direction(v, u)) / 2 if reverse else forward


def random_views(b=5, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, d, generator=g), torch.randn(b, d, generator=g)


# ----------------------------------------------------------------- paper variant
def test_two_sentence_case_by_hand():
    # cos(z1_i, z2_j) = [[1, 0.6], [0, 0.8]]; λ = 0.5, τ = 0.5.
    z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    z2 = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
    out = mixcse_loss(z1, z2, 0.5, mix_lambda=0.5)
    # forward: both mixtures are normalize([0.8, 0.4]) = [2, 1]/√5
    m = [2 / math.sqrt(5), 1 / math.sqrt(5)]
    forward = ((lse(2.0, 1.2, m[0] / 0.5) - 2.0) + (lse(0.0, 1.6, m[1] / 0.5) - 1.6)) / 2
    # reverse: anchors z2, candidates z1; both mixtures are [1, 1]/√2
    r = 1 / math.sqrt(2)
    reverse = ((lse(2.0, 0.0, r / 0.5) - 2.0) + (lse(1.6, 1.2, (0.6 + 0.8) * r / 0.5) - 1.6)) / 2
    assert out.parts["info_nce_forward"].item() == pytest.approx(forward, abs=1e-6)
    assert out.parts["info_nce_reverse"].item() == pytest.approx(reverse, abs=1e-6)
    assert out.loss.item() == pytest.approx((forward + reverse) / 2, abs=1e-6)
    assert out.stats["mixcse.mixed_cos"] == pytest.approx((m[0] + m[1]) / 2, abs=1e-6)
    assert out.stats["mixcse.mixed_cos_reverse"] == pytest.approx((r + 1.4 * r) / 2, abs=1e-6)


@pytest.mark.parametrize("lam", [0.0, 0.2, 0.5, 0.9])
def test_o_b2_logits_equal_the_materialised_mixtures(lam):
    z1, z2 = random_views(6, 5)
    fast = mixed_negative_logits(cosine_matrix(z1, z2), cosine_matrix(z2, z2), torch.arange(6), lam, 0.05)
    slow = materialised_mixed_logits(z1, z2, lam, 0.05)
    assert torch.equal(torch.isinf(fast), torch.eye(6, dtype=torch.bool))
    assert torch.allclose(fast, slow, atol=1e-4, rtol=1e-5)


def test_opposite_vectors_at_half_mix_give_a_zero_mixture_without_nan():
    z = torch.tensor([[1.0, 0.0], [-1.0, 0.0]])
    fast = mixed_negative_logits(cosine_matrix(z, z), cosine_matrix(z, z), torch.arange(2), 0.5, 0.05)
    assert fast[0, 1].item() == 0.0 and fast[1, 0].item() == 0.0


@pytest.mark.parametrize("no_stop_grad", [False, True])
def test_loss_and_gradients_equal_the_slow_computation(no_stop_grad):
    z1, z2 = random_views(5, 4, seed=1)
    fast_in = [z1.clone().requires_grad_(), z2.clone().requires_grad_()]
    slow_in = [z1.clone().requires_grad_(), z2.clone().requires_grad_()]
    fast = mixcse_loss(*fast_in, 0.05, mix_lambda=0.2, no_stop_grad=no_stop_grad).loss
    slow = slow_mixcse_loss(*slow_in, 0.2, 0.05, stop_grad=not no_stop_grad)
    assert fast.item() == pytest.approx(slow.item(), rel=1e-5)
    fast.backward()
    slow.backward()
    for a, b in zip(fast_in, slow_in):
        assert torch.allclose(a.grad, b.grad, atol=1e-5, rtol=1e-4)


def test_no_gradient_through_the_stop_gradient_paths():
    z1, z2 = random_views(4, 3, seed=2)

    def block_grads(no_stop_grad):
        a, b = z1.clone().requires_grad_(), z2.clone().requires_grad_()
        batch = ContrastiveBatch(a, b)
        contrib = MixCSE(MixCSEParams(no_stop_grad=no_stop_grad)).contribute(batch, cosine_matrix(a, b), 0.05)
        forward, reverse = (blk.logits for blk in contrib.negatives)
        fwd = torch.autograd.grad(forward[torch.isfinite(forward)].sum(), (a, b), allow_unused=True)
        rev = torch.autograd.grad(reverse[torch.isfinite(reverse)].sum(), (a, b), allow_unused=True)
        return fwd, rev

    (fwd_z1, fwd_z2), (rev_z1, rev_z2) = block_grads(no_stop_grad=False)
    assert fwd_z2 is None or torch.count_nonzero(fwd_z2) == 0     # mixtures of view 2 are constants
    assert rev_z1 is None or torch.count_nonzero(rev_z1) == 0     # mixtures of view 1 are constants
    assert fwd_z1.abs().sum() > 1e-3 and rev_z2.abs().sum() > 1e-3
    (_, fwd_z2), (rev_z1, _) = block_grads(no_stop_grad=True)
    assert fwd_z2.abs().sum() > 1e-3 and rev_z1.abs().sum() > 1e-3


def test_mixing_off_is_exactly_simcse():
    z1, z2 = random_views()
    component = MixCSE(MixCSEParams(mixing=False))
    assert not component.uses_reverse_direction
    out = ContrastiveLoss(0.05, [component])(ContrastiveBatch(z1, z2))
    simcse = ContrastiveLoss(0.05)(ContrastiveBatch(z1, z2))
    assert torch.equal(out.loss, simcse.loss)
    assert set(out.parts) == {"info_nce"}


def test_lambda_zero_is_simcse_with_every_negative_twice():
    z1, z2 = random_views(4, 3, seed=3)
    tau = 0.1
    out = mixcse_loss(z1, z2, tau, mix_lambda=0.0)

    def duplicated(a, c):
        cos = cosine_matrix(a, c) / tau
        b = len(a)
        rows = [torch.logsumexp(torch.cat([cos[i], cos[i][torch.arange(b) != i]]), 0) - cos[i, i] for i in range(b)]
        return torch.stack(rows).mean()

    expected = (duplicated(z1, z2) + duplicated(z2, z1)) / 2
    assert out.loss.item() == pytest.approx(expected.item(), rel=1e-6)
    assert out.loss.item() > ContrastiveLoss(tau, symmetric=True)(ContrastiveBatch(z1, z2)).loss.item() + 0.1


def test_single_keeps_only_the_view1_anchored_direction():
    z1, z2 = random_views(5, 4, seed=4)
    out = mixcse_loss(z1, z2, 0.05, single=True)
    assert set(out.parts) == {"info_nce"} and "mixcse.mixed_cos_reverse" not in out.stats
    slow = slow_mixcse_loss(z1, z2, 0.2, 0.05, reverse=False)
    assert out.loss.item() == pytest.approx(slow.item(), rel=1e-5)
    # with symmetric: true the reverse InfoNCE comes back, without mixed negatives
    both = mixcse_loss(z1, z2, 0.05, symmetric=True, single=True)
    plain = ContrastiveLoss(0.05, symmetric=True)(ContrastiveBatch(z1, z2))
    assert both.parts["info_nce_forward"].item() == pytest.approx(slow.item(), rel=1e-5)
    assert both.parts["info_nce_reverse"].item() == pytest.approx(plain.parts["info_nce_reverse"].item(), rel=1e-6)


def test_local_rows_split_the_loss_exactly():
    z1, z2 = random_views(6, 4, seed=5)
    loss_fn = ContrastiveLoss(0.05, [MixCSE()])
    full = loss_fn(ContrastiveBatch(z1, z2), compute_stats=False).loss
    halves = [loss_fn(ContrastiveBatch(z1, z2, local_rows=s), compute_stats=False).loss
              for s in (slice(0, 3), slice(3, 6))]
    assert full.item() == pytest.approx(sum(h.item() for h in halves) / 2, rel=1e-6)


# ----------------------------------------------------------------- official variant
def test_official_variant_by_hand():
    # B = 3, λ = 0.5, τ = 1. Raw (un-normalised) vectors, rolled by one.
    z1 = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    z2 = torch.tensor([[2.0, 0.0], [1.0, 1.0], [0.0, 1.0]])

    def cos(a, b):
        return (a[0] * b[0] + a[1] * b[1]) / math.hypot(*a) / math.hypot(*b)

    # block 1 columns: 0.5·z2_b + 0.5·z2_{b+1}
    m2 = [(1.5, 0.5), (0.5, 1.0), (1.0, 0.5)]
    # block 2 rows: 0.5·z1_a + 0.5·z1_{a+1}
    m1 = [(0.5, 1.0), (0.5, 1.5), (1.0, 0.5)]
    a = [(1.0, 0.0), (0.0, 2.0), (1.0, 1.0)]
    p = [(2.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    masked1 = {0: 2, 1: 0, 2: 1}   # (a, a−1): the mixture holding the positive z2_a → logit 0
    masked2 = {0: 1, 1: 2, 2: 0}   # (a, a+1)
    expected_rows = []
    for i in range(3):
        inbatch = [cos(a[i], p[j]) for j in range(3)]
        block1 = [0.0 if j == masked1[i] else cos(a[i], m2[j]) for j in range(3)]
        block2 = [0.0 if j == masked2[i] else cos(m1[i], p[j]) for j in range(3)]
        expected_rows.append(lse(*inbatch, *block1, *block2) - inbatch[i])
    expected = sum(expected_rows) / 3
    out = mixcse_loss(z1, z2, 1.0, mix_lambda=0.5, variant="official")
    assert set(out.parts) == {"info_nce"}                       # one direction, B×3B logits
    assert out.loss.item() == pytest.approx(expected, abs=1e-6)
    assert out.stats["mixcse.mixed_cos"] == pytest.approx(sum(cos(a[i], m2[i]) for i in range(3)) / 3, abs=1e-6)
    assert out.stats["mixcse.mixed_cos_reverse"] == pytest.approx(sum(cos(m1[i], p[i]) for i in range(3)) / 3,
                                                                  abs=1e-6)


def test_official_variant_stop_gradient_and_single():
    z1, z2 = random_views(4, 3, seed=6)
    a, b = z1.clone().requires_grad_(), z2.clone().requires_grad_()
    block1, block2 = official_mixed_logits(a, b, 0.2, 0.05)
    (through_z2,) = torch.autograd.grad(block1.sum(), b, allow_unused=True)
    (through_z1,) = torch.autograd.grad(block2.sum(), a, allow_unused=True)
    assert through_z2 is None and through_z1 is None       # the mixtures are constants
    assert torch.autograd.grad(block1.sum(), a)[0].abs().sum() > 1e-3   # the anchors still learn
    block1, block2 = official_mixed_logits(a, b, 0.2, 0.05, stop_grad=False)
    assert torch.autograd.grad(block1.sum(), b)[0].abs().sum() > 1e-3
    single = mixcse_loss(z1, z2, 0.05, variant="official", single=True)
    cos = cosine_matrix(z1, z2) / 0.05
    blk1, _ = official_mixed_logits(z1, z2, 0.2, 0.05)
    expected = F.cross_entropy(torch.cat([cos, blk1], 1), torch.arange(4))
    assert single.loss.item() == pytest.approx(expected.item(), rel=1e-6)


def test_official_mixes_raw_vectors_the_paper_unit_vectors():
    z1, z2 = random_views(4, 3, seed=7)
    z2_scaled = z2.clone()
    z2_scaled[1] *= 5.0   # same direction, different norm
    paper = [mixcse_loss(z1, z, 0.05).loss.item() for z in (z2, z2_scaled)]
    official = [mixcse_loss(z1, z, 0.05, variant="official").loss.item() for z in (z2, z2_scaled)]
    assert paper[0] == pytest.approx(paper[1], rel=1e-6)
    assert abs(official[0] - official[1]) > 1e-3


# ----------------------------------------------------------------- config
def test_bad_parameters_name_the_key():
    with pytest.raises(ValueError, match="mix_lambda"):
        MixCSEParams(mix_lambda=1.0)
    with pytest.raises(ValueError, match="variant"):
        MixCSEParams(variant="offical")
    with pytest.raises(ConfigError, match=r"mixcse.*mix_lambda"):
        load_config({"method": "mixcse", "mixcse": {"mix_lambda": -0.1}})
    with pytest.raises(ConfigError, match="did you mean 'mix_lambda'"):
        load_config({"method": "mixcse", "mixcse": {"mix_lamda": 0.3}})


# ----------------------------------------------------------------- analysis scores
class OneHotEncoder(nn.Module):
    """Sentence k ↦ e_k, no dropout: both views equal, distinct sentences orthogonal. It borrows the
    real encoder's batching (iter_batches, dropout_mode), so the analysis runs its real code path."""

    iter_batches = SentenceEncoder.iter_batches
    dropout_mode = SentenceEncoder.dropout_mode
    eval_weights = SentenceEncoder.eval_weights
    device = torch.device("cpu")

    def __init__(self, sentences):
        super().__init__()
        self.index = {s: i for i, s in enumerate(dict.fromkeys(sentences))}
        self.table = nn.Parameter(torch.eye(len(self.index)))

    def training_inputs(self, sentences, max_length):
        ids = torch.tensor([self.index[s] for s in sentences])
        return {"ids": torch.cat([ids, ids])}

    def forward(self, inputs, output_hidden_states=False):
        return SimpleNamespace(embeddings=self.table[inputs["ids"]])


@pytest.mark.parametrize("variant", ["paper", "official"])
def test_scores_on_a_toy_encoder(variant):
    sentences = ["a", "b", "a", "c", "d", "e"]   # the duplicate is dropped: batches [a b] [c d] [e]→skipped
    encoder = OneHotEncoder(sentences).eval()
    rng = torch.get_rng_state()
    scores = mixcse_scores(encoder, sentences, mix_lambda=0.2, temperature=0.05, batch_size=2, variant=variant)
    # positive cos 1; distinct sentences cos 0; cos(e_i, λe_i + (1−λ)e_j) = λ / √(λ² + (1−λ)²)
    assert scores["positive"] == pytest.approx(20.0)
    assert scores["random_negative"] == pytest.approx(0.0)
    assert scores["mixed_negative"] == pytest.approx(0.2 / math.sqrt(0.04 + 0.64) / 0.05, rel=1e-6)
    assert not encoder.training and torch.equal(torch.get_rng_state(), rng)


def test_pair_scores_shapes_and_errors():
    z1, z2 = random_views(4, 3)
    scores = mixcse_pair_scores(z1, z2)
    assert {k: v.numel() for k, v in scores.items()} == {"positive": 4, "random_negative": 12, "mixed_negative": 12}
    assert mixcse_pair_scores(z1, z2, variant="official")["mixed_negative"].numel() == 4
    with pytest.raises(ValueError, match="sentences"):
        mixcse_scores(OneHotEncoder(["x"]), ["x", "x"])


# ----------------------------------------------------------------- training
def test_training_logs_mixed_negative_statistics(tiny_config, data_dir):
    cfg = load_config({**tiny_config, "method": "mixcse", "max_steps": 2, "eval_every": 2, "log_every": 1})
    run = train(cfg, data_dir=data_dir, progress=False)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in steps] == [1, 2]
    for r in steps:
        for key in ("sim/mixcse.mixed_cos", "sim/mixcse.mixed_cos_reverse", "sim/pos_cos", "sim/neg_cos"):
            assert -1.0 <= r[key] <= 1.0
        assert math.isfinite(r["loss"])
        assert r["loss"] == pytest.approx((r["loss/info_nce_forward"] + r["loss/info_nce_reverse"]) / 2)
