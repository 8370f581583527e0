"""A study's results → a paper's tables: the columns of a suite, mean ± std over seeds per variant,
our rows beside the published ones, the frame and table of paired t-tests against SimCSE, and the
untuned backbone (snapshot 0) as extra rows. The numbers come from :mod:`cselab.evaluate.cache`."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..config import uses_sts
from ..evaluate.cache import evaluation_frame
from ..evaluate.sts import STS_TASKS, TASK_LABELS
from ..rundir import run_select_by
from ..tables import STS_SELECTED_MARK, STS_SELECTED_NOTE, format_table, scores_table
from .backbones import backbone_label, group_model, one_per_backbone
from .variants import variant_of


def suite_columns(suite: str, tasks: Sequence[str]) -> tuple[dict[str, str], str]:
    """Column labels (cselab's, as the papers write them) and the average's label for a suite's
    ``tasks``: ``sts``, ``transfer``, ``short_text`` (the 8 short-text clustering sets) or
    ``dbpedia`` (its AMI alone, no average)."""
    from ..data.clustering import SHORT_TEXT_SETS
    from ..data.transfer import TRANSFER_TASKS
    from ..tables import CLUSTERING_COLUMNS

    suites = {"sts": (STS_TASKS, TASK_LABELS), "transfer": (TRANSFER_TASKS, {t: t for t in TRANSFER_TASKS}),
              "short_text": (tuple(SHORT_TEXT_SETS), CLUSTERING_COLUMNS), "dbpedia": (("DBpedia",), CLUSTERING_COLUMNS)}
    if suite not in suites:
        raise ValueError(f"suite must be one of {sorted(suites)}, got {suite!r}")
    full, labels = suites[suite]
    unknown = [t for t in tasks if t not in full]
    if unknown or not tasks:
        raise ValueError(f"{suite} tasks: {list(tasks)} must be a non-empty subset of {list(full)}")
    return {t: labels[t] for t in tasks}, (None if suite == "dbpedia" else average_label(tasks, full))

def average_label(tasks: Sequence[str], full: Sequence[str] = STS_TASKS) -> str:
    """``Avg.`` for the full suite, ``Avg. (n tasks)`` for a subset (not comparable with a paper's Avg.)."""
    return "Avg." if list(tasks) == list(full) else f"Avg. ({len(tasks)} task{'s' if len(tasks) > 1 else ''})"

def sts_options(tasks: Sequence[str] = STS_TASKS) -> dict:
    """Options for ``evaluate_runs(runs, "sts", **options)``: none for the full 7-task suite (so a
    run's final STS table is reused), ``tasks`` otherwise."""
    unknown = [t for t in tasks if t not in STS_TASKS]
    if unknown or not tasks:
        raise ValueError(f"sts tasks: {list(tasks)} must be a non-empty subset of {list(STS_TASKS)}")
    return {} if list(tasks) == list(STS_TASKS) else {"tasks": list(tasks)}

def variant_results(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]]) -> dict[str, list[dict]]:
    """``{variant: [result of each of its runs]}`` for :func:`cselab.tables.scores_table`."""
    return {variant: [results[label] for label in members if label in results]
            for variant, members in groups.items() if any(label in results for label in members)}

def suite_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], suite: str,
                  tasks: Sequence[str]) -> pd.DataFrame:
    """Mean, std and n per group of each task of ``suite`` and their average (:func:`suite_columns`)."""
    columns, average = suite_columns(suite, tasks)
    summary = scores_table(variant_results(results, groups), columns=columns, average=average)
    summary.attrs["sts_selected"] = sts_selected(groups)
    return summary

def sts_selected(groups: Mapping[str, Mapping[str, Path]]) -> list[str]:
    """The variants with a run whose ``best/`` was chosen on STS data (``select_by: stsb_dev``)."""
    return [v for v, members in groups.items() if any(uses_sts(run_select_by(p)) for p in members.values())]

def sts_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                tasks: Sequence[str] = STS_TASKS) -> pd.DataFrame:
    """Mean, std and n per variant of each STS task and the average (SimCSE's column names)."""
    return suite_summary(results, groups, "sts", tasks)

def seeds_label(summary: pd.DataFrame) -> pd.Series:
    """``cselab (n seeds)`` per row of a :func:`cselab.tables.summarise` frame."""
    first = summary.columns.get_level_values(0)[0]
    counts = summary[(first, "n")].astype(int)
    return counts.map(lambda n: f"cselab ({n} seed{'s' if n != 1 else ''})")

def comparison_table(summary: pd.DataFrame, published: pd.DataFrame | None = None, decimals: int = 2,
                     bold_best: bool = False) -> pd.DataFrame:
    """Our rows (``mean ± std`` over seeds) and then the published rows (cells as printed), with a
    ``source`` column saying which is which. Columns are ours followed by any the paper has in
    addition; a cell one side lacks reads ``–``."""
    marked = set(summary.attrs.get("sts_selected", ()))   # set by suite_summary: checkpoints chosen on STS
    plain = summary.copy()
    plain.attrs = {}   # the mark goes to the source column here, not to the variant names
    ours = format_table(plain, decimals=decimals, bold_best=bold_best)
    ours.insert(0, "source", [label + (STS_SELECTED_MARK if variant in marked else "")
                              for variant, label in seeds_label(summary).items()])
    ours.index.name = "variant" if ours.index.name in (None, "model") else ours.index.name
    ours.attrs = {"note": STS_SELECTED_NOTE} if marked & set(summary.index) else {}
    if published is None or published.empty:
        return ours
    theirs = published.astype(str).copy()
    theirs.insert(0, "source", f"published, {published.attrs.get('source', 'paper')}")
    theirs.index = theirs.index.rename(ours.index.name)
    columns = list(ours.columns) + [c for c in theirs.columns if c not in ours.columns]
    table = pd.concat([ours, theirs]).reindex(columns=columns).fillna("–")
    table.attrs = dict(ours.attrs)
    return table

def averages_summary(groups: Mapping[str, Mapping[str, Path]],
                     results_by_column: Mapping[str, Mapping[str, dict]]) -> pd.DataFrame:
    """Mean, std and n per group of each suite's average, one column per suite (e.g. MixCSE Ablation Study:
    ``{"STS Avg.": sts_results, "transfer Avg.": transfer_results}``); runs missing a suite are left out."""
    from ..tables import summarise

    rows = [{"variant": name, **{column: results[label]["avg"] for column, results in results_by_column.items()}}
            for name, members in groups.items() for label in members
            if all(label in results for results in results_by_column.values())]
    if not rows:
        raise ValueError("averages_summary: no run has every suite's result")
    return summarise(pd.DataFrame(rows), "variant", list(results_by_column))

def variant_frame(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                  config_keys: Sequence[str] = ("seed",)) -> pd.DataFrame:
    """One row per run (:func:`cselab.evaluate.cache.evaluation_frame`) with its ``variant``:
    the input of :func:`cselab.stats.compare_to_baseline` (``group="variant"``)."""
    runs = {label: path for members in groups.values() for label, path in members.items() if label in results}
    frame = evaluation_frame({label: results[label] for label in runs}, runs, tuple(config_keys))
    variant_of = {label: v for v, members in groups.items() for label in members}
    frame.insert(1, "variant", frame["run"].map(variant_of))
    return frame

def paired_comparison(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], metric: str = "avg",
                      baseline: str = "SimCSE", bootstrap_resamples: int = 0, tasks: Sequence[str] = STS_TASKS,
                      data_dir: str | os.PathLike | None = None, seed: int = 0) -> pd.DataFrame | None:
    """Each group against the baseline variant's group of the same backbone, over the seeds both
    have: mean ± std, 95 % t-interval, mean difference with its interval, the paired t-test's raw p
    beside its Holm-adjusted p over the variants tested against that baseline, and the reading (no
    detectable effect with its MDE) (:func:`cselab.stats.compare_to_baseline`). With
    ``bootstrap_resamples`` > 0, a variant sharing a single seed with the baseline gets the column
    ``Δ, 95% test-pair bootstrap (1 seed)``: the paired bootstrap over the STS ``tasks``' test pairs
    (:func:`cselab.analysis.compare.single_seed_bootstrap`; test-set uncertainty, not seed variance;
    the runs' per-pair similarities are evaluated once and cached). None when no group of the
    baseline variant exists."""
    from ..analysis.compare import single_seed_bootstrap, single_seed_runs, sts_pair_scores
    from ..stats import compare_to_baseline, format_comparison

    frame = variant_frame(results, groups)
    paths = {label: p for members in groups.values() for label, p in members.items()}
    frame["model"] = frame["run"].map({label: group_model({label: p}) for label, p in paths.items()})
    parts = []
    for model, part in frame.groupby("model", sort=False):
        names = list(dict.fromkeys(part["variant"]))
        base = next((n for n in names if variant_of(n) == baseline), None)
        if base is None:
            continue
        table = format_comparison(compare_to_baseline(part, metric, group="variant", baseline=base), group="variant")
        needed = single_seed_runs(part, "variant", base) if bootstrap_resamples else []
        if needed:
            scores = sts_pair_scores({label: paths[label] for label in needed}, tasks, data_dir)
            boot = single_seed_bootstrap(part, scores, [metric], "variant", base, n_resamples=bootstrap_resamples,
                                         seed=seed).set_index("variant")
            table["Δ, 95% test-pair bootstrap (1 seed)"] = [
                f"{boot.loc[v, 'diff']:+.2f} [{boot.loc[v, 'ci_low']:.2f}, {boot.loc[v, 'ci_high']:.2f}]"
                if v in boot.index else "" for v in table.index]
        parts.append(table)
    return pd.concat(parts).fillna("") if parts else None


def untuned(groups: Mapping[str, Mapping[str, Path]], suite: str, data_dir: str | os.PathLike | None = None,
            **options) -> tuple[dict[str, dict], dict[str, dict[str, Path]]]:
    """The untuned backbone as extra rows: for the first run of each backbone that has snapshots,
    the ``suite`` result of its snapshot 0 (the model before training, cached in the run like any
    evaluation). Returns ``(results, groups)`` keyed ``<label>@step-0`` and ``untuned <backbone>``,
    to merge with the trained groups' results and groups."""
    from ..evaluate.cache import evaluate_run
    from ..neighbours import snapshot_folders

    with_snapshots = {label: p for members in groups.values() for label, p in members.items() if snapshot_folders(p)}
    results, extra = {}, {}
    for model, (label, path) in one_per_backbone(with_snapshots).items():
        key = f"{label}@step-0"
        results[key] = evaluate_run(path, suite, model="step-0", data_dir=data_dir, **options)
        extra[f"untuned {backbone_label(model)}"] = {key: path}
    return results, extra
