"""Each run's scores for a comparison: its STS result, its per-pair STS similarities, its
clustering metrics. The comparison itself — groups, per-seed frames, paired tests, tables — is
:mod:`cselab.workbench.comparisons`, which reads these.

* :func:`sts_results` — each run's STS result: the final table of ``results.json`` when it has the
  tasks asked for, else an evaluation cached in the run directory;
* :func:`sts_pair_scores` — each run's per-pair STS similarities (cached), for the paired bootstrap
  over the test pairs of a group sharing one seed with the baseline;
* :func:`clustering_metric_frame`, :func:`clustering_detail_frame` — clustering metrics (accuracy,
  NMI, AMI) per run and set;
* :func:`describe_sts_average` — words for an STS average over some tasks.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...model.evaluate.cache import evaluate_run, final_result
from ...model.evaluate.sts import STS_TASKS
from ...model.rundir import BEST, Runs, labelled_runs


# ------------------------------------------------------------------- STS per run
def runs_without_sts(runs: Runs, tasks: Sequence[str] | None = None,
                     data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The run folders :func:`sts_results` would have to score (no final table with those tasks, no
    cached entry): what a cell's cost line counts before it starts."""
    from ...model.evaluate.cache import is_evaluated

    options = {} if tasks is None else {"tasks": list(tasks)}   # as sts_results asks for them
    tasks = list(STS_TASKS if tasks is None else tasks)
    out = []
    for path in labelled_runs(runs).values():
        final = final_result(path, "sts")
        if final is not None and set(tasks) <= set(final["scores"]):
            continue
        whole = tasks == list(STS_TASKS) and is_evaluated(path, "sts", data_dir=data_dir)   # the 7 asked for as {}
        if not whole and not is_evaluated(path, "sts", data_dir=data_dir, **options):
            out.append(Path(path))
    return out


def sts_results(runs: Runs, tasks: Sequence[str] | None = None, data_dir: str | os.PathLike | None = None,
                model: str = BEST) -> dict[str, dict]:
    """``{label: {"scores": {task: score}, "avg": ..., "source": ...}}`` for every run.

    ``tasks=None``: the run's final STS table (``results.json``, ``final_eval``) or, without one, the
    7-task suite evaluated once and cached (:func:`cselab.model.evaluate.cache.evaluate_run`). A task list:
    those tasks of the final table when it has all of them, else those tasks evaluated (cached);
    ``avg`` is then the mean over the listed tasks. ``source`` says which (``final table`` or
    ``evaluated``)."""
    out = {}
    for label, path in labelled_runs(runs).items():
        final = final_result(path, "sts", model)
        if final is not None and (tasks is None or set(tasks) <= set(final["scores"])):
            scores = final["scores"] if tasks is None else {t: final["scores"][t] for t in tasks}
            source = "final table"
        else:
            options = {} if tasks is None else {"tasks": list(tasks)}
            scores = evaluate_run(path, "sts", model, data_dir, **options)["scores"]
            source = "evaluated"
        out[label] = {"scores": dict(scores), "avg": float(sum(scores.values()) / len(scores)), "source": source}
    return out


def sts_pair_scores(runs: Runs, tasks: Sequence[str] | None = None, data_dir: str | os.PathLike | None = None,
                    model: str = BEST) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """``{label: {task: (predicted similarities, gold)}}``: every test pair of the STS ``tasks``
    (None: the seven) scored by each run's model, evaluated once and cached in the run directory
    (:func:`cselab.model.evaluate.cache.evaluate_run` with ``per_pair=True``)."""
    tasks = list(tasks or STS_TASKS)
    out = {}
    for label, path in labelled_runs(runs).items():
        pairs = evaluate_run(path, "sts", model, data_dir, tasks=tasks, per_pair=True)["per_pair"]
        out[label] = {task: (np.asarray(p["pred"]), np.asarray(p["gold"])) for task, p in pairs.items()}
    return out


# ------------------------------------------------------------------- clustering
def clustering_metric_frame(results: Mapping[str, dict], metric: str = "acc") -> pd.DataFrame:
    """One row per run (``run``), one column per clustering set: ``metric`` (``acc``, ``nmi`` or
    ``ami``) ×100, the mean over the K-means seeds of :func:`cselab.model.evaluate.evaluate_clustering`."""
    if metric not in ("acc", "nmi", "ami"):
        raise ValueError(f"metric must be acc, nmi or ami, got {metric!r}")
    rows = []
    for label, result in results.items():
        details = result.get("details")
        if not details:
            raise ValueError(f"{label}: not a clustering result (no 'details')")
        rows.append({"run": label, **{task: 100 * d[metric]["mean"] for task, d in details.items()}})
    return pd.DataFrame(rows)


def clustering_start_frame(results: Mapping[str, dict], metrics: Mapping[str, str]) -> pd.DataFrame:
    """One row per run and K-means start (columns ``run``, ``kmeans_seed``, one per set): each set's
    ``metrics[set]`` (``acc``, ``nmi`` or ``ami``) ×100 for that start alone, from the per-start
    values :func:`cselab.model.evaluate.evaluate_clustering` keeps (``details[set][metric]["runs"]``),
    so that a figure can show how far one start's score moves from the next."""
    rows = []
    for label, result in results.items():
        details = result.get("details")
        if not details:
            raise ValueError(f"{label}: not a clustering result (no 'details')")
        missing = [t for t in metrics if t not in details]
        if missing:
            raise ValueError(f"{label}: no clustering result for {missing}; it has {sorted(details)}")
        first, metric = next(iter(metrics.items()))
        seeds = result.get("seeds") or list(range(len(details[first][metric]["runs"])))
        for i, seed in enumerate(seeds):
            rows.append({"run": label, "kmeans_seed": seed,
                         **{task: 100 * details[task][metric]["runs"][i] for task, metric in metrics.items()}})
    return pd.DataFrame(rows)


CLUSTERING_METRIC_WORDS = {"acc": "acc", "nmi": "NMI", "ami": "AMI"}


def clustering_detail_frame(results: Mapping[str, dict],
                            metrics: Sequence[str] = ("acc", "nmi", "ami")) -> pd.DataFrame:
    """One row per run, a column ``<set> <metric>`` (``AgNews acc``, ``AgNews NMI``, …) per set and
    metric: every number of the clustering results (×100, means over the K-means seeds)."""
    frame = None
    for metric in metrics:
        part = clustering_metric_frame(results, metric).set_index("run")
        part.columns = [f"{task} {CLUSTERING_METRIC_WORDS[metric]}" for task in part.columns]
        frame = part if frame is None else frame.join(part)
    ordered = [f"{task} {CLUSTERING_METRIC_WORDS[m]}" for task in clustering_metric_frame(results, metrics[0]).columns[1:]
               for m in metrics]
    return frame[ordered].reset_index()


# the STS tasks scored on a test split of their own (STS12–16 are every pair of a year)
TEST_SPLIT_TASKS = ("STSBenchmark", "SICKRelatedness")
SPEARMAN_UNIT = "Spearman ×100"


def sts_score_words(tasks: Sequence[str] | None) -> str:
    """What an STS score over ``tasks`` is, with its split and unit, for an axis or a label: "STS-B test,
    Spearman ×100" for the demo's one task (a figure said "STS average" of STS-B test alone, or
    "STS-B" where the README said test), "STS avg. (7 tasks), Spearman ×100" for the suite."""
    from ...model.evaluate.sts import TASK_LABELS

    if tasks is not None and len(tasks) == 1:
        task = tasks[0]
        split = " test" if task in TEST_SPLIT_TASKS else ""
        return f"{TASK_LABELS.get(task, task)}{split}, {SPEARMAN_UNIT}"
    return f"{describe_sts_average(tasks)}, {SPEARMAN_UNIT}"


def describe_sts_average(tasks: Sequence[str] | None) -> str:
    """Words for the average of an STS table over ``tasks`` (None: the seven tasks)."""
    from ...model.evaluate.sts import TASK_LABELS

    if tasks is None or len(tasks) == len(TASK_LABELS):
        return "STS avg. (7 tasks)"
    if len(tasks) == 1:
        return TASK_LABELS.get(tasks[0], tasks[0])
    return "avg. of " + ", ".join(TASK_LABELS.get(t, t) for t in tasks)

