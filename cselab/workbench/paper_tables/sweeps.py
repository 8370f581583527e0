"""Sweeps over a config key and logged curves: a sweep's runs (its group and the variants at its
default point), one row per run with the swept value, the last logged value of a key, and whether
a figure over a setting has enough distinct values to draw."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ...model.evaluate.cache import evaluation_frame
from ...model.rundir import read_metrics
from .backbones import run_model


def sweep_runs(sweep: Mapping[str, Path], *defaults: Mapping[str, Path]) -> dict[str, Path]:
    """The runs of a sweep: its own group's and, from the variants that hold its default point
    (e.g. MixCSE's runs at λ = 0.2), those of the same backbone; without a sweep group, the
    defaults' runs of their first backbone (one point)."""
    pooled = {label: Path(p) for group in defaults for label, p in group.items()}
    models = {run_model(p) for p in sweep.values()} or (
        {run_model(next(iter(pooled.values())))} if pooled else set())
    return {**{label: p for label, p in pooled.items() if run_model(p) in models}, **{k: Path(v) for k, v in sweep.items()}}

def sweep_results(results: Mapping[str, dict], runs: Mapping[str, Path], key: str, default=None,
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

# A line through two points reads as a trend whatever the two differ by (GS-InfoNCE's 0× and 3× in
# the cpu-demo differ by a tenth of a point), so a sweep figure needs three values of its setting;
# every sweep of the paper studies has at least three. Figures that compare a few settings as
# separate series (ClusterNS Fig. 5: one curve per σ) need two.
TREND_MIN_VALUES = 3
COMPARISON_MIN_VALUES = 2


def _value_words(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def enough_values(values: Sequence, what: str, study: str, minimum: int = TREND_MIN_VALUES) -> bool:
    """Whether a figure over ``values`` (one per run, repeats = seeds) has at least ``minimum``
    distinct ones to show. When it has fewer, prints one line naming the study that draws it, e.g.
    ``λ sweep: one value here (0.2); the paper-mixcse study draws it``, and returns False: the
    notebook draws nothing (a sweep of one point, or a "trend" of two, is not a figure)."""
    if minimum < 1:
        raise ValueError(f"minimum must be >= 1, got {minimum}")
    distinct = sorted({float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in values},
                      key=lambda v: (isinstance(v, str), v))
    if len(distinct) >= minimum:
        return True
    count = {0: "no value", 1: "one value"}.get(len(distinct), f"{len(distinct)} values")
    shown = f" ({', '.join(_value_words(v) for v in distinct)})" if distinct else ""
    print(f"{what}: {count} here{shown}, a figure needs {minimum}; the {study} study draws it")
    return False
