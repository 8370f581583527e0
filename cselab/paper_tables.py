"""Assemble a paper's tables from a study's runs: which runs are which of the paper's variants,
which backbone they start from, our numbers beside the published ones, sweeps over a config key.

The paper notebooks (notebooks/paper_*.py) call these; the numbers come from
:mod:`cselab.evaluate.runs` (cached evaluations), the published ones from :mod:`cselab.published`.

**Variants by label prefix.** A notebook maps the paper's variant names to run-label prefixes,
e.g. ``{"APINCSE": "apincse", "-AP": "apincse-no_ap"}``. A run belongs to the variant whose prefix
is the *longest* that matches its label (the label itself, or the prefix followed by ``-``), so
``apincse-no_ap-s1`` is "-AP", not "APINCSE". The runs of one variant must share one config apart
from the seed (and the settings that only record, :data:`cselab.config.NON_IDENTITY_KEYS`):
:func:`variant_runs` says which key differs when they do not, so a sweep group never slips into a
variant's mean unnoticed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .config import NON_IDENTITY_KEYS
from .evaluate.runs import evaluation_frame
from .evaluate.sts import STS_TASKS, TASK_LABELS
from .published import BACKBONES, paper_backbone
from .rundir import read_config, read_metrics
from .tables import format_table, scores_table

VariantSpec = Mapping[str, "str | Sequence[str]"]


# ------------------------------------------------------------------- runs → variants
def _prefixes(variants: VariantSpec) -> list[tuple[str, str]]:
    pairs = []
    for variant, prefixes in variants.items():
        for prefix in [prefixes] if isinstance(prefixes, str) else list(prefixes):
            if not isinstance(prefix, str) or not prefix:
                raise ValueError(f"variants: {variant!r}: a label prefix must be a non-empty string, got {prefix!r}")
            pairs.append((prefix, variant))
    seen = {}
    for prefix, variant in pairs:
        if seen.setdefault(prefix, variant) != variant:
            raise ValueError(f"variants: the prefix {prefix!r} is given to both {seen[prefix]!r} and {variant!r}")
    return pairs


def matches(label: str, prefix: str) -> bool:
    """The study engine's selection rule: the label itself, or the prefix followed by ``-``."""
    return label == prefix or label.startswith(prefix + "-")


def assign_variants(labels: Sequence[str], variants: VariantSpec) -> dict[str, list[str]]:
    """``{variant: [labels]}`` in the order of ``variants`` (variants without runs left out); each
    label goes to the variant of the longest prefix it matches, labels matching none are left out."""
    pairs = _prefixes(variants)
    out: dict[str, list[str]] = {v: [] for v in variants}
    for label in labels:
        matched = [(len(p), v) for p, v in pairs if matches(label, p)]
        if matched:
            out[max(matched)[1]].append(label)
    return {v: labels for v, labels in out.items() if labels}


def identity_without_seed(run_dir: str | os.PathLike) -> dict:
    """A run's config without the seed and the settings that only record or place it."""
    config = dict(read_config(run_dir))
    for key in (*NON_IDENTITY_KEYS, "seed"):
        config.pop(key, None)
    return config


def _first_difference(a: dict, b: dict, prefix: str = "") -> str:
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                return _first_difference(a[key], b[key], f"{prefix}{key}.")
            return f"{prefix}{key} ({a.get(key)!r} vs {b.get(key)!r})"
    return ""


def variant_runs(runs: Mapping[str, Path], variants: VariantSpec, check: bool = True) -> dict[str, dict[str, Path]]:
    """``{variant: {label: run dir}}`` (see the module docs). With ``check``, runs of one variant
    that differ in more than the seed are an error naming the two labels and the key."""
    groups = {v: {label: Path(runs[label]) for label in labels}
              for v, labels in assign_variants(list(runs), variants).items()}
    if check:
        for variant, members in groups.items():
            (first, first_dir), *rest = members.items()
            reference = identity_without_seed(first_dir)
            for label, path in rest:
                difference = _first_difference(reference, identity_without_seed(path))
                if difference:
                    raise ValueError(f"variant {variant!r}: runs {first!r} and {label!r} differ in {difference}, not "
                                     "only in the seed; give one of them its own label prefix")
    return groups


def unmatched(runs: Mapping[str, Path], variants: VariantSpec) -> list[str]:
    """Labels that no variant prefix selects (shown by the notebooks so nothing is dropped silently)."""
    assigned = {label for labels in assign_variants(list(runs), variants).values() for label in labels}
    return [label for label in runs if label not in assigned]


def run_model(run_dir: str | os.PathLike) -> str:
    """The ``model`` a run was trained from (Hub id, alias or folder)."""
    return str(read_config(run_dir)["model"])


def runs_by_backbone(runs: Mapping[str, Path]) -> dict[str, dict[str, Path]]:
    """``{model: {label: run dir}}``, models in order of first appearance."""
    out: dict[str, dict[str, Path]] = {}
    for label, path in runs.items():
        out.setdefault(run_model(path), {})[label] = Path(path)
    return out


def backbone_note(model: str, source: str) -> str:
    """Why a table has (or has no) published numbers beside ours."""
    backbone = paper_backbone(model)
    if backbone is None:
        return (f"Runs of `{model}`: not a backbone of the paper, so no published numbers are shown — {source} "
                f"reports {', '.join(BACKBONES.values())} models only and numbers of different backbones are not "
                "comparable.")
    return f"Runs of `{model}` ({BACKBONES[backbone]}): the published numbers of {source} for {BACKBONES[backbone]} " \
           "are shown beside ours."


# ------------------------------------------------------------------- results → tables
def sts_options(tasks: Sequence[str] = STS_TASKS) -> dict:
    """Options for ``evaluate_runs(runs, "sts", **options)``: none for the full 7-task suite (so a
    run's final STS table is reused), ``tasks`` otherwise."""
    unknown = [t for t in tasks if t not in STS_TASKS]
    if unknown or not tasks:
        raise ValueError(f"sts tasks: {list(tasks)} must be a non-empty subset of {list(STS_TASKS)}")
    return {} if list(tasks) == list(STS_TASKS) else {"tasks": list(tasks)}


def average_label(tasks: Sequence[str], full: Sequence[str] = STS_TASKS) -> str:
    """``Avg.`` for the full suite, ``Avg. (n tasks)`` for a subset (not comparable with a paper's Avg.)."""
    return "Avg." if list(tasks) == list(full) else f"Avg. ({len(tasks)} task{'s' if len(tasks) > 1 else ''})"


def variant_results(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]]) -> dict[str, list[dict]]:
    """``{variant: [result of each of its runs]}`` for :func:`cselab.tables.scores_table`."""
    return {variant: [results[label] for label in members if label in results]
            for variant, members in groups.items() if any(label in results for label in members)}


def sts_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                tasks: Sequence[str] = STS_TASKS) -> pd.DataFrame:
    """Mean, std and n per variant of each STS task and the average (SimCSE's column names)."""
    return scores_table(variant_results(results, groups), columns={t: TASK_LABELS[t] for t in tasks},
                        average=average_label(tasks))


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
    ours = format_table(summary, decimals=decimals, bold_best=bold_best)
    ours.insert(0, "source", seeds_label(summary))
    if published is None or published.empty:
        return ours
    theirs = published.astype(str).copy()
    theirs.insert(0, "source", f"published, {published.attrs.get('source', 'paper')}")
    theirs.index = theirs.index.rename(ours.index.name)
    columns = list(ours.columns) + [c for c in theirs.columns if c not in ours.columns]
    return pd.concat([ours, theirs]).reindex(columns=columns).fillna("–")


def variant_frame(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                  config_keys: Sequence[str] = ("seed",)) -> pd.DataFrame:
    """One row per run (:func:`cselab.evaluate.runs.evaluation_frame`) with its ``variant``:
    the input of :func:`cselab.stats.compare_to_baseline` (``group="variant"``)."""
    runs = {label: path for members in groups.values() for label, path in members.items() if label in results}
    frame = evaluation_frame({label: results[label] for label in runs}, runs, tuple(config_keys))
    variant_of = {label: v for v, members in groups.items() for label in members}
    frame.insert(1, "variant", frame["run"].map(variant_of))
    return frame


def sweep_frame(results: Mapping[str, dict], runs: Mapping[str, Path], key: str, default=None,
                name: str | None = None) -> pd.DataFrame:
    """One row per run: ``run``, ``seed``, the swept config ``key`` (renamed ``name``), and every
    score of the result. Runs without the key (e.g. SimCSE in a GS-InfoNCE M sweep, whose config
    has no ``gs_infonce`` section) get ``default``."""
    frame = evaluation_frame({label: results[label] for label in runs if label in results},
                             {label: runs[label] for label in runs if label in results}, ("seed", key))
    if default is not None:
        frame[key] = frame[key].fillna(default)
    missing = frame.loc[frame[key].isna(), "run"].tolist()
    if missing:
        raise ValueError(f"sweep over {key!r}: the runs {missing} have no value for it (pass default=)")
    return frame.rename(columns={key: name}) if name else frame


def last_values(runs: Mapping[str, Path], keys: Sequence[str], kind: str = "train") -> pd.DataFrame:
    """The last logged value of each key per run (e.g. ``sim/clusterns.hard_neg_cos`` at the end of
    training, ClusterNS Table 3); index = run label."""
    frame = read_metrics(dict(runs), kind)
    missing = [k for k in keys if k not in frame]
    if missing:
        raise ValueError(f"last_values: no {missing} in the {kind} records of {list(runs)}")
    return frame.groupby("run", sort=False)[list(keys)].agg(lambda s: s.dropna().iloc[-1] if s.notna().any() else None)

