"""A run's models seen through a few sentences (what the ``explorer`` notebook computes): its model
folders, the cosine similarities of a few sentences, their nearest neighbours in a corpus sample,
and 2-D maps of a labelled sample for every training snapshot, aligned so that the maps of
successive snapshots can be compared.

Nothing here imports ipywidgets (the widgets live in :mod:`cselab.workbench.widgets`); each function
takes a model folder (or a loaded encoder) and returns arrays or DataFrames.

Example::

    folders = checkpoint_folders("runs/simcse-...")          # {"best": ..., "last": ..., "step 0": ...}
    encoder = load_encoder(folders["best"])
    similarity_matrix(encoder, ["A man plays a guitar.", "Someone plays music."])
    nearest_neighbours(encoder, ["A man plays a guitar."], corpus_sample("wiki1m-head", 2000), k=5)
    sentences, labels = labelled_sample("DBpedia", 300)
    maps = snapshot_projections(snapshot_folders(run), sentences, labels)   # {"step 0": frame, ...}
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .analysis.umap import MIN_UMAP_POINTS, aligned_umap_2d, project_2d
from ..model.evaluate.geometry import normalize_rows

ALIGNMENTS = ("procrustes", "aligned_umap", "shared_pca", "none")
# What each alignment makes of a sequence of maps, for their captions.
ALIGNMENT_WORDS = {"procrustes": "each map fitted on its own and rotated, reflected and scaled onto the last one's "
                                 "(Procrustes): positions compare, the axes mean nothing",
                   "aligned_umap": "one UMAP of all snapshots fitted together (AlignedUMAP: each map tied to the next "
                                   "on the same texts), then rotated, reflected and scaled onto the last one's "
                                   "(Procrustes): positions compare, the axes mean nothing",
                   "shared_pca": "one PCA fitted on all snapshots together",
                   "none": "each map fitted on its own: the axes of two maps are not comparable"}


# ------------------------------------------------------------------- checkpoints and models
def snapshot_name(step: int) -> str:
    return f"step {step}"


def snapshot_folders(run_dir: str | os.PathLike) -> dict[str, Path]:
    """``{"step 0": folder, "step 50": ...}``: the run's model snapshots (``snapshot_every``) by step."""
    from ..model.rundir import RunDir

    return {snapshot_name(step): path for step, path in RunDir(Path(run_dir)).snapshots().items()}


def checkpoint_folders(run_dir: str | os.PathLike) -> dict[str, Path]:
    """Every model folder of a run that exists: ``best`` (best STS-B dev), ``last`` (last
    checkpoint), then the snapshots (``step 0`` is the model before training)."""
    from ..model.rundir import RunDir

    found = RunDir(Path(run_dir)).check_is_run().saved_models()
    found.update(snapshot_folders(run_dir))
    if not found:
        raise FileNotFoundError(f"{run_dir}: no model folder yet (best/, last/ or snapshots/)")
    return found


@lru_cache(maxsize=4)
def _load(folder: str, mtime: float):
    from ..model.encoder import SentenceEncoder

    return SentenceEncoder.from_pretrained(folder).eval()


def load_encoder(folder: str | os.PathLike):
    """The :class:`~cselab.model.encoder.SentenceEncoder` of a model folder, in evaluation mode; the
    last four are kept in memory (a folder rewritten since is loaded again)."""
    from ..model.encoder.backbone import model_config_file

    config = model_config_file(folder)
    if not config.is_file():
        raise FileNotFoundError(f"{folder}: not a model folder (no {config.name})")
    return _load(str(Path(folder).resolve()), config.stat().st_mtime)


def _encoder(model):
    return load_encoder(model) if isinstance(model, (str, os.PathLike)) else model


def _sentences(sentences: Sequence[str], what: str = "sentences") -> list[str]:
    cleaned = [s.strip() for s in sentences if s and s.strip()]
    if not cleaned:
        raise ValueError(f"{what}: need at least one non-blank sentence")
    return cleaned


# ------------------------------------------------------------------- similarities and neighbours
def encode(model, sentences: Sequence[str], batch_size: int = 128, show_progress_bar: bool | None = None) -> np.ndarray:
    """Evaluation embeddings (rows) of ``sentences`` with a model folder or anything with ``encode``
    (``show_progress_bar``: None leaves the encoder's default, a bar above a few batches)."""
    options = {} if show_progress_bar is None else {"show_progress_bar": show_progress_bar}
    return np.asarray(_encoder(model).encode(list(sentences), batch_size=batch_size, **options), dtype=np.float64)


def similarity_matrix(model, sentences: Sequence[str], batch_size: int = 128) -> np.ndarray:
    """The n × n cosine similarities of ``sentences`` (blank lines dropped) under ``model``."""
    x = normalize_rows(encode(model, _sentences(sentences), batch_size))
    return np.clip(x @ x.T, -1.0, 1.0)


def nearest_neighbours(model, queries: Sequence[str], corpus: Sequence[str], k: int = 5,
                       corpus_embeddings: np.ndarray | None = None, batch_size: int = 128) -> pd.DataFrame:
    """The ``k`` corpus sentences closest (cosine) to each query: columns query, rank (1 = closest),
    neighbour, cosine. ``corpus_embeddings`` (rows aligned with ``corpus``) skips encoding it again."""
    queries, corpus = _sentences(queries, "queries"), list(corpus)
    if not 1 <= k <= len(corpus):
        raise ValueError(f"k must be in [1, {len(corpus)}] (the corpus sample's size), got {k}")
    if corpus_embeddings is None:
        corpus_embeddings = encode(model, corpus, batch_size)
    elif len(corpus_embeddings) != len(corpus):
        raise ValueError(f"{len(corpus_embeddings)} corpus embeddings for {len(corpus)} sentences")
    cos = normalize_rows(encode(model, queries, batch_size)) @ normalize_rows(np.asarray(corpus_embeddings)).T
    order = np.argsort(-cos, axis=1, kind="stable")[:, :k]
    rows = [{"query": q, "rank": rank + 1, "neighbour": corpus[j], "cosine": float(cos[i, j])}
            for i, q in enumerate(queries) for rank, j in enumerate(order[i])]
    return pd.DataFrame(rows, columns=["query", "rank", "neighbour", "cosine"])


# ------------------------------------------------------------------- samples
def corpus_sample(corpus: str | os.PathLike = "wiki1m-head", size: int = 2000, seed: int = 0,
                  data_dir: str | os.PathLike | None = None, pool: int = 100_000) -> list[str]:
    """``size`` distinct sentences drawn (seeded) from the first ``pool`` lines of a corpus."""
    from ..model.data import load_corpus

    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    sentences = list(dict.fromkeys(load_corpus(corpus, max(pool, size), data_dir)))
    if size >= len(sentences):
        return sentences
    chosen = np.sort(np.random.default_rng(seed).choice(len(sentences), size=size, replace=False))
    return [sentences[i] for i in chosen]


def labelled_sample(task: str = "DBpedia", size: int = 300, seed: int = 0,
                    data_dir: str | os.PathLike | None = None) -> tuple[list[str], list[str]]:
    """A class-balanced sample of a clustering set (``DBpedia`` or a short-text set): about
    ``size / classes`` texts per class (all of a smaller class), with the class names as labels."""
    from ..model.data.clustering import load_clustering_task

    data = load_clustering_task(task, data_dir)
    classes = np.unique(data.labels)
    if size < len(classes):
        raise ValueError(f"size must be at least the number of classes of {task} ({len(classes)}), got {size}")
    rng = np.random.default_rng(seed)
    per_class = size // len(classes)
    picked = np.sort(np.concatenate([rng.choice(np.flatnonzero(data.labels == c),
                                                size=min(per_class, int((data.labels == c).sum())), replace=False)
                                     for c in classes]))
    names = data.label_names or {}
    return [data.texts[i] for i in picked], [str(names.get(int(data.labels[i]), data.labels[i])) for i in picked]


# ------------------------------------------------------------------- snapshot maps
def procrustes_align(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``source`` (n × 2) moved onto ``target`` by the translation, rotation/reflection and uniform
    scale that minimise the squared distance between matching points (orthogonal Procrustes)."""
    from scipy.linalg import orthogonal_procrustes

    source, target = np.asarray(source, dtype=np.float64), np.asarray(target, dtype=np.float64)
    if source.shape != target.shape or source.ndim != 2:
        raise ValueError(f"procrustes_align: need two arrays of one shape (n × d), got {source.shape} and {target.shape}")
    s_mean, t_mean = source.mean(0), target.mean(0)
    s, t = source - s_mean, target - t_mean
    s_norm, t_norm = np.linalg.norm(s), np.linalg.norm(t)
    if s_norm == 0 or t_norm == 0:
        return np.tile(t_mean, (len(source), 1))
    rotation, _ = orthogonal_procrustes(s / s_norm, t / t_norm)
    return (s / s_norm) @ rotation * t_norm + t_mean


def project_snapshots(embeddings: Mapping[str, np.ndarray], method: str = "auto", align: str = "procrustes",
                      seed: int = 0, projected_one: Callable[[str], None] | None = None
                      ) -> tuple[dict[str, np.ndarray], str]:
    """2-D coordinates for each snapshot's embeddings of the same sentences, comparable across
    snapshots: ``procrustes`` projects each (UMAP, or PCA for few points) and aligns it to the
    last snapshot's map; ``aligned_umap`` fits one AlignedUMAP over all snapshots (each map tied to
    the next on the shared points: separate UMAP maps differ by more than a rotation, which
    Procrustes alone cannot undo), then aligns them to the last one as ``procrustes`` does (with
    PCA, for few points or ``method="pca"``, it is ``procrustes``); ``shared_pca`` fits one PCA
    on all snapshots together; ``none`` leaves each map as projected. Returns the coordinates and the projection used. ``projected_one(name)``
    is called as each snapshot's map is done (a progress bar's step)."""
    if align not in ALIGNMENTS:
        raise ValueError(f"align must be one of {ALIGNMENTS}, got {align!r}")
    if not embeddings:
        raise ValueError("project_snapshots: no snapshots")
    names = list(embeddings)
    sizes = {len(embeddings[n]) for n in names}
    if len(sizes) != 1:
        raise ValueError(f"project_snapshots: the snapshots embed different numbers of sentences {sorted(sizes)}")
    if align == "shared_pca":
        from sklearn.decomposition import PCA

        if method not in ("auto", "pca"):
            raise ValueError(f"align='shared_pca' projects with PCA; method must be 'pca' or 'auto', got {method!r}")
        stacked = np.concatenate([normalize_rows(embeddings[n]) for n in names])
        pca = PCA(n_components=2, svd_solver="full").fit(stacked)
        for n in names if projected_one else ():
            projected_one(n)
        return {n: pca.transform(normalize_rows(embeddings[n])) for n in names}, "pca"
    umap_maps = method == "umap" or (method == "auto" and next(iter(sizes)) >= MIN_UMAP_POINTS)
    if align == "aligned_umap" and umap_maps and len(names) > 1:
        maps = aligned_umap_2d([embeddings[n] for n in names], seed)
        for n in names if projected_one else ():
            projected_one(n)
        reference = maps[-1]
        return {n: procrustes_align(xy, reference) for n, xy in zip(names, maps)}, "umap"
    projected, used = {}, None
    for n in names:
        projected[n], used = project_2d(embeddings[n], method, seed)
        if projected_one:
            projected_one(n)
    if align in ("procrustes", "aligned_umap"):
        reference = projected[names[-1]]
        projected = {n: procrustes_align(coords, reference) for n, coords in projected.items()}
    return projected, used


def snapshot_projections(folders: Mapping[str, str | os.PathLike], sentences: Sequence[str], labels: Sequence,
                         method: str = "auto", align: str = "procrustes", seed: int = 0,
                         batch_size: int = 128, progress: bool = False) -> dict[str, pd.DataFrame]:
    """Encode ``sentences`` with every model folder (e.g. :func:`snapshot_folders`) and map them to
    2-D with :func:`project_snapshots`: ``{name: frame}`` with columns x, y, label, sentence
    (``frame.attrs["method"]`` = the projection), ready for :func:`cselab.workbench.plots.plot_umap_panels`.
    ``progress``: one bar over the work, each snapshot encoded then each projected (the explorer's
    seconds-long recompute), instead of a bar per encoding."""
    from ..model.progress import progress_bar

    sentences = list(sentences)
    if len(sentences) != len(labels):
        raise ValueError(f"{len(sentences)} sentences but {len(labels)} labels")
    bar = progress_bar(total=2 * len(folders), desc=f"{len(folders)} snapshots: encode, project", unit="step",
                       enabled=progress, leave=False)
    embeddings = {}
    try:
        for name, folder in folders.items():
            bar.set_postfix_str(f"encoding {name}")
            embeddings[name] = encode(folder, sentences, batch_size, show_progress_bar=False if progress else None)
            bar.update()
        bar.set_postfix_str("projecting")
        coords, used = project_snapshots(embeddings, method, align, seed, projected_one=lambda name: bar.update())
    finally:
        bar.close()
    frames = {}
    for name, xy in coords.items():
        frame = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "label": list(labels), "sentence": sentences})
        frame.attrs["method"] = used
        frames[name] = frame
    return frames


def over_snapshots(run_dir: str | os.PathLike, measure: Callable[[object], Mapping[str, float]],
                   steps: Sequence[int] | None = None) -> pd.DataFrame:
    """``measure(encoder)`` for every snapshot of a run (or the given ``steps``): one row per step
    with the step and the measured values, e.g. MixCSE's scores over training::

        over_snapshots(run, lambda enc: mixcse_scores(enc, dev_sentences))
    """
    from ..model.rundir import RunDir

    found = RunDir(Path(run_dir)).snapshots()
    if not found:
        raise FileNotFoundError(f"{run_dir}: no snapshots (train with snapshot_every)")
    if steps is not None:
        missing = [s for s in steps if s not in found]
        if missing:
            raise ValueError(f"{run_dir}: no snapshot at step(s) {missing}; snapshots: {sorted(found)}")
        found = {s: found[s] for s in steps}
    return pd.DataFrame([{"step": step, **measure(load_encoder(folder))} for step, folder in found.items()])
