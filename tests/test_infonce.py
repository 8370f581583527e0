"""The InfoNCE core against hand computations on fixed tensors."""
from __future__ import annotations

import math

import pytest
import torch

from cselab.model.losses import (Component, ContrastiveBatch, ContrastiveLoss, Contribution, NegativeBlock,
                           aligned_positive_mask, info_nce)

# cos(z1_i, z2_j) = [[1, 0.6], [0, 0.8]]; with τ = 0.5 the logits are [[2, 1.2], [0, 1.6]].
Z1 = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
Z2 = torch.tensor([[1.0, 0.0], [0.6, 0.8]])
TAU = 0.5


def lse(*xs):
    return math.log(sum(math.exp(x) for x in xs))


def test_simcse_loss_by_hand():
    out = ContrastiveLoss(TAU)(ContrastiveBatch(Z1, Z2))
    row0 = lse(2.0, 1.2) - 2.0
    row1 = lse(0.0, 1.6) - 1.6
    assert out.loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-6)
    assert out.stats["pos_cos"] == pytest.approx((1.0 + 0.8) / 2)
    assert out.stats["neg_cos"] == pytest.approx((0.6 + 0.0) / 2)


def test_equals_cross_entropy_with_one_positive():
    torch.manual_seed(0)
    z1, z2 = torch.randn(5, 7), torch.randn(5, 7)
    out = ContrastiveLoss(0.05)(ContrastiveBatch(z1, z2))
    cos = torch.nn.functional.cosine_similarity(z1[:, None], z2[None], dim=-1)
    expected = torch.nn.functional.cross_entropy(cos / 0.05, torch.arange(5))
    assert out.loss.item() == pytest.approx(expected.item(), rel=1e-5)


def test_scale_invariance_of_embeddings():
    a = ContrastiveLoss(TAU)(ContrastiveBatch(Z1, Z2)).loss
    b = ContrastiveLoss(TAU)(ContrastiveBatch(3 * Z1, 0.5 * Z2)).loss
    assert a.item() == pytest.approx(b.item(), abs=1e-6)


class Fixed(Component):
    """A component that returns a fixed contribution (for testing the core's plumbing)."""

    name = "fixed"

    def __init__(self, contribution, reverse=False):
        super().__init__()
        self.contribution = contribution
        self.uses_reverse_direction = reverse

    def contribute(self, batch, cos, temperature):
        return self.contribution


def test_weighted_extra_negatives():
    block = NegativeBlock(torch.tensor([[0.5], [0.5]]), "noise", log_weight=math.log(2.0))
    out = ContrastiveLoss(TAU, [Fixed(Contribution(negatives=[block]))])(ContrastiveBatch(Z1, Z2))
    row0 = math.log(math.exp(2.0) + math.exp(1.2) + 2 * math.exp(0.5)) - 2.0
    row1 = math.log(math.exp(0.0) + math.exp(1.6) + 2 * math.exp(0.5)) - 1.6
    assert out.loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-6)


def test_absent_negatives_are_minus_inf():
    block = NegativeBlock(torch.tensor([[float("-inf"), 0.5], [0.3, float("-inf")]]), "x")
    out = ContrastiveLoss(TAU, [Fixed(Contribution(negatives=[block]))])(ContrastiveBatch(Z1, Z2))
    row0 = lse(2.0, 1.2, 0.5) - 2.0
    row1 = lse(0.0, 1.6, 0.3) - 1.6
    assert out.loss.item() == pytest.approx((row0 + row1) / 2, abs=1e-6)


def test_extra_positive_and_denominator_mask():
    pos = torch.tensor([[False, True], [False, False]])
    den = torch.tensor([[False, False], [True, False]])
    out = ContrastiveLoss(TAU, [Fixed(Contribution(positive_mask=pos, denominator_mask=den))])(
        ContrastiveBatch(Z1, Z2))
    # row 0: both entries positive → loss 0; row 1: the only negative is masked → loss 0
    assert out.loss.item() == pytest.approx(0.0, abs=1e-7)
    assert out.stats["neg_cos"] == pytest.approx(0.0)  # only (1,0) is still a negative


def test_mask_cannot_remove_a_positive():
    with pytest.raises(ValueError, match="both a positive and removed"):
        info_nce(torch.zeros(2, 2), torch.eye(2, dtype=torch.bool), denominator_mask=torch.eye(2, dtype=torch.bool))


def test_reverse_direction_is_averaged():
    out = ContrastiveLoss(TAU, symmetric=True)(ContrastiveBatch(Z1, Z2))
    forward = ((lse(2.0, 1.2) - 2.0) + (lse(0.0, 1.6) - 1.6)) / 2
    reverse = ((lse(2.0, 0.0) - 2.0) + (lse(1.2, 1.6) - 1.6)) / 2
    assert out.parts["info_nce_forward"].item() == pytest.approx(forward, abs=1e-6)
    assert out.parts["info_nce_reverse"].item() == pytest.approx(reverse, abs=1e-6)
    assert out.loss.item() == pytest.approx((forward + reverse) / 2, abs=1e-6)


def test_reverse_blocks_need_bidirectional_loss():
    block = NegativeBlock(torch.zeros(2, 1), "x", direction="reverse")
    with pytest.raises(ValueError, match="one-directional"):
        ContrastiveLoss(TAU, [Fixed(Contribution(negatives=[block]))])(ContrastiveBatch(Z1, Z2))
    out = ContrastiveLoss(TAU, [Fixed(Contribution(negatives=[block]), reverse=True)])(ContrastiveBatch(Z1, Z2))
    reverse = ((lse(2.0, 0.0, 0.0) - 2.0) + (lse(1.2, 1.6, 0.0) - 1.6)) / 2
    assert out.parts["info_nce_reverse"].item() == pytest.approx(reverse, abs=1e-6)


def test_terms_and_stats_are_named_by_component():
    contrib = Contribution(terms={"reg": torch.tensor(0.25)}, stats={"thing_cos": 0.5})
    out = ContrastiveLoss(TAU, [Fixed(contrib)])(ContrastiveBatch(Z1, Z2))
    assert out.parts["fixed.reg"].item() == 0.25
    assert out.loss.item() == pytest.approx(out.parts["info_nce"].item() + 0.25)
    assert out.stats["fixed.thing_cos"] == 0.5


def test_gradient_skips_masked_entries():
    z1 = Z1.clone().requires_grad_(True)
    z2 = Z2.clone().requires_grad_(True)
    den = torch.tensor([[False, True], [False, False]])
    out = ContrastiveLoss(TAU, [Fixed(Contribution(denominator_mask=den))])(ContrastiveBatch(z1, z2))
    out.loss.backward()
    assert out.parts["info_nce"].item() == pytest.approx((0.0 + lse(0.0, 1.6) - 1.6) / 2, abs=1e-6)
    # Row 0 is −log(1) = 0: with its only negative masked, z1[0] receives no gradient at all.
    assert torch.equal(z1.grad[0], torch.zeros(2))
    # Everything else comes from row 1 alone, computed independently.
    a, b = Z1.clone().requires_grad_(True), Z2.clone().requires_grad_(True)
    logits = torch.nn.functional.cosine_similarity(a[1:2], b, dim=-1) / TAU
    ((torch.logsumexp(logits, 0) - logits[1]) / 2).backward()
    assert torch.allclose(z1.grad[1], a.grad[1], atol=1e-6) and torch.allclose(z2.grad, b.grad, atol=1e-6)
    assert z2.grad.abs().sum() > 0


def test_local_rows_pick_the_right_positive_columns():
    mask = aligned_positive_mask(2, 4, slice(2, 4), "cpu")
    assert mask.nonzero().tolist() == [[0, 2], [1, 3]]
    torch.manual_seed(1)
    z1, z2 = torch.randn(4, 3), torch.randn(4, 3)
    full = ContrastiveLoss(TAU)(ContrastiveBatch(z1, z2), compute_stats=False).loss
    halves = [ContrastiveLoss(TAU)(ContrastiveBatch(z1, z2, local_rows=s), compute_stats=False).loss
              for s in (slice(0, 2), slice(2, 4))]
    assert full.item() == pytest.approx(sum(h.item() for h in halves) / 2, abs=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="temperature"):
        ContrastiveLoss(0.0)
    with pytest.raises(ValueError, match="once"):
        ContrastiveLoss(TAU, [Fixed(Contribution()), Fixed(Contribution())])
