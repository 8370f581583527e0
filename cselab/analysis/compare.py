"""Comparing runs across methods, seeds and settings (the ``compare`` notebook and its kin).

* :func:`run_groups` — which group (method, or any config keys) and seed each run belongs to;
* :func:`sts_results` — each run's STS result: the final table of ``results.json`` when it has the
  tasks asked for, else an evaluation cached in the run directory;
* :func:`per_task_comparison` — the paired t-test against the baseline for every task;
* :func:`label_variants` — ablation variants from run labels (label prefix → variant name);
* :func:`sweep_frame` — a metric against a swept config key, one row per run;
* :func:`clustering_metric_frame` — one clustering metric (accuracy, NMI, AMI) per run and set.

Example::

    groups = run_groups(runs)                                   # run, group, seed, method
    frame = with_groups(evaluation_frame(sts_results(runs), runs), groups)
    compare_to_baseline(frame, "avg", group="group", baseline="SimCSE")
"""
from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..evaluate.runs import evaluate_run
from ..rundir import Runs, labelled_runs, read_config, read_results
from ..stats import compare_to_baseline
from .runs import method_name

# Display names of the methods as the papers name them (config method → name); any other group
# keeps its own text. APINCSE is its two terms together (with the layer-attention pooler).
METHOD_NAMES = {"simcse": "SimCSE", "mixcse": "MixCSE", "gs_infonce": "GS-InfoNCE", "clusterns": "ClusterNS",
                "augmented_positive+interlayer_negative": "APINCSE"}


def config_value(config: Mapping, key: str):
    """A config value by key; ``section.key`` reads a method's section (None when absent). A method
    list reads as its names joined by ``+``."""
    if key == "method":
        return method_name(config)
    section, _, name = key.partition(".")
    value = (config.get(section) or {}).get(name) if name else config.get(key)
    return "+".join(map(str, value)) if isinstance(value, list) else value


def run_groups(runs: Runs, keys: Sequence[str] = ("method",), names: Mapping[str, str] | None = None,
               seed_key: str = "seed") -> pd.DataFrame:
    """One row per run: ``run``, ``group``, ``seed`` and each config key of ``keys``.

    ``group`` joins the values of ``keys`` with ``, `` (``key=value`` for every key but
    ``method``) and is then renamed by ``names`` (default :data:`METHOD_NAMES`; a mapping given
    here is added on top). Runs that differ only in their seed share a group: the unit over
    which :func:`cselab.stats.compare_to_baseline` pairs seeds."""
    keys = list(keys)
    if not keys:
        raise ValueError("run_groups: keys must name at least one config key (e.g. method)")
    names = {**METHOD_NAMES, **(names or {})}
    rows = []
    for label, path in labelled_runs(runs).items():
        config = read_config(path)
        values = {key: config_value(config, key) for key in keys}
        text = ", ".join(str(v) if k == "method" else f"{k}={v}" for k, v in values.items())
        rows.append({"run": label, "group": names.get(text, text), seed_key: config.get(seed_key), **values})
    return pd.DataFrame(rows)


def with_groups(frame: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (one row per run, a ``run`` column) with the ``group`` and ``seed`` of
    :func:`run_groups` in front (columns of the same name in ``frame`` are replaced)."""
    if "run" not in frame:
        raise ValueError(f"with_groups: the frame has no 'run' column; columns: {list(frame.columns)}")
    extra = [c for c in groups.columns if c != "run"]
    merged = groups.merge(frame.drop(columns=[c for c in extra if c in frame]), on="run", how="right")
    return merged[["run", *extra, *[c for c in merged.columns if c not in ("run", *extra)]]]


def grouped_table(frame: pd.DataFrame, columns: Sequence[str], by: str | Sequence[str] = "group",
                  rename: Mapping[str, str] | None = None, decimals: int = 2) -> pd.DataFrame:
    """Text table of ``columns`` per group (``by``: one or more columns of ``frame``, e.g. ``group``
    from :func:`with_groups`, or ``["group", "batch_size"]`` for a sweep): ``mean ± std`` over the
    group's runs (its seeds), ``mean`` for a single run (:func:`cselab.tables.summarise`,
    :func:`~cselab.tables.format_table`), after a first column ``runs`` counting them; columns
    renamed by ``rename`` (e.g. the papers' names). One ``by`` column is the index; several become
    columns."""
    from ..tables import format_table, summarise

    columns = list(columns)
    if not columns:
        raise ValueError("grouped_table: no columns to summarise")
    summary = summarise(frame, by, columns)
    table = format_table(summary, decimals).rename(columns=dict(rename or {}))
    table.insert(0, "runs", summary[(columns[0], "n")].astype(int).to_numpy())
    return table.reset_index() if isinstance(table.index, pd.MultiIndex) else table


def resolve_baseline(baseline: str, groups: pd.DataFrame, names: Mapping[str, str] | None = None) -> str:
    """The group name of ``baseline`` given as a group name or as a config value (``simcse``)."""
    present = list(dict.fromkeys(groups["group"]))
    if baseline in present:
        return baseline
    renamed = {**METHOD_NAMES, **(names or {})}.get(baseline)
    if renamed in present:
        return renamed
    raise ValueError(f"baseline {baseline!r} is none of the groups {present}")


# ------------------------------------------------------------------- STS per run
def sts_results(runs: Runs, tasks: Sequence[str] | None = None, data_dir: str | os.PathLike | None = None,
                model: str = "best") -> dict[str, dict]:
    """``{label: {"scores": {task: score}, "avg": ..., "source": ...}}`` for every run.

    ``tasks=None``: the run's final STS table (``results.json``, ``final_eval``) or, without one, the
    7-task suite evaluated once and cached (:func:`cselab.evaluate.runs.evaluate_run`). A task list:
    those tasks of the final table when it has all of them, else those tasks evaluated (cached);
    ``avg`` is then the mean over the listed tasks. ``source`` says which (``final table`` or
    ``evaluated``)."""
    out = {}
    for label, path in labelled_runs(runs).items():
        final = None
        if model == "best" and (path / "results.json").is_file():
            from ..io import read_json

            final = read_json(path / "results.json").get("sts")
        if final is not None and (tasks is None or set(tasks) <= set(final["scores"])):
            scores = final["scores"] if tasks is None else {t: final["scores"][t] for t in tasks}
            source = "final table"
        else:
            options = {} if tasks is None else {"tasks": list(tasks)}
            scores = evaluate_run(path, "sts", model, data_dir, **options)["scores"]
            source = "evaluated"
        out[label] = {"scores": dict(scores), "avg": float(sum(scores.values()) / len(scores)), "source": source}
    return out


# ------------------------------------------------------------------- paired tests per task
def per_task_comparison(frame: pd.DataFrame, tasks: Sequence[str], group: str = "group", baseline: str = "SimCSE",
                        pair_on: str = "seed", decimals: int = 2) -> pd.DataFrame:
    """Each group's mean difference from ``baseline`` per task, with the paired t-test's p-value:
    cells ``+0.52 (p 0.031)``; ``(baseline)`` for the baseline's row, ``+0.52 (n 1)`` when only
    one seed is shared (no test possible). Rows: groups in order; columns: ``tasks``."""
    rows = {}
    for task in tasks:
        table = compare_to_baseline(frame, task, group=group, baseline=baseline, pair_on=pair_on)
        for _, r in table.iterrows():
            if r[group] == baseline:
                cell = "(baseline)"
            elif pd.isna(r.get("diff")):
                cell = "–"
            elif pd.isna(r.get("p")):
                cell = f"{r['diff']:+.{decimals}f} (n {int(r['paired_n'])})"
            else:
                cell = f"{r['diff']:+.{decimals}f} (p {r['p']:.3f})"
            rows.setdefault(r[group], {})[task] = cell
    out = pd.DataFrame.from_dict(rows, orient="index")[list(tasks)]
    out.index.name = group
    return out


# ------------------------------------------------------------------- ablations and sweeps
def label_variants(labels: Iterable[str], variants: Mapping[str, str]) -> dict[str, str]:
    """``{label: variant}`` for the labels matched by a prefix of ``variants`` (``{prefix: name}``).

    A prefix matches a label equal to it or starting with it and ``-`` (as a study selects runs:
    ``apincse`` matches ``apincse-s1`` and ``apincse-no_ap-s1``, not ``apincse2``); the longest
    matching prefix wins, so ``{"apincse": "APINCSE", "apincse-no_ap": "−AP"}`` gives each run one
    variant. Unmatched labels are left out."""
    if not variants:
        raise ValueError("variants: give at least one {label prefix: variant name}")
    by_length = sorted(variants, key=len, reverse=True)
    out = {}
    for label in labels:
        match = next((p for p in by_length if label == p or label.startswith(p + "-")), None)
        if match is not None:
            out[label] = variants[match]
    return out


def sweep_frame(runs: Runs, key: str, scores: pd.DataFrame | None = None, group_keys: Sequence[str] = ("method",),
                names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per run that sets the swept config ``key``: ``run``, ``group`` (the other settings,
    :func:`run_groups` over ``group_keys``), ``seed``, ``key``, the ``results.json`` scores of
    :func:`cselab.rundir.read_results` (``best_stsb_dev``, ``sts/avg``, …) and the columns of
    ``scores`` (a frame with a ``run`` column, e.g. :func:`cselab.evaluate.evaluation_frame`),
    sorted by group and ``key``. Runs without a value for ``key`` are left out; none left is an error."""
    labelled = labelled_runs(runs)
    frame = read_results(labelled, config_keys=())
    frame.insert(1, key, [config_value(read_config(path), key) for path in labelled.values()])
    if scores is not None:
        frame = frame.merge(scores.drop(columns=[c for c in scores.columns if c in frame and c != "run"]),
                            on="run", how="left")
    frame = with_groups(frame, run_groups(labelled, [k for k in group_keys if k != key] or ["method"], names))
    frame = frame[frame[key].notna()]
    if frame.empty:
        raise ValueError(f"sweep_frame: no run sets {key!r} (a config key, e.g. clusterns.num_clusters)")
    return frame.sort_values(["group", key], kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------- clustering
def clustering_metric_frame(results: Mapping[str, dict], metric: str = "acc") -> pd.DataFrame:
    """One row per run (``run``), one column per clustering set: ``metric`` (``acc``, ``nmi`` or
    ``ami``) ×100, the mean over the K-means seeds of :func:`cselab.evaluate.evaluate_clustering`."""
    if metric not in ("acc", "nmi", "ami"):
        raise ValueError(f"metric must be acc, nmi or ami, got {metric!r}")
    rows = []
    for label, result in results.items():
        details = result.get("details")
        if not details:
            raise ValueError(f"{label}: not a clustering result (no 'details')")
        rows.append({"run": label, **{task: 100 * d[metric]["mean"] for task, d in details.items()}})
    return pd.DataFrame(rows)


METRIC_WORDS = {"acc": "acc", "nmi": "NMI", "ami": "AMI"}


def clustering_detail_frame(results: Mapping[str, dict],
                            metrics: Sequence[str] = ("acc", "nmi", "ami")) -> pd.DataFrame:
    """One row per run, a column ``<set> <metric>`` (``AgNews acc``, ``AgNews NMI``, …) per set and
    metric: every number of the clustering results (×100, means over the K-means seeds)."""
    frame = None
    for metric in metrics:
        part = clustering_metric_frame(results, metric).set_index("run")
        part.columns = [f"{task} {METRIC_WORDS[metric]}" for task in part.columns]
        frame = part if frame is None else frame.join(part)
    ordered = [f"{task} {METRIC_WORDS[m]}" for task in clustering_metric_frame(results, metrics[0]).columns[1:]
               for m in metrics]
    return frame[ordered].reset_index()


def describe_sts_average(tasks: Sequence[str] | None) -> str:
    """Words for the average of an STS table over ``tasks`` (None: the seven tasks)."""
    from ..evaluate.sts import TASK_LABELS

    if tasks is None or len(tasks) == len(TASK_LABELS):
        return "STS avg. (7 tasks)"
    if len(tasks) == 1:
        return TASK_LABELS.get(tasks[0], tasks[0])
    return "avg. of " + ", ".join(TASK_LABELS.get(t, t) for t in tasks)

