"""MixCSE: in-batch negatives plus hard negatives made by mixing positive and negative features.

Zhang, Zhang, Mensah, Liu & Mao, "Unsupervised Sentence Representation via Contrastive Learning
with Mixing Negatives", AAAI 2022. For anchor h_i, positive h'_i and each in-batch negative h'_j
(j ≠ i) the mixed negative is

    h̃'_ij = (λ h'_i + (1 − λ) h'_j) / ‖λ h'_i + (1 − λ) h'_j‖₂

and the InfoNCE denominator gains one term per mixed negative, through a stop-gradient:

    ℓ_i = −log  e^{h_i·h'_i/τ} / ( Σ_{j=1}^{B} e^{h_i·h'_j/τ} + Σ_{j≠i} e^{h_i·SG(h̃'_ij)/τ} )

(h unit vectors, so h·h' is the cosine). The same is done with h'_i as the anchor and mixtures
of h_i with h_j; the loss is the mean of the two directions (see ``docs/methods/mixcse.md`` for
what the released code does instead: ``variant: official``).

The maths is in two pure functions, :func:`mixed_negative_logits` (paper, O(B²) memory from
similarity matrices) and :func:`official_mixed_logits` (the released code's B×3B construction);
:class:`MixCSE` only feeds them to the InfoNCE core. The paper's analyses (scores, spherical cap,
λ bound) are in :mod:`cselab.workbench.analysis.mixcse`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..losses.base import Component, ContrastiveBatch, Contribution, NegativeBlock
from ..losses.infonce import cosine_matrix
from .registry import register_method

VARIANTS = ("paper", "official")


@dataclass
class MixCSEParams:
    """MixCSE hyper-parameters (``mixcse:`` section of a config).

    mix_lambda: λ, the weight of the positive in each mixture (paper: 0.2); 0 ≤ λ < 1.
        λ = 0 does NOT give SimCSE: every in-batch negative then appears twice in the denominator.
    mixing: false switches the mixed negatives off; the loss is then exactly SimCSE (one direction).
    single: mixed negatives for the h_i-anchored direction only, and no reverse direction at all
        (the loss is the one-directional equation above). With ``symmetric: true`` in the config the
        core keeps both InfoNCE directions and only the reverse mixtures are dropped.
    no_stop_grad: let gradients flow through the mixed negatives (paper's ablation).
    variant: ``paper`` (default) or ``official`` (the released code, see the module docs).
    """

    mix_lambda: float = 0.2
    mixing: bool = True
    single: bool = False
    no_stop_grad: bool = False
    variant: str = "paper"

    def __post_init__(self):
        if not 0.0 <= self.mix_lambda < 1.0:
            raise ValueError(f"mix_lambda must be in [0, 1) (1 would make every mixture the positive itself), "
                             f"got {self.mix_lambda}")
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")


# --------------------------------------------------------------------------- maths
def mixed_negative_logits(anchor_cos: torch.Tensor, candidate_gram: torch.Tensor, positive_cols: torch.Tensor,
                          mix_lambda: float, temperature: float) -> torch.Tensor:
    """Logits of every anchor against the mixtures of its positive with each other candidate.

    For unit vectors a (anchor), p (its positive) and c_j (candidates),
    ‖λp + (1−λ)c_j‖² = λ² + (1−λ)² + 2λ(1−λ)·p·c_j, so

        cos(a, normalize(λp + (1−λ)c_j)) = (λ·a·p + (1−λ)·a·c_j) / ‖λp + (1−λ)c_j‖

    needs only the anchor–candidate cosines and the positive–candidate cosines: O(n·B) memory,
    never the n×B×d tensor of mixtures.

    Args:
        anchor_cos: (n×B) cos(anchor_r, candidate_j). Detach the candidates before computing it
            for the paper's stop-gradient.
        candidate_gram: (n×B) cos(candidate_{positive_cols[r]}, candidate_j).
        positive_cols: (n,) long, the column of each row's positive.
        mix_lambda: λ, the positive's weight. temperature: τ.

    Returns:
        (n×B) logits cos/τ; ``-inf`` at each row's positive column (its "mixture" is the positive).

    Example::

        cos = cosine_matrix(z1, z2.detach()); gram = cosine_matrix(z2, z2).detach()
        logits = mixed_negative_logits(cos, gram, torch.arange(len(z1)), 0.2, 0.05)
    """
    lam = float(mix_lambda)
    rows = torch.arange(anchor_cos.shape[0], device=anchor_cos.device)
    positive_cos = anchor_cos[rows, positive_cols].unsqueeze(1)
    numerator = lam * positive_cos + (1.0 - lam) * anchor_cos
    squared_norm = lam ** 2 + (1.0 - lam) ** 2 + 2.0 * lam * (1.0 - lam) * candidate_gram
    # The mixture of two opposite unit vectors at λ = 0.5 is 0; F.normalize's eps handles the same case.
    norm = squared_norm.clamp_min(1e-24).sqrt()
    is_positive = torch.zeros_like(anchor_cos, dtype=torch.bool)
    is_positive[rows, positive_cols] = True
    return (numerator / norm / temperature).masked_fill(is_positive, float("-inf"))


def official_mixed_logits(z1: torch.Tensor, z2: torch.Tensor, mix_lambda: float, temperature: float,
                          stop_grad: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """The two extra B×B logit blocks of the released MixCSE code (``mixcse/models_mix.py``).

    On the raw (un-normalised) training embeddings, with a roll by one (row B−1 mixes with row 0):

    * block 1, row a, column b: cos(z1_a, λ·z2_b + (1−λ)·z2_{b+1}) / τ; the entry (a, a−1), whose
      mixture contains the positive z2_a, is multiplied by 0 (a logit of 0 that stays in the
      denominator);
    * block 2, row a, column b: cos(λ·z1_a + (1−λ)·z1_{a+1}, z2_b) / τ; the entry (a, a+1) is
      multiplied by 0.

    Both blocks join the denominator of the view-1-anchored rows (cross-entropy over B×3B logits).
    The mixtures are detached unless ``stop_grad`` is false.
    """
    lam = float(mix_lambda)
    n = z1.shape[0]
    mix2 = lam * z2 + (1.0 - lam) * torch.roll(z2, shifts=-1, dims=0)
    mix1 = lam * z1 + (1.0 - lam) * torch.roll(z1, shifts=-1, dims=0)
    if stop_grad:
        mix1, mix2 = mix1.detach(), mix2.detach()
    eye = torch.eye(n, device=z1.device, dtype=z1.dtype)
    keep1 = 1.0 - torch.roll(eye, shifts=-1, dims=1)  # zero at (a, a−1)
    keep2 = 1.0 - torch.roll(eye, shifts=1, dims=1)   # zero at (a, a+1)
    block1 = cosine_matrix(z1, mix2) / temperature * keep1
    block2 = cosine_matrix(mix1, z2) / temperature * keep2
    return block1, block2


# --------------------------------------------------------------------------- component
@register_method("mixcse", MixCSEParams, "MixCSE: hard negatives mixing the positive with in-batch negatives")
class MixCSE(Component):
    """MixCSE's mixed negatives as extra InfoNCE denominator blocks (Zhang et al., AAAI 2022).

    Paper variant, forward direction (anchors h_i = view 1):

        ℓ_i = −log e^{h_i·h'_i/τ} / ( Σ_j e^{h_i·h'_j/τ} + Σ_{j≠i} e^{h_i·SG(h̃'_ij)/τ} ),
        h̃'_ij = normalize(λ h'_i + (1 − λ) h'_j)

    and the reverse direction (anchors h'_i, mixtures of h_i with h_j); the core averages the two.
    Stats (logging steps): ``mixed_cos`` / ``mixed_cos_reverse``, the mean cosine of anchor–mixed
    negative pairs (official variant: the mixtures that contain the anchor's own positive, the
    block diagonals, as in the released code's ``mix_scores``).

    Example::

        loss_fn = ContrastiveLoss(0.05, [MixCSE(MixCSEParams(mix_lambda=0.2))])
        out = loss_fn(ContrastiveBatch(z1, z2)); out.parts["info_nce_reverse"]
    """

    # words for its statistics in figures
    stat_labels = {"mixed_cos": "mixed negatives", "mixed_cos_reverse": "mixed negatives (reverse)"}
    display_name = "MixCSE"
    citation = ('Zhang, Zhang, Mensah, Liu & Mao, "Unsupervised Sentence Representation via Contrastive '
                'Learning with Mixing Negatives", AAAI 2022 (the mixed-negative InfoNCE)')
    color_slot = 1
    cost_factor = 0.05   # B × 2B mixtures and their cosines: small next to the encoder
    key_labels = {"mix_lambda": "mixing weight λ"}
    stat_kinds = {"mixed_cos": "mixed negative"}

    def __init__(self, params: MixCSEParams | None = None):
        super().__init__()
        params = params if params is not None else MixCSEParams()
        self.params = params
        self.uses_reverse_direction = params.mixing and params.variant == "paper" and not params.single

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        p = self.params
        if not p.mixing:
            return Contribution()
        if p.variant == "official":
            return self._official(batch, temperature)
        stop_grad = not p.no_stop_grad
        rows = slice(None) if batch.local_rows is None else batch.local_rows
        positive_cols = torch.arange(cos.shape[0], device=cos.device) + _row_offset(batch.local_rows)

        def block(anchors: torch.Tensor, candidates: torch.Tensor,
                  anchor_cos: torch.Tensor | None = None) -> torch.Tensor:
            # candidates: the other view (all rows); the mixtures are built from it.
            frozen = candidates.detach() if stop_grad else candidates
            if anchor_cos is None:
                anchor_cos = cosine_matrix(anchors, frozen)
            gram = cosine_matrix(frozen[rows], frozen)
            return mixed_negative_logits(anchor_cos, gram, positive_cols, p.mix_lambda, temperature)

        # Without the stop-gradient the forward anchor cosines are the core's matrix itself; with it
        # they must be recomputed against the detached candidates.
        forward = block(batch.anchors(1), batch.z2, None if stop_grad else cos)
        blocks = [NegativeBlock(forward, "mixed", direction="forward")]
        stats = {"mixed_cos": _finite_mean(forward) * temperature}
        if self.uses_reverse_direction:
            reverse = block(batch.anchors(2), batch.z1)
            blocks.append(NegativeBlock(reverse, "mixed_reverse", direction="reverse"))
            stats["mixed_cos_reverse"] = _finite_mean(reverse) * temperature
        return Contribution(negatives=blocks, stats=stats)

    def _official(self, batch: ContrastiveBatch, temperature: float) -> Contribution:
        p = self.params
        block1, block2 = official_mixed_logits(batch.z1, batch.z2, p.mix_lambda, temperature,
                                               stop_grad=not p.no_stop_grad)
        if batch.local_rows is not None:  # the released code's rows are the anchors of this process
            block1, block2 = block1[batch.local_rows], block2[batch.local_rows]
        blocks = [NegativeBlock(block1, "mixed", direction="forward")]
        stats = {"mixed_cos": _diagonal_mean(block1, batch.local_rows) * temperature}
        if not p.single:
            blocks.append(NegativeBlock(block2, "mixed_reverse", direction="forward"))
            stats["mixed_cos_reverse"] = _diagonal_mean(block2, batch.local_rows) * temperature
        return Contribution(negatives=blocks, stats=stats)


def _row_offset(local_rows: slice | None) -> int:
    """Global index of the first anchor row (its positive's column)."""
    return 0 if local_rows is None else (local_rows.start or 0)


def _finite_mean(x: torch.Tensor) -> torch.Tensor:
    """Mean of the present (finite) entries, detached: a 0-dim tensor that the core turns into a
    float only at logging steps. Masked sum over count rather than boolean indexing, which would
    force a device sync on every step."""
    x = x.detach()
    present = torch.isfinite(x)
    return torch.where(present, x, 0.0).sum() / present.sum()


def _diagonal_mean(block: torch.Tensor, local_rows: slice | None) -> torch.Tensor:
    """Mean of each anchor row's entry in its positive's column, detached."""
    return block.detach().diagonal(_row_offset(local_rows)).mean()


__all__ = ["MixCSE", "MixCSEParams", "mixed_negative_logits", "official_mixed_logits"]
