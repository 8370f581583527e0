"""SimCSE++: off-dropout negatives and a dimension-wise contrastive term (``method: simcse_pp``).

Xu, Shao, Chen & Liu, "SimCSE++: Improving Contrastive Learning for Sentence Embeddings from Two
Perspectives", EMNLP 2023, pp. 12028-12040 (arXiv 2305.13192). Two changes to SimCSE:

* **off-dropout negatives** — dropout noise in the negative pairs only hurts, so the negatives
  are the sentences encoded once more with dropout off (h̄), the positive pair keeps its two
  dropout views:

      ℓ_i = −log  e^{s(h_i, h_i⁺)/τ} / ( e^{s(h_i, h_i⁺)/τ} + Σ_{j≠i} e^{s(h̄_i, h̄_j)/τ} )

  (the off-dropout InfoNCE; the released code's ``sampling_strategy: off_dropout``). In the core:
  every in-batch negative is removed from the denominator (``denominator_mask``) and the B×B
  off-dropout block joins it, its diagonal absent. The dropout-off pass keeps its graph.
* **dimension-wise contrastive learning (DCL)** — the embedding dimensions are the instances:
  with Z₁, Z₂ the two views (B×D) standardised per dimension over the batch (batch norm without
  affine parameters, biased variance, ε = 1e-5) and C = Z̃₁ᵀ Z̃₂ / (B·τ_d) (D×D),

      L_DCL = (1/D) Σ_k [ −C_kk + log Σ_l e^{C_kl} ]

  added as λ·L_DCL (``dcl_weight`` λ = 0.1, ``dcl_temperature`` τ_d = 5, the released code's
  default with off-dropout negatives; its DCL-only script hard-codes τ_d = 10).

Equation numbers: not given. The equations are cited by name (the off-dropout InfoNCE, the DCL
loss): only the paper's title page and abstract could be reached when this was written (arXiv
2305.13192 v2, its OpenReview and paperswithcode pages), not the method section, and a guessed number
would be worse than none. docs/methods/simcse_pp.md lists what the released code does differently.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..distributed import gather_with_local_grad
from ..losses.base import Component, ContrastiveBatch, Contribution, NegativeBlock
from ..losses.infonce import aligned_positive_mask, cosine_matrix
from ..utils import autocast
from .registry import register_method


@dataclass
class SimCSEPPParams:
    """SimCSE++ hyper-parameters (``simcse_pp:`` section); defaults: the paper's.

    off_dropout: negatives from a dropout-off pass (false: SimCSE's in-batch negatives, DCL alone).
    dcl_weight: λ of the dimension-wise term (0: off-dropout negatives alone).
    dcl_temperature: τ_d of the dimension-wise term.
    """

    off_dropout: bool = True
    dcl_weight: float = 0.1
    dcl_temperature: float = 5.0

    def __post_init__(self):
        if not self.dcl_weight >= 0:
            raise ValueError(f"dcl_weight must be >= 0, got {self.dcl_weight}")
        if not self.dcl_temperature > 0:
            raise ValueError(f"dcl_temperature must be > 0, got {self.dcl_temperature}")


# --------------------------------------------------------------------------- maths
def standardise_per_dimension(z: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Batch norm without affine parameters, as in training mode: each column to mean 0 and
    (biased) variance 1 over the rows."""
    return (z - z.mean(dim=0)) / torch.sqrt(z.var(dim=0, unbiased=False) + eps)


def dimension_wise_loss(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """L_DCL: InfoNCE over the D×D cross-view correlation C = Z̃₁ᵀZ̃₂ / (B·τ_d), dimension k of
    view 1 the anchor, the same dimension of view 2 its positive, the other dimensions negatives."""
    c = standardise_per_dimension(z1).T @ standardise_per_dimension(z2) / (z1.shape[0] * temperature)
    return (torch.logsumexp(c, dim=1) - c.diagonal()).mean()


def off_dropout_logits(z0: torch.Tensor, rows: slice, temperature: float) -> torch.Tensor:
    """s(h̄_i, h̄_j)/τ of the anchor rows against every sentence's dropout-off embedding, −inf on
    each row's own sentence (j = i is the positive's place, not a negative)."""
    logits = cosine_matrix(z0[rows], z0) / temperature
    own = aligned_positive_mask(logits.shape[0], logits.shape[1], rows if rows != slice(None) else None,
                                logits.device)
    return logits.masked_fill(own, float("-inf"))


# --------------------------------------------------------------------------- component
@register_method("simcse_pp", SimCSEPPParams, "SimCSE++: off-dropout negatives and a dimension-wise contrastive term")
class SimCSEPP(Component):
    """Off-dropout negatives replacing the in-batch ones, and ``simcse_pp.dcl`` = λ·L_DCL.

    Statistics: ``off_dropout_cos`` (mean cosine of two sentences' dropout-off embeddings).

    Example::

        loss_fn = ContrastiveLoss(0.05, [SimCSEPP()]); loss_fn.setup(encoder)
    """

    display_name = "SimCSE++"
    # Equation numbers: not given (only the title page and abstract of arXiv 2305.13192 could be
    # reached), so the equations are cited by name rather than by a guessed number.
    citation = ('Xu, Shao, Chen & Liu, "SimCSE++: Improving Contrastive Learning for Sentence Embeddings from '
                'Two Perspectives", EMNLP 2023 (arXiv 2305.13192): the off-dropout InfoNCE and the DCL loss; '
                'equation numbers not checked')
    color_slot = 8
    cost_factor = 0.35   # a third encoder pass (B sentences, dropout off) with its graph; the D×D term is small
    stat_labels = {"off_dropout_cos": "off-dropout negatives"}
    stat_kinds = {"off_dropout_cos": "off-dropout negative"}
    key_labels = {"dcl_weight": "dimension-wise weight λ", "dcl_temperature": "dimension-wise temperature τ_d"}
    term_labels = {"dcl": "dimension-wise contrastive loss"}

    @classmethod
    def check_gradient_cache(cls, params) -> None:
        if params.off_dropout:
            raise ValueError("simcse_pp runs the encoder itself (its dropout-off pass), which the gradient cache "
                             "cannot replay; set simcse_pp.off_dropout=false or drop mini_batch_size")

    def __init__(self, params: SimCSEPPParams | None = None):
        super().__init__()
        self.params = params if params is not None else SimCSEPPParams()

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        p = self.params
        out = Contribution()
        if p.off_dropout:
            z0 = gather_with_local_grad(self._dropout_off_pass(batch))
            rows = slice(None) if batch.local_rows is None else batch.local_rows
            block = off_dropout_logits(z0, rows, temperature)
            out.negatives.append(NegativeBlock(block, "off_dropout"))
            # every in-batch entry but the positive leaves the denominator: the off-dropout block replaces them
            out.denominator_mask = ~aligned_positive_mask(cos.shape[0], cos.shape[1], batch.local_rows, cos.device)
            if batch.compute_stats:
                present = torch.isfinite(block.detach())
                out.stats["off_dropout_cos"] = (torch.where(present, block.detach(), 0.0).sum()
                                                / present.sum() * temperature)
        if p.dcl_weight:
            out.terms["dcl"] = p.dcl_weight * dimension_wise_loss(batch.z1, batch.z2, p.dcl_temperature)
        return out

    def _dropout_off_pass(self, batch: ContrastiveBatch) -> torch.Tensor:
        """This process's sentences (the view-1 rows of the step's inputs) through the training path
        with dropout off, with a graph."""
        if not hasattr(self, "encoder"):
            raise RuntimeError("simcse_pp: call setup(encoder) before training")
        if batch.inputs is None:
            raise ValueError("simcse_pp needs the step's tokenised inputs (batch.inputs) for its dropout-off pass")
        rows = batch.inputs["input_ids"].shape[0] // 2
        view1 = {k: v[:rows] for k, v in batch.inputs.items()}
        with self.encoder.dropout_mode(False), autocast(self.encoder.device, batch.amp_dtype):
            return self.encoder(view1).embeddings.float()


__all__ = ["SimCSEPP", "SimCSEPPParams", "dimension_wise_loss", "off_dropout_logits", "standardise_per_dimension"]
