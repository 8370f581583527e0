"""A study's results → a paper's tables: the columns of a suite, mean ± std over seeds per variant,
our rows beside the published ones, and the untuned backbone (snapshot 0) as extra rows. The
numbers come from :mod:`cselab.model.evaluate.cache`, the summaries from the results layer
(:mod:`cselab.workbench.results`); the table of paired t-tests against SimCSE per backbone is
:func:`cselab.workbench.comparisons.paired_comparison` (``pt.paired_comparison``)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ...model.config import uses_sts
from ...model.evaluate.sts import STS_TASKS
from ...model.evaluate.suites import resolve, result_tables
from ..results import group_results, summarise
from ...model.rundir import read_config, run_select_by
from ..tables import STS_SELECTED_MARK, STS_SELECTED_NOTE, format_table, scores_table
from .backbones import backbone_label, one_per_backbone


def suite_columns(table: str, tasks: Sequence[str]) -> tuple[dict[str, str], str | None]:
    """Column labels (as the papers write them) and the average's label (None for a table without
    one) for ``tasks`` of a table the suites' results make (:func:`cselab.model.evaluate.suites.result_tables`:
    ``sts``, ``transfer``, ``short_text`` — the 8 short-text clustering sets — or ``dbpedia``, its
    AMI alone)."""
    known = result_tables()
    if table not in known:
        raise ValueError(f"suite must be one of {sorted(known)}, got {table!r}")
    suite, spec = known[table]
    labels = suite.task_labels()
    full = list(resolve(spec.tasks) or labels)
    unknown = [t for t in tasks if t not in full]
    if unknown or not tasks:
        raise ValueError(f"{table} tasks: {list(tasks)} must be a non-empty subset of {full}")
    return {t: labels[t] for t in tasks}, (average_label(tasks, full) if spec.average else None)

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

def suite_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], suite: str,
                  tasks: Sequence[str]) -> pd.DataFrame:
    """Mean, std and n per group of each task of ``suite`` (a table of :func:`suite_columns`, e.g.
    ``sts``) and their average."""
    columns, average = suite_columns(suite, tasks)
    summary = scores_table(group_results(results, groups), columns=columns, average=average)
    summary.attrs["sts_selected"] = sts_selected(groups)
    return summary

def sts_selected(groups: Mapping[str, Mapping[str, Path]]) -> list[str]:
    """The variants with a run whose ``best/`` was chosen on STS data (``select_by: stsb_dev``)."""
    return [v for v, members in groups.items() if any(uses_sts(run_select_by(p)) for p in members.values())]

def seeds_label(summary: pd.DataFrame) -> pd.Series:
    """``cselab (n seeds)`` per row of a :func:`cselab.workbench.results.summarise` frame."""
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
    rows = [{"variant": name, **{column: results[label]["avg"] for column, results in results_by_column.items()}}
            for name, members in groups.items() for label in members
            if all(label in results for results in results_by_column.values())]
    if not rows:
        raise ValueError("averages_summary: no run has every suite's result")
    return summarise(pd.DataFrame(rows), "variant", list(results_by_column))



def untuned(groups: Mapping[str, Mapping[str, Path]], suite: str, data_dir: str | os.PathLike | None = None,
            **options) -> tuple[dict[str, dict], dict[str, dict[str, Path]]]:
    """The untuned backbone as extra rows: for the first run of each backbone that has snapshots,
    the ``suite`` result of its snapshot 0 (the model before training, cached in the run like any
    evaluation); for a backbone without any, that of the backbone its first run names with the run's
    pooler (a pooler without weights; computed once per process). Returns ``(results, groups)``
    keyed ``<label>@step-0`` (or ``<label>@backbone``) and ``untuned <backbone>``, to merge with the
    trained groups' results and groups."""
    from ...model.evaluate.cache import evaluate_run
    from ..neighbours import snapshot_folders

    with_snapshots = {label: p for members in groups.values() for label, p in members.items() if snapshot_folders(p)}
    results, extra = {}, {}
    snapshot_zero = one_per_backbone(with_snapshots)
    for model, (label, path) in snapshot_zero.items():
        key = f"{label}@step-0"
        results[key] = evaluate_run(path, suite, model="step-0", data_dir=data_dir, **options)
        extra[f"untuned {backbone_label(model)}"] = {key: path}
    # a backbone none of whose runs kept a step-0 snapshot: the backbone its first run names, with
    # the run's pooler where that pooler has no weights (one with weights would be a fresh draw)
    every = {label: p for members in groups.values() for label, p in members.items()}
    for model, (label, path) in one_per_backbone(every).items():
        if model in snapshot_zero or read_config(path).get("pooler", "cls") not in WEIGHTLESS_POOLERS:
            continue
        key = f"{label}@backbone"
        results[key] = _backbone_result(path, suite, data_dir, options)
        extra[f"untuned {backbone_label(model)}"] = {key: path}
    return results, extra


WEIGHTLESS_POOLERS = ("cls", "cls_before_pooler", "avg", "avg_first_last", "avg_top2")
_BACKBONE_RESULTS: dict[str, dict] = {}   # one evaluation of a backbone per process and suite options


def _backbone_result(run_dir: Path, suite: str, data_dir, options: Mapping) -> dict:
    """The ``suite`` result of the model ``run_dir`` started from (:func:`~..analysis.logged.base_encoder`:
    its backbone and pooler), computed once per process: no run folder holds that model to cache it in."""
    import json

    from ...model.evaluate.suites import get_suite
    from ...model.utils import resolve_device
    from ..analysis.logged import base_encoder

    config = read_config(run_dir)
    key = json.dumps([config["model"], config.get("pooler", "cls"), config.get("mlp_only_train", True), suite,
                      str(data_dir), {k: str(v) for k, v in options.items()}], sort_keys=True)
    if key not in _BACKBONE_RESULTS:
        spec = get_suite(suite)
        options = dict(options)
        for extra in spec.extras:
            options.pop(extra, None)
        encoder = base_encoder(run_dir).to(resolve_device("auto"))
        _BACKBONE_RESULTS[key] = {**spec.run(encoder, data_dir=data_dir, **options,
                                             **{extra: True for extra in spec.extras}),
                                  "options": options, "model": "backbone"}
    return _BACKBONE_RESULTS[key]
