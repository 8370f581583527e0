"""The bidirectional margin loss (BML) of ClusterNS (Deng et al., Findings of ACL 2023, eq. 3–6).

For a sample x_i and a false negative x*_ij (another member of its cluster), with the
similarities measured across the two dropout views as the official code does:

    Δ_ij = cos(z1_i, z2_j) − cos(z1_i, z2_i)                           (eq. 3)

The false negative should sit between the hard negatives and the positive, −β ≤ Δ_ij ≤ −α
(eq. 4), which the loss enforces from both sides:

    L_bml = ReLU(Δ_ij + α) + ReLU(−Δ_ij − β)                            (eq. 5)

averaged over the false-negative pairs, and added to the contrastive loss as

    L = L_cl + λ · L_bml                                                (eq. 6)

The official code averages over all B² entries of the batch instead (``reduction="all_pairs"``):
entries that are not false-negative pairs enter with Δ = 0 and add the constant
ReLU(α) + ReLU(−β) each, which changes the value but not the gradient, and the gradient of each
false-negative pair is divided by B² rather than by their number.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

REDUCTIONS = ("false_negatives", "all_pairs")


def bidirectional_margin(delta: torch.Tensor, alpha: float, beta: float) -> torch.Tensor:
    """Element-wise ReLU(Δ + α) + ReLU(−Δ − β): zero inside [−β, −α], slope +1 above −α,
    slope −1 below −β."""
    return F.relu(delta + alpha) + F.relu(-delta - beta)


def bml_loss(cos: torch.Tensor, positive_cos: torch.Tensor, false_negatives: torch.Tensor, alpha: float,
             beta: float, reduction: str = "false_negatives") -> torch.Tensor:
    """L_bml of one batch (unweighted).

    Args:
        cos: (N×B) cross-view cosines cos(z1_i, z2_j) of the N anchors.
        positive_cos: (N) cos(z1_i, z2_i) of each anchor's positive.
        false_negatives: (N×B) bool, the false-negative pairs (never the positive itself).
        reduction: ``false_negatives`` (paper: mean over the pairs; 0 when there are none) or
            ``all_pairs`` (official: mean over all N×B entries, non-pairs with Δ = 0).

    Example::

        cos = torch.tensor([[0.9, 0.8], [0.2, 0.7]])
        bml_loss(cos, cos.diagonal(), torch.tensor([[False, True], [True, False]]), 0.0, 0.3)
        # Δ = [−0.1, −0.5]: inside the band → 0, below −β by 0.2 → 0.2; mean 0.1
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"clusterns.bml_reduction must be one of {REDUCTIONS}, got {reduction!r}")
    delta = cos - positive_cos.unsqueeze(1)
    if reduction == "all_pairs":
        return bidirectional_margin(delta * false_negatives.to(delta.dtype), alpha, beta).mean()
    if not false_negatives.any():
        return cos.new_zeros(())
    return bidirectional_margin(delta[false_negatives], alpha, beta).mean()
