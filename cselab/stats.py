"""Statistics for comparing methods over seeds: mean, standard deviation and a 95 % confidence
interval per method, and a paired test of each method against a baseline run with the same seeds.

The unit of replication is the training seed: each (method, seed) run gives one score (e.g. the
7-task STS average). For a method and the baseline trained with the same seeds, the per-seed
differences d_s = score(method, s) − score(baseline, s) are tested with a **paired t-test**
(``scipy.stats.ttest_rel``, two-sided, H0: mean difference 0, n − 1 degrees of freedom); the
confidence interval of the mean difference is the matching t interval. Pairing removes what a seed
does to both runs alike (data order, dropout draws, initialisation of the head), which is why it
has more power than comparing two independent means. With very few seeds (3) only large,
consistent differences reach p < 0.05; the table says how many seeds each row has.

Example::

    frame = read_results(runs, config_keys=("method", "seed"))
    compare_to_baseline(frame, "sts/avg", group="method", baseline="simcse")
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

CONFIDENCE = 0.95


def mean_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> dict[str, float]:
    """``{n, mean, std, ci_low, ci_high}``: the sample mean, the sample standard deviation (ddof 1)
    and the t confidence interval of the mean (NaN bounds for a single value)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        raise ValueError("mean_ci: no values")
    mean = float(x.mean())
    if n == 1:
        return {"n": 1, "mean": mean, "std": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    std = float(x.std(ddof=1))
    half = float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n)
    return {"n": n, "mean": mean, "std": std, "ci_low": mean - half, "ci_high": mean + half}


def paired_test(method: Sequence[float], baseline: Sequence[float],
                confidence: float = CONFIDENCE) -> dict[str, float]:
    """Paired t-test of ``method`` against ``baseline`` (aligned: same seeds, same order):
    ``{n, mean_diff, ci_low, ci_high, t, p}``; t and p are NaN with fewer than 2 pairs or when
    every difference is the same."""
    a, b = np.asarray(method, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired_test: need two aligned 1-D score lists, got shapes {a.shape} and {b.shape}")
    diff = mean_ci(a - b, confidence)
    t, p = math.nan, math.nan
    if len(a) >= 2 and np.ptp(a - b) > 0:
        result = scipy_stats.ttest_rel(a, b)
        t, p = float(result.statistic), float(result.pvalue)
    return {"n": diff["n"], "mean_diff": diff["mean"], "ci_low": diff["ci_low"], "ci_high": diff["ci_high"],
            "t": t, "p": p}


def compare_to_baseline(frame: pd.DataFrame, metric: str, group: str = "method", baseline: str = "simcse",
                        pair_on: str = "seed", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """One row per group (e.g. method): n, mean, std and CI of ``metric`` over seeds, then the paired
    comparison with ``baseline`` on the seeds both have (``diff``, its CI, t and p; empty for the
    baseline itself). ``frame`` has one row per run (``read_results`` gives it)."""
    missing = [c for c in (metric, group, pair_on) if c not in frame]
    if missing:
        raise ValueError(f"compare_to_baseline: missing column(s) {missing}; columns: {list(frame.columns)}")
    if baseline not in set(frame[group]):
        raise ValueError(f"compare_to_baseline: no {group} == {baseline!r} runs to compare with; "
                         f"present: {sorted(set(frame[group]))}")
    duplicated = frame.duplicated([group, pair_on])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"compare_to_baseline: two runs of {group}={row[group]!r} with {pair_on}={row[pair_on]}")
    base = frame[frame[group] == baseline].set_index(pair_on)[metric]
    rows = []
    for name, part in frame.groupby(group, sort=False):
        row = {group: name, **mean_ci(part[metric], confidence)}
        if name != baseline:
            scores = part.set_index(pair_on)[metric]
            shared = sorted(set(scores.index) & set(base.index))
            test = paired_test(scores.loc[shared].to_numpy(), base.loc[shared].to_numpy(), confidence)
            row.update({"paired_n": test["n"], "diff": test["mean_diff"], "diff_ci_low": test["ci_low"],
                        "diff_ci_high": test["ci_high"], "t": test["t"], "p": test["p"]})
        rows.append(row)
    return pd.DataFrame(rows)


def format_comparison(table: pd.DataFrame, group: str = "method", decimals: int = 2) -> pd.DataFrame:
    """Text cells for a :func:`compare_to_baseline` table: ``mean ± std``, ``[low, high]``, the
    difference with its interval, and p."""
    def number(x: float, d: int = decimals) -> str:
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"

    out = []
    for _, r in table.iterrows():
        row = {group: r[group], "seeds": int(r["n"]), "mean ± std": f"{number(r['mean'])} ± {number(r['std'])}",
               "95% CI": f"[{number(r['ci_low'])}, {number(r['ci_high'])}]"}
        if "diff" in r and not pd.isna(r.get("diff")):
            row.update({"Δ vs baseline": f"{r['diff']:+.{decimals}f}",
                        "Δ 95% CI": f"[{number(r['diff_ci_low'])}, {number(r['diff_ci_high'])}]",
                        "p (paired t)": number(r["p"], 3)})
        else:
            row.update({"Δ vs baseline": "(baseline)", "Δ 95% CI": "", "p (paired t)": ""})
        out.append(row)
    return pd.DataFrame(out).set_index(group)
