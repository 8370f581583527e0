"""One home for a comparison: a study's runs → groups → one frame of per-seed scores → paired tests
against a baseline → a text table or the panels of a figure. The compare notebook, the paper
tables (:mod:`cselab.workbench.paper_tables`), their notebooks and the workbench's cells all call this module;
the statistics are the results layer's (:mod:`cselab.workbench.results`: summaries, paired t-tests, Holm, the
minimum detectable difference, the test-pair bootstrap), the scores per run
:mod:`cselab.workbench.analysis.compare`'s and :mod:`cselab.model.evaluate.cache`'s.

1. **Groups** (:func:`group_runs`, the one grouping rule): runs that differ only in their seed
   form a group, and the group is named either by the config keys asked for (``by=["method"]``:
   "SimCSE", "MixCSE"; ``label``: the run label without its seed suffix; a swept key:
   ``batch_size=64``) or by label prefixes (``by={"APINCSE": "apincse", "APINCSE-AP":
   "apincse-no_ap"}``: the results layer's prefix rule, :func:`cselab.workbench.results.match_variants`, the
   longest prefix winning). Either way the answer is one frame, ``run, group, seed``, that
   :func:`with_groups` puts in front of any per-run frame, and :func:`groups_of` turns into
   ``{group: {label: run dir}}`` for the paper tables. A group split per backbone is named
   ``<variant> · <backbone>`` (:func:`variant_of` reads the variant back).
2. **Tables of scores** (:func:`grouped_table`): ``mean ± std`` over each group's seeds.
3. **Against a baseline** (:func:`baseline_table`): each group's mean, its t-interval, the paired
   difference from the baseline over the seeds both have, raw and Holm-adjusted p and the reading,
   and, for a group sharing a single seed, the paired bootstrap over the test pairs;
   :func:`paired_comparison` does it per backbone for the paper tables; per task,
   :func:`per_task_tests`, :func:`per_task_comparison` (text) and :func:`difference_panels` (the
   input of :func:`cselab.workbench.plots.plot_paired_differences`).
4. **Sweeps** (:func:`sweep_frame`): a metric against a swept config key, one row per run.

Example::

    groups = group_runs(runs, ["method"])                              # run, group, seed, method
    frame = with_groups(evaluation_frame(sts_results(runs), runs), groups)
    grouped_table(frame, ["avg"])                                       # mean ± std per group
    baseline_table(frame, "avg", resolve_baseline("simcse", groups))    # paired t-tests, Holm, MDE
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .analysis import compare as run_scores   # each run's scores (read at call time)
from .analysis.logged import configured_method
from ..model.config import DEFAULT_METHOD
from ..model.evaluate.sts import STS_TASKS
from ..model.methods import display_names
from .results import (ALPHA, VariantSpec, assign_variants, compare_to_baseline, format_comparison, paired_tests,
                      single_seed_bootstrap, single_seed_runs, variant_frame)
from ..model.rundir import Runs, labelled_runs, read_config, read_results
from ..model.rundir.readers import read_config_value

LABEL_KEY = "label"   # group_runs' key for the run label (without its seed suffix)
BACKBONE_JOIN = " · "   # a group split per backbone: "<variant> · <backbone>" (cselab.workbench.paper_tables.split_by_backbone)
BOOTSTRAP_COLUMN = "Δ, 95% test-pair bootstrap (1 seed)"


# ------------------------------------------------------------------- 1. groups
# Display names of the methods as the papers name them (config method → name, as each method's
# module declares it); any other group keeps its own text. A family is its parts together
# (``augmented_positive+interlayer_negative`` → APINCSE).
def method_names() -> dict[str, str]:
    return display_names()


def config_value(config: Mapping, key: str):
    """A config value by key: ``method`` as the run's method name (:func:`cselab.workbench.analysis.logged.configured_method`),
    any other key as :func:`cselab.model.rundir.readers.read_config_value` reads it (``section.key`` reads a
    method's section, None when absent; a list reads as its items joined by ``+``)."""
    return configured_method(config) if key == "method" else read_config_value(config, key)


def group_runs(runs: Runs, by: Sequence[str] | VariantSpec = ("method",), names: Mapping[str, str] | None = None,
               seed_key: str = "seed", swept: str | None = None) -> pd.DataFrame:
    """One row per run of a group: ``run``, ``group``, ``seed`` (and each config key of ``by``).

    ``by`` a mapping ``{group: label prefix or prefixes}``: the runs each prefix selects (the
    longest matching prefix wins, :func:`cselab.workbench.results.match_variants`; a run no prefix selects is
    left out), groups in the mapping's order, runs in the given order.

    ``by`` a sequence of config keys: every run.

    ``group`` joins the values of ``keys`` with ``, `` (``key=value`` for every key but
    ``method`` and ``label``) and is then renamed by ``names`` (default :func:`method_names`; a
    mapping given here is added on top). The key ``label`` is :func:`label_group` of the run's label
    (``apincse-no_ap-s2`` → ``apincse-no_ap``, ``simcse-f8fbb5c8ad`` → ``simcse``), named as figures
    name it ("APINCSE-AP"): runs named apart are grouped apart (e.g. APINCSE's pooler-only control,
    which has SimCSE's method on another pooler). Runs that differ only in their seed share a group:
    the unit over which :func:`cselab.workbench.results.compare_to_baseline` pairs seeds
    (:func:`one_run_per_seed` checks it). ``swept``: a config key a study's grid sweeps, whose point
    (``-top_k=8``) the label loses too, so that a sweep's points share their group (:func:`sweep_frame`)."""
    from .labels import display_name

    if isinstance(by, Mapping):
        labelled = labelled_runs(runs)
        rows = [{"run": label, "group": group, seed_key: read_config(labelled[label]).get(seed_key)}
                for group, labels in assign_variants(list(labelled), by).items() for label in labels]
        return pd.DataFrame(rows, columns=["run", "group", seed_key])
    keys = list(by)
    if not keys:
        raise ValueError("group_runs: by must name at least one config key (e.g. method) or give label prefixes")
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
    """What :func:`group_runs` groups by for ``label``: the label without its seed or a run folder's
    config hash, and without the grid point of ``swept`` (a config key, written in labels by its last
    dotted part or whole: ``apincse-topk-top_k=8-s1`` → ``apincse-topk``)."""
    import re

    from .labels import strip_seed
    from ..model.rundir.layout import without_config_hash

    label = strip_seed(without_config_hash(label))
    if swept:
        names = "|".join(re.escape(name) for name in dict.fromkeys([swept.split(".")[-1], swept]))
        label = re.sub(rf"-(?:{names})=[A-Za-z0-9._+=-]*?(?=-[A-Za-z0-9._+]+=|$)", "", label) or label
    return label


def ablation_in_labels(runs: Runs, baseline: str = DEFAULT_METHOD) -> tuple[dict[str, str], str | None]:
    """``(variants, control)``: the ablation the run labels hold, for a notebook's defaults. A family
    (APINCSE) with at least one ablation label beside it (``apincse-no_ap``, ``apincse-no_in``, its
    pooler alone ``apincse-pooler``) gives ``{display name: label}`` for the ``baseline`` label (when
    a run has it), the family and each ablation, in that order, and as ``control`` the pooler-only
    variant when there is one (the variant that separates the pooler from the terms), else None.
    ``({}, None)`` when no label is an ablation."""
    from .labels import ablation_family, display_name, is_pooler_only

    stems = list(dict.fromkeys(label_group(label) for label in labelled_runs(runs)))
    by_family: dict[str, list[str]] = {}
    for stem in stems:
        family = ablation_family(stem)
        if family is not None:
            by_family.setdefault(family, []).append(stem)
    chosen = [stem for family, members in by_family.items() if len(members) > 1 and family in members
              for stem in [family, *(m for m in members if m != family)]]
    if not chosen:
        return {}, None
    variants = {display_name(stem): stem for stem in ([baseline] if baseline in stems else []) + chosen}
    control = next((name for name, stem in variants.items() if is_pooler_only(stem)), None)
    return variants, control


def one_run_per_seed(groups: pd.DataFrame, runs: Runs, seed_key: str = "seed") -> None:
    """A ValueError (one line) when two runs of one group of :func:`group_runs` have the same seed:
    the paired tests take a group's runs as its seeds. It names the two runs and the first config key
    in which they differ, and what to group by instead."""
    from ..model.config import NON_IDENTITY_KEYS
    from ..model.rundir.readers import config_difference

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
    :func:`group_runs` in front (columns of the same name in ``frame`` are replaced)."""
    if "run" not in frame:
        raise ValueError(f"with_groups: the frame has no 'run' column; columns: {list(frame.columns)}")
    extra = [c for c in groups.columns if c != "run"]
    merged = groups.merge(frame.drop(columns=[c for c in extra if c in frame]), on="run", how="right")
    return merged[["run", *extra, *[c for c in merged.columns if c not in ("run", *extra)]]]


def groups_of(groups: pd.DataFrame, runs: Runs) -> dict[str, dict[str, Path]]:
    """``{group: {label: run dir}}`` of a :func:`group_runs` frame, groups and runs in its order."""
    labelled = labelled_runs(runs)
    out: dict[str, dict[str, Path]] = {}
    for label, group in zip(groups["run"], groups["group"]):
        out.setdefault(group, {})[label] = Path(labelled[label])
    return out


def variant_of(name: str) -> str:
    """The paper variant of a group name (``SimCSE · RoBERTa-base`` → ``SimCSE``)."""
    return name.split(BACKBONE_JOIN)[0]


# ------------------------------------------------------------------- 2. tables of scores
def grouped_table(frame: pd.DataFrame, columns: Sequence[str], by: str | Sequence[str] = "group",
                  rename: Mapping[str, str] | None = None, decimals: int = 2) -> pd.DataFrame:
    """Text table of ``columns`` per group (``by``: one or more columns of ``frame``, e.g. ``group``
    from :func:`with_groups`, or ``["group", "batch_size"]`` for a sweep): ``mean ± std`` over the
    group's runs (its seeds), ``mean`` for a single run (:func:`cselab.workbench.results.summarise`,
    :func:`~cselab.workbench.tables.format_table`), after a first column ``runs`` counting them; columns
    renamed by ``rename`` (e.g. the papers' names). One ``by`` column is the index; several become
    columns."""
    from .results import summarise
    from .tables import format_table

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


# ------------------------------------------------------------------- 3. against a baseline
def baseline_table(frame: pd.DataFrame, metric: str, baseline: str, group: str = "group", decimals: int = 2,
                   bootstrap: pd.DataFrame | None = None) -> pd.DataFrame:
    """The text table of each group of ``frame`` (one row per run) against ``baseline`` on
    ``metric``: seeds, ``mean ± std``, 95 % CI, the paired difference over the seeds both have with
    its interval, raw and Holm-adjusted p, the reading and the Holm family (a column with nothing in it
    left out: on runs of one seed the intervals, p-values and family) (:func:`cselab.workbench.results.compare_to_baseline`, :func:`cselab.workbench.results.format_comparison`). With
    ``bootstrap`` (:func:`cselab.workbench.results.single_seed_bootstrap` on ``metric``), the groups sharing a
    single seed with the baseline get the column :data:`BOOTSTRAP_COLUMN`."""
    table = format_comparison(compare_to_baseline(frame, metric, group=group, baseline=baseline), group=group,
                              decimals=decimals)
    # runs of one seed (the cpu-demo's): no interval, no test, no family; columns of nothing but "–" go
    table = table.drop(columns=[c for c in table.columns if table[c].isin(["", "–", "[–, –]"]).all()])
    if bootstrap is not None:
        boot = bootstrap.set_index(group)
        table[BOOTSTRAP_COLUMN] = [
            f"{boot.loc[g, 'diff']:+.{decimals}f} [{boot.loc[g, 'ci_low']:.{decimals}f}, {boot.loc[g, 'ci_high']:.{decimals}f}]"
            if g in boot.index else "" for g in table.index]
    return table


def test_pair_bootstrap(frame: pd.DataFrame, runs: Runs, tasks: Sequence[str], baseline: str, group: str = "group",
                        sts_tasks: Sequence[str] | None = STS_TASKS, data_dir: str | os.PathLike | None = None,
                        n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame | None:
    """The paired bootstrap over the STS test pairs (:func:`cselab.workbench.results.single_seed_bootstrap`)
    of every group of ``frame`` sharing exactly one seed with ``baseline``, on each of ``tasks``
    (columns of ``frame``; ``avg``: every task of ``sts_tasks`` resampled); the runs' per-pair
    similarities are evaluated once and cached (:func:`cselab.workbench.analysis.compare.sts_pair_scores`).
    None when no group shares a single seed, or ``n_resamples`` is 0."""
    needed = single_seed_runs(frame, group, baseline) if n_resamples else []
    if not needed:
        return None
    labelled = labelled_runs(runs)
    scores = run_scores.sts_pair_scores({label: labelled[label] for label in needed}, sts_tasks, data_dir)
    return single_seed_bootstrap(frame, scores, list(tasks), group, baseline, n_resamples=n_resamples, seed=seed)


def paired_comparison(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], metric: str = "avg",
                      baseline: str = "SimCSE", bootstrap_resamples: int = 0, tasks: Sequence[str] = STS_TASKS,
                      data_dir: str | os.PathLike | None = None, seed: int = 0) -> pd.DataFrame | None:
    """Each group against the baseline variant's group of the same backbone, over the seeds both
    have (:func:`baseline_table` per backbone: mean ± std, 95 % t-interval, mean difference with its
    interval, the paired t-test's raw p beside its Holm-adjusted p over the variants tested against
    that baseline, and the reading). With ``bootstrap_resamples`` > 0, a variant sharing a single
    seed with the baseline gets the column :data:`BOOTSTRAP_COLUMN`: the paired bootstrap over the
    STS ``tasks``' test pairs (test-set uncertainty, not seed variance). None when no group of the
    baseline variant exists. ``groups``: ``{group: {label: run dir}}`` (:func:`groups_of`)."""
    frame = variant_frame(results, groups)
    paths = {label: p for members in groups.values() for label, p in members.items()}
    frame["model"] = frame["run"].map({label: str(read_config(p)["model"]) for label, p in paths.items()})
    parts = []
    for _, part in frame.groupby("model", sort=False):
        names = list(dict.fromkeys(part["variant"]))
        base = next((n for n in names if variant_of(n) == baseline), None)
        if base is None:
            continue
        boot = test_pair_bootstrap(part, paths, [metric], base, "variant", tasks, data_dir, bootstrap_resamples, seed)
        parts.append(baseline_table(part, metric, base, group="variant", bootstrap=boot))
    return pd.concat(parts).fillna("") if parts else None


def per_task_tests(frame: pd.DataFrame, tasks: Sequence[str], baseline: str, runs: Runs | None = None,
                   group: str = "group", family: str = "group", sts_tasks: Sequence[str] | None = STS_TASKS,
                   data_dir: str | os.PathLike | None = None, bootstrap_resamples: int = 0,
                   seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """``(tests, bootstrap)``: every group's paired t-test against ``baseline`` on each of ``tasks``,
    Holm-adjusted over ``family`` (:func:`cselab.workbench.results.paired_tests`), and — with ``runs`` and
    ``bootstrap_resamples`` > 0 — the test-pair bootstrap of the groups sharing a single seed
    (:func:`test_pair_bootstrap`; None without)."""
    tests = paired_tests(frame, tasks, group=group, baseline=baseline, family=family)
    bootstrap = None
    if runs is not None and bootstrap_resamples:
        bootstrap = test_pair_bootstrap(frame, runs, tasks, baseline, group, sts_tasks, data_dir, bootstrap_resamples,
                                        seed)
    return tests, bootstrap


def per_task_comparison(frame: pd.DataFrame, tasks: Sequence[str], group: str = "group", baseline: str = "SimCSE",
                        pair_on: str = "seed", decimals: int = 2, family: str = "group",
                        bootstrap: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each group's mean difference from ``baseline`` per task, with the paired t-test's raw p and
    its Holm-adjusted p over ``family`` (:func:`cselab.workbench.results.paired_tests`): cells ``+0.52 (p 0.031, Holm 0.124)``,
    followed by ``: no detectable effect (MDE 0.61)`` when the adjusted p is not below 0.05;
    ``(baseline)`` for the baseline's row; ``+0.50 (no spread)`` when the differences are all
    equal. One shared seed: ``+0.52``, or with ``bootstrap`` (:func:`cselab.workbench.results.single_seed_bootstrap`)
    ``+0.48 [-0.31, 1.20]``, the paired bootstrap's interval over the test pairs. How a row is paired is
    said once, in its ``paired on`` column (``3 seeds``, ``1 seed; 95% interval over test pairs``), not
    in every cell. Rows: groups in order; columns: ``tasks``, ``paired on``, then ``Holm family`` when
    some row is in a Holm family (no column of empty cells on runs of one seed)."""
    tests = paired_tests(frame, tasks, group, baseline, pair_on, family)
    boot = {} if bootstrap is None else {(r[group], r["task"]): r for _, r in bootstrap.iterrows()}
    rows = {name: {task: "(baseline)" for task in tasks} if name == baseline else {}
            for name in dict.fromkeys(frame[group])}
    paired_on = {name: "" for name in rows}
    for _, r in tests.iterrows():
        n = 0 if pd.isna(r["paired_n"]) else int(r["paired_n"])
        bootstrapped = n == 1 and (r[group], r["task"]) in boot
        if n:
            paired_on[r[group]] = f"{n} seed{'s' if n > 1 else ''}" + (
                "; 95% interval over test pairs" if bootstrapped else "")
        if pd.isna(r["diff"]):
            cell = "–"
        elif not pd.isna(r["p"]):
            cell = f"{r['diff']:+.{decimals}f} (p {r['p']:.3f}, Holm {r['p_holm']:.3f})"
            if r["p_holm"] >= ALPHA:
                cell += f": no detectable effect (MDE {r['mde']:.{decimals}f})"
        elif bootstrapped:
            b = boot[(r[group], r["task"])]
            cell = f"{b['diff']:+.{decimals}f} [{b['ci_low']:.{decimals}f}, {b['ci_high']:.{decimals}f}]"
        else:
            cell = f"{r['diff']:+.{decimals}f}{' (no spread)' if n > 1 else ''}"
        rows[r[group]][r["task"]] = cell
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(tasks)).fillna("–")
    out["paired on"] = [paired_on.get(name, "") for name in out.index]
    families = tests.groupby(group, sort=False)["family"].agg(lambda f: "; ".join(x for x in dict.fromkeys(f) if x))
    if families.astype(bool).any():
        out["Holm family"] = [families.get(name, "") for name in out.index]
    out.index.name = group
    return out


def difference_panels(tests: pd.DataFrame, bootstrap: pd.DataFrame | None = None,
                      names: Mapping[str, str] | None = None, group: str = "group") -> dict[str, pd.DataFrame]:
    """Input of :func:`cselab.workbench.plots.plot_paired_differences` from :func:`cselab.workbench.results.paired_tests`
    (and :func:`cselab.workbench.results.single_seed_bootstrap`): ``{task words: frame}``, one row per group with its difference,
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


# ------------------------------------------------------------------- 4. sweeps
def sweep_frame(runs: Runs, key: str, scores: pd.DataFrame | None = None, group_keys: Sequence[str] = ("method",),
                names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per run that sets the swept config ``key``: ``run``, ``group`` (the other settings,
    :func:`group_runs` over ``group_keys``), ``seed``, ``key``, the ``results.json`` scores of
    :func:`cselab.model.rundir.read_results` (``best_stsb_dev``, ``sts/avg``, …) and the columns of
    ``scores`` (a frame with a ``run`` column, e.g. :func:`cselab.model.evaluate.evaluation_frame`),
    sorted by group and ``key``. Runs without a value for ``key`` are left out; none left is an error."""
    labelled = labelled_runs(runs)
    frame = read_results(labelled, config_keys=())
    frame.insert(1, key, [config_value(read_config(path), key) for path in labelled.values()])
    if scores is not None:
        frame = frame.merge(scores.drop(columns=[c for c in scores.columns if c in frame and c != "run"]),
                            on="run", how="left")
    frame = with_groups(frame, group_runs(labelled, [k for k in group_keys if k != key] or ["method"], names,
                                          swept=key))
    frame = frame[frame[key].notna()]
    if frame.empty:
        raise ValueError(f"sweep_frame: no run sets {key!r} (a config key, e.g. batch_size or <method>.<key>)")
    return frame.sort_values(["group", key], kind="stable").reset_index(drop=True)
