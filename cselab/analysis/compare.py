"""Comparing runs across methods, seeds and settings (the ``compare`` notebook and its kin).

* :func:`run_groups` — which group (method, or any config keys) and seed each run belongs to;
* :func:`sts_results` — each run's STS result: the final table of ``results.json`` when it has the
  tasks asked for, else an evaluation cached in the run directory;
* :func:`paired_tests` — the paired t-test against the baseline for every group and task, raw and
  Holm-adjusted p over a stated family, the minimum detectable difference;
* :func:`sts_pair_scores`, :func:`single_seed_bootstrap` — each run's per-pair STS similarities
  (cached) and, for a group sharing one seed with the baseline, the paired bootstrap over the test
  pairs (test-set uncertainty, not seed variance);
* :func:`per_task_comparison`, :func:`difference_panels` — those as a text table and as the input
  of :func:`cselab.plots.plot_paired_differences`;
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
import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluate.cache import evaluate_run, final_sts
from ..evaluate.sts import STS_TASKS
from ..methods import display_names
from ..rundir import BEST, Runs, label_matches, labelled_runs, read_config, read_results
from ..stats import (ALPHA, BOOTSTRAP_RESAMPLES, POWER, bootstrap_average_spearman_difference,
                     bootstrap_spearman_difference, compare_to_baseline, describe_difference, holm)
from .logged import method_name

# Display names of the methods as the papers name them (config method → name, as each method's
# module declares it); any other group keeps its own text. A family is its parts together
# (``augmented_positive+interlayer_negative`` → APINCSE).
def method_names() -> dict[str, str]:
    return display_names()


def config_value(config: Mapping, key: str):
    """A config value by key; ``section.key`` reads a method's section (None when absent). A method
    list reads as its names joined by ``+``."""
    if key == "method":
        return method_name(config)
    section, _, name = key.partition(".")
    value = (config.get(section) or {}).get(name) if name else config.get(key)
    return "+".join(map(str, value)) if isinstance(value, list) else value


LABEL_KEY = "label"   # run_groups' key for the run label (without its seed suffix)


def run_groups(runs: Runs, keys: Sequence[str] = ("method",), names: Mapping[str, str] | None = None,
               seed_key: str = "seed") -> pd.DataFrame:
    """One row per run: ``run``, ``group``, ``seed`` and each config key of ``keys``.

    ``group`` joins the values of ``keys`` with ``, `` (``key=value`` for every key but
    ``method`` and ``label``) and is then renamed by ``names`` (default :func:`method_names`; a
    mapping given here is added on top). The key ``label`` is the run's label without a seed suffix
    (``apincse-no_ap-s2`` → ``apincse-no_ap``), named as figures name it ("APINCSE-AP"): runs named
    apart are grouped apart (e.g. APINCSE's pooler-only control, which has SimCSE's method on
    another pooler). Runs that differ only in their seed share a group: the unit over which
    :func:`cselab.stats.compare_to_baseline` pairs seeds."""
    from ..plots.labels import display_name
    from ..plots.style import _strip_seed

    keys = list(keys)
    if not keys:
        raise ValueError("run_groups: keys must name at least one config key (e.g. method)")
    names = {**method_names(), **(names or {})}
    rows = []
    for label, path in labelled_runs(runs).items():
        config = read_config(path)
        values = {key: (_strip_seed(label) if key == LABEL_KEY else config_value(config, key)) for key in keys}
        text = ", ".join(display_name(v) if k == LABEL_KEY else str(v) if k == "method" else f"{k}={v}"
                         for k, v in values.items())
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
    """The group name of ``baseline`` given as a group name or as a config value (``simcse``); a
    ValueError when it is not among the groups or is the only one (nothing to compare with)."""
    present = list(dict.fromkeys(groups["group"]))
    renamed = {**method_names(), **(names or {})}.get(baseline)
    found = baseline if baseline in present else renamed if renamed in present else None
    if found is None:
        raise ValueError(f"baseline {baseline!r} is none of the groups {present}")
    if len(present) == 1:   # the tests and figures of differences need a second group
        raise ValueError(f"every run is in the baseline group {found!r}; add another group's runs to compare with it")
    return found


# ------------------------------------------------------------------- STS per run
def sts_results(runs: Runs, tasks: Sequence[str] | None = None, data_dir: str | os.PathLike | None = None,
                model: str = BEST) -> dict[str, dict]:
    """``{label: {"scores": {task: score}, "avg": ..., "source": ...}}`` for every run.

    ``tasks=None``: the run's final STS table (``results.json``, ``final_eval``) or, without one, the
    7-task suite evaluated once and cached (:func:`cselab.evaluate.cache.evaluate_run`). A task list:
    those tasks of the final table when it has all of them, else those tasks evaluated (cached);
    ``avg`` is then the mean over the listed tasks. ``source`` says which (``final table`` or
    ``evaluated``)."""
    out = {}
    for label, path in labelled_runs(runs).items():
        final = final_sts(path, model)
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
# Which tests form one Holm family when every group is tested on every task:
FAMILIES = {"group": "each group's tasks together (a claim about one method on every task)",
            "task": "each task's groups together (which methods beat the baseline on that task)",
            "all": "every group and task at once"}
TEST_COLUMNS = ["paired_n", "diff", "diff_ci_low", "diff_ci_high", "diff_std", "t", "p", "p_holm", "family", "mde",
                "reading"]


def paired_tests(frame: pd.DataFrame, tasks: Sequence[str], group: str = "group", baseline: str = "SimCSE",
                 pair_on: str = "seed", family: str = "group", alpha: float = ALPHA,
                 power: float = POWER) -> pd.DataFrame:
    """One row per group other than the baseline and per task: the paired t-test over the seeds both
    share (:func:`cselab.stats.compare_to_baseline`: ``diff``, its 95 % t-interval, ``p``), the
    Holm-adjusted ``p_holm`` over the ``family`` (:data:`FAMILIES`; the default, ``group``, adjusts
    each group's tests over its tasks), the family in words (``family`` column), the minimum
    detectable difference ``mde`` (power ``power`` at ``alpha``) and the ``reading`` (detected, or
    no detectable effect with its MDE)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    parts = []
    for task in tasks:
        table = compare_to_baseline(frame, task, group=group, baseline=baseline, pair_on=pair_on, alpha=alpha,
                                    power=power)
        if "p" in table:
            parts.append(table[table[group] != baseline].assign(task=task))
    if not parts:
        return pd.DataFrame(columns=[group, "task", *TEST_COLUMNS])
    tests = pd.concat(parts, ignore_index=True)
    key = {"group": tests[group], "task": tests["task"], "all": pd.Series("all", index=tests.index)}[family]
    tests["p_holm"], tests["family"] = math.nan, ""
    for value, index in tests.groupby(key, sort=False).groups.items():
        tests.loc[index, "p_holm"] = holm(tests.loc[index, "p"].to_numpy())
        members = int(tests.loc[index, "p"].notna().sum())
        words = {"group": f"Holm over {value}'s {members} scores", "task": f"Holm over {members} {group}s on {value}",
                 "all": f"Holm over all {members} tests"}[family]
        tests.loc[[i for i in index if not pd.isna(tests.loc[i, "p"])], "family"] = words
    tests["reading"] = [describe_difference(r["diff"], r["p_holm"], r["mde"], r["paired_n"], alpha)
                        for _, r in tests.iterrows()]
    return tests[[group, "task", *TEST_COLUMNS]]


def sts_pair_scores(runs: Runs, tasks: Sequence[str] | None = None, data_dir: str | os.PathLike | None = None,
                    model: str = BEST) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """``{label: {task: (predicted similarities, gold)}}``: every test pair of the STS ``tasks``
    (None: the seven) scored by each run's model, evaluated once and cached in the run directory
    (:func:`cselab.evaluate.cache.evaluate_run` with ``per_pair=True``)."""
    tasks = list(tasks or STS_TASKS)
    out = {}
    for label, path in labelled_runs(runs).items():
        pairs = evaluate_run(path, "sts", model, data_dir, tasks=tasks, per_pair=True)["per_pair"]
        out[label] = {task: (np.asarray(p["pred"]), np.asarray(p["gold"])) for task, p in pairs.items()}
    return out


def single_seed_runs(frame: pd.DataFrame, group: str = "group", baseline: str = "SimCSE",
                     pair_on: str = "seed") -> list[str]:
    """The runs :func:`single_seed_bootstrap` needs (``frame``'s ``run`` labels): for every group
    sharing exactly one seed with the baseline, its run and the baseline's run of that seed."""
    base = frame[frame[group] == baseline].set_index(pair_on)["run"]
    needed = []
    for _, part in frame[frame[group] != baseline].groupby(group, sort=False):
        shared = sorted(set(part[pair_on]) & set(base.index))
        if len(shared) == 1:
            needed += [part.set_index(pair_on).loc[shared[0], "run"], base.loc[shared[0]]]
    return list(dict.fromkeys(needed))


def single_seed_bootstrap(frame: pd.DataFrame, pair_scores: Mapping[str, Mapping[str, tuple]], tasks: Sequence[str],
                          group: str = "group", baseline: str = "SimCSE", pair_on: str = "seed", average: str = "avg",
                          n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """For each group sharing exactly one seed with the baseline (no t-test possible): per task, the
    difference of Spearman ×100 between its run and the baseline's run of that seed with the 95 %
    interval of a **paired bootstrap over the test pairs** (:func:`cselab.stats.bootstrap_spearman_difference`;
    the ``average`` column: every task of ``pair_scores`` resampled, the differences averaged). The
    interval is test-set uncertainty, not training-seed variance. ``frame`` needs a ``run`` column
    (labels of ``pair_scores``, e.g. from :func:`sts_pair_scores`)."""
    missing = [c for c in ("run", group, pair_on) if c not in frame]
    if missing:
        raise ValueError(f"single_seed_bootstrap: missing column(s) {missing}; columns: {list(frame.columns)}")
    base = frame[frame[group] == baseline].set_index(pair_on)["run"]
    rows = []
    for name, part in frame[frame[group] != baseline].groupby(group, sort=False):
        shared = sorted(set(part[pair_on]) & set(base.index))
        if len(shared) != 1:
            continue
        ours, theirs = part.set_index(pair_on).loc[shared[0], "run"], base.loc[shared[0]]
        for label in (ours, theirs):
            if label not in pair_scores:
                raise ValueError(f"single_seed_bootstrap: no per-pair scores for run {label!r}")
        for task in tasks:
            names = list(pair_scores[ours]) if task == average else [task]
            sets = {}
            for t in names:
                (a, gold_a), (b, gold_b) = pair_scores[ours][t], pair_scores[theirs][t]
                if len(gold_a) != len(gold_b) or not np.array_equal(gold_a, gold_b):
                    raise ValueError(f"single_seed_bootstrap: {ours} and {theirs} scored different {t} test pairs")
                sets[t] = (a, b, gold_a)
            result = (bootstrap_average_spearman_difference(sets, n_resamples, seed) if task == average
                      else bootstrap_spearman_difference(*sets[task], n_resamples=n_resamples, seed=seed))
            rows.append({group: name, "task": task, "run": ours, "baseline_run": theirs,
                         **{k: result[k] for k in ("diff", "ci_low", "ci_high", "n_pairs", "n_resamples",
                                                   "interval")}})
    return pd.DataFrame(rows, columns=[group, "task", "run", "baseline_run", "diff", "ci_low", "ci_high", "n_pairs",
                                       "n_resamples", "interval"])


def per_task_comparison(frame: pd.DataFrame, tasks: Sequence[str], group: str = "group", baseline: str = "SimCSE",
                        pair_on: str = "seed", decimals: int = 2, family: str = "group",
                        bootstrap: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each group's mean difference from ``baseline`` per task, with the paired t-test's raw p and
    its Holm-adjusted p over ``family`` (:func:`paired_tests`): cells ``+0.52 (p 0.031, Holm 0.124)``,
    followed by ``: no detectable effect (MDE 0.61)`` when the adjusted p is not below 0.05;
    ``(baseline)`` for the baseline's row; ``+0.50 (n 3, no spread)`` when the differences are all
    equal. One shared seed: ``+0.52 (n 1)``, or with ``bootstrap`` (:func:`single_seed_bootstrap`)
    ``+0.48 [−0.31, 1.20] (n 1; test pairs)``, the paired bootstrap's interval over the test pairs.
    Rows: groups in order; columns: ``tasks``, then ``Holm family``."""
    tests = paired_tests(frame, tasks, group, baseline, pair_on, family)
    boot = {} if bootstrap is None else {(r[group], r["task"]): r for _, r in bootstrap.iterrows()}
    rows = {name: {task: "(baseline)" for task in tasks} if name == baseline else {}
            for name in dict.fromkeys(frame[group])}
    for _, r in tests.iterrows():
        if pd.isna(r["diff"]):
            cell = "–"
        elif not pd.isna(r["p"]):
            cell = f"{r['diff']:+.{decimals}f} (p {r['p']:.3f}, Holm {r['p_holm']:.3f})"
            if r["p_holm"] >= ALPHA:
                cell += f": no detectable effect (MDE {r['mde']:.{decimals}f})"
        elif r["paired_n"] == 1 and (r[group], r["task"]) in boot:
            b = boot[(r[group], r["task"])]
            cell = (f"{b['diff']:+.{decimals}f} [{b['ci_low']:.{decimals}f}, {b['ci_high']:.{decimals}f}] "
                    "(n 1; test pairs)")
        else:
            cell = f"{r['diff']:+.{decimals}f} (n {int(r['paired_n'])}{', no spread' if r['paired_n'] > 1 else ''})"
        rows[r[group]][r["task"]] = cell
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(tasks)).fillna("–")
    families = tests.groupby(group, sort=False)["family"].agg(lambda f: "; ".join(x for x in dict.fromkeys(f) if x))
    out["Holm family"] = [families.get(name, "") for name in out.index]
    out.index.name = group
    return out


def difference_panels(tests: pd.DataFrame, bootstrap: pd.DataFrame | None = None,
                      names: Mapping[str, str] | None = None, group: str = "group") -> dict[str, pd.DataFrame]:
    """Input of :func:`cselab.plots.plot_paired_differences` from :func:`paired_tests` (and
    :func:`single_seed_bootstrap`): ``{task words: frame}``, one row per group with its difference,
    interval, raw and Holm-adjusted p and ``interval`` (``t over seeds``, or ``bootstrap over test
    pairs`` for a single shared seed, whose difference and interval the bootstrap gives)."""
    panels = {}
    for task, part in tests.groupby("task", sort=False):
        part = part.assign(interval=["t over seeds" if n > 1 else "" for n in part["paired_n"]]).reset_index(drop=True)
        if bootstrap is not None:
            for _, b in bootstrap[bootstrap["task"] == task].iterrows():
                at = part.index[part[group] == b[group]]
                part.loc[at, ["diff", "diff_ci_low", "diff_ci_high", "interval"]] = [
                    b["diff"], b["ci_low"], b["ci_high"], "bootstrap over test pairs"]
        panels[(names or {}).get(task, task)] = part
    return panels


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
        match = next((p for p in by_length if label_matches(label, p)), None)
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

