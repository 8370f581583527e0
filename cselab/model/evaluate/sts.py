"""STS evaluation exactly as SimCSE reports it.

Protocol (SimCSE's ``evaluation.py --mode test --task_set sts`` on its SentEval fork):

* the score of a pair is the cosine similarity of the two embeddings;
* STS12–16: one Spearman correlation over the pairs of **all subsets concatenated**
  (SentEval's ``['all']['spearman']['all']``); per-subset values are reported too;
* STS-B and SICK-R: Spearman on the **test** split;
* everything ×100, and the average of the seven.

SentEval's own headline number for STS12–16 is instead the *mean of the per-subset*
correlations (``aggregate="mean"``; ``"wmean"`` weights subsets by size). Papers that follow
SentEval's default are therefore not comparable with SimCSE-style tables.

Sentences are encoded once across all tasks (deduplicated, sorted by length) and never
truncated to the training ``max_len``.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np
from scipy.stats import spearmanr

from ..data.sts import STS_SUBSETS, STS_TASKS, STSPairs, load_sts_task
from ..io import atomic_write_json

logger = logging.getLogger(__name__)

AGGREGATES = ("all", "mean", "wmean")
TASK_LABELS = {"STS12": "STS12", "STS13": "STS13", "STS14": "STS14", "STS15": "STS15", "STS16": "STS16",
               "STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}
EVAL_SPLIT = {"STSBenchmark": "test", "SICKRelatedness": "test"}


class Encodes(Protocol):
    def encode(self, sentences: list[str], batch_size: int = ...) -> np.ndarray: ...


def cosine_scores(emb1: np.ndarray, emb2: np.ndarray) -> np.ndarray:
    emb1 = emb1 / np.maximum(np.linalg.norm(emb1, axis=1, keepdims=True), 1e-12)
    emb2 = emb2 / np.maximum(np.linalg.norm(emb2, axis=1, keepdims=True), 1e-12)
    return np.sum(emb1 * emb2, axis=1)


def spearman(pred: np.ndarray, gold: np.ndarray) -> float:
    """Spearman's ρ; NaN when either side is constant or not finite (a collapsed or diverged model:
    every pair scored alike). That case is answered here instead of by scipy, whose
    ConstantInputWarning would otherwise be the first line a user sees, before cselab's own error
    about the NaN dev score."""
    pred, gold = np.asarray(pred, dtype=float), np.asarray(gold, dtype=float)
    if not (np.isfinite(pred).all() and np.isfinite(gold).all()) or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return float("nan")
    return float(spearmanr(pred, gold).statistic)


def aggregate_subsets(preds: dict[str, np.ndarray], golds: dict[str, np.ndarray]) -> dict[str, float]:
    """SentEval's three summaries of per-subset predictions: ``all`` (Spearman of the
    concatenation), ``mean`` (mean of per-subset Spearman), ``wmean`` (weighted by size)."""
    per = {k: spearman(preds[k], golds[k]) for k in preds}
    sizes = np.array([len(golds[k]) for k in preds], dtype=float)
    return {
        "all": spearman(np.concatenate(list(preds.values())), np.concatenate(list(golds.values()))),
        "mean": float(np.mean(list(per.values()))),
        "wmean": float(np.average(list(per.values()), weights=sizes)),
    }


def evaluate_sts(model: Encodes, tasks: Sequence[str] = STS_TASKS, data_dir: str | os.PathLike | None = None,
                 aggregate: str = "all", batch_size: int = 128, output: str | os.PathLike | None = None,
                 pairs=None, per_pair: bool = False) -> dict:
    """Evaluate any model with ``encode(sentences, batch_size)`` on the STS tasks.

    Returns ``{"scores": {task: x100}, "avg": x100, "details": {...}, "aggregate": ..., "seconds": ...}``.
    ``pairs``: your own scored pairs (a TSV path, a list of them or ``{name: path}``; format in
    :mod:`cselab.model.data.custom`), scored the same way (Spearman ×100 of cosines) in the same encoding
    pass and reported under ``"custom"`` (``{"scores": {name: x100}, "details": {name: {file, pairs}}}``),
    outside ``avg`` (which stays the standard tasks' average, comparable with the papers').
    ``per_pair=True`` adds ``"per_pair": {task: {"pred": [...], "gold": [...]}}``: the cosine of every
    scored pair beside its gold score, in the order the task's Spearman is taken over (STS12–16:
    the subsets concatenated, as ``aggregate="all"``; STS-B and SICK-R: the test split), for a
    paired bootstrap over the test pairs (:func:`cselab.workbench.results.bootstrap_spearman_difference`).
    """
    from ..data.custom import load_pairs_file, pair_files

    custom = {name: load_pairs_file(path, name) for name, path in pair_files(pairs).items()}
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    unknown = [t for t in tasks if t not in STS_TASKS]
    if unknown:
        raise ValueError(f"unknown STS task(s) {unknown}; choose from {list(STS_TASKS)}")
    start = time.perf_counter()
    selected: dict[str, dict[str, STSPairs]] = {}
    for task in tasks:
        subsets = load_sts_task(task, data_dir)
        if task in EVAL_SPLIT:
            subsets = {EVAL_SPLIT[task]: subsets[EVAL_SPLIT[task]]}
        selected[task] = subsets
    flat = [(task, name, p) for task, subsets in selected.items() for name, p in subsets.items()]
    predictions, n_sentences = predict_pairs(model, [p for _, _, p in flat] + list(custom.values()), batch_size)
    by_task: dict[str, dict[str, np.ndarray]] = {task: {} for task in selected}
    for (task, name, _), pred in zip(flat, predictions):
        by_task[task][name] = pred
    custom_preds = dict(zip(custom, predictions[len(flat):]))

    scores, details = {}, {}
    for task, subsets in selected.items():
        preds = by_task[task]
        golds = {name: p.scores for name, p in subsets.items()}
        if task in STS_SUBSETS:
            summary = aggregate_subsets(preds, golds)
            details[task] = {"subsets": {k: 100 * spearman(preds[k], golds[k]) for k in preds},
                             **{k: 100 * v for k, v in summary.items()},
                             "pairs": int(sum(len(g) for g in golds.values()))}
            scores[task] = details[task][aggregate]
        else:
            split = EVAL_SPLIT[task]
            scores[task] = 100 * spearman(preds[split], golds[split])
            details[task] = {split: scores[task], "pairs": len(golds[split])}
    result = {
        "scores": scores,
        "avg": float(np.mean(list(scores.values()))) if scores else float("nan"),
        "aggregate": aggregate,
        "details": details,
        "sentences_encoded": n_sentences,
        "seconds": time.perf_counter() - start,
    }
    if per_pair:
        result["per_pair"] = {task: {"pred": np.concatenate(list(by_task[task].values())).astype(float).tolist(),
                                  "gold": np.concatenate([p.scores for p in subsets.values()]).astype(float).tolist()}
                           for task, subsets in selected.items()}
    if custom:
        result["custom"] = {"scores": {n: 100 * spearman(custom_preds[n], p.scores) for n, p in custom.items()},
                            "details": {n: {"file": str(pair_files(pairs)[n]), "pairs": len(p)}
                                        for n, p in custom.items()}}
    logger.info("STS (%s): average %.2f over %d tasks; %d unique sentences encoded, %.1f s", aggregate,
                result["avg"], len(scores), n_sentences, result["seconds"])
    if output is not None:
        atomic_write_json(Path(output), result)
    return result


def predict_pairs(model: Encodes, pair_sets: Sequence[STSPairs], batch_size: int = 128,
                  **encode_kwargs) -> tuple[list[np.ndarray], int]:
    """Cosine predictions for several sets of pairs, encoding every distinct sentence once.
    Returns the predictions (one array per set) and the number of sentences encoded."""
    sentences = sorted({s for p in pair_sets for s in (*p.sentences1, *p.sentences2)})
    vectors = model.encode(sentences, batch_size=batch_size, **encode_kwargs)
    row = {s: i for i, s in enumerate(sentences)}
    predictions = [cosine_scores(vectors[[row[s] for s in p.sentences1]], vectors[[row[s] for s in p.sentences2]])
                   for p in pair_sets]
    return predictions, len(sentences)


def evaluate_pairs(model: Encodes, pairs: STSPairs, batch_size: int = 128,
                   show_progress_bar: bool | None = None) -> float:
    """Spearman ×100 of cosine scores on one set of pairs (e.g. STS-B dev during training).
    ``show_progress_bar`` is passed to ``encode`` when given (cselab and sentence-transformers both
    take it)."""
    kwargs = {} if show_progress_bar is None else {"show_progress_bar": show_progress_bar}
    (pred,), _ = predict_pairs(model, [pairs], batch_size, **kwargs)
    return 100 * spearman(pred, pairs.scores)


def format_sts_table(results: dict[str, dict], floatfmt: str = ".2f") -> str:
    """A Markdown table: one row per named result, SimCSE's column order, plus Avg."""
    from tabulate import tabulate

    tasks = [t for t in STS_TASKS if any(t in r["scores"] for r in results.values())]
    rows = [[name, *[r["scores"].get(t, float("nan")) for t in tasks], r["avg"]] for name, r in results.items()]
    return tabulate(rows, headers=["model", *[TASK_LABELS[t] for t in tasks], "Avg."], tablefmt="github",
                    floatfmt=floatfmt)
