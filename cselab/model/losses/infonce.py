"""The InfoNCE core that every method in cselab shares.

Unsupervised SimCSE (Gao et al., EMNLP 2021, eq. 1): with h_i and h_i^+ the two dropout views
of sentence i in a batch of B,

    ℓ_i = −log  e^{sim(h_i, h_i^+)/τ}  /  Σ_{j=1}^{B} e^{sim(h_i, h_j^+)/τ}

with sim the cosine similarity. Methods extend it through :class:`~cselab.model.losses.base.Component`:
extra negative blocks join the denominator (``Σ_k w·e^{l_ik}`` as ``l_ik + log w``), extra
positives join the numerator, masked entries leave the denominator, and extra terms are added.
The maths lives in :func:`info_nce`; :class:`ContrastiveLoss` only assembles its inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .base import Component, ContrastiveBatch, Contribution


CORE_STAT_LABELS = {"pos_cos": "positive pairs", "neg_cos": "in-batch negatives"}
# the kind of pair each is about (cselab.workbench.plots.palettes.STATISTIC_COLOURS), as a method declares its own
CORE_STAT_KINDS = {"pos_cos": "positive", "neg_cos": "in-batch negative"}


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(N×D, M×D) → N×M cosine similarities."""
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def info_nce(logits: torch.Tensor, positive_mask: torch.Tensor, extra_logits: Sequence[torch.Tensor] = (),
             denominator_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Per-row InfoNCE loss.

    ``logits``: (N×B) in-batch logits (cos/τ). ``positive_mask``: (N×B) bool, the numerator's
    entries (the aligned view, plus any extra positives). ``extra_logits``: (N×M_k) blocks added
    to the denominator (``-inf`` = absent). ``denominator_mask``: (N×B) bool, in-batch entries
    removed from the denominator (never a positive).

        ℓ_i = logsumexp(denominator row i) − logsumexp(positive entries of row i)

    With one positive per row this is cross-entropy against that column.
    """
    if denominator_mask is not None:
        if (denominator_mask & positive_mask).any():
            raise ValueError("an entry cannot be both a positive and removed from the denominator")
        logits = logits.masked_fill(denominator_mask, float("-inf"))
    numerator = torch.logsumexp(logits.masked_fill(~positive_mask, float("-inf")), dim=1)
    denominator = torch.logsumexp(torch.cat([logits, *extra_logits], dim=1), dim=1)
    return denominator - numerator


def aligned_positive_mask(n_rows: int, n_cols: int, local_rows: slice | None, device) -> torch.Tensor:
    """Row r of the anchors (global row ``local_rows.start + r``) has its positive in that column."""
    offset = 0 if local_rows is None else (local_rows.start or 0)
    rows = torch.arange(n_rows, device=device)
    mask = torch.zeros(n_rows, n_cols, dtype=torch.bool, device=device)
    mask[rows, rows + offset] = True
    return mask


@dataclass
class LossOutput:
    loss: torch.Tensor
    parts: dict[str, torch.Tensor] = field(default_factory=dict)   # named loss terms (with grad)
    stats: dict[str, float] = field(default_factory=dict)           # similarity statistics


class ContrastiveLoss(nn.Module):
    """InfoNCE over cosine/τ with in-batch negatives, extended by components.

    Args:
        temperature: τ (SimCSE: 0.05).
        components: the method's pieces (empty = plain SimCSE).
        symmetric: also compute the view-2-anchored direction and average the two. Forced on
            when a component sets ``uses_reverse_direction`` (MixCSE).

    Example::

        loss_fn = ContrastiveLoss(0.05)
        out = loss_fn(ContrastiveBatch(z1, z2))
        out.loss.backward(); out.stats["pos_cos"]
    """

    def __init__(self, temperature: float = 0.05, components: Iterable[Component] = (), symmetric: bool = False):
        super().__init__()
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.temperature = float(temperature)
        self.components = nn.ModuleList(components)
        names = [c.name for c in self.components]
        if len(set(names)) != len(names):
            raise ValueError(f"each component may appear once, got {names}")
        self.symmetric = symmetric

    @property
    def needs_hidden_states(self) -> bool:
        return any(c.needs_hidden_states for c in self.components)

    @property
    def bidirectional(self) -> bool:
        return self.symmetric or any(c.uses_reverse_direction for c in self.components)

    def setup(self, encoder: nn.Module, corpus: list[str] | None = None) -> None:
        for c in self.components:
            c.setup(encoder, corpus)

    def training_inputs(self, encoder, sentences: list[str], max_length: int | None) -> dict:
        """The step's 2B-row batch: the encoder's (its pooler's) two identical views, then every
        component's ``build_views`` in turn (hook 1 of a step, :mod:`.base`)."""
        inputs = encoder.training_inputs(sentences, max_length)
        for c in self.components:
            inputs = c.build_views(inputs, len(sentences))
        return inputs

    def after_optimizer_step(self) -> None:
        """Hook 5 of a step, for every component (momentum encoders' EMA)."""
        for c in self.components:
            c.after_optimizer_step()

    def forward(self, batch: ContrastiveBatch, compute_stats: bool = True) -> LossOutput:
        tau = self.temperature
        batch.compute_stats = compute_stats
        # One B×B matrix serves both directions: the reverse direction's rows are its columns.
        full = cosine_matrix(batch.z1, batch.z2)
        rows = batch.local_rows if batch.local_rows is not None else slice(None)
        cos = full[rows]
        contributions: list[tuple[str, Contribution]] = [
            (c.name, c.contribute(batch, cos, tau)) for c in self.components
        ]
        aligned = aligned_positive_mask(cos.shape[0], cos.shape[1], batch.local_rows, cos.device)
        positives = aligned
        denominator_mask = None
        for _, contrib in contributions:
            if contrib.positive_mask is not None:
                positives = positives | contrib.positive_mask
            if contrib.denominator_mask is not None:
                denominator_mask = contrib.denominator_mask if denominator_mask is None else (
                    denominator_mask | contrib.denominator_mask)

        def extra(direction: str) -> list[torch.Tensor]:
            return [blk.logits + blk.log_weight for _, contrib in contributions for blk in contrib.negatives
                    if blk.direction == direction]

        parts: dict[str, torch.Tensor] = {}
        forward_loss = info_nce(cos / tau, positives, extra("forward"), denominator_mask).mean()
        if self.bidirectional:
            # Masks describe sentence pairs (i, j), so they apply unchanged to the reverse direction.
            cos_rev = full.T[rows]
            reverse_loss = info_nce(cos_rev / tau, positives, extra("reverse"), denominator_mask).mean()
            parts["info_nce_forward"] = forward_loss
            parts["info_nce_reverse"] = reverse_loss
            parts["info_nce"] = (forward_loss + reverse_loss) / 2
        else:
            if extra("reverse"):
                raise ValueError("a component added reverse-direction negatives but the loss is one-directional")
            parts["info_nce"] = forward_loss
        total = parts["info_nce"]
        for name, contrib in contributions:
            for term, value in contrib.terms.items():
                parts[f"{name}.{term}"] = value
                total = total + value

        stats: dict[str, float] = {}
        if compute_stats:
            with torch.no_grad():
                stats.update(similarity_stats(cos.detach(), aligned, positives))
                for name, contrib in contributions:
                    stats.update({f"{name}.{k}": float(v) for k, v in contrib.stats.items()})
        return LossOutput(total, parts, stats)


def similarity_stats(cos: torch.Tensor, aligned: torch.Tensor, positives: torch.Tensor | None = None) -> dict[str, float]:
    """Mean cosine of the aligned positive pairs and of the in-batch negatives (across views;
    entries a component declared positive are not counted as negatives)."""
    negatives = ~(aligned if positives is None else positives)
    return {
        "pos_cos": float(cos[aligned].mean()),
        "neg_cos": float(cos[negatives].mean()) if negatives.any() else float("nan"),
    }
