"""Clustering evaluation: K-means on frozen sentence embeddings, scored against gold classes.

* DBpedia (ClusterNS Table 5): K = 14, adjusted mutual information (AMI).
* The 8 short-text sets (ClusterNS Table 6, its ``cluster_eval.py``): K = number of labels,
  accuracy after the best one-to-one matching of clusters to classes (Hungarian algorithm on the
  contingency table), plus normalised mutual information (NMI).

Every set reports all three metrics. K-means is scikit-learn's (k-means++) on the raw embeddings,
as ClusterNS clusters its raw [CLS] vectors. It runs once per seed and the metrics are given as
mean and standard deviation over seeds. ClusterNS ran one unseeded ``KMeans(K)``, which in the
scikit-learn of its time meant the best of 10 restarts (``n_init=10``); the default here is one
restart per seed (``n_init=1``, today's ``"auto"`` for k-means++), so the spread over seeds shows
how much a single run depends on its initialisation — pass ``n_init=10`` for ClusterNS's runs.
"""
from __future__ import annotations

import logging
import os
import time
import warnings
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from ..data.clustering import SHORT_TEXT_SETS, ClusteringData, load_clustering_task
from ..io import atomic_write_json
from ..progress import progress_bar
from ..timing import timed
from .geometry import normalize_rows
from .sts import Encodes

logger = logging.getLogger(__name__)

CLUSTERING_TASKS = ("DBpedia", *SHORT_TEXT_SETS)
DEFAULT_SEEDS = (0, 1, 2, 3, 4)
CLUSTERING_METRICS = ("acc", "nmi", "ami")


def hungarian_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Share of samples whose cluster maps to their class under the best one-to-one mapping of
    clusters to classes (``scipy.optimize.linear_sum_assignment`` maximising matched counts)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(f"expected two label vectors of equal length, got {y_true.shape} and {y_pred.shape}")
    table = contingency_matrix(y_true, y_pred)            # classes × clusters
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / len(y_true))


def cluster_scores(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    return {"acc": hungarian_accuracy(y_true, y_pred),
            "nmi": float(normalized_mutual_info_score(y_true, y_pred)),
            "ami": float(adjusted_mutual_info_score(y_true, y_pred))}


def kmeans_labels(x: np.ndarray, n_clusters: int, seed: int, n_init: int = 1) -> np.ndarray:
    if not 1 <= n_clusters <= len(x):
        raise ValueError(f"n_clusters must be in [1, {len(x)}] (the number of samples), got {n_clusters}")
    with timed("fit"), warnings.catch_warnings():
        # fewer distinct points than clusters: said once by cluster_embeddings, not per seed by sklearn
        warnings.simplefilter("ignore", ConvergenceWarning)
        return KMeans(n_clusters=n_clusters, n_init=n_init, random_state=seed).fit_predict(x)


def cluster_embeddings(x: np.ndarray, labels: np.ndarray, n_clusters: int | None = None,
                       seeds: Sequence[int] = DEFAULT_SEEDS, n_init: int = 1, normalize: bool = False,
                       tick: Callable[[], None] | None = None) -> dict:
    """K-means once per seed; every metric as ``{"mean", "std", "runs"}`` (fractions in [0, 1]; std
    across seeds with ddof 1). ``tick`` is called after each seed's K-means (progress bars).

    ``n_clusters`` defaults to the number of distinct labels; ``normalize`` L2-normalises the
    embeddings first (spherical-style K-means; off by default, as in ClusterNS)."""
    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels)
    if len(x) != len(labels):
        raise ValueError(f"{len(x)} embeddings but {len(labels)} labels")
    if not seeds:
        raise ValueError("seeds must name at least one K-means seed")
    if normalize:
        x = normalize_rows(x)
    k = int(len(np.unique(labels))) if n_clusters is None else n_clusters
    distinct = len(np.unique(x, axis=0))
    if distinct < k:
        logger.warning("K-means with K = %d: the %d embeddings hold only %d distinct points, so at most %d clusters "
                       "are found (the model maps different texts to one embedding)", k, len(x), distinct, distinct)
    runs = []
    for seed in seeds:
        runs.append(cluster_scores(labels, kmeans_labels(x, k, seed, n_init)))
        if tick is not None:
            tick()
    out = {m: {"mean": float(np.mean([r[m] for r in runs])), "std": _sample_std([r[m] for r in runs]),
               "runs": [r[m] for r in runs]} for m in CLUSTERING_METRICS}
    return {**out, "n_clusters": k, "n": len(labels), "seeds": list(seeds)}


def _sample_std(values: list[float]) -> float:
    """Standard deviation across seeds (ddof 1, as the tables report it); 0 for a single seed."""
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def evaluate_clustering_data(model: Encodes, data: ClusteringData, seeds: Sequence[int] = DEFAULT_SEEDS,
                             n_init: int = 1, normalize: bool = False, batch_size: int = 128,
                             max_length: int | None = None, tick: Callable[[], None] | None = None) -> dict:
    """Encode ``data.texts`` and cluster them with K = ``data.n_clusters`` (``tick``: after each seed)."""
    start = time.perf_counter()
    kwargs = {} if max_length is None else {"max_length": max_length}
    x = np.asarray(model.encode(list(data.texts), batch_size=batch_size, **kwargs))
    encoded = time.perf_counter()
    out = cluster_embeddings(x, data.labels, data.n_clusters, seeds, n_init, normalize, tick)
    out.update(encode_seconds=encoded - start, seconds=time.perf_counter() - start)
    return out


def evaluate_clustering(model: Encodes, tasks: Sequence[str] = CLUSTERING_TASKS,
                        data_dir: str | os.PathLike | None = None, seeds: Sequence[int] = DEFAULT_SEEDS,
                        n_init: int = 1, normalize: bool = False, batch_size: int = 128,
                        max_length: int | None = None, max_texts: int | None = None, sample_seed: int = 0,
                        output: str | os.PathLike | None = None, show_progress_bar: bool = True,
                        texts=None) -> dict:
    """ClusterNS's clustering tables for any model with ``encode``.

    ``scores`` holds each task's headline number ×100 — AMI for DBpedia (Table 5), Hungarian
    accuracy for the short-text sets (Table 6) — as the mean over K-means seeds; ``details`` has
    every metric's mean, std and per-seed values. ``max_length`` (passed to ``encode``) truncates
    inputs; ClusterNS's script used 128 tokens for the short texts. ``max_texts`` caps each set at
    a seeded uniform sample of that many texts (:meth:`ClusteringData.subsample`, ``sample_seed``):
    cheaper, and not the papers' numbers (``details[task]["n"]`` says how many texts were used).
    ``show_progress_bar``: one bar over sets × seeds (``TQDM_DISABLE`` silences it).

    ``texts``: your own labelled texts (a ``label<TAB>text`` file, a list of them or ``{name: path}``;
    format in :mod:`cselab.model.data.custom`), clustered the same way with K = its number of labels and
    reported under ``"custom"`` (``{"scores": {name: accuracy ×100}, "metric": "acc", "details":
    {name: {every metric, "file"}}}``), never in ``short_text_avg``. They are used whole
    (``max_texts`` caps only the standard sets).
    """
    from ..data.custom import load_texts_file, text_files

    unknown = [t for t in tasks if t not in CLUSTERING_TASKS]
    if unknown:
        raise ValueError(f"unknown clustering task(s) {unknown}; choose from {list(CLUSTERING_TASKS)}")
    files = text_files(texts)
    custom = {name: load_texts_file(path, name) for name, path in files.items()}   # bad files fail before encoding
    if not tasks and not custom:
        raise ValueError("no clustering task and no texts file: name at least one")
    start = time.perf_counter()

    def data(task: str) -> ClusteringData:
        loaded = load_clustering_task(task, data_dir)
        return loaded if max_texts is None else loaded.subsample(max_texts, sample_seed)

    details = {}
    own = {}
    with progress_bar(total=(len(tasks) + len(custom)) * len(seeds), desc="clustering", unit="K-means",
                      enabled=show_progress_bar) as bar:
        for name, loaded in [*((t, None) for t in tasks), *custom.items()]:
            bar.set_postfix_str(name)
            scored = evaluate_clustering_data(model, loaded or data(name), seeds, n_init, normalize, batch_size,
                                              max_length, tick=lambda: bar.update(1))
            (own if loaded else details)[name] = scored
            logger.info("clustering %s: %d texts, K = %d, %.0f s", name, scored["n"], scored["n_clusters"],
                        scored["seconds"])
    metric = {task: "ami" if task == "DBpedia" else "acc" for task in tasks}
    scores = {task: 100 * d[metric[task]]["mean"] for task, d in details.items()}
    result = {"scores": scores, "metric": metric, "details": details, "seeds": list(seeds), "n_init": n_init,
              "normalize": normalize, "max_texts": max_texts, "sample_seed": sample_seed,
              "seconds": time.perf_counter() - start}
    short = [t for t in tasks if t != "DBpedia"]
    if short:
        result["short_text_avg"] = float(np.mean([scores[t] for t in short]))
    if own:   # beside the standard sets, never in their average
        result["custom"] = {"scores": {n: 100 * d["acc"]["mean"] for n, d in own.items()}, "metric": "acc",
                            "details": {n: {**d, "file": str(files[n])} for n, d in own.items()}}
    if output is not None:
        atomic_write_json(Path(output), result)
    return result
