"""Comparing runs across methods, seeds and settings (the ``compare`` notebook and its kin).

* :func:`run_groups` — which group (method, or any config keys) and seed each run belongs to;
* :func:`sts_results` — each run's STS result: the final table of ``results.json`` when it has the
  tasks asked for, else an evaluation cached in the run directory;
* :func:`sts_pair_scores` — each run's per-pair STS similarities (cached), for the paired bootstrap
  over the test pairs of a group sharing one seed with the baseline;
* :func:`per_task_comparison`, :func:`difference_panels` — the results layer's paired tests
  (:func:`cselab.results.paired_tests`, :func:`cselab.results.single_seed_bootstrap`) as a text
  table and as the input of :func:`cselab.plots.plot_paired_differences`;
* :func:`sweep_frame` — a metric against a swept config key, one row per run;
* :func:`clustering_metric_frame` — one clustering metric (accuracy, NMI, AMI) per run and set.

Ablation variants from run labels are the results layer's rule (:func:`cselab.results.match_variants`),
as are the statistics: paired t-tests, Holm, the minimum detectable difference, the bootstrap.

Example::

    groups = run_groups(runs)                                   # run, group, seed, method
    frame = with_groups(evaluation_frame(sts_results(runs), runs), groups)
    compare_to_baseline(frame, "avg", group="group", baseline="SimCSE")   # cselab.results
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..evaluate.cache import evaluate_run, final_result
from ..evaluate.sts import STS_TASKS
from ..methods import display_names
from ..rundir import BEST, Runs, labelled_runs, read_config, read_results
from ..rundir.readers import config_value as read_config_value
from ..results import ALPHA, paired_tests
from .logged import method_name

# Display names of the methods as the papers name them (config method → name, as each method's
# module declares it); any other group keeps its own text. A family is its parts together
# (``augmented_positive+interlayer_negative`` → APINCSE).
def method_names() -> dict[str, str]:
    return display_names()


def config_value(config: Mapping, key: str):
    """A config value by key: ``method`` as the run's method name (:func:`cselab.analysis.logged.method_name`),
    any other key as :func:`cselab.rundir.readers.config_value` reads it (``section.key`` reads a
    method's section, None when absent; a list reads as its items joined by ``+``)."""
    return method_name(config) if key == "method" else read_config_value(config, key)


LABEL_KEY = "label"   # run_groups' key for the run label (without its seed suffix)


def run_groups(runs: Runs, keys: Sequence[str] = ("method",), names: Mapping[str, str] | None = None,
               seed_key: str = "seed", swept: str | None = None) -> pd.DataFrame:
    """One row per run: ``run``, ``group``, ``seed`` and each config key of ``keys``.

    ``group`` joins the values of ``keys`` with ``, `` (``key=value`` for every key but
    ``method`` and ``label``) and is then renamed by ``names`` (default :func:`method_names`; a
    mapping given here is added on top). The key ``label`` is the run's label without a seed suffix
    (``apincse-no_ap-s2`` → ``apincse-no_ap``) or, for a run labelled by its folder, without the
    config hash (``simcse-f8fbb5c8ad`` → ``simcse``), named as figures name it ("APINCSE-AP"): runs
    named apart are grouped apart (e.g. APINCSE's pooler-only control, which has SimCSE's method on
    another pooler). Runs that differ only in their seed share a group: the unit over which
    :func:`cselab.results.compare_to_baseline` pairs seeds (:func:`one_run_per_seed` checks it).
    ``swept``: a config key a study's grid sweeps, whose point (``-top_k=8``) the label loses too,
    so that a sweep's points share their group (:func:`sweep_frame`)."""
    from ..labels import display_name

    keys = list(keys)
    if not keys:
        raise ValueError("run_groups: keys must name at least one config key (e.g. method)")
    names = {**method_names(), **(names or {})}
    rows = []
    for label, path in labelled_runs(runs).items():
        config = read_config(path)
        values = {key: (label_group(label, swept) if key == LABEL_KEY else config_value(config, key)) for key in keys}
        text = ", ".join(display_name(v) if k == LABEL_KEY else str(v) if k == "method" else f"{k}={v}"
                         for k, v in values.items())
        rows.append({"run": label, "group": names.get(text, text), seed_key: config.get(seed_key), **values})
    return pd.DataFrame(rows)


def label_group(label: str, swept: str | None = None) -> str:
    """What :func:`run_groups` groups by for ``label``: the label without its seed or a run folder's
    config hash, and without the grid point of ``swept`` (a config key, written in labels by its last
    dotted part or whole: ``apincse-topk-top_k=8-s1`` → ``apincse-topk``)."""
    import re

    from ..labels import strip_seed
    from ..rundir.layout import without_config_hash

    label = strip_seed(without_config_hash(label))
    if swept:
        names = "|".join(re.escape(name) for name in dict.fromkeys([swept.split(".")[-1], swept]))
        label = re.sub(rf"-(?:{names})=[A-Za-z0-9._+=-]*?(?=-[A-Za-z0-9._+]+=|$)", "", label) or label
    return label


def one_run_per_seed(groups: pd.DataFrame, runs: Runs, seed_key: str = "seed") -> None:
    """A ValueError (one line) when two runs of one group of :func:`run_groups` have the same seed:
    the paired tests take a group's runs as its seeds. It names the two runs and the first config key
    in which they differ, and what to group by instead."""
    from ..config import NON_IDENTITY_KEYS
    from ..rundir.readers import config_difference

    def identity(label):
        config = read_config(paths[label])
        return {k: v for k, v in config.items() if k not in (*NON_IDENTITY_KEYS, seed_key)}

    paths = labelled_runs(runs)
    twice = groups[groups.duplicated(["group", seed_key], keep=False)]
    if twice.empty:
        return
    group, seed = twice.iloc[0]["group"], twice.iloc[0][seed_key]
    first, second = twice[(twice["group"] == group) & (twice[seed_key] == seed)]["run"].iloc[:2]
    difference = config_difference(identity(first), identity(second))
    keys = [c for c in groups.columns if c not in ("run", "group", seed_key)]
    raise ValueError(f"runs {first!r} and {second!r} are both group {group!r} with {seed_key} {seed} (grouped by "
                     f"{keys}; they differ in {difference or 'nothing but their folder'}): group_by = ['label'] "
                     "groups runs by their labels, or add the key that differs to group_by")


def one_backbone(runs: Runs, backbone: str | None = None) -> tuple[dict, str | None]:
    """The runs that start from one backbone (config ``model``), and a line saying which were left
    out, or None when all start from it. ``backbone`` None: the backbone most runs start from (the
    first such in order). A comparison pairs a method's runs with the baseline's of the same seed:
    across backbones those pairs compare backbones, not methods."""
    paths = labelled_runs(runs)
    models = {label: str(read_config(path).get("model")) for label, path in paths.items()}
    counts = pd.Series(list(models.values())).value_counts(sort=False)
    if backbone is None:
        backbone = counts.idxmax() if len(counts) else None
    elif backbone not in counts:
        raise ValueError(f"backbone {backbone!r} is not the model of any run; the runs start from "
                         + ", ".join(f"{m} ({n} run{'s' * (n != 1)})" for m, n in counts.items()))
    kept = {label: paths[label] for label, model in models.items() if model == backbone}
    if len(kept) == len(paths):
        return kept, None
    left = {m: [label for label, model in models.items() if model == m] for m in counts.index if m != backbone}
    return kept, (f"the runs start from {len(counts)} backbones: compared here, the {len(kept)} runs from {backbone}; "
                  "left out " + "; ".join(f"{len(labels)} from {m} ({', '.join(labels)})" for m, labels in left.items())
                  + " (set backbone to compare those)")


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
    group's runs (its seeds), ``mean`` for a single run (:func:`cselab.results.summarise`,
    :func:`~cselab.tables.format_table`), after a first column ``runs`` counting them; columns
    renamed by ``rename`` (e.g. the papers' names). One ``by`` column is the index; several become
    columns."""
    from ..results import summarise
    from ..tables import format_table

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
    (:func:`cselab.evaluate.cache.evaluate_run` with ``per_pair=True``)."""
    tasks = list(tasks or STS_TASKS)
    out = {}
    for label, path in labelled_runs(runs).items():
        pairs = evaluate_run(path, "sts", model, data_dir, tasks=tasks, per_pair=True)["per_pair"]
        out[label] = {task: (np.asarray(p["pred"]), np.asarray(p["gold"])) for task, p in pairs.items()}
    return out


def per_task_comparison(frame: pd.DataFrame, tasks: Sequence[str], group: str = "group", baseline: str = "SimCSE",
                        pair_on: str = "seed", decimals: int = 2, family: str = "group",
                        bootstrap: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each group's mean difference from ``baseline`` per task, with the paired t-test's raw p and
    its Holm-adjusted p over ``family`` (:func:`paired_tests`): cells ``+0.52 (p 0.031, Holm 0.124)``,
    followed by ``: no detectable effect (MDE 0.61)`` when the adjusted p is not below 0.05;
    ``(baseline)`` for the baseline's row; ``+0.50 (n 3, no spread)`` when the differences are all
    equal. One shared seed: ``+0.52 (n 1)``, or with ``bootstrap`` (:func:`cselab.results.single_seed_bootstrap`)
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
    """Input of :func:`cselab.plots.plot_paired_differences` from :func:`cselab.results.paired_tests`
    (and :func:`cselab.results.single_seed_bootstrap`): ``{task words: frame}``, one row per group with its difference,
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
    frame = with_groups(frame, run_groups(labelled, [k for k in group_keys if k != key] or ["method"], names,
                                          swept=key))
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

