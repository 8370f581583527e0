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

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...model.timing import timed

METHODS = ("auto", "umap", "pca")
MIN_UMAP_POINTS = 100


def project_2d(embeddings: np.ndarray, method: str = "auto", seed: int = 0, n_neighbors: int = 15,
               min_dist: float = 0.1, metric: str = "cosine") -> tuple[np.ndarray, str]:
    """(n × 2) coordinates and the method actually used (``"umap"`` or ``"pca"``)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
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
    reducer = umap.UMAP(n_components=2, n_neighbors=n_neighbors, min_dist=min_dist, metric=metric,
                        random_state=seed, n_jobs=1)
    with timed("fit"):
        return np.asarray(reducer.fit_transform(x), dtype=np.float64), "umap"


def umap_frame(model, sentences: Sequence[str], labels: Sequence, method: str = "auto", seed: int = 0,
               batch_size: int = 128, max_length: int | None = None, **umap_options) -> pd.DataFrame:
    """Encode ``sentences`` with ``model`` (truncated to ``max_length`` tokens when given: DBpedia
    abstracts run to hundreds) and project them: columns x, y, label, sentence;
    ``frame.attrs["method"]`` says which projection was used."""
    if len(sentences) != len(labels):
        raise ValueError(f"{len(sentences)} sentences but {len(labels)} labels")
    options = {"max_length": max_length} if max_length else {}
    coords, used = project_2d(np.asarray(model.encode(list(sentences), batch_size=batch_size, **options)), method,
                              seed, **umap_options)
    frame = pd.DataFrame({"x": coords[:, 0], "y": coords[:, 1], "label": list(labels), "sentence": list(sentences)})
    frame.attrs["method"] = used
    return frame


def umap_frames(models: Mapping[str, object], sentences: Sequence[str], labels: Sequence, method: str = "auto",
                seed: int = 0, batch_size: int = 128, max_length: int | None = None,
                **umap_options) -> dict[str, pd.DataFrame]:
    """:func:`umap_frame` for several models on the same sentences (e.g. before / after training)."""
    return {name: umap_frame(model, sentences, labels, method, seed, batch_size, max_length, **umap_options)
            for name, model in models.items()}
