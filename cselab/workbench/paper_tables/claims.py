"""A paper's claims about its analyses, checked on our runs: the table a researcher reads first.

Each :class:`Claim` is one sentence of a paper reduced to a paired comparison of two variants over
training seeds ("MixCSE beats SimCSE": MixCSE − SimCSE > 0 on the STS average). :func:`claims_table`
tests every claim of one paper with a paired t-test over the seeds both variants have
(:func:`cselab.workbench.results.paired_test`), corrects the family of that paper's tests with Holm's method
(:func:`cselab.workbench.results.holm`) and gives each a verdict:

* **holds here** — the Holm-adjusted p is below α and the difference has the paper's sign;
* **reversed** — the adjusted p is below α and the difference has the other sign;
* **not detected (MDE x)** — otherwise, with the minimum detectable difference of that test
  (power 0.8 at α, from the per-seed spread: :func:`cselab.workbench.results.minimum_detectable_difference`).

"Not detected" is not "refuted": with three seeds only differences larger than the MDE are seen.
The verdicts are about the scale the runs were made at (a CPU profile is not the paper's scale).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..results import ALPHA, POWER, holm, mean_ci, minimum_detectable_difference, paired_test

HOLDS, REVERSED = "holds here", "reversed"


@dataclass(frozen=True)
class Claim:
    """One claim of a paper as the paired difference ``variant − reference`` of ``metric``."""
    claim: str                 # the paper's statement, in plain words
    variant: str               # the variant the claim is about (a value of the frame's group column)
    reference: str             # what it is compared with
    paper: str                 # the paper's own number(s) for it, with where they are printed
    direction: int = 1         # +1: the paper finds variant > reference; -1: variant < reference
    metric: str = "avg"        # the score compared (a column of the frame)

    def __post_init__(self):
        if self.direction not in (1, -1):
            raise ValueError(f"Claim {self.claim!r}: direction must be +1 or -1, got {self.direction!r}")


def as_variants(frame: pd.DataFrame, column: str, words: str) -> pd.DataFrame:
    """Rows of a sweep frame (:func:`cselab.workbench.paper_tables.sweep_results`) as variants named by their
    swept value, e.g. ``words="λ = {:g}"`` → ``variant`` "λ = 0.1"; so sweep points can be claimed about."""
    out = frame.copy()
    out["variant"] = [words.format(v) for v in out[column]]
    return out


def verdict(diff: float, p_adjusted: float, mde: float, direction: int, n: int, alpha: float = ALPHA) -> str:
    """The words of one row (see the module docstring)."""
    if diff is None or math.isnan(diff):
        return "no runs"
    if p_adjusted is None or math.isnan(p_adjusted):
        return f"no test (n {int(n)})" if n < 2 else "no test (identical differences)"
    if p_adjusted < alpha:
        return HOLDS if math.copysign(1, diff) == direction else REVERSED
    return f"not detected (MDE {mde:.2f})" if not math.isnan(mde) else "not detected"


def claims_table(frame: pd.DataFrame, claims: Sequence[Claim], group: str = "variant", pair_on: str = "seed",
                 alpha: float = ALPHA, power: float = POWER, decimals: int = 2) -> pd.DataFrame:
    """One row per claim: the paper's number, our mean difference over the seeds both variants have
    with its 95 % t-interval and n, the paired t-test's p, the Holm-adjusted p over this family of
    claims, and the verdict. ``frame`` has one row per run with the ``group`` and ``pair_on`` columns
    and each claim's metric."""
    if not claims:
        raise ValueError("claims_table: no claims")
    for column in (group, pair_on):
        if column not in frame:
            raise ValueError(f"claims_table: the frame has no {column!r} column; columns: {list(frame.columns)}")
    rows, present = [], set(frame[group])
    for c in claims:
        if c.metric not in frame:
            raise ValueError(f"claims_table: claim {c.claim!r}: no column {c.metric!r} in the frame")
        missing = [v for v in (c.variant, c.reference) if v not in present]
        row = {"claim": c.claim, "paper": c.paper, "n": 0, "diff": math.nan, "ci_low": math.nan,
               "ci_high": math.nan, "p": math.nan, "mde": math.nan, "missing": ", ".join(missing)}
        if not missing:
            ours = frame[frame[group] == c.variant].set_index(pair_on)[c.metric]
            theirs = frame[frame[group] == c.reference].set_index(pair_on)[c.metric]
            shared = sorted(set(ours.index) & set(theirs.index))
            if shared:
                test = paired_test(ours.loc[shared].to_numpy(), theirs.loc[shared].to_numpy())
                spread = mean_ci(ours.loc[shared].to_numpy() - theirs.loc[shared].to_numpy())["std"]
                row.update(n=test["n"], diff=test["mean_diff"], ci_low=test["ci_low"], ci_high=test["ci_high"],
                           p=test["p"], mde=minimum_detectable_difference(spread, len(shared), alpha, power))
        rows.append(row)
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p"].to_numpy())
    table["verdict"] = [verdict(r["diff"], r["p_holm"], r["mde"], c.direction, r["n"], alpha)
                        for (_, r), c in zip(table.iterrows(), claims)]
    members = int(table["p"].notna().sum())
    table.attrs["family"] = f"Holm over the {members} claims tested here (α = {alpha:g})"
    return table


def format_claims(table: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """Text cells for a :func:`claims_table`: Δ with its interval and n, both p-values, the verdict."""
    def number(x: float, d: int = decimals) -> str:
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"

    def p_text(p: float) -> str:   # three decimals, and "< 0.001" rather than a p of 0.000
        return number(p, 3) if not (isinstance(p, float) and 0 <= p < 0.0005) else "< 0.001"

    out = pd.DataFrame({
        "claim": table["claim"], "paper": table["paper"],
        "ours: Δ (seeds)": [f"{r['diff']:+.{decimals}f} (n {int(r['n'])})" if not math.isnan(r["diff"])
                            else f"no runs ({r['missing']})" for _, r in table.iterrows()],
        "Δ 95% CI": [f"[{number(r['ci_low'])}, {number(r['ci_high'])}]" for _, r in table.iterrows()],
        "p (paired t)": [p_text(p) for p in table["p"]],
        "p (Holm)": [p_text(p) for p in table["p_holm"]],
        "verdict": table["verdict"]})
    out.attrs = dict(table.attrs)
    return out.set_index("claim")
