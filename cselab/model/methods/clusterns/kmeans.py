"""In-batch momentum K-means of ClusterNS (Deng et al., Findings of ACL 2023, §3.3, Algorithm 1).

The clustered vectors are view 1's training embeddings (after the MLP head), detached and left
unnormalised as in the official code; the metric is the cosine similarity.

* Initialisation (§3.3): "a random first centroid, then K−1 samples chosen greedily, each the
  least similar to the last chosen one and not already chosen" — :func:`greedy_init`.
* Every later step (Algorithm 1, lines 7–9): each sample joins the centroid of highest cosine
  (:func:`assign`), the new centroid is the mean of its members

      c̃_k = (1/|C_k|) Σ_{x ∈ C_k} x                                   (eq. 7)

  and the centroid moves by momentum

      c_k ← (1 − γ) c_k + γ c̃_k                                        (eq. 8)

  (:func:`momentum_update`); empty clusters keep their centroid. The official code adds the
  *sum* of the members instead of their mean (``update="sum"``), which multiplies the effective
  γ of a cluster by its size.

The state (centroids, started flag, start step) lives in buffers of :class:`ClusterState`, so it is
saved in checkpoints and restored on resume. In a multi-process run every process computes the
same update from the gathered global batch; :func:`cselab.model.distributed.broadcast_from_first_process` then copies
process 0's centroids to every process so that they stay bit-identical (random choices and
floating-point reductions could otherwise drift apart; the official code leaves them unsynced).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...distributed import broadcast_from_first_process
from ...losses.infonce import cosine_matrix

UPDATES = ("mean", "sum")


def greedy_init(similarity: torch.Tensor, k: int, first: int) -> torch.Tensor:
    """Indices of the K initial centroids among the B batch samples.

    ``similarity[i, j]`` is the similarity of samples i and j (ClusterNS uses the cross-view
    matrix cos(z1_i, z2_j), as the official code does). Starting from ``first``, each next index
    is the sample least similar to the last chosen one, among those not chosen yet.

    Example: with similarity [[1, .9, .1], [.9, 1, .5], [.1, .5, 1]], k=3, first=0 the order is
    0 → 2 (least similar to 0) → 1.
    """
    b = similarity.shape[0]
    if similarity.shape != (b, b):
        raise ValueError(f"greedy_init needs a square B×B similarity matrix, got {tuple(similarity.shape)}")
    if not 1 <= k <= b:
        raise ValueError(f"clusterns.num_clusters={k} must be between 1 and the global batch size {b}: "
                         f"the centroids are initialised from the samples of one batch")
    if not 0 <= first < b:
        raise ValueError(f"first index {first} outside the batch of {b}")
    chosen = torch.zeros(b, dtype=torch.bool, device=similarity.device)
    order = [first]
    chosen[first] = True
    last = first
    for _ in range(k - 1):
        row = similarity[last].masked_fill(chosen, float("inf"))
        last = int(torch.argmin(row))
        order.append(last)
        chosen[last] = True
    return torch.tensor(order, dtype=torch.long, device=similarity.device)


def assign(points: torch.Tensor, centroids: torch.Tensor) -> torch.Tensor:
    """Cluster of each point: the centroid of highest cosine (ties → lowest index)."""
    return cosine_matrix(points, centroids).argmax(dim=1)


def cluster_sums(points: torch.Tensor, assignment: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sum of the member vectors of each of the K clusters (K×D) and their counts (K)."""
    sums = torch.zeros(k, points.shape[1], dtype=points.dtype, device=points.device)
    sums.index_add_(0, assignment, points)
    counts = torch.bincount(assignment, minlength=k)
    return sums, counts


def momentum_update(centroids: torch.Tensor, points: torch.Tensor, assignment: torch.Tensor, momentum: float,
                    update: str = "mean") -> torch.Tensor:
    """New centroids after one step (eq. 7–8). ``update="mean"``: c ← (1−γ)c + γ·mean(members)
    (paper); ``"sum"``: c ← (1−γ)c + γ·sum(members) (official code). Empty clusters are kept."""
    if update not in UPDATES:
        raise ValueError(f"clusterns.update must be one of {UPDATES}, got {update!r}")
    sums, counts = cluster_sums(points, assignment, centroids.shape[0])
    target = sums if update == "sum" else sums / counts.clamp(min=1).unsqueeze(1).to(sums.dtype)
    moved = (1.0 - momentum) * centroids + momentum * target
    return torch.where((counts > 0).unsqueeze(1), moved, centroids)


def same_cluster(assignment: torch.Tensor) -> torch.Tensor:
    """B×B bool: samples i ≠ j in the same cluster (each one a false negative of the other)."""
    mask = assignment.unsqueeze(0) == assignment.unsqueeze(1)
    mask.fill_diagonal_(False)
    return mask


def kmeans_centroids(embeddings: torch.Tensor, k: int, seed: int) -> torch.Tensor:
    """Global initialisation (ablation): cosine K-means over a corpus sample.

    scikit-learn's K-means runs on the L2-normalised embeddings (spherical K-means: the
    Euclidean assignment of unit vectors is the cosine assignment); each centroid is then set to
    the *unnormalised* mean of its members, so it lives in the same space as the in-batch means
    that later update it (eq. 8).
    """
    from sklearn.cluster import KMeans

    if embeddings.shape[0] < k:
        raise ValueError(f"clusterns.global_init_sample gives {embeddings.shape[0]} sentences, fewer than "
                         f"num_clusters={k}")
    unit = F.normalize(embeddings.float(), dim=-1).cpu().numpy().astype(np.float64)
    labels = KMeans(n_clusters=k, n_init=1, random_state=seed).fit(unit).labels_
    assignment = torch.as_tensor(labels, dtype=torch.long, device=embeddings.device)
    sums, counts = cluster_sums(embeddings.float(), assignment, k)
    return sums / counts.clamp(min=1).unsqueeze(1).to(sums.dtype)


class ClusterState(nn.Module):
    """Centroids (K×D), whether clustering has started and at which step — all buffers.

    ``start_step`` is the training step (numbered as in ``metrics.jsonl``, 1 = the first batch)
    whose batch initialised the centroids; −1 before that.
    """

    def __init__(self, num_clusters: int, dim: int = 0):
        super().__init__()
        self.num_clusters = num_clusters
        self.register_buffer("centroids", torch.zeros(num_clusters, dim))
        self.register_buffer("started", torch.tensor(False))
        self.register_buffer("start_step", torch.tensor(-1, dtype=torch.long))
        # the centroids at the last logged step (observation only: how far they move between logs);
        # in the state so that a resumed run logs what the uninterrupted one logs
        self.register_buffer("logged_centroids", torch.zeros(num_clusters, dim))
        self.register_buffer("logged", torch.tensor(False))

    @property
    def is_started(self) -> bool:
        return bool(self.started)

    def resize(self, dim: int) -> None:
        """Give the centroid buffer its width (the embedding size) before anything is loaded."""
        if self.centroids.shape[1] != dim:
            self.centroids = torch.zeros(self.num_clusters, dim, device=self.centroids.device)
            self.logged_centroids = torch.zeros_like(self.centroids)

    @torch.no_grad()
    def initialise(self, centroids: torch.Tensor, step: int) -> None:
        if centroids.shape[0] != self.num_clusters:
            raise ValueError(f"expected {self.num_clusters} centroids, got {centroids.shape[0]}")
        self.centroids = broadcast_from_first_process(centroids.detach().float().clone().contiguous())
        self.started.fill_(True)
        self.start_step.fill_(step)

    @torch.no_grad()
    def update(self, points: torch.Tensor, momentum: float, update: str) -> torch.Tensor:
        """One K-means step on the detached batch; returns the assignment used for the update."""
        points = points.detach().float()
        assignment = assign(points, self.centroids)
        self.centroids = broadcast_from_first_process(
            momentum_update(self.centroids, points, assignment, momentum, update).contiguous())
        return assignment

    @torch.no_grad()
    def shift_since_logged(self) -> torch.Tensor | float:
        """1 − the mean cosine of each centroid to itself at the previous call (NaN at the first),
        then remember the centroids: called on logging steps, it says how far they moved."""
        shift = (1 - torch.nn.functional.cosine_similarity(self.centroids, self.logged_centroids, dim=1).mean()
                 if bool(self.logged) else float("nan"))
        self.logged_centroids = self.centroids.detach().clone()
        self.logged.fill_(True)
        return shift

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # The centroid width is only known once the encoder is set up; take the checkpoint's.
        saved = state_dict.get(prefix + "centroids")
        if saved is not None and saved.shape != self.centroids.shape:
            self.centroids = torch.zeros_like(saved, device=self.centroids.device)
            self.logged_centroids = torch.zeros_like(self.centroids)
        if saved is not None and prefix + "logged" not in state_dict:   # a checkpoint from before they existed
            state_dict[prefix + "logged_centroids"] = torch.zeros_like(saved)
            state_dict[prefix + "logged"] = torch.tensor(False)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
