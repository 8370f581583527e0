"""The results layer: a study's runs → per-seed scores → summaries → paired comparisons against a
baseline. Tables (:mod:`cselab.workbench.tables`), the paper tables (:mod:`cselab.workbench.paper_tables`), the
comparison notebook's helpers (:mod:`cselab.workbench.analysis.compare`) and the workbench call this module;
the statistics are scipy's and statsmodels', never formulas of our own.

1. **Runs → variants** (:func:`match_variants`, :func:`assign_variants`): a notebook names the
   variants it compares as ``{display name: label prefix or prefixes}``, e.g. ``{"APINCSE":
   "apincse", "APINCSE-AP": "apincse-no_ap"}``. A prefix selects the label equal to it and that
   label followed only by what a study appends to it, its grid points and seed
   (:func:`cselab.model.rundir.label_matches`: ``apincse`` selects ``apincse-s1``; ``apincse-topk``
   selects ``apincse-topk-top_k=8-s2``), never a longer label: ``apincse-pooler-s1`` and
   ``apincse-no_ap-s1`` are not APINCSE runs (a variant that spans labels, e.g. a second backbone's
   ``simcse-large``, lists them: ``["simcse", "simcse-large"]``). Where two prefixes select a label,
   the longest wins. This is the one rule; every notebook parameter ``variants`` and every study
   file passes this direction.
2. **Per-seed scores** (:func:`group_results`, :func:`variant_frame`): one score per (variant, seed)
   run, e.g. the 7-task STS average. The unit of replication is the training seed.
3. **Summaries** (:func:`summarise`, :func:`mean_ci`): mean, sample standard deviation (ddof 1) and n
   per group; the t-interval of the mean (``scipy.stats.t.interval`` with the standard error
   ``scipy.stats.sem``).
4. **Paired comparisons** (:func:`compare_to_baseline`, :func:`paired_tests`): for a variant and the
   baseline trained with the same seeds, the per-seed differences d_s = score(variant, s) −
   score(baseline, s) are tested with a **paired t-test** (``scipy.stats.ttest_rel``, two-sided, H0:
   mean difference 0, n − 1 degrees of freedom); the confidence interval of the mean difference is
   the matching t-interval. Pairing removes what a seed does to both runs alike (data order, dropout
   draws, initialisation of the head), which is why it has more power than comparing two independent
   means. With very few seeds (3) only large, consistent differences reach p < 0.05; the tables say
   how many seeds each row has.

   Several tests at once (every variant against the baseline, or one variant on every task) are a
   **family**: each p-value is shown beside its **Holm-adjusted** value (statsmodels'
   ``multipletests(method="holm")``, which controls the family-wise error rate under any dependence
   between the tests), and a difference is read as detected only when the adjusted p is below α.
   A difference that is not detected is "no detectable effect", never "no effect": beside it stands
   the **minimum detectable difference** (MDE), the smallest true mean difference the paired t-test
   would detect with power 0.8 at α = 0.05 with this many seeds, given the observed standard
   deviation of the per-seed differences (statsmodels' ``TTestPower``: effect size × sd).
5. **One shared seed** (:func:`bootstrap_spearman_difference`, :func:`single_seed_bootstrap`): with a
   single seed there is no seed variance to estimate. What can still be measured is how much the
   comparison depends on the particular **test pairs**: a paired bootstrap resamples the pairs of an
   STS test set jointly for both systems and gives the difference of Spearman ×100 with its 95 %
   percentile interval. That interval is **test-set uncertainty**, not training-seed variance:
   another seed may move both systems by more.

Example::

    groups = {v: {label: runs[label] for label in labels}
              for v, labels in assign_variants(runs, {"SimCSE": "simcse", "MixCSE": "mixcse"}).items()}
    frame = variant_frame(sts_results, groups)                       # run, variant, seed, scores
    summarise(frame, "variant", ["avg"])                             # mean, std, n per variant
    compare_to_baseline(frame, "avg", group="variant", baseline="SimCSE")
    bootstrap_spearman_difference(pred_a, pred_b, gold, n_resamples=2000, seed=0)
"""
from __future__ import annotations

import functools
import math
import re
import warnings
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from ..model.config import DEFAULT_METHOD
from ..model.rundir.layout import label_matches

CONFIDENCE = 0.95
ALPHA = 0.05          # the level of every test and of the Holm family
POWER = 0.8           # the power at which the minimum detectable difference is stated
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_WORDS = "paired bootstrap over the test pairs (test-set uncertainty, not training-seed variance)"
STATS = ("mean", "std", "n")


# ------------------------------------------------------------------- 1. runs → variants
VariantSpec = Mapping[str, "str | Sequence[str]"]   # {display name: label prefix or prefixes}


def variant_prefixes(variants: VariantSpec) -> list[tuple[str, str]]:
    """``[(prefix, variant), ...]`` of ``{variant: prefix or prefixes}``; a prefix given to two
    variants, or one that is not a non-empty string, is an error."""
    if not variants:
        raise ValueError("variants: give at least one {variant name: label prefix}")
    pairs = []
    for variant, prefixes in variants.items():
        for prefix in [prefixes] if isinstance(prefixes, str) else list(prefixes):
            if not isinstance(prefix, str) or not prefix:
                raise ValueError(f"variants: {variant!r}: a label prefix must be a non-empty string, got {prefix!r}")
            pairs.append((prefix, variant))
    seen: dict[str, str] = {}
    for prefix, variant in pairs:
        if seen.setdefault(prefix, variant) != variant:
            raise ValueError(f"variants: the prefix {prefix!r} is given to both {seen[prefix]!r} and {variant!r}")
    return pairs


def match_variants(labels: Iterable[str], variants: VariantSpec) -> dict[str, str]:
    """``{label: variant}`` for the labels some prefix of ``variants`` (``{variant: prefix or
    prefixes}``) selects (:func:`cselab.rundir.label_matches`: the label, its seeds and grid points,
    not a longer label), the variant of the **longest** where two do (see the module docs). Labels
    no prefix selects are left out."""
    by_length = sorted(variant_prefixes(variants), key=lambda pair: len(pair[0]), reverse=True)
    labels = list(labels)
    out = {}
    for label in labels:
        match = next((variant for prefix, variant in by_length if label_matches(label, prefix)), None)
        if match is not None:
            out[label] = match
    if not out:   # the other direction ({prefix: name}) selects nothing: say so rather than draw nothing
        flipped = [name for name in variants if any(label_matches(label, name) for label in labels)]
        if flipped:
            example = {variants[flipped[0]]: flipped[0]} if isinstance(variants[flipped[0]], str) else {}
            raise ValueError(f"variants: no label prefix of {dict(variants)} selects a run, but the names {flipped} "
                             f"do; give {{variant name: label prefix}}, e.g. {example or '{...}'}")
    return out


def assign_variants(labels: Iterable[str], variants: VariantSpec) -> dict[str, list[str]]:
    """``{variant: [labels]}`` by :func:`match_variants`, variants in the order of ``variants`` (those
    without a run left out), labels in the given order."""
    matched = match_variants(labels, variants)
    out: dict[str, list[str]] = {variant: [] for variant in variants}
    for label, variant in matched.items():
        out[variant].append(label)
    return {variant: found for variant, found in out.items() if found}


# ------------------------------------------------------------------- 2. per-seed scores
def group_results(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]]) -> dict[str, list[dict]]:
    """``{group: [result of each of its runs]}`` (groups without a result left out), for
    :func:`cselab.workbench.tables.scores_table`."""
    return {name: [results[label] for label in members if label in results]
            for name, members in groups.items() if any(label in results for label in members)}


def variant_frame(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                  config_keys: Sequence[str] = ("seed",), group: str = "variant") -> pd.DataFrame:
    """One row per run of ``groups`` with a result (:func:`cselab.model.evaluate.cache.evaluation_frame`:
    ``run``, the ``config_keys``, every score) and its group in the column ``group``: the per-seed
    scores that :func:`summarise` and :func:`compare_to_baseline` read."""
    from ..model.evaluate.cache import evaluation_frame

    runs = {label: path for members in groups.values() for label, path in members.items() if label in results}
    frame = evaluation_frame({label: results[label] for label in runs}, runs, tuple(config_keys))
    group_of = {label: name for name, members in groups.items() for label in members}
    frame.insert(1, group, frame["run"].map(group_of))
    return frame


# ------------------------------------------------------------------- 3. summaries
def summarise(frame: pd.DataFrame, by: str | Sequence[str], metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean, sample std (ddof 1; NaN for one value) and count of each metric per group, groups in
    order of first appearance: columns ``(metric, "mean" | "std" | "n")`` (:func:`cselab.workbench.tables.format_table`
    writes them ``81.23 ± 0.45``). ``metrics`` defaults to every numeric column not in ``by``."""
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in frame]
    if missing:
        raise ValueError(f"summarise: no column {missing} to group by; columns: {list(frame.columns)}")
    if metrics is None:
        metrics = [c for c in frame.columns if c not in by and pd.api.types.is_numeric_dtype(frame[c])]
    missing = [c for c in metrics if c not in frame]
    if missing or not metrics:
        raise ValueError(f"summarise: metric column(s) {missing or metrics} not found; columns: {list(frame.columns)}")
    grouped = frame.groupby(by, sort=False)[list(metrics)]
    parts = {"mean": grouped.mean(), "std": grouped.std(ddof=1), "n": grouped.count()}
    out = pd.concat({stat: parts[stat] for stat in STATS}, axis=1).swaplevel(0, 1, axis=1)
    return out.reindex(columns=pd.MultiIndex.from_product([list(metrics), STATS]))



def mean_std_text(mean: float, std: float, decimals: int = 2, missing_std: str | None = "–") -> str:
    """``81.23 ± 0.45``: the one way every table writes a mean and the sample standard deviation of
    its seeds. A missing mean reads ``–``; a missing std (one seed) reads ``81.23 ± –``, or with
    ``missing_std=None`` the mean alone, ``81.23`` (the summary tables, where a single seed is
    plain)."""
    def number(x) -> str | None:
        return None if x is None or pd.isna(x) else f"{x:.{decimals}f}"

    m, s = number(mean), number(std)
    if m is None:
        return "–" if missing_std is None else f"– ± {s or missing_std}"
    if s is None:
        return m if missing_std is None else f"{m} ± {missing_std}"
    return f"{m} ± {s}"


def mean_ci(values: Sequence[float], confidence: float = CONFIDENCE) -> dict[str, float]:
    """``{n, mean, std, ci_low, ci_high}``: the sample mean, the sample standard deviation (ddof 1)
    and the t confidence interval of the mean (``scipy.stats.t.interval`` around the mean with the
    standard error ``scipy.stats.sem``, n − 1 degrees of freedom; NaN bounds for a single value)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        raise ValueError("mean_ci: no values")
    mean = float(x.mean())
    if n == 1:
        return {"n": 1, "mean": mean, "std": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    std = float(x.std(ddof=1))
    if std == 0:   # every value alike: the interval is the point (scipy needs a positive scale)
        return {"n": n, "mean": mean, "std": 0.0, "ci_low": mean, "ci_high": mean}
    low, high = scipy_stats.t.interval(confidence, n - 1, loc=mean, scale=scipy_stats.sem(x))
    return {"n": n, "mean": mean, "std": std, "ci_low": float(low), "ci_high": float(high)}


# ------------------------------------------------------------------- 4. paired comparisons
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


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values of one family (``statsmodels.stats.multitest.multipletests``,
    ``method="holm"``), in the input order. NaN entries (comparisons without a test) stay NaN and
    are not members of the family."""
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"holm: need a 1-D list of p-values, got shape {p.shape}")
    out = np.full(p.shape, math.nan)
    tested = ~np.isnan(p)
    if tested.any():
        if ((p[tested] < 0) | (p[tested] > 1)).any():
            raise ValueError(f"holm: p-values must lie in [0, 1], got {p[tested].tolist()}")
        from statsmodels.stats.multitest import multipletests

        out[tested] = multipletests(p[tested], alpha=ALPHA, method="holm")[1]
    return out


@functools.lru_cache(maxsize=None)
def detectable_effect_size(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The standardised mean difference d = Δ/sd that a two-sided one-sample (paired) t-test on ``n``
    pairs detects with probability ``power`` at level ``alpha``. The power at d is the noncentral t
    distribution's (``scipy.stats.nct``, n − 1 degrees of freedom, noncentrality d·√n) mass beyond
    ±t_{1−α/2}; d is the root of power(d) − ``power`` (``scipy.optimize.brentq``). statsmodels'
    ``TTestPower.solve_power`` gives the same values where its solver converges, but at small α and
    n (α = 0.01, n = 3: Holm's first step in a family of five claims) it returns 5.0 or NaN for
    7.32, so the root is found here on its power function's formula directly. NaN for n < 2."""
    if n < 2:
        return math.nan
    from scipy.optimize import brentq

    df = n - 1
    critical = scipy_stats.t.isf(alpha / 2, df)

    def shortfall(d: float) -> float:
        noncentrality = d * math.sqrt(n)
        upper = np.nan_to_num(scipy_stats.nct.sf(critical, df, noncentrality))   # the far tail can be NaN: ~0
        lower = np.nan_to_num(scipy_stats.nct.cdf(-critical, df, noncentrality))
        return float(upper + lower) - power

    return float(brentq(shortfall, 1e-6, 200.0, xtol=1e-6))


def minimum_detectable_difference(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true mean difference a two-sided paired t-test on ``n`` pairs detects with
    probability ``power`` at level ``alpha``, when the per-pair differences have standard deviation
    ``sd``: :func:`detectable_effect_size` × ``sd``. A verdict that must clear Holm's correction over
    a family of k tests is powered at ``alpha / k`` (the level its smallest p must clear). NaN for
    fewer than 2 pairs or an undefined ``sd``."""
    if n < 2 or sd is None or not math.isfinite(sd):
        return math.nan
    return detectable_effect_size(int(n), float(alpha), float(power)) * float(sd)


def seeds_for(sd: float, target: float, alpha: float = ALPHA, power: float = POWER, least: int = 2,
              most: int = 10, search: int = 200) -> tuple[int, int | None]:
    """``(planned, needed)``: the fewest seeds n in [``least``, ``most``] whose paired-test MDE at
    ``alpha`` is at most ``target`` given the spread ``sd`` (``most`` when none is), and the n that
    would reach the target (None when even ``search`` seeds would not)."""
    if not (sd is not None and math.isfinite(sd) and sd >= 0 and target > 0):
        raise ValueError(f"seeds_for: need a finite sd >= 0 and a target > 0, got sd={sd!r}, target={target!r}")
    needed = next((n for n in range(2, search + 1)
                   if minimum_detectable_difference(sd, n, alpha, power) <= target), None)
    return (min(max(needed, least), most) if needed is not None else most), needed


def sd_interval(sd: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The ``confidence`` interval of a standard deviation estimated from ``n`` values (the χ²
    interval, ``scipy.stats.chi2`` with n − 1 degrees of freedom): how uncertain an MDE computed from
    a 3-seed spread is."""
    if n < 2 or not math.isfinite(sd):
        return math.nan, math.nan
    df = n - 1
    low = sd * math.sqrt(df / scipy_stats.chi2.ppf(1 - (1 - confidence) / 2, df))
    high = sd * math.sqrt(df / scipy_stats.chi2.ppf((1 - confidence) / 2, df))
    return float(low), float(high)


def pairs_for_powered_null(sd: float, target: float, alpha: float = ALPHA, power: float = POWER,
                           search: int = 1000) -> int | None:
    """The fewest pairs n at which a null would read *powered* if the spread stayed at ``sd``: the MDE
    at the upper end of the spread's 95 % interval over n values (:func:`sd_interval`, χ² with n − 1
    degrees of freedom) is within ``target``. More than :func:`seeds_for`'s n, because a few pairs
    leave the spread itself uncertain. None when even ``search`` pairs would not do."""
    if not (sd is not None and math.isfinite(sd) and sd >= 0 and target > 0):
        return None
    return next((n for n in range(2, search + 1)
                 if minimum_detectable_difference(sd_interval(sd, n)[1], n, alpha, power) <= target), None)


PLANNING_CONFIDENCE = 0.8   # Browne (1995): plan on a pilot sd's one-sided 80 % upper limit


def sd_upper_limit(sd: float, n: int, confidence: float = PLANNING_CONFIDENCE) -> float:
    """The one-sided ``confidence`` upper limit of a standard deviation estimated from ``n`` values
    (χ² with n − 1 degrees of freedom, ``scipy.stats.chi2``): the spread a re-plan sizes its seeds on,
    so that a spread a few seeds under-estimated does not plan too few again (Browne, "On the use of a
    pilot sample for sample size determination", Stat. Med. 1995, recommends 80 %)."""
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return float(sd * math.sqrt((n - 1) / scipy_stats.chi2.ppf(1 - confidence, n - 1)))


def paired_variance_test(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Whether two variants' scores over the same seeds differ in spread: the Pitman–Morgan test
    (the variances of paired values are equal exactly when their sums and differences are
    uncorrelated; ``scipy.stats.pearsonr`` of a + b and a − b, two-sided). ``{n, sd_a, sd_b, ratio,
    p}`` with ratio = sd_a / sd_b; p NaN below 3 pairs."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired_variance_test: need two aligned 1-D score lists, got shapes {x.shape} and {y.shape}")
    n = len(x)
    sd_a = float(x.std(ddof=1)) if n > 1 else math.nan
    sd_b = float(y.std(ddof=1)) if n > 1 else math.nan
    p = math.nan
    if n >= 3 and np.ptp(x + y) > 0 and np.ptp(x - y) > 0:
        p = float(scipy_stats.pearsonr(x + y, x - y).pvalue)
    ratio = sd_a / sd_b if sd_b and math.isfinite(sd_b) and sd_b > 0 else math.nan
    return {"n": n, "sd_a": sd_a, "sd_b": sd_b, "ratio": ratio, "p": p}


def detectable_sd_ratio(n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The spread ratio r < 1 (sd of one variant over the other's) that a two-sided F-test of two
    independent samples of ``n`` detects with probability ``power`` at ``alpha`` (``scipy.stats.f``).
    Paired seeds only help the Pitman–Morgan test, so this is what the variance claims can at
    least see; NaN below 3."""
    if n < 3:
        return math.nan
    from scipy.optimize import brentq

    df = n - 1
    low, high = scipy_stats.f.ppf(alpha / 2, df, df), scipy_stats.f.isf(alpha / 2, df, df)

    def shortfall(r: float) -> float:
        return float(scipy_stats.f.cdf(low / r ** 2, df, df) + scipy_stats.f.sf(high / r ** 2, df, df)) - power

    return float(brentq(shortfall, 1e-4, 1 - 1e-9, xtol=1e-7))


def describe_difference(diff: float, p_adjusted: float, mde: float, n: int, alpha: float = ALPHA) -> str:
    """Words for one comparison: ``detected (higher)`` / ``detected (lower)`` when the adjusted p is
    below ``alpha``; else ``no detectable effect (MDE 0.52)``; ``no test (n 1)`` without one."""
    if diff is None or math.isnan(diff):
        return "–"
    if p_adjusted is None or math.isnan(p_adjusted):
        return f"no test (n {int(n)})" if n < 2 else "no test (identical differences)"
    if p_adjusted < alpha:
        return "detected (higher)" if diff > 0 else "detected (lower)"
    return f"no detectable effect (MDE {mde:.2f})" if not math.isnan(mde) else "no detectable effect"


def compare_to_baseline(frame: pd.DataFrame, metric: str, group: str = "method", baseline: str = DEFAULT_METHOD,
                        pair_on: str = "seed", confidence: float = CONFIDENCE, alpha: float = ALPHA,
                        power: float = POWER) -> pd.DataFrame:
    """One row per group (e.g. method): n, mean, std and CI of ``metric`` over seeds, then the paired
    comparison with ``baseline`` on the seeds both have (``diff``, its CI, ``diff_std``, t and p;
    empty for the baseline itself), the Holm-adjusted ``p_holm`` over the family of every group
    tested against the baseline on this metric (stated in ``family``), the minimum detectable
    difference ``mde`` (power ``power`` at ``alpha``) and ``reading`` (:func:`describe_difference`).
    ``frame`` has one row per run (``read_results`` gives it)."""
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
            row.update({"paired_n": len(shared), "diff": math.nan, "diff_ci_low": math.nan, "diff_ci_high": math.nan,
                        "diff_std": math.nan, "t": math.nan, "p": math.nan, "mde": math.nan})
            if shared:
                ours, theirs = scores.loc[shared].to_numpy(), base.loc[shared].to_numpy()
                test = paired_test(ours, theirs, confidence)
                spread = mean_ci(ours - theirs)["std"]
                row.update({"diff": test["mean_diff"], "diff_ci_low": test["ci_low"], "diff_ci_high": test["ci_high"],
                            "diff_std": spread, "t": test["t"], "p": test["p"],
                            "mde": minimum_detectable_difference(spread, len(shared), alpha, power)})
        rows.append(row)
    table = pd.DataFrame(rows)
    if "p" in table:
        tested = table[group] != baseline
        table["p_holm"] = math.nan
        table.loc[tested, "p_holm"] = holm(table.loc[tested, "p"].to_numpy())
        members = int(table.loc[tested, "p"].notna().sum())
        table["family"] = ""
        if members:                                    # named on the rows that are members of the family
            table.loc[tested & table["p"].notna(), "family"] = f"Holm over {members} {group}s vs {baseline} on {metric}"
        table["reading"] = [describe_difference(r["diff"], r["p_holm"], r["mde"], r["paired_n"], alpha)
                            if r[group] != baseline else "" for _, r in table.iterrows()]
    return table


def format_comparison(table: pd.DataFrame, group: str = "method", decimals: int = 2) -> pd.DataFrame:
    """Text cells for a :func:`compare_to_baseline` table: ``mean ± std``, ``[low, high]``, the
    difference with its interval, the raw p beside the Holm-adjusted p, the reading (detected or
    no detectable effect with its MDE) and the Holm family."""
    def number(x: float, d: int = decimals) -> str:
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"

    out = []
    for _, r in table.iterrows():
        row = {group: r[group], "seeds": int(r["n"]), "mean ± std": mean_std_text(r["mean"], r["std"], decimals),
               "95% CI": f"[{number(r['ci_low'])}, {number(r['ci_high'])}]"}
        if "diff" in r and not pd.isna(r.get("diff")):
            row.update({"Δ vs baseline": f"{r['diff']:+.{decimals}f}",
                        "Δ 95% CI": f"[{number(r['diff_ci_low'])}, {number(r['diff_ci_high'])}]",
                        "p (paired t)": number(r["p"], 3), "p (Holm)": number(r.get("p_holm", math.nan), 3),
                        "reading": r.get("reading", ""), "Holm family": r.get("family", "")})
        else:
            no_seed = r.get("paired_n") == 0          # a group without a seed in common (the baseline: NaN)
            row.update({"Δ vs baseline": "(no shared seed)" if no_seed else "(baseline)", "Δ 95% CI": "",
                        "p (paired t)": "", "p (Holm)": "", "reading": "", "Holm family": ""})
        out.append(row)
    return pd.DataFrame(out).set_index(group)


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
    share (:func:`compare_to_baseline`: ``diff``, its 95 % t-interval, ``p``), the
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


def holm_family_scope(families: Iterable[str]) -> tuple[str, int] | None:
    """What the ``family`` words of :func:`paired_tests` say in common, read back where they are
    written: ``("group", n)`` when every family is one group's n scores, ``("task", n)`` when every
    one is n groups on one task, None when they differ (or come from another test)."""
    families = {str(f) for f in families}
    by_group = {m.group(1) for f in families if (m := re.fullmatch(r"Holm over .+'s (\d+) scores", f))}
    by_task = {m.group(1) for f in families if (m := re.fullmatch(r"Holm over (\d+) \S+ on .+", f))}
    if len(by_group) == 1 and all(f.endswith(" scores") for f in families):
        return "group", int(by_group.pop())
    if len(by_task) == 1 and all(" on " in f for f in families):
        return "task", int(by_task.pop())
    return None


def _single_seed_pairs(frame: pd.DataFrame, group: str, baseline: str, pair_on: str) -> list[tuple[str, str, str]]:
    """``[(group name, its run, the baseline's run), ...]`` for every group sharing exactly one seed
    with the baseline (the groups without a t-test), in the frame's order."""
    base = frame[frame[group] == baseline].set_index(pair_on)["run"]
    pairs = []
    for name, part in frame[frame[group] != baseline].groupby(group, sort=False):
        shared = sorted(set(part[pair_on]) & set(base.index))
        if len(shared) == 1:
            pairs.append((name, part.set_index(pair_on).loc[shared[0], "run"], base.loc[shared[0]]))
    return pairs


def single_seed_runs(frame: pd.DataFrame, group: str = "group", baseline: str = "SimCSE",
                     pair_on: str = "seed") -> list[str]:
    """The runs :func:`single_seed_bootstrap` needs (``frame``'s ``run`` labels): for every group
    sharing exactly one seed with the baseline, its run and the baseline's run of that seed."""
    return list(dict.fromkeys(label for _, ours, theirs in _single_seed_pairs(frame, group, baseline, pair_on)
                              for label in (ours, theirs)))


def single_seed_bootstrap(frame: pd.DataFrame, pair_scores: Mapping[str, Mapping[str, tuple]], tasks: Sequence[str],
                          group: str = "group", baseline: str = "SimCSE", pair_on: str = "seed", average: str = "avg",
                          n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """For each group sharing exactly one seed with the baseline (no t-test possible): per task, the
    difference of Spearman ×100 between its run and the baseline's run of that seed with the 95 %
    interval of a **paired bootstrap over the test pairs** (:func:`bootstrap_spearman_difference`;
    the ``average`` column: every task of ``pair_scores`` resampled, the differences averaged). The
    interval is test-set uncertainty, not training-seed variance. ``frame`` needs a ``run`` column
    (labels of ``pair_scores``, e.g. from :func:`cselab.workbench.analysis.compare.sts_pair_scores`)."""
    missing = [c for c in ("run", group, pair_on) if c not in frame]
    if missing:
        raise ValueError(f"single_seed_bootstrap: missing column(s) {missing}; columns: {list(frame.columns)}")
    rows = []
    for name, ours, theirs in _single_seed_pairs(frame, group, baseline, pair_on):
        for label in (ours, theirs):
            if label not in pair_scores:
                raise ValueError(f"single_seed_bootstrap: no per-pair scores for run {label!r}")
        done = {}   # the average over one test set is that set's bootstrap (same seed, same draws): drawn once
        for task in tasks:
            names = list(pair_scores[ours]) if task == average else [task]
            if tuple(names) in done:
                rows.append({**done[tuple(names)], "task": task})
                continue
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
            done[tuple(names)] = rows[-1]
    return pd.DataFrame(rows, columns=[group, "task", "run", "baseline_run", "diff", "ci_low", "ci_high", "n_pairs",
                                       "n_resamples", "interval"])



# ------------------------------------------------------------------- 5. one shared seed: paired bootstrap over test pairs
def _row_spearman(pred: np.ndarray, gold: np.ndarray, gold_ranks: np.ndarray | None = None) -> np.ndarray:
    """Spearman correlation of each row of ``pred`` with the same row of ``gold`` (both
    (resamples, pairs)): scipy's Pearson correlation (``pearsonr``, row-wise) of the average ranks
    (``rankdata``), which is what ``scipy.stats.spearmanr`` computes for one row. NaN for a row where
    either side is constant (the correlation is undefined there). ``gold_ranks``: ``gold``'s ranks
    when the caller already has them (two systems scored on the same resampled pairs share them)."""
    ranks_p = scipy_stats.rankdata(pred, axis=1)
    ranks_g = scipy_stats.rankdata(gold, axis=1) if gold_ranks is None else gold_ranks
    with warnings.catch_warnings():   # a constant row: NaN, said by the callers (undefined_resamples)
        warnings.simplefilter("ignore", scipy_stats.ConstantInputWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(scipy_stats.pearsonr(ranks_p, ranks_g, axis=1).statistic, dtype=float)


def _aligned(scores_a, scores_b, gold) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b, g = (np.asarray(x, dtype=float) for x in (scores_a, scores_b, gold))
    if a.ndim != 1 or a.shape != b.shape or a.shape != g.shape:
        raise ValueError(f"bootstrap: scores_a, scores_b and gold must be aligned 1-D arrays (the same test pairs), "
                         f"got shapes {a.shape}, {b.shape}, {g.shape}")
    if len(a) < 3:
        raise ValueError(f"bootstrap: need at least 3 test pairs, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(g).all()):
        raise ValueError("bootstrap: scores and gold must be finite")
    if np.ptp(g) == 0:
        raise ValueError("bootstrap: the gold scores are constant, Spearman is undefined")
    return a, b, g


def _point_difference(a: np.ndarray, b: np.ndarray, g: np.ndarray) -> float:
    """Spearman(a, gold) − Spearman(b, gold) ×100 on all pairs (exactly 0 for identical systems)."""
    if np.array_equal(a, b):
        return 0.0
    point = 100 * float(_row_spearman(a[None], g[None])[0] - _row_spearman(b[None], g[None])[0])
    if math.isnan(point):
        raise ValueError("bootstrap: a system's scores are constant, Spearman is undefined")
    return point


def _resampled_differences(a: np.ndarray, b: np.ndarray, g: np.ndarray, n_resamples: int,
                           rng: np.random.Generator, chunk: int = 256) -> np.ndarray:
    """Spearman(a) − Spearman(b) ×100 on ``n_resamples`` resamples of the pairs (the same indices
    for both systems and the gold: the pairs move together). Resample r draws
    ``rng.integers(0, n, n)`` in turn, so a loop drawing one resample at a time sees the same pairs.
    Identical systems give exactly 0 on every resample, even where the correlation is undefined."""
    n = len(g)
    identical = np.array_equal(a, b)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        index = rng.integers(0, n, size=(stop - start, n))
        if identical:
            out[start:stop] = 0.0
        else:
            gold_ranks = scipy_stats.rankdata(g[index], axis=1)   # ranked once for both systems
            out[start:stop] = 100 * (_row_spearman(a[index], g[index], gold_ranks)
                                     - _row_spearman(b[index], g[index], gold_ranks))
    return out


def _interval(point: float, differences: np.ndarray, n_pairs: int, n_resamples: int,
              confidence: float) -> dict:
    defined = differences[~np.isnan(differences)]
    if len(defined) == 0:
        raise ValueError("bootstrap: the correlation is undefined on every resample (constant scores)")
    low, high = np.quantile(defined, [0.5 - confidence / 2, 0.5 + confidence / 2])
    return {"diff": point, "ci_low": float(low), "ci_high": float(high), "n_pairs": n_pairs,
            "n_resamples": n_resamples, "undefined_resamples": int(len(differences) - len(defined)),
            "confidence": confidence, "interval": f"{confidence:.0%} {BOOTSTRAP_WORDS}"}


def bootstrap_spearman_difference(scores_a: Sequence[float], scores_b: Sequence[float], gold: Sequence[float],
                                  n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0,
                                  confidence: float = CONFIDENCE) -> dict:
    """Difference of Spearman ×100 (a − b) of two systems' predicted similarities on the same test
    pairs, with its percentile interval from a **paired bootstrap**: ``n_resamples`` resamples of
    the pairs with replacement (``numpy.random.default_rng(seed)``), each scoring both systems on
    the same resampled pairs. Returns ``{diff, ci_low, ci_high, n_pairs, n_resamples,
    undefined_resamples, confidence, interval}``; ``interval`` says what it is over (the test pairs:
    test-set uncertainty, not training-seed variance). Resamples on which a correlation is undefined
    (constant scores) are left out and counted; two identical systems give exactly 0 and [0, 0]."""
    a, b, g = _aligned(scores_a, scores_b, gold)
    if n_resamples < 1:
        raise ValueError(f"bootstrap: n_resamples must be positive, got {n_resamples}")
    point = _point_difference(a, b, g)
    differences = _resampled_differences(a, b, g, n_resamples, np.random.default_rng(seed))
    return _interval(point, differences, len(g), n_resamples, confidence)


def bootstrap_average_spearman_difference(tasks: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
                                          n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0,
                                          confidence: float = CONFIDENCE) -> dict:
    """The same for the mean over several test sets (``{task: (scores_a, scores_b, gold)}``, e.g.
    the 7-task STS average): each set's pairs are resampled on their own (in the order given, from
    one generator), and each resample's differences are averaged over the sets."""
    if not tasks:
        raise ValueError("bootstrap: no test sets")
    rng = np.random.default_rng(seed)
    points, draws, pairs = [], [], 0
    for name, (scores_a, scores_b, gold) in tasks.items():
        try:
            a, b, g = _aligned(scores_a, scores_b, gold)
            points.append(_point_difference(a, b, g))
        except ValueError as error:
            raise ValueError(f"{name}: {error}") from None
        draws.append(_resampled_differences(a, b, g, n_resamples, rng))
        pairs += len(g)
    return _interval(float(np.mean(points)), np.mean(draws, axis=0), pairs, n_resamples, confidence)
