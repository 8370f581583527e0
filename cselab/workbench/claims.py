"""A paper's claims checked on our runs: the power plan made before the runs, the verdicts after.

A :class:`Claim` is one sentence of a paper (or one check of ours) reduced to a comparison of two
variants over training seeds: "MixCSE beats SimCSE" is the paired difference MixCSE − SimCSE of the
7-task STS average, seed by seed. The claims of one study profile are fixed in its study file, before
any run (cselab/workbench/studies/*.yaml, ``claims:``), and split into two **families**:

* the **paper's claims** (``kind: paper``): what the paper states, with where it states it. One
  family per paper, corrected together with Holm's method, and the only claims the tallies count;
* the **workbench's checks** (``kind: check``): comparisons the paper does not make (a controlled
  ablation, a sweep point), their own Holm family, never counted as the paper's.

**Before the runs: the power plan** (:func:`power_plan`). A claim in a family of k must clear
Holm's first step, p < α/k, when none of the others is detected; so its minimum detectable
difference (MDE: the true difference the paired t-test detects with power 0.8) is computed at α/k.
From the spread of its per-seed differences in a pilot (or the stated prior where there was none)
the plan picks the fewest seeds, at least ``min_seeds``, whose MDE is at most the target — the
larger of ``target`` and the paper's own effect scaled to this backbone (``scale`` × the paper's
number) — and runs a claim that would need more than ``max_seeds`` at ``max_seeds``, marked
*underpowered* with the seeds it would need.

**After the runs: the verdicts** (:func:`claims_table`). For each claim over the seeds both
variants have: the mean difference, its 95 % t-interval, the paired t-test's p and its Holm
adjustment within the family, the MDE at α/k from the observed spread (with the χ² interval of that
spread: three seeds estimate it poorly), whether the paper's scaled effect was detectable, and a
verdict — *holds here* (adjusted p < α, the paper's sign), *reversed* (adjusted p < α, the other
sign), *not detected (MDE x)*, *not detected, underpowered (MDE x > target y)* when the
runs' MDE exceeds the claim's target (the runs could not have detected it), or *not testable at this scale* (a claim whose mechanism the study
file says cannot act within the run; the reason is printed). A variance claim ("lower variance across
runs") is tested with the Pitman–Morgan test of paired variances; its MDE column gives the spread
ratio an F-test would detect (:func:`cselab.workbench.results.detectable_sd_ratio`).

Bad frames never crash the table: a claim whose variant has no runs, no shared seeds, duplicate seed
rows or non-finite scores gets a row saying so in one line, and the other claims are tested.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .results import (ALPHA, POWER, detectable_sd_ratio, holm, mean_ci, minimum_detectable_difference,
                      paired_test, paired_variance_test, sd_interval, seeds_for)

HOLDS, REVERSED, NOT_TESTABLE = "holds here", "reversed", "not testable at this scale"
UNDERPOWERED = "not detected, underpowered"   # a "not detected" whose MDE is above the claim's target
KINDS = ("paper", "check")
TESTS = ("paired_t", "paired_variance")
FAMILY_WORDS = {"paper": "the paper's claims", "check": "the workbench's checks"}


@dataclass(frozen=True)
class Claim:
    """One claim: ``variant − reference`` of ``metric`` has the sign ``direction`` (+1: the paper
    finds variant > reference; −1: variant < reference; 0: a check with no expected sign).

    ``variant`` and ``reference`` name variants as the frame's group column does (a study's run
    label without its ``-s<seed>``). ``paper_effect`` is the paper's own number for the difference
    (None where it prints none); ``pilot_sd`` the spread of the per-seed differences measured before
    (None: the plan's prior); ``testable``/``reason``: False with the reason when the study file
    says the mechanism cannot act at this scale."""
    claim: str
    variant: str
    reference: str
    paper: str = ""
    direction: int = 1
    metric: str = "avg"
    kind: str = "paper"
    paper_effect: float | None = None
    pilot_sd: float | None = None
    pilot: str = ""
    test: str = "paired_t"
    testable: bool = True
    reason: str = ""

    def __post_init__(self):
        if self.direction not in (1, -1, 0):
            raise ValueError(f"claim {self.claim!r}: direction must be +1, -1 or 0, got {self.direction!r}")
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.test not in TESTS:
            raise ValueError(f"claim {self.claim!r}: test must be one of {TESTS}, got {self.test!r}")
        if self.kind == "paper" and self.direction == 0:
            raise ValueError(f"claim {self.claim!r}: a paper's claim has a sign (direction +1 or -1)")
        if not self.testable and not self.reason:
            raise ValueError(f"claim {self.claim!r}: testable: false needs a reason")


@dataclass(frozen=True)
class PowerRule:
    """How a study profile plans its seeds (the study file's ``power:``)."""
    target: float = 0.3            # the MDE every claim should reach, in the metric's units (STS points)
    scale: float = 0.0             # paper effect × scale = the paper's effect on this backbone
    scale_rule: str = ""           # where ``scale`` comes from, in words
    min_seeds: int = 5
    max_seeds: int = 10
    prior_sd: float = 0.15         # the spread assumed for a claim without a pilot
    prior_rule: str = ""
    check_seeds: int = 5           # seeds of a variant that only checks need
    alpha: float = ALPHA
    power: float = POWER

    def __post_init__(self):
        if not (self.target > 0 and self.prior_sd > 0 and 0 < self.alpha < 1 and 0 < self.power < 1):
            raise ValueError(f"power: target, prior_sd > 0 and alpha, power in (0, 1) expected, got {self}")
        if not 2 <= self.min_seeds <= self.max_seeds:
            raise ValueError(f"power: need 2 <= min_seeds <= max_seeds, got {self.min_seeds} and {self.max_seeds}")
        if self.check_seeds < 2:
            raise ValueError(f"power: check_seeds must be at least 2, got {self.check_seeds}")


def family_sizes(claims: Sequence[Claim]) -> dict[str, int]:
    """The number of claims in each family (``paper``, ``check``) that can be tested."""
    return {kind: sum(c.kind == kind and c.testable for c in claims) for kind in KINDS}


def level(claim: Claim, claims: Sequence[Claim], alpha: float = ALPHA) -> float:
    """α/k: the level the claim's p must clear at Holm's first step in its family of k."""
    return alpha / max(1, family_sizes(claims)[claim.kind])


def scaled_effect(claim: Claim, rule: PowerRule) -> float:
    """The paper's effect on this backbone (``scale`` × ``paper_effect``; NaN without either)."""
    if claim.paper_effect is None or not rule.scale:
        return math.nan
    return abs(claim.paper_effect) * rule.scale


def target_for(claim: Claim, rule: PowerRule) -> float:
    """The MDE the plan aims at: the larger of the rule's target and the scaled paper effect, for
    the STS average; the rule's target is in STS points, so another metric has none (NaN)."""
    if claim.metric != "avg":
        return math.nan
    scaled = scaled_effect(claim, rule)
    return max(rule.target, scaled) if math.isfinite(scaled) else rule.target


def observed_spreads(claims: Sequence[Claim], frame: pd.DataFrame, least: int = 3) -> dict[str, tuple[float, int]]:
    """``{claim: (sd, n)}``: the spread of each paired claim's per-seed differences in ``frame`` (a
    record's runs), where at least ``least`` seeds are shared. Only the spread is read, never the mean
    difference: a plan re-estimated from it does not look at the effect it is about to test."""
    out = {}
    for c in claims:
        if c.test != "paired_t" or c.metric not in frame:
            continue
        row = _test_row(c, frame, "variant", "seed")
        if row["n"] >= least and math.isfinite(row["sd"]):
            out[c.claim] = (float(row["sd"]), int(row["n"]))
    return out


def power_plan(claims: Sequence[Claim], rule: PowerRule,
               observed: Mapping[str, tuple[float, int]] | None = None) -> pd.DataFrame:
    """One row per claim: its family and level α/k, the spread the plan uses (pilot or prior), the
    target, the seeds planned (at least ``min_seeds`` for a paper's claim, ``check_seeds`` for a check)
    and needed, the MDE at the planned seeds, and whether it is underpowered. With ``observed``
    (:func:`observed_spreads` of the record so far) a claim's spread is the one its runs showed: the
    plan is re-estimated on the spread alone, and never plans fewer seeds than the first plan did."""
    first = power_plan(claims, rule).set_index("claim")["seeds"] if observed else None
    rows = []
    for c in claims:
        row = {"claim": c.claim, "kind": c.kind, "variant": c.variant, "reference": c.reference,
               "metric": c.metric, "level": level(c, claims, rule.alpha), "sd": math.nan, "sd_source": "",
               "target": target_for(c, rule), "seeds": rule.min_seeds if c.kind == "paper" else rule.check_seeds,
               "needed": None, "mde": math.nan, "underpowered": False, "note": ""}
        if not c.testable:
            row["note"] = f"{NOT_TESTABLE}: {c.reason}"
        elif c.test == "paired_variance":
            row["mde"] = detectable_sd_ratio(row["seeds"], row["level"], rule.power)
            row["note"] = (f"variance test: detects an sd ratio of {row['mde']:.2f} or further from 1 with "
                           f"{row['seeds']} seeds")
            row["underpowered"] = True
        elif c.metric != "avg":
            row["note"] = "no spread in STS points applies: run at its variants' seeds, power known after the runs"
        else:
            sd = c.pilot_sd if c.pilot_sd is not None else rule.prior_sd
            row.update(sd=sd, sd_source=c.pilot or ("pilot" if c.pilot_sd is not None else "prior"))
            if observed and c.claim in observed:
                sd, n = observed[c.claim]
                row.update(sd=sd, sd_source=f"observed, {n} seeds")
            least = rule.min_seeds if c.kind == "paper" else rule.check_seeds
            if first is not None:
                least = max(least, int(first[c.claim]))
            most = rule.max_seeds if c.kind == "paper" else rule.check_seeds
            planned, needed = seeds_for(sd, row["target"], row["level"], rule.power, least, most)
            row.update(seeds=planned, needed=needed, mde=minimum_detectable_difference(sd, planned, row["level"],
                                                                                        rule.power))
            row["underpowered"] = needed is None or needed > planned
            if row["underpowered"]:
                row["note"] = (f"underpowered: needs {needed} seeds" if needed else "underpowered: needs > 200 seeds")
        rows.append(row)
    return pd.DataFrame(rows)


def seeds_per_variant(plan: pd.DataFrame, rule: PowerRule) -> dict[str, int]:
    """The seeds each variant needs: the most any of its claims plans (both sides of a paired
    comparison need the seeds)."""
    out: dict[str, int] = {}
    for _, row in plan.iterrows():
        for variant in (row["variant"], row["reference"]):
            out[variant] = max(out.get(variant, 0), int(row["seeds"]))
    return out


def format_plan(plan: pd.DataFrame) -> pd.DataFrame:
    """Text cells of a :func:`power_plan` for a dry run and the docs."""
    def number(x, d=2):
        return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{d}f}"

    return pd.DataFrame({
        "claim": plan["claim"], "family": [FAMILY_WORDS[k] for k in plan["kind"]],
        "level α/k": [f"{x:.4f}" for x in plan["level"]],
        "spread (sd of differences)": [f"{number(s, 3)} ({src})" if src else "–"
                                       for s, src in zip(plan["sd"], plan["sd_source"])],
        "target MDE": [number(t) for t in plan["target"]],
        "seeds": plan["seeds"].astype(int),
        "MDE at those seeds": [number(m) for m in plan["mde"]],
        "note": plan["note"]}).set_index("claim")


# ------------------------------------------------------------------- verdicts
def verdict(diff: float, p_adjusted: float, mde: float, direction: int, n: int, alpha: float = ALPHA,
            target: float = math.nan) -> str:
    """The words of one row (see the module docstring). A "not detected" whose MDE is above the claim's
    ``target`` says so: the runs could not have detected it, so it never reads as a powered null."""
    if diff is None or not math.isfinite(diff):
        return "no runs"
    if p_adjusted is None or math.isnan(p_adjusted):
        return f"no test (n {int(n)})" if n < 2 else "no test (identical differences)"
    if p_adjusted < alpha:
        if direction == 0:
            return "detected (higher)" if diff > 0 else "detected (lower)"
        return HOLDS if math.copysign(1, diff) == direction else REVERSED
    if math.isfinite(mde) and math.isfinite(target) and mde > target:
        return f"{UNDERPOWERED} (MDE {_number(mde)} > target {_number(target)})"
    return f"not detected (MDE {_number(mde)})" if math.isfinite(mde) else "not detected"


def _number(x: float) -> str:
    """Two decimals, or two significant digits for a number below 0.1 (an MDE in small units)."""
    return f"{x:.2f}" if abs(x) >= 0.1 or x == 0 else f"{x:.2g}"


def _scores(frame: pd.DataFrame, group: str, pair_on: str, variant: str, metric: str) -> tuple[pd.Series, str]:
    """A variant's scores indexed by seed, or an empty series and why."""
    rows = frame[frame[group] == variant]
    if rows.empty:
        return pd.Series(dtype=float), f"no runs of {variant!r}"
    values = pd.to_numeric(rows[metric], errors="coerce")
    seeds = rows[pair_on]
    bad = [str(s) for s, v in zip(seeds, values) if not math.isfinite(v)] if len(values) else []
    duplicated = sorted({str(s) for s in seeds[seeds.duplicated()]})
    if duplicated:
        return pd.Series(dtype=float), f"{variant!r} has several runs of seed(s) {', '.join(duplicated)}"
    scores = pd.Series(values.to_numpy(dtype=float), index=seeds.to_numpy())
    if bad:
        return scores[np.isfinite(scores.to_numpy())], (f"{variant!r}: {metric} is not a finite number for "
                                                        f"seed(s) {', '.join(bad)} (left out)")
    return scores, ""


def _test_row(c: Claim, frame: pd.DataFrame, group: str, pair_on: str) -> dict:
    row = {"claim": c.claim, "kind": c.kind, "paper": c.paper, "variant": c.variant, "reference": c.reference,
           "metric": c.metric, "test": c.test, "direction": c.direction, "n": 0, "seeds": "", "diff": math.nan, "ci_low": math.nan, "ci_high": math.nan,
           "p": math.nan, "sd": math.nan, "problem": ""}
    if not c.testable:
        row["problem"] = c.reason
        return row
    if c.metric not in frame:
        row["problem"] = f"no {c.metric!r} scores in the record"
        return row
    ours, why_ours = _scores(frame, group, pair_on, c.variant, c.metric)
    theirs, why_theirs = _scores(frame, group, pair_on, c.reference, c.metric)
    problems = [w for w in (why_ours, why_theirs) if w]
    shared = sorted(set(ours.index) & set(theirs.index), key=lambda s: (str(type(s)), s))
    if not shared and not problems:
        problems.append(f"no seed in common ({c.variant!r}: {', '.join(map(str, ours.index)) or 'none'}; "
                        f"{c.reference!r}: {', '.join(map(str, theirs.index)) or 'none'})")
    row["problem"] = "; ".join(problems)
    if not shared:
        return row
    a, b = ours.loc[shared].to_numpy(), theirs.loc[shared].to_numpy()
    row["seeds"] = ", ".join(map(str, shared))
    if c.test == "paired_variance":
        test = paired_variance_test(a, b)
        row.update(n=test["n"], diff=test["ratio"], p=test["p"], sd=math.nan, sd_a=test["sd_a"], sd_b=test["sd_b"])
        return row
    test = paired_test(a, b)
    spread = mean_ci(a - b)["std"]
    row.update(n=test["n"], diff=test["mean_diff"], ci_low=test["ci_low"], ci_high=test["ci_high"], p=test["p"],
               sd=spread)
    return row


def claims_table(frame: pd.DataFrame, claims: Sequence[Claim], rule: PowerRule | None = None,
                 group: str = "variant", pair_on: str = "seed") -> pd.DataFrame:
    """One row per claim (see the module docstring): the comparison over the seeds both variants
    have, the Holm adjustment within the claim's family, the MDE at α/k and its interval, the
    paper's scaled effect and whether it was detectable, the verdict. ``frame`` has one row per run
    with the ``group`` and ``pair_on`` columns and each claim's metric."""
    rule = rule or PowerRule()
    if not claims:
        raise ValueError("claims_table: no claims")
    frame = pd.DataFrame(frame)
    for column in (group, pair_on):
        if column not in frame:
            raise ValueError(f"claims_table: the runs have no {column!r} column; columns: {list(frame.columns)}")
    table = pd.DataFrame([_test_row(c, frame, group, pair_on) for c in claims])
    table["p_holm"] = math.nan
    testable = np.array([c.testable for c in claims])
    for kind in KINDS:
        members = (table["kind"] == kind).to_numpy()
        if members.any():
            # the family is the one planned before the runs: a testable claim that has no test yet (too
            # few shared seeds) stays in it at p = 1, so a partial record cannot shrink the correction
            p = table.loc[members, "p"].to_numpy(dtype=float)
            pending = np.isnan(p) & testable[members]
            adjusted = holm(np.where(pending, 1.0, p))
            adjusted[np.isnan(p)] = math.nan
            table.loc[members, "p_holm"] = adjusted
    levels, mdes, lows, highs, scaled, detectable, verdicts, needed = [], [], [], [], [], [], [], []
    for (_, r), c in zip(table.iterrows(), claims):
        at = level(c, claims, rule.alpha)
        n = int(r["n"])
        if c.test == "paired_variance":
            mde, low, high = detectable_sd_ratio(n, at, rule.power), math.nan, math.nan
        else:
            mde = minimum_detectable_difference(r["sd"], n, at, rule.power)
            sd_low, sd_high = sd_interval(r["sd"], n)
            low, high = (minimum_detectable_difference(s, n, at, rule.power) for s in (sd_low, sd_high))
        effect = scaled_effect(c, rule) if c.metric == "avg" else math.nan
        # the seeds the target would need with the spread observed here (the plan used the pilot's):
        # what a continuation would run, decided on the spread alone, blind to the difference
        target = target_for(c, rule)
        needed.append(seeds_for(r["sd"], target, at, rule.power, 2, 10 ** 6, search=1000)[1]
                      if c.test == "paired_t" and n >= 2 and math.isfinite(r["sd"]) and math.isfinite(target)
                      else None)
        levels.append(at), mdes.append(mde), lows.append(low), highs.append(high), scaled.append(effect)
        detectable.append(bool(mde <= effect) if math.isfinite(mde) and math.isfinite(effect) else None)
        if not c.testable:
            verdicts.append(f"{NOT_TESTABLE} ({c.reason})")
        elif c.test == "paired_variance":
            verdicts.append(_variance_verdict(r, c, mde, rule.alpha))
        else:
            verdicts.append(verdict(r["diff"], r["p_holm"], mde, c.direction, n, rule.alpha, target))
    table["level"], table["mde"], table["mde_low"], table["mde_high"] = levels, mdes, lows, highs
    table["scaled_effect"], table["paper_detectable"], table["verdict"] = scaled, detectable, verdicts
    table["needed"] = pd.Series(needed, dtype=object)
    sizes = family_sizes(claims)
    table.attrs["families"] = {k: f"Holm over {FAMILY_WORDS[k]} ({sizes[k]}, α = {rule.alpha:g})"
                               for k in KINDS if sizes[k]}
    return table


def _variance_verdict(row, claim: Claim, detectable_ratio: float, alpha: float) -> str:
    if not math.isfinite(row["diff"]):
        return "no runs"
    if math.isnan(row["p_holm"]):
        return f"no test (n {int(row['n'])})"
    if row["p_holm"] < alpha:
        lower = row["diff"] < 1
        return HOLDS if lower == (claim.direction < 0) else REVERSED
    return f"not detected (detects sd ratio ≤ {detectable_ratio:.2f})" if math.isfinite(detectable_ratio) \
        else "not detected"


def tally(table: pd.DataFrame, kind: str = "paper") -> dict[str, int]:
    """How many of a family's claims hold, are reversed, are not detected or not testable."""
    rows = table[table["kind"] == kind]["verdict"]
    return {"claims": len(rows), "holds here": int((rows == HOLDS).sum()), "reversed": int((rows == REVERSED).sum()),
            "not detected": int(rows.str.startswith("not detected").sum()),
            "underpowered": int(rows.str.startswith(UNDERPOWERED).sum()),
            NOT_TESTABLE: int(rows.str.startswith(NOT_TESTABLE).sum()),
            "no test": int(rows.str.startswith(("no runs", "no test")).sum())}


def format_claims(table: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """Text cells for a :func:`claims_table` (one family's rows or all): Δ with n, its interval, both
    p-values, the MDE at α/k with its interval, whether the paper's scaled effect was detectable, the
    verdict."""
    def number(x, d: int = decimals) -> str:
        return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{d}f}"

    def p_text(p) -> str:   # three decimals, and "< 0.001" rather than a p of 0.000
        return number(p, 3) if not (isinstance(p, float) and 0 <= p < 0.0005) else "< 0.001"

    def delta(r) -> str:
        if not math.isfinite(r["diff"]):
            return f"no runs ({r['problem']})" if r["problem"] else "no runs"
        if r["test"] == "paired_variance":
            text = f"sd ratio {r['diff']:.2f} (n {int(r['n'])})"
        elif r["metric"] == "avg":
            text = f"{r['diff']:+.{decimals}f} (n {int(r['n'])})"
        else:
            text = f"{r['diff']:+.3g} {r['metric']} (n {int(r['n'])})"
        return text + (f"; {r['problem']}" if r["problem"] else "")

    def mde(r) -> str:
        if not math.isfinite(r["mde"]):
            return "–"
        if math.isfinite(r.get("mde_low", math.nan)):
            return f"{number(r['mde'])} [{number(r['mde_low'])}, {number(r['mde_high'])}]"
        return number(r["mde"])

    def detectable(r) -> str:
        if r["paper_detectable"] is None or (isinstance(r["paper_detectable"], float)):
            return "–"
        return f"{'yes' if r['paper_detectable'] else 'no'} ({r['scaled_effect']:.2f})"

    def seeds_text(r) -> str:
        need = r.get("needed")
        if need is None or (isinstance(need, float) and math.isnan(need)):
            return "–"
        return f"{int(need)} (has {int(r['n'])})" if need > r["n"] else f"≤ {int(r['n'])} (met)"

    out = pd.DataFrame({
        "claim": table["claim"], "paper": table["paper"],
        "ours: Δ (seeds)": [delta(r) for _, r in table.iterrows()],
        "Δ 95% CI": [f"[{number(r['ci_low'])}, {number(r['ci_high'])}]" if math.isfinite(r["ci_low"]) else "–"
                     for _, r in table.iterrows()],
        "p (paired t)": [p_text(p) for p in table["p"]],
        "p (Holm)": [p_text(p) for p in table["p_holm"]],
        "MDE at α/k [95% CI]": [mde(r) for _, r in table.iterrows()],
        "paper's effect detectable (scaled)": [detectable(r) for _, r in table.iterrows()],
        "seeds for the target MDE": [seeds_text(r) for _, r in table.iterrows()],
        "verdict": table["verdict"]})
    out.attrs = dict(table.attrs)
    return out.set_index("claim")


def claims_from_mappings(entries: Iterable[Mapping]) -> list[Claim]:
    """Claims from plain mappings (a study file's ``claims:`` entries, already checked for keys)."""
    return [Claim(**dict(e)) for e in entries]
