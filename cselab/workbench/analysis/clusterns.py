"""ClusterNS Table 10: what the clusters of a trained ClusterNS run contain; and which runs draw Fig. 5.

**Fig. 5** (the start threshold σ): the mean similarity of the hard-negative pairs over training,
one curve per σ, all with the BML loss. :func:`threshold_curves` picks those runs and labels them.

The run's last checkpoint holds the K-means centroids (a buffer of the ClusterNS component, saved
with the loss state in ``last/``). Sentences are embedded the way ClusterNS clusters them during
training — the training path of view 1 (after the MLP head for the ``cls`` pooler), dropout off —
assigned to the centroid of highest cosine, and a few are shown per cluster.

Example::

    from cselab.workbench.analysis.clusterns import run_case_study
    table = run_case_study("runs/clusterns-...", load_corpus("wiki1m-head", 5000), n_clusters=5)
    print(table.to_markdown(index=False))
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ...model.config import load_config
from ...model.evaluate.geometry import normalize_rows
from ...model.methods import build_loss
from ...model.methods.clusterns import ClusterNS
from ...model.rundir import RunDir

PICKS = ("random", "nearest")


class ClusteringNotStarted(ValueError):
    """A ClusterNS run whose clustering never started (the batch similarity stayed above σ up to its
    last checkpoint): it has no centroids to assign sentences to. A short or smoke run is such a run."""


def clusterns_from_run(run_dir: str | os.PathLike) -> ClusterNS:
    """The ClusterNS component of a run, its state (centroids, start step) as saved in the
    run's last checkpoint ``last/`` (here, not in the component: a loss component does not read runs)."""
    run = RunDir(run_dir)
    cfg = load_config(run.read_config())
    if ClusterNS.name not in cfg.method:
        raise ValueError(f"{run.path}: not a ClusterNS run (method: {cfg.method})")
    loss = build_loss(cfg)
    index = [c.name for c in loss.components].index(ClusterNS.name)
    prefix = f"components.{index}."
    saved = run.load_checkpoint_state()["loss"]
    component = loss.components[index]
    try:
        component.load_state_dict({k[len(prefix):]: v for k, v in saved.items() if k.startswith(prefix)})
    except RuntimeError as e:   # e.g. a config.json edited to another K than its checkpoint's
        from ...model.train.checkpoints import state_mismatch

        raise ValueError(f"{run.last_dir}: its ClusterNS state does not fit the run's config ({state_mismatch(e)})") \
            from None
    return component


def load_run_centroids(run_dir: str | os.PathLike) -> np.ndarray:
    """The K×D centroids of a ClusterNS run, as saved in its last checkpoint."""
    return clusterns_from_run(run_dir).centroids().float().cpu().numpy()


def training_embeddings(encoder, sentences: Sequence[str], batch_size: int = 128, max_length: int | None = 32) -> np.ndarray:
    """View-1 training-path embeddings (what ClusterNS clusters), in evaluation mode (no dropout)."""
    chunks = [out.embeddings.float().cpu() for _, out in
              encoder.iter_batches(sentences, batch_size, path="train", views=1, max_length=max_length)]
    return torch.cat(chunks).numpy()


def cluster_case_study(embeddings: np.ndarray, sentences: Sequence[str], centroids: np.ndarray, n_clusters: int = 5,
                       per_cluster: int = 5, pick: str = "random", seed: int = 0) -> pd.DataFrame:
    """Assign each sentence to its nearest centroid (cosine); for the ``n_clusters`` most populated
    clusters list ``per_cluster`` members (``random`` sample or the ``nearest`` to the centroid).

    Columns: cluster, members (in this sample), sentence, cos_to_centroid."""
    if pick not in PICKS:
        raise ValueError(f"pick must be one of {PICKS}, got {pick!r}")
    if len(embeddings) != len(sentences):
        raise ValueError(f"{len(embeddings)} embeddings but {len(sentences)} sentences")
    cos = normalize_rows(embeddings) @ normalize_rows(centroids).T
    assigned = cos.argmax(axis=1)
    sizes = np.bincount(assigned, minlength=len(centroids))
    # Most populated first; ties by centroid index so the table is reproducible.
    chosen = sorted(np.flatnonzero(sizes), key=lambda k: (-sizes[k], k))[:n_clusters]
    rng = np.random.default_rng(seed)
    rows = []
    for k in chosen:
        members = np.flatnonzero(assigned == k)
        if pick == "nearest":
            members = members[np.argsort(-cos[members, k], kind="stable")][:per_cluster]
        else:
            members = np.sort(rng.choice(members, size=min(per_cluster, len(members)), replace=False))
        rows += [{"cluster": int(k), "members": int(sizes[k]), "sentence": sentences[i],
                  "cos_to_centroid": float(cos[i, k])} for i in members]
    return pd.DataFrame(rows, columns=["cluster", "members", "sentence", "cos_to_centroid"])


def run_case_study(run_dir: str | os.PathLike, sentences: Sequence[str], n_clusters: int = 5, per_cluster: int = 5,
                   pick: str = "random", seed: int = 0, batch_size: int = 128, max_length: int | None = 32) -> pd.DataFrame:
    """:func:`cluster_case_study` for a ClusterNS run: its last checkpoint's encoder and centroids
    (:class:`ClusteringNotStarted`, one line naming the run, when it has none yet)."""
    from ...model.encoder import SentenceEncoder
    from ...model.io import recorded_step
    from ...model.rundir import RunDir

    component = clusterns_from_run(run_dir)
    if not component.state.is_started:
        step = recorded_step(RunDir(Path(run_dir)).last_dir)
        raise ClusteringNotStarted(
            f"{run_dir}: ClusterNS had not started clustering by its last checkpoint (step {step:g}: the batch "
            f"similarity stayed above start_threshold σ = {component.params.start_threshold:g}), so it has no "
            "centroids to show")
    centroids = component.centroids().float().cpu().numpy()
    encoder = SentenceEncoder.from_pretrained(RunDir(Path(run_dir)).last_dir)
    embeddings = training_embeddings(encoder, list(sentences), batch_size, max_length)
    return cluster_case_study(embeddings, list(sentences), centroids, n_clusters, per_cluster, pick, seed)


def threshold_curves(runs: Mapping[str, str | os.PathLike]) -> dict[str, Path]:
    """ClusterNS Fig. 5's curves: of the ``runs`` trained with the BML loss (``false_negatives:
    bml``), the first run of each start threshold σ, labelled ``σ = 0.4``, in σ order (runs without
    BML belong to Table 3's "σ wo. L_bml" row, not to the figure)."""
    from ...model.rundir import read_config

    by_sigma: dict[float, tuple[str, Path]] = {}
    for label, path in runs.items():
        settings = read_config(path).get(ClusterNS.name) or {}
        if settings.get("false_negatives", "bml") == "bml" and "start_threshold" in settings:
            by_sigma.setdefault(float(settings["start_threshold"]), (label, Path(path)))
    return {f"σ = {sigma:g}": path for sigma, (_, path) in sorted(by_sigma.items())}
