"""2-D maps of sentence embeddings coloured by label: UMAP (umap-learn, seeded), PCA for tiny sets.

``method="auto"`` uses UMAP from :data:`MIN_UMAP_POINTS` points on and PCA below (UMAP's
neighbour graph means little on a few dozen points, and PCA needs no JIT warm-up in tests).
A seeded UMAP is deterministic (umap-learn then runs single-threaded).

Example — before/after training, side by side::

    from cselab.workbench.analysis.umap import umap_frames
    from cselab.workbench.plots import plot_umap_panels
    frames = umap_frames({"before": SentenceEncoder.from_pretrained("all-minilm-l6"),
                          "after": SentenceEncoder.from_pretrained("runs/simcse-.../best")},
                         sentences, labels)
    plot_umap_panels(frames)
"""
from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...model.timing import timed

PROJECTIONS = ("auto", "umap", "pca")
MIN_UMAP_POINTS = 100


def project_2d(embeddings: np.ndarray, method: str = "auto", seed: int = 0, n_neighbors: int = 15,
               min_dist: float = 0.1, metric: str = "cosine", init: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """(n × 2) coordinates and the method actually used (``"umap"`` or ``"pca"``). ``init``: UMAP's
    starting layout (n × 2, e.g. another snapshot's map of the same points), so that a map of
    similar embeddings comes out in the same arrangement (PCA ignores it)."""
    if method not in PROJECTIONS:
        raise ValueError(f"method must be one of {PROJECTIONS}, got {method!r}")
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or len(x) < 3:
        raise ValueError(f"need a 2-D array of at least 3 embeddings, got shape {x.shape}")
    if method == "auto":
        method = "umap" if len(x) >= MIN_UMAP_POINTS else "pca"
    if method == "pca":
        from sklearn.decomposition import PCA

        with timed("fit"):
            return PCA(n_components=2, svd_solver="full").fit_transform(x), "pca"
    if n_neighbors >= len(x):
        raise ValueError(f"n_neighbors ({n_neighbors}) must be smaller than the number of points ({len(x)})")
    import umap

    # A seeded UMAP runs single-threaded anyway; saying so keeps umap-learn from warning about it.
    if init is not None and np.shape(init) != (len(x), 2):
        raise ValueError(f"init must be one 2-D point per embedding ({len(x)} × 2), got shape {np.shape(init)}")
    reducer = umap.UMAP(n_components=2, n_neighbors=n_neighbors, min_dist=min_dist, metric=metric,
                        random_state=seed, n_jobs=1,
                        init=np.asarray(init, dtype=np.float64) if init is not None else "spectral")
    with timed("fit"):
        return np.asarray(reducer.fit_transform(x), dtype=np.float64), "umap"


def aligned_umap_2d(embeddings: Sequence[np.ndarray], seed: int = 0, n_neighbors: int = 15, min_dist: float = 0.1,
                    metric: str = "cosine") -> list[np.ndarray]:
    """(n × 2) maps of several embeddings of the same n points (a run's snapshots, in order) fitted
    together by umap-learn's ``AlignedUMAP``: each map is tied to the next on the shared points, so
    that a class keeps its place from one map to the next unless the embeddings moved it. Maps
    fitted one by one differ by more than a rotation (UMAP's layout is not unique): no rigid
    alignment afterwards makes them comparable."""
    xs = [np.asarray(e, dtype=np.float64) for e in embeddings]
    if len(xs) < 2 or len({x.shape for x in xs}) != 1 or xs[0].ndim != 2:
        raise ValueError(f"aligned_umap_2d: need two or more arrays of one shape (n × d), got "
                         f"{[x.shape for x in xs]}")
    if n_neighbors >= len(xs[0]):
        raise ValueError(f"n_neighbors ({n_neighbors}) must be smaller than the number of points ({len(xs[0])})")
    import umap

    same = {i: i for i in range(len(xs[0]))}
    reducer = umap.AlignedUMAP(n_components=2, n_neighbors=n_neighbors, min_dist=min_dist, metric=metric,
                               random_state=seed)
    with timed("fit"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="n_jobs value", category=UserWarning)   # seeded: one thread
        reducer.fit(xs, relations=[same] * (len(xs) - 1))
    return [np.asarray(e, dtype=np.float64) for e in reducer.embeddings_]


KNN_K = 5   # neighbours that vote in knn_accuracy


def knn_accuracy(embeddings: np.ndarray, labels: Sequence, k: int = KNN_K) -> float:
    """How well the classes separate in the embedding space itself (not in a 2-D map, which
    distorts it): the leave-one-out accuracy of a ``k``-nearest-neighbour vote by cosine
    (scikit-learn's ``KNeighborsClassifier``, each text classified by the others). 1 when every
    text's neighbours share its class; about the largest class's share for a space that ignores the
    classes."""
    from sklearn.model_selection import LeaveOneOut, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    x, y = np.asarray(embeddings, dtype=np.float64), np.asarray(labels)
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError(f"knn_accuracy: need one label per embedding row, got {x.shape} and {len(y)} labels")
    if not 1 <= k < len(x):
        raise ValueError(f"knn_accuracy: k must be in [1, {len(x) - 1}] (the points less the one left out), got {k}")
    scores = cross_val_score(KNeighborsClassifier(n_neighbors=k, metric="cosine"), x, y, cv=LeaveOneOut())
    return float(np.mean(scores))


def umap_frame(model, sentences: Sequence[str], labels: Sequence, method: str = "auto", seed: int = 0,
               batch_size: int = 128, max_length: int | None = None, **umap_options) -> pd.DataFrame:
    """Encode ``sentences`` with ``model`` (truncated to ``max_length`` tokens when given: DBpedia
    abstracts run to hundreds) and project them: columns x, y, label, sentence;
    ``frame.attrs["method"]`` says which projection was used, ``frame.attrs["knn_accuracy"]`` how
    well the classes separate in the embeddings (:func:`knn_accuracy`, k = :data:`KNN_K`)."""
    if len(sentences) != len(labels):
        raise ValueError(f"{len(sentences)} sentences but {len(labels)} labels")
    options = {"max_length": max_length} if max_length else {}
    embeddings = np.asarray(model.encode(list(sentences), batch_size=batch_size, **options))
    coords, used = project_2d(embeddings, method, seed, **umap_options)
    frame = pd.DataFrame({"x": coords[:, 0], "y": coords[:, 1], "label": list(labels), "sentence": list(sentences)})
    frame.attrs["method"] = used
    if len(set(labels)) > 1 and len(frame) > KNN_K:
        frame.attrs.update(knn_accuracy=knn_accuracy(embeddings, labels), knn_k=KNN_K)
    return frame


def umap_frames(models: Mapping[str, object], sentences: Sequence[str], labels: Sequence, method: str = "auto",
                seed: int = 0, batch_size: int = 128, max_length: int | None = None,
                **umap_options) -> dict[str, pd.DataFrame]:
    """:func:`umap_frame` for several models on the same sentences (e.g. before / after training)."""
    return {name: umap_frame(model, sentences, labels, method, seed, batch_size, max_length, **umap_options)
            for name, model in models.items()}
