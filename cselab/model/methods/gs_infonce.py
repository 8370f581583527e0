"""GS-InfoNCE: Gaussian noise vectors as extra negatives ("smoothing" the negative space).

Wu, Gao, Su, Han, Wang & Hu, "Smoothed Contrastive Learning for Unsupervised Sentence Embedding",
COLING 2022. Each step draws M vectors g_k ~ N(μ, σ²I) of the embedding size and adds them to the
denominator of the view-1-anchored InfoNCE only:

    ℓ_i = −log  e^{sim(h_i, h_i^+)/τ}  /  ( Σ_{j=1}^{B} e^{sim(h_i, h_j^+)/τ} + λ Σ_{k=1}^{M} e^{sim(g_k, h_i)/τ} )

with sim the cosine similarity; paper defaults μ = 0, σ = 1, λ = 1, M = 3 × batch size. λ enters
the core as ``log λ`` added to the noise logits.

Under cosine similarity the scale of a noise vector is irrelevant: with μ = 0, g = σ·ε with
ε ~ N(0, I) and sim(σε, h) = sim(ε, h), so σ cannot change the loss at all (not even per draw).
With μ ≠ 0 the ratio μ/σ sets how far the noise cloud is from the origin and so does matter.
The released code (caskcsg/sentemb, gsInfoNCE) also defines a ``lambda_g`` argument that it never
reads (its λ is always 1). See ``docs/methods/gs_infonce.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import torch

from ..distributed import broadcast_from_first_process
from ..losses.base import Component, ContrastiveBatch, Contribution, NegativeBlock
from ..losses.infonce import cosine_matrix
from .registry import register_method


@dataclass
class GSInfoNCEParams:
    """GS-InfoNCE hyper-parameters (``gs_infonce:`` section of a config).

    noise_ratio: M = round(noise_ratio × batch size), halves rounded up (paper: 3; its Table 3
        sweeps 0, 0.5, 1, 2, 3, 4, 8, 16). 0 gives plain SimCSE.
    num_noise: a fixed M instead (the released code's ``random_size``, 192); overrides noise_ratio.
    noise_mean: μ. noise_std: σ (> 0). noise_weight: λ (> 0), added as log λ to the noise logits.
    """

    noise_ratio: float = 3.0
    num_noise: Optional[int] = None
    noise_mean: float = 0.0
    noise_std: float = 1.0
    noise_weight: float = 1.0

    def __post_init__(self):
        if not (self.noise_ratio >= 0 and math.isfinite(self.noise_ratio)):
            raise ValueError(f"noise_ratio must be a finite number >= 0, got {self.noise_ratio}")
        if self.num_noise is not None and self.num_noise < 0:
            raise ValueError(f"num_noise must be >= 0 or null, got {self.num_noise}")
        if not (self.noise_std > 0 and math.isfinite(self.noise_std)):
            raise ValueError(f"noise_std must be > 0, got {self.noise_std}")
        if not math.isfinite(self.noise_mean):
            raise ValueError(f"noise_mean must be finite, got {self.noise_mean}")
        if not (self.noise_weight > 0 and math.isfinite(self.noise_weight)):
            raise ValueError(f"noise_weight must be > 0 (use noise_ratio: 0 to switch the noise off), "
                             f"got {self.noise_weight}")

    def num_vectors(self, batch_size: int) -> int:
        """M for a batch of ``batch_size`` sentences."""
        if self.num_noise is not None:
            return self.num_noise
        return int(math.floor(self.noise_ratio * batch_size + 0.5))


# --------------------------------------------------------------------------- maths
def gaussian_noise(num: int, dim: int, mean: float, std: float, like: torch.Tensor) -> torch.Tensor:
    """(num×dim) draws of N(mean, std²I) from the global torch RNG, on ``like``'s device and dtype.

    Drawn as ``mean + std·ε`` with ε ~ N(0, I), so one RNG state gives the same ε whatever σ is."""
    return mean + std * torch.randn(num, dim, device=like.device, dtype=like.dtype)


def noise_logits(anchors: torch.Tensor, noise: torch.Tensor, temperature: float) -> torch.Tensor:
    """(n×M) sim(g_k, h_i)/τ; the noise is a constant (no gradient reaches it)."""
    return cosine_matrix(anchors, noise.detach()) / temperature


# --------------------------------------------------------------------------- component
@register_method("gs_infonce", GSInfoNCEParams, "GS-InfoNCE: Gaussian noise vectors as extra negatives")
class GSInfoNCE(Component):
    """Gaussian-noise negatives for the view-1 anchors (Wu et al., COLING 2022):

        denominator_i = Σ_j e^{sim(h_i, h_j^+)/τ} + λ Σ_k e^{sim(g_k, h_i)/τ},   g_k ~ N(μ, σ²I)

    Fresh noise every step from the torch RNG (seeded by the trainer, saved in checkpoints). Only
    the forward direction gets noise, also when another component makes the loss bidirectional.
    Stats (logging steps): ``noise_cos``, the mean anchor–noise cosine.

    Example::

        loss_fn = ContrastiveLoss(0.05, [GSInfoNCE(GSInfoNCEParams(noise_ratio=3.0))])
    """

    stat_labels = {"noise_cos": "Gaussian negatives"}   # words for its statistic in figures
    display_name = "GS-InfoNCE"
    citation = ('Wu, Gao, Su, Han, Wang & Hu, "Smoothed Contrastive Learning for Unsupervised Sentence '
                'Embedding", COLING 2022 (the Gaussian-smoothed InfoNCE)')
    color_slot = 2
    cost_factor = 0.02   # M·B Gaussian vectors as extra logits
    key_labels = {"noise_ratio": "Gaussian negatives per batch size (M / B)"}
    stat_kinds = {"noise_cos": "noise negative"}

    def __init__(self, params: GSInfoNCEParams | None = None):
        super().__init__()
        self.params = params if params is not None else GSInfoNCEParams()

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        p = self.params
        num = p.num_vectors(batch.batch_size)
        if num == 0:
            return Contribution()
        anchors = batch.anchors(1)
        # Process 0's draw everywhere: in a multi-process run the ranks' random streams drift apart
        # (their dropout draws depend on their own sequence lengths), the noise must not.
        noise = broadcast_from_first_process(gaussian_noise(num, anchors.shape[1], p.noise_mean, p.noise_std, anchors))
        logits = noise_logits(anchors, noise, temperature)
        noise_cos = logits.detach().mean() * temperature  # 0-dim: the core reads it only at logging steps
        return Contribution(negatives=[NegativeBlock(logits, "noise", log_weight=math.log(p.noise_weight))],
                            stats={"noise_cos": noise_cos})


__all__ = ["GSInfoNCE", "GSInfoNCEParams", "gaussian_noise", "noise_logits"]
