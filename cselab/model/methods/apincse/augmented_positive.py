"""APINCSE's augmented positive from a dynamic neighbourhood (eq. 10–15): ``method: augmented_positive``.

Cai, Huang & Dong, "Semantic similarity model based on augmented positives and interlayer
negatives", J. Jilin Univ. (Eng. & Tech.) 55(11), 2025. The paper has no public code; the
equations below are written in its notation as we reconstruct them (see docs/methods/apincse.md,
"interpretation choices"). Its reference [14], IS-CSE (He et al., 2023, ``dll-wu/IS-CSE``), is
the closest public code and was read to settle the details.

With h_i the anchor (view 1) and h⁺_i the positive (view 2) of sentence i, ĥ = h/‖h‖:

* eq. 10–11 — enqueue first: Q ← FIFO(Q ∪ {ĥ⁺_1 … ĥ⁺_B}), detached, |Q| = L (``queue_size``);
* eq. 12–13 — N_i = the k (``top_k``) entries of Q most similar (cosine) to ĥ⁺_i, skipping
  ĥ⁺_i's own just-enqueued copy;
* eq. 14 — H_i = [ĥ⁺_i ; N_i] and  h^{p+}_i = softmax(ĥ⁺_i H_iᵀ / β) H_i  (``beta``; ĥ⁺_i keeps
  its gradient, the neighbours are constants);
* eq. 15 — l_P = −(1/B) Σ_i log  e^{sim(h_i, h^{p+}_i)/τ} / Σ_j e^{sim(h_i, h^{p+}_j)/τ};
* eq. 20 — l_all = l_I + λ_P·l_P + l_N with λ_P = 1 (``weight``; IS-CSE uses 0.1).

l_P starts on the first step at which the queue is full (before that the term is absent and only
``queue_fill`` is reported), as IS-CSE's ``lbuf[0].norm() > 0`` test after enqueueing.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...distributed import all_gather, is_distributed, rank
from ...losses.base import Component, ContrastiveBatch, Contribution
from ...losses.infonce import aligned_positive_mask, cosine_matrix, info_nce
from ..registry import register_method
from ...losses.queue import EmbeddingQueue, check_queue_size


@dataclass
class AugmentedPositiveParams:
    """Defaults are the paper's BERT-base settings (L = 1024, k = 16, β = 2, weight 1)."""

    queue_size: int = 1024   # L, eq. 10
    top_k: int = 16          # k, eq. 12
    beta: float = 2.0        # β, eq. 14 (divides cosines)
    weight: float = 1.0      # λ_P, eq. 20 (IS-CSE: 0.1)

    def __post_init__(self):
        if self.queue_size < 2:
            raise ValueError(f"queue_size must be >= 2, got {self.queue_size}")
        check_queue_size(self.queue_size)
        if not 1 <= self.top_k < self.queue_size:
            raise ValueError(f"top_k must be in [1, queue_size - 1] = [1, {self.queue_size - 1}], got {self.top_k}")
        if not self.beta > 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        if not self.weight >= 0:
            raise ValueError(f"weight must be >= 0, got {self.weight}")


# ---------------------------------------------------------------------------- maths
def top_k_neighbours(queries: torch.Tensor, entries: torch.Tensor, k: int, exclude: torch.Tensor) -> torch.Tensor:
    """Eq. 12–13: indices (N × k) of the ``k`` rows of ``entries`` with the largest dot product
    with each query (cosine for normalised rows), best first; ``exclude[n]`` (a row index of
    ``entries``) is never chosen for query n."""
    with torch.no_grad():
        scores = queries @ entries.T
        scores[torch.arange(len(queries), device=scores.device), exclude] = float("-inf")
        return scores.topk(k, dim=1).indices


def augment_positives(positives: torch.Tensor, neighbours: torch.Tensor,
                      beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Eq. 14: ``(h^{p+}, weights)`` for normalised ``positives`` (N × D, with gradient) and their
    ``neighbours`` (N × k × D): H = [positive; neighbours], weights = softmax(positive·Hᵀ / β)
    (N × (k+1), column 0 = the positive itself), h^{p+} = weights·H."""
    stacked = torch.cat([positives.unsqueeze(1), neighbours], dim=1)
    weights = torch.softmax(torch.einsum("nd,nkd->nk", positives, stacked) / beta, dim=1)
    return torch.einsum("nk,nkd->nd", weights, stacked), weights


def augmented_positive_loss(anchors: torch.Tensor, augmented: torch.Tensor, temperature: float,
                            local_rows: slice | None = None) -> torch.Tensor:
    """Eq. 15: InfoNCE of the anchors (n × D) against the augmented positives (N × D), the other
    rows' augmented positives being the negatives. Mean over anchors."""
    logits = cosine_matrix(anchors, augmented) / temperature
    positives = aligned_positive_mask(logits.shape[0], logits.shape[1], local_rows, logits.device)
    return info_nce(logits, positives).mean()


def queue_block(rows: torch.Tensor, local_rows: slice | None) -> tuple[torch.Tensor, int]:
    """``(block, offset)``: the rows every process enqueues this step (detached; identical on
    every process) and where this process's ``rows`` start inside it. When the trainer already
    gathered the global batch (``local_rows`` set) ``rows`` is global; otherwise, in a multi-process
    run, every process's rows are gathered here."""
    rows = rows.detach()
    if local_rows is not None or not is_distributed():
        return rows, 0
    return torch.cat(all_gather(rows), dim=0), rank() * rows.shape[0]


# ---------------------------------------------------------------------------- component
@register_method("augmented_positive", AugmentedPositiveParams,
                 "APINCSE augmented positive: attention over the positive's top-k queue neighbours (eq. 10-15)")
class AugmentedPositive(Component):
    """Adds ``augmented_positive.l_p`` = λ_P·l_P (eq. 15) once the neighbour queue is full.

    Statistics: ``queue_fill``; once active ``aug_pos_cos`` (mean cos(h_i, h^{p+}_i)) and
    ``self_weight`` (mean attention weight of h⁺_i on itself in eq. 14).
    """

    stat_labels = {"aug_pos_cos": "augmented positive",
                   "self_weight": "own view's weight in the augmented positive (eq. 14)",
                   "queue_fill": "neighbour queue fill"}
    # trained alone it is the paper's ablation without the interlayer negative (Sec. 4.4)
    display_name = "APINCSE-IN"
    citation = ('Cai, Huang & Dong, "Semantic similarity model based on augmented positives and interlayer '
                'negatives", J. Jilin Univ. (Eng. & Tech.) 2025, eq. 10-15')
    color_slot = 5
    cost_factor = 0.05   # queue search for neighbours (top-k over L)
    key_labels = {"top_k": "neighbours k", "queue_size": "queue size L"}
    term_labels = {"l_p": "augmented-positive loss"}
    term_titles = {"l_p": r"APINCSE $\ell_P$ (augmented positive)"}
    stat_kinds = {"aug_pos_cos": "augmented positive"}

    @classmethod
    def check_config(cls, params: AugmentedPositiveParams, *, batch_size: int) -> None:
        if params.queue_size < batch_size:
            raise ValueError(f"queue_size={params.queue_size} is smaller than batch_size={batch_size}: "
                             "the queue must hold at least one batch")

    def __init__(self, params: AugmentedPositiveParams):
        super().__init__()
        self.params = params

    def setup(self, encoder, corpus=None) -> None:
        super().setup(encoder, corpus)
        # Created here because the embedding width is the encoder's; the trainer loads a resumed
        # queue into it right after setup.
        self.queue = EmbeddingQueue(self.params.queue_size, encoder.embedding_dim()).to(encoder.device)

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        if not hasattr(self, "queue"):
            raise RuntimeError("augmented_positive: call setup(encoder) before training (it creates the queue)")
        positives = F.normalize(batch.z2, dim=-1)
        block, offset = queue_block(positives, batch.local_rows)
        if len(block) > self.queue.size:
            raise ValueError(f"augmented_positive.queue_size={self.queue.size} is smaller than the batch "
                             f"({len(block)} rows); it must hold at least one batch")
        self.queue.push(block)   # eq. 10–11: enqueue first, then retrieve from the updated queue
        stats = {"queue_fill": self.queue.fill}
        if not self.queue.is_full:
            return Contribution(stats=stats)
        own = self.queue.newest_positions(len(block))[offset:offset + len(positives)]
        index = top_k_neighbours(positives, self.queue.entries, self.params.top_k, own)
        augmented, weights = augment_positives(positives, self.queue.entries[index], self.params.beta)
        anchors = batch.anchors(1)
        loss = augmented_positive_loss(anchors, augmented, temperature, batch.local_rows)
        if batch.compute_stats:
            with torch.no_grad():
                rows = slice(0, len(anchors)) if batch.local_rows is None else batch.local_rows
                stats["aug_pos_cos"] = float(F.cosine_similarity(anchors, augmented[rows], dim=-1).mean())
                stats["self_weight"] = float(weights[:, 0].mean())
        return Contribution(terms={"l_p": self.params.weight * loss}, stats=stats)
