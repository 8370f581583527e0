"""ClusterNS (Deng et al., "Clustering-Aware Negative Sampling for Unsupervised Sentence
Representation", Findings of ACL 2023) as a component of the InfoNCE core.

Before clustering starts the run is plain SimCSE. Clustering starts at the first step whose
average in-batch similarity — the mean of the full B×B cross-view cosine matrix, diagonal
included, as in the official code — falls to σ (``start_threshold``); the centroids are
initialised from that batch (greedy, §3.3) and that step adds nothing else. Every later step:

1. one momentum K-means step on the detached view-1 embeddings (Algorithm 1 lines 7–9, eq. 7–8;
   :mod:`.kmeans`);
2. with the updated centroids, each sample's nearest centroid c_i1 (its cluster) and
   second-nearest centroid c_i2;
3. hard negatives (eq. 2): every anchor sees the detached c_j2 of all B samples in its
   denominator, each weighted by μ,

       ℓ_i = −log  e^{cos(h_i, h_i⁺)/τ} / ( Σ_j e^{cos(h_i, h_j⁺)/τ} + μ Σ_j e^{cos(h_i, c_j2)/τ} )

4. false negatives (eq. 3–6): the other members of x_i's cluster, kept between the hard
   negatives and the positive by the bidirectional margin loss, L = L_cl + λ·L_bml
   (:mod:`.bml`).

Ablations (paper Tables 2, 3, 4, 7, 9; Figures 8, 9) are switches of :class:`ClusterNSParams`; see
``docs/methods/clusterns.md`` for the table of paper equation / ablation → config key.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...losses.base import Component, ContrastiveBatch, Contribution, NegativeBlock
from ...losses.infonce import aligned_positive_mask, cosine_matrix
from ..registry import register_method
from .bml import REDUCTIONS, bml_loss
from ...distributed import broadcast_from_first_process
from .kmeans import UPDATES, ClusterState, greedy_init, kmeans_centroids, same_cluster

HARD_NEGATIVE_CENTROIDS = ("second", "nearest")
FALSE_NEGATIVE_MODES = ("bml", "mask", "positive", "none")
INITS = ("batch", "global")
WEIGHT_SCOPES = ("all", "own")
STAT_KEYS = ("hard_neg_cos", "nearest_centroid_cos", "inter_centroid_cos", "false_neg_cos", "false_neg_rate",
             "nonempty_clusters")   # the statistics of a step with clustering (NaN before it starts)


@dataclass
class ClusterNSParams:
    """Hyper-parameters; defaults are the paper's BERT-base values with the paper's maths.

    num_clusters: K. momentum: γ of eq. 8. start_threshold: σ. update: ``mean`` (eq. 7) or
    ``sum`` (official code). init: ``batch`` (greedy from the start batch, §3.3) or ``global``
    (ablation: K-means over ``global_init_sample`` corpus sentences encoded at the start step,
    truncated to ``global_init_max_len`` tokens). hard_negatives: add the c_i2 block (eq. 2).
    hard_negative_centroid: ``second`` (c_i2) or ``nearest`` (c_i1, the "harder negative"
    ablation). hard_negative_weight: μ. hard_negative_weight_on: ``all`` hard negatives of a row
    (eq. 2) or only the anchor's ``own`` (official code). false_negatives: ``bml`` (eq. 3–6),
    ``mask`` (removed from the denominator), ``positive`` (counted as positives) or ``none``.
    bml_weight, bml_alpha, bml_beta: λ, α, β. bml_reduction: mean over the ``false_negatives``
    pairs (paper) or over ``all_pairs`` (official). random_clusters: ablation, a random centroid
    as each hard negative and a random cluster per sample for the false negatives.
    """

    num_clusters: int = 128
    momentum: float = 1e-3
    start_threshold: float = 0.4
    update: str = "mean"
    init: str = "batch"
    global_init_sample: int = 10000
    global_init_max_len: int = 32
    hard_negatives: bool = True
    hard_negative_centroid: str = "second"
    hard_negative_weight: float = 1.0
    hard_negative_weight_on: str = "all"
    false_negatives: str = "bml"
    bml_weight: float = 1e-3
    bml_alpha: float = 0.0
    bml_beta: float = 0.3
    bml_reduction: str = "false_negatives"
    random_clusters: bool = False

    def __post_init__(self):
        def need(ok: bool, key: str, msg: str):
            if not ok:
                raise ValueError(f"{key} {msg}, got {getattr(self, key)!r}")

        need(self.num_clusters >= 2, "num_clusters", "must be >= 2 (hard negatives are second-nearest centroids)")
        need(0.0 < self.momentum <= 1.0, "momentum", "must be in (0, 1]")
        need(-1.0 <= self.start_threshold <= 1.0, "start_threshold", "must be a cosine in [-1, 1]")
        need(self.update in UPDATES, "update", f"must be one of {UPDATES}")
        need(self.init in INITS, "init", f"must be one of {INITS}")
        need(self.global_init_sample >= self.num_clusters, "global_init_sample", "must be >= num_clusters")
        need(self.global_init_max_len >= 4, "global_init_max_len", "must be >= 4")
        need(self.hard_negative_centroid in HARD_NEGATIVE_CENTROIDS, "hard_negative_centroid",
             f"must be one of {HARD_NEGATIVE_CENTROIDS}")
        need(self.hard_negative_weight > 0, "hard_negative_weight", "must be > 0 (μ enters as log μ)")
        need(self.hard_negative_weight_on in WEIGHT_SCOPES, "hard_negative_weight_on",
             f"must be one of {WEIGHT_SCOPES}")
        need(self.false_negatives in FALSE_NEGATIVE_MODES, "false_negatives", f"must be one of {FALSE_NEGATIVE_MODES}")
        need(self.bml_weight >= 0, "bml_weight", "must be >= 0")
        need(self.bml_beta >= self.bml_alpha, "bml_beta", f"must be >= bml_alpha={self.bml_alpha} "
             "(the false-negative band is [-beta, -alpha])")
        need(self.bml_reduction in REDUCTIONS, "bml_reduction", f"must be one of {REDUCTIONS}")


@dataclass
class Selection:
    """Which centroid/cluster each of the B samples uses this step, and the B×K and B×B matrices
    behind it that both the loss and the statistics read."""

    nearest: torch.Tensor       # c_i1 index (true nearest centroid)
    hard: torch.Tensor          # index of the centroid used as the hard negative
    membership: torch.Tensor    # cluster id used for false negatives
    to_centroids: torch.Tensor  # B×K cos(z1_i, c_k), the centroids the choice was made from
    same_cluster: torch.Tensor  # B×B bool, same_cluster(membership): the false-negative pairs


@register_method("clusterns", ClusterNSParams,
                 "ClusterNS: in-batch momentum K-means gives hard negatives (centroids) and false negatives (BML)")
class ClusterNS(Component):
    # words a figure can show: the hard negative is the second-nearest centroid (c_i2 in the paper),
    # the false-negative rate the share of anchors whose cluster holds another sample of the batch,
    # batch_cos the mean over every view-1 × view-2 pair (positives too): the start test against σ
    stat_labels = {"hard_neg_cos": "hard negative (2nd-nearest centroid)",
                   "nearest_centroid_cos": "nearest centroid (own cluster)",
                   "inter_centroid_cos": "between centroids", "false_neg_cos": "false negatives",
                   "false_neg_rate": "share of anchors with a false negative", "nonempty_clusters": "non-empty clusters",
                   "batch_cos": "all pairs of the batch",
                   "centroid_shift": "centroid movement since the last logged step (1 − cos)"}
    display_name = "ClusterNS"
    citation = ('Deng, Wan, Yang, Quan & Wang, "Clustering-Aware Negative Sampling for Unsupervised Sentence '
                'Representation", Findings of ACL 2023, eq. 2-8')
    color_slot = 3
    cost_factor = 0.10   # K-means iterations over the batch, centroid logits, the BML term
    key_labels = {"num_clusters": "number of clusters K"}
    term_labels = {"bml": "bidirectional margin loss"}
    term_titles = {"bml": "ClusterNS BML (× λ)"}
    stat_kinds = {"hard_neg_cos": "hard negative", "nearest_centroid_cos": "nearest centroid",
                  "inter_centroid_cos": "between centroids", "false_neg_cos": "false negative",
                  "batch_cos": "batch mean"}

    @classmethod
    def smoke_batch_size(cls, params: ClusterNSParams, batch_size: int) -> int:
        # K more rows where the centroids start from a batch (check_config needs K ≤ batch); the
        # smoke profile's batches of a batch-size sweep stay apart (K + batch / 8)
        if params.init == "batch" and batch_size < params.num_clusters:
            return batch_size + params.num_clusters
        return batch_size

    @classmethod
    def check_config(cls, params: ClusterNSParams, *, batch_size: int) -> None:
        if params.init == "batch" and params.num_clusters > batch_size:
            raise ValueError(f"num_clusters={params.num_clusters} exceeds batch_size={batch_size}: the centroids "
                             "are initialised from the samples of one batch (or use init: global)")

    def centroids(self) -> torch.Tensor:
        """The K×D centroids; an error before clustering has started."""
        if not self.state.is_started:
            raise ValueError("clustering had not started (no centroids yet)")
        return self.state.centroids

    def __init__(self, params: ClusterNSParams):
        super().__init__()
        self.params = params
        self.state = ClusterState(params.num_clusters)

    def setup(self, encoder, corpus=None) -> None:
        super().setup(encoder, corpus)
        self.state.resize(encoder.embedding_dim())

    # ------------------------------------------------------------------ the step
    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        p = self.params
        out = Contribution()
        with torch.no_grad():
            full_cos = (cos if batch.local_rows is None else cosine_matrix(batch.z1, batch.z2)).detach()
            batch_cos = full_cos.mean()
        points = batch.z1.detach().float()

        if not self.state.is_started:
            if float(batch_cos) <= p.start_threshold:
                self._initialise(batch, points, full_cos)
                chosen = self._select(points)  # always: the random-clusters ablation draws from the RNG here
                if batch.compute_stats:
                    out.stats.update(self._stats(full_cos, chosen))
            elif batch.compute_stats:
                out.stats.update({key: float("nan") for key in STAT_KEYS})
            out.stats.update(self._progress(batch_cos))
            return out

        self.state.update(points, p.momentum, p.update)
        chosen = self._select(points)
        rows = slice(None) if batch.local_rows is None else batch.local_rows
        false_negatives = chosen.same_cluster[rows]
        aligned = aligned_positive_mask(cos.shape[0], cos.shape[1], batch.local_rows, cos.device)

        if p.hard_negatives:
            out.negatives.append(self._hard_negative_block(batch.anchors(1), chosen.hard, aligned, temperature))
        if p.false_negatives == "bml":
            out.terms["bml"] = p.bml_weight * bml_loss(cos, cos[aligned], false_negatives, p.bml_alpha, p.bml_beta,
                                                       p.bml_reduction)
        elif p.false_negatives == "mask":
            out.denominator_mask = false_negatives
        elif p.false_negatives == "positive":
            out.positive_mask = false_negatives

        if batch.compute_stats:
            out.stats.update(self._stats(full_cos, chosen))
        out.stats.update(self._progress(batch_cos))
        return out

    def _hard_negative_block(self, anchors: torch.Tensor, hard: torch.Tensor, aligned: torch.Tensor,
                             temperature: float) -> NegativeBlock:
        """(rows × B) logits cos(h_i, c_j)/τ against every sample's hard-negative centroid (a
        buffer: no gradient reaches the centroids), weighted by μ on all of a row's entries (eq. 2)
        or, as in the official code, on the anchor's own hard negative only."""
        logits = cosine_matrix(anchors, self.state.centroids[hard]) / temperature
        log_mu = math.log(self.params.hard_negative_weight)
        if self.params.hard_negative_weight_on == "own":
            return NegativeBlock(logits + log_mu * aligned.to(logits.dtype), "hard_negatives")
        return NegativeBlock(logits, "hard_negatives", log_weight=log_mu)

    # ------------------------------------------------------------------ clustering
    def _initialise(self, batch: ContrastiveBatch, points: torch.Tensor, full_cos: torch.Tensor) -> None:
        p = self.params
        if p.init == "global":
            centroids = self._global_centroids()
        else:
            first = broadcast_from_first_process(torch.randint(points.shape[0], (1,), device=points.device))
            centroids = points[greedy_init(full_cos, p.num_clusters, int(first))]
        self.state.initialise(centroids, batch.step + 1)

    @torch.no_grad()
    def _global_centroids(self) -> torch.Tensor:
        """K-means over the training embeddings (view-1 path, in the encoder's current mode: training
        mode during a run, like z1) of ``global_init_sample`` corpus sentences drawn with the torch RNG."""
        p = self.params
        encoder, corpus = getattr(self, "encoder", None), getattr(self, "corpus", None)
        if encoder is None or not corpus:
            raise ValueError("clusterns.init=global needs the encoder and the training corpus (Component.setup)")
        picked = torch.randperm(len(corpus))[:p.global_init_sample].tolist()
        sentences = [corpus[i] for i in picked]
        # Both views are encoded (as a training step does), so the dropout draws are a training step's.
        chunks = [out.embeddings[:len(part)].float() for part, out in encoder.iter_batches(
            sentences, 256, path="train", dropout=None, max_length=p.global_init_max_len)]
        seed = int(torch.randint(0, 2 ** 31 - 1, ()))
        return kmeans_centroids(torch.cat(chunks), p.num_clusters, seed)

    def _select(self, points: torch.Tensor) -> Selection:
        p = self.params
        to_centroids = cosine_matrix(points, self.state.centroids)
        nearest, second = to_centroids.topk(2, dim=1).indices.unbind(1)
        if p.random_clusters:
            draws = torch.randint(p.num_clusters, (2, points.shape[0]), device=points.device)
            hard, membership = broadcast_from_first_process(draws)
        else:
            hard, membership = (second if p.hard_negative_centroid == "second" else nearest), nearest
        return Selection(nearest, hard, membership, to_centroids, same_cluster(membership))

    # ------------------------------------------------------------------ statistics
    def _progress(self, batch_cos: torch.Tensor) -> dict:
        started = self.state.is_started
        return {"batch_cos": batch_cos, "started": float(started),
                "start_step": float(self.state.start_step) if started else float("nan")}

    @torch.no_grad()
    def _stats(self, full_cos: torch.Tensor, chosen: Selection) -> dict:
        """Mean cosines for the paper's figures (0-dim tensors: read only on logging steps)."""
        k = self.params.num_clusters
        to_centroids, pairs = chosen.to_centroids, chosen.same_cluster
        between = cosine_matrix(self.state.centroids, self.state.centroids)
        off_diagonal = ~torch.eye(k, dtype=torch.bool, device=between.device)
        counts = torch.bincount(chosen.membership, minlength=k)
        return {
            # how far the centroids moved since the last logged step: whether the clustering acts at
            # all within a short run (γ sets it)
            "centroid_shift": self.state.shift_since_logged(),
            "hard_neg_cos": to_centroids.gather(1, chosen.hard.unsqueeze(1)).mean(),
            "nearest_centroid_cos": to_centroids.gather(1, chosen.nearest.unsqueeze(1)).mean(),
            "inter_centroid_cos": between[off_diagonal].mean(),
            "false_neg_cos": full_cos[pairs].mean() if pairs.any() else float("nan"),
            "false_neg_rate": (counts[chosen.membership] >= 2).float().mean(),
            "nonempty_clusters": (counts > 0).sum().float(),
        }
