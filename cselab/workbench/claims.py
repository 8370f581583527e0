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
variants have **as one computation** (:func:`paired_seeds`: the same CPU kind, precisions and code
identity, from each run's record line by :func:`computation`; a ``-dirty`` commit on both sides is
never kept: the tree that trained it was not committed, so what ran is unknown; the row says which
seeds were left out and why): the mean
difference, its 95 % t-interval, the paired t-test's p and its Holm adjustment within the family, the
MDE at α/k from the observed spread (with the χ² interval of that spread: three seeds estimate it
poorly), whether the paper's scaled effect was detectable, Δ again in the paper's direction
(``paper_diff``: positive is what the paper says, ``sides`` names which minus which), and a verdict —
*holds here* (adjusted p < α, the paper's sign), *reversed* (adjusted p < α, the other sign), and
for a null one rule for every metric, against the claim's target in its own units
(:func:`target_for`): *not detected, underpowered* where the MDE is above the target, *not detected,
inconclusive* where the MDE at the upper end of the spread's interval is (or the claim has no
target), *not detected (powered …)* only where both are within it. A claim the study file marks,
or whose mechanism check (:func:`mechanism_reading`) measures inert, reads *not testable at this
scale* with the reason; ``untested`` reads *not tested* with the runs it needs; ``decided_in`` takes
the verdict another study's family gave a comparison both share. An **optimum** ("k = 16 is best")
is an intersection–union test: one-sided paired t-tests against both neighbours, p the larger, Δ
the binding comparison's, the sweep's trend (:func:`sweep_trend`) beside it; it reads *reversed*
where the variant is below a neighbour instead (the one-sided test the other way, Bonferroni over
the neighbours, below the claim's level α/k), which the intersection–union test alone cannot say. A variance claim
("lower variance across runs") is tested with the Pitman–Morgan test of paired variances; its MDE
column gives the spread ratio an F-test would detect (:func:`cselab.workbench.results.detectable_sd_ratio`),
its target the paper's own ratio.

Bad frames never crash the table: a claim whose variant has no runs, no shared seeds, no pair of one
computation, duplicate seed rows, non-finite or identical scores gets a "no test: <cause>" row, and the
other claims are tested.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .results import (ALPHA, POWER, detectable_sd_ratio, holm, mean_ci, minimum_detectable_difference,
                      paired_test, paired_variance_test, pairs_for_powered_null, sd_interval, sd_upper_limit,
                      seeds_for, PLANNING_CONFIDENCE)

HOLDS, REVERSED, NOT_TESTABLE = "holds here", "reversed", "not testable at this scale"
# a two-sided claim's verdict when the difference is detected: DETECTED + "(higher)" / "(lower)"
DETECTED = "detected "
UNDERPOWERED = "not detected, underpowered"   # a "not detected" whose MDE is above the claim's target
INCONCLUSIVE = "not detected, inconclusive"   # ... within the target, but not at the spread's upper 95 % bound
NOT_TESTED = "not tested"                     # the study file says what runs the claim needs (e.g. equal data)
DECIDED_IN = "decided in"                     # a comparison two studies share: the other study's family decides
KINDS = ("paper", "check")
TESTS = ("paired_t", "paired_variance", "optimum")
MECHANISM_KEYS = ("statistic", "variant", "at_least", "at_most", "words")
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
    target: float | None = None      # the MDE (or sd ratio) that makes a null powered, in the metric's units
    target_rule: str = ""            # where ``target`` comes from, in words
    neighbours: tuple = ()           # an optimum: the sweep points on either side (``reference`` is the first)
    sweep: tuple = ()                # an optimum: the whole sweep in order, for the trend beside the test
    mechanism: Mapping | None = None # the logged statistic that shows the mechanism acts, and its threshold
    decided_in: str = ""             # a comparison another study's family decides (its study name)
    untested: str = ""               # why it is not tested on these runs (what runs it needs)
    note: str = ""                   # how the runs read the paper's sentence (e.g. "at equal steps")

    def __post_init__(self):
        object.__setattr__(self, "neighbours", tuple(self.neighbours or ()))
        object.__setattr__(self, "sweep", tuple(self.sweep or ()))
        if self.test == "optimum":
            if len(self.neighbours) != 2 or self.direction != 1:
                raise ValueError(f"claim {self.claim!r}: an optimum names its two neighbours (neighbours: [a, b]) "
                                 "and has direction +1 (the variant is the best)")
        elif self.neighbours:
            raise ValueError(f"claim {self.claim!r}: neighbours belong to test: optimum")
        if self.target is not None and not (isinstance(self.target, (int, float)) and self.target > 0):
            raise ValueError(f"claim {self.claim!r}: target must be a positive number, got {self.target!r}")
        if self.mechanism is not None:
            unknown = sorted(set(self.mechanism) - set(MECHANISM_KEYS))
            bounds = [k for k in ("at_least", "at_most") if k in self.mechanism]
            if unknown or "statistic" not in self.mechanism or len(bounds) != 1:
                raise ValueError(f"claim {self.claim!r}: mechanism needs statistic and one of at_least/at_most "
                                 f"(keys {', '.join(MECHANISM_KEYS)}){'; unknown ' + ', '.join(unknown) if unknown else ''}")
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

    @property
    def compared(self) -> tuple[str, ...]:
        """The variants the claim's test compares its ``variant`` with."""
        return self.neighbours if self.test == "optimum" else (self.reference,)

    @property
    def in_family(self) -> bool:
        """Whether the claim is one of its Holm family's tests (the others are read elsewhere, or not at all)."""
        return self.testable and not self.untested and not self.decided_in


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
    # the family sizes the seeds were planned at (0: the claims' own count), so that a claim restated
    # after the runs (two pairs read as one optimum) does not change the runs the plan gave
    planned_claims: int = 0
    planned_checks: int = 0
    alpha: float = ALPHA
    power: float = POWER

    @property
    def seed_space(self) -> int:
        """The highest seed number a continuation may name (twice ``max_seeds``). The cap limits how
        many seeds a claim rests on, not their numbers: seeds of an earlier computation (the legacy
        lines of an uncommitted tree, another CPU kind, the GPU's) hold numbers below the cap that buy
        no pair on this one, and a label is trained once per record."""
        return 2 * self.max_seeds

    def __post_init__(self):
        if not (self.target > 0 and self.prior_sd > 0 and 0 < self.alpha < 1 and 0 < self.power < 1):
            raise ValueError(f"power: target, prior_sd > 0 and alpha, power in (0, 1) expected, got {self}")
        if not 2 <= self.min_seeds <= self.max_seeds:
            raise ValueError(f"power: need 2 <= min_seeds <= max_seeds, got {self.min_seeds} and {self.max_seeds}")
        if self.check_seeds < 2:
            raise ValueError(f"power: check_seeds must be at least 2, got {self.check_seeds}")


def family_sizes(claims: Sequence[Claim]) -> dict[str, int]:
    """The number of claims in each family (``paper``, ``check``) that can be tested."""
    return {kind: sum(c.kind == kind and c.in_family for c in claims) for kind in KINDS}


def level(claim: Claim, claims: Sequence[Claim], alpha: float = ALPHA) -> float:
    """α/k: the level the claim's p must clear at Holm's first step in its family of k."""
    return alpha / max(1, family_sizes(claims)[claim.kind])


def plan_level(claim: Claim, claims: Sequence[Claim], rule: "PowerRule") -> float:
    """The level the plan powered the claim at: α over the family size the seeds were planned at
    (the rule's ``planned_claims``/``planned_checks``, else every claim the study tests or plans runs
    for: only a claim marked not testable is outside)."""
    planned = rule.planned_claims if claim.kind == "paper" else rule.planned_checks
    k = planned or sum(c.kind == claim.kind and c.testable for c in claims)
    return rule.alpha / max(1, k)


def scaled_effect(claim: Claim, rule: PowerRule) -> float:
    """The paper's effect on this backbone (``scale`` × ``paper_effect``; NaN without either)."""
    if claim.paper_effect is None or not rule.scale:
        return math.nan
    return abs(claim.paper_effect) * rule.scale


def target_for(claim: Claim, rule: PowerRule) -> float:
    """The MDE the plan aims at, in the claim's own units: the claim's ``target`` where the study file
    gives one (AMI points, an sd ratio: the paper's own where it prints one); else, for the STS
    average, the larger of the rule's target and the scaled paper effect; else none (NaN)."""
    if claim.target is not None:
        return float(claim.target)
    if claim.metric != "avg" or claim.test == "paired_variance":
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
               "neighbours": list(c.neighbours),
               "metric": c.metric, "level": plan_level(c, claims, rule), "sd": math.nan, "sd_source": "",
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
            if observed and c.claim in observed:   # sized on the spread's upper limit, not its point estimate
                seen, n = observed[c.claim]
                sd = sd_upper_limit(seen, n)
                row.update(sd=sd, sd_source=f"{PLANNING_CONFIDENCE:.0%} upper limit of {seen:.3f} observed over {n} seeds")
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
        # the runs stay planned, the verdict is read elsewhere or not at all: said beside the plan
        extra = (f"verdict from {c.decided_in}" if c.decided_in else f"{NOT_TESTED}: {c.untested}" if c.untested
                 else "an optimum: planned as a paired test against each neighbour" if c.test == "optimum" else "")
        row["note"] = "; ".join(x for x in (row["note"], extra) if x)
        rows.append(row)
    return pd.DataFrame(rows)


def seeds_per_variant(plan: pd.DataFrame, rule: PowerRule) -> dict[str, int]:
    """The seeds each variant needs: the most any of its claims plans (both sides of a paired
    comparison need the seeds)."""
    out: dict[str, int] = {}
    for _, row in plan.iterrows():
        for variant in dict.fromkeys((row["variant"], row["reference"], *row.get("neighbours", []))):
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
            target: float = math.nan, mde_high: float = math.nan, problem: str = "",
            powered_at: int | None = None) -> str:
    """The words of one row (see the module docstring). One rule for every metric: a "not detected" is
    *underpowered* where its MDE is above the claim's ``target`` (the runs could not have detected
    it), *inconclusive* where the MDE at the upper end of the spread's 95 % interval (``mde_high``) is
    above it or the claim has no target, and powered only where both are within it. An inconclusive
    row says how many pairs a powered null would take at this spread (``powered_at``,
    :func:`~cselab.workbench.results.pairs_for_powered_null`): what a continuation would have to buy."""
    if diff is None or not math.isfinite(diff):
        return f"no test: {problem}" if problem else "no runs"
    if p_adjusted is None or math.isnan(p_adjusted):
        if n < 2:
            return f"no test: {problem}" if problem else f"no test (n {int(n)})"
        return "no test (identical differences)"
    if p_adjusted < alpha:
        if direction == 0:
            return DETECTED + ("(higher)" if diff > 0 else "(lower)")
        return HOLDS if math.copysign(1, diff) == direction else REVERSED
    if not math.isfinite(mde):
        return "not detected"
    if not math.isfinite(target):
        return f"{INCONCLUSIVE} (MDE {_number(mde)}; no target in these units)"
    if mde > target:
        return f"{UNDERPOWERED} (MDE {_number(mde)} > target {_number(target)})"
    if not math.isfinite(mde_high) or mde_high > target:
        needs = (f"; a powered null needs {powered_at} pairs at this spread" if powered_at and powered_at > n
                 else "")
        return (f"{INCONCLUSIVE} (MDE {_number(mde)}, {_number(mde_high)} at the spread's upper 95 % bound > "
                f"target {_number(target)}{needs})")
    return f"not detected (powered: MDE ≤ {_number(mde_high)} ≤ target {_number(target)})"


def _number(x: float) -> str:
    """Two decimals, or two significant digits for a number below 0.1 (an MDE in small units)."""
    return f"{x:.2f}" if abs(x) >= 0.1 or x == 0 else f"{x:.2g}"


# ------------------------------------------------------------------- pairs of one computation
# A paired difference over seeds assumes the two runs of seed s computed the same way except for the
# change under test. Each run's computation is named by three columns of the frame (filled from its
# record line by :func:`with_computation`); a frame without them (a notebook's own runs) pairs every seed.
COMPUTATION = ("cpu", "precision", "code")
COMPUTATION_WORDS = {"cpu": "CPU kinds", "precision": "precisions", "code": "code identities"}
CODE_FINGERPRINT = "code_fingerprint"   # the record key of the training code's hash (newer lines)
UNVERIFIED = "-dirty"                   # a commit from an uncommitted tree: the code that ran is unknown
UNKNOWN_CODE = "code unknown (a -dirty commit without a code fingerprint)"


def computation_fields(record: Mapping) -> dict[str, str]:
    """The computation a record line ran, for a frame without a record reader above it (the studies
    side's ``cselab.workbench.studies.record.computation`` is the one the findings use): its CPU kind (torch's capability and what makes bf16 native
    there), its precisions (training/evaluation) and its code identity (the code fingerprint where the
    line has one, else the ``commit`` string of the legacy lines)."""
    cpu, execution = record.get("cpu") or {}, record.get("execution") or {}
    return {"cpu": f"{cpu.get('capability', '?')}/{cpu.get('native_bf16', '?')}",
            "precision": f"{execution.get('precision', '?')}/{execution.get('eval_precision', '?')}",
            "code": str(record.get(CODE_FINGERPRINT) or record.get("commit") or "?")}


def with_computation(frame: pd.DataFrame, records: Iterable[Mapping], of=None) -> pd.DataFrame:
    """``frame`` (one row per record, a ``label`` column) with the :data:`COMPUTATION` columns, each
    record's from ``of`` (a record → a mapping with those keys; default :func:`computation_fields`)."""
    of = of or computation_fields
    known = {r["label"]: of(r) for r in records}
    out = frame.copy()
    for key in COMPUTATION:
        out[key] = [known.get(label, {}).get(key, "?") for label in out["label"]] if len(out) else []
    return out


def _short(value: str) -> str:
    """A commit or fingerprint to 7 characters (its ``-dirty`` kept); other values whole."""
    value = value.removeprefix("commit:")   # the record reader names a legacy line's code by its commit
    base, dirty = (value[:-len(UNVERIFIED)], UNVERIFIED) if value.endswith(UNVERIFIED) else (value, "")
    return (base[:7] if len(base) >= 20 and all(c in "0123456789abcdef" for c in base) else base) + dirty


def same_computation(a: Mapping, b: Mapping) -> str:
    """Why the runs ``a`` and ``b`` (rows with the :data:`COMPUTATION` keys) are not one computation
    (e.g. "CPU kinds differ (AVX512/amx vs AVX512/avx512_bf16)"), or "" when they are. A legacy line
    whose code is a ``-dirty`` commit is one computation with nothing, itself included: the same
    string on both sides names two uncommitted trees whose contents nobody recorded."""
    if any(str(r.get("code", "")).endswith(UNVERIFIED) for r in (a, b) if "code" in r):
        return UNKNOWN_CODE
    for key in COMPUTATION:
        if key in a and key in b and a[key] != b[key]:
            return f"{COMPUTATION_WORDS[key]} differ ({_short(str(a[key]))} vs {_short(str(b[key]))})"
    return ""


def paired_seeds(ours: pd.DataFrame, theirs: pd.DataFrame) -> tuple[list, dict[str, list]]:
    """The pairing rule: ``(kept, left_out)`` over the seeds both frames have (each indexed by seed): a
    seed is kept only where its two runs are one computation (:func:`same_computation`); ``left_out``
    maps each reason to its seeds."""
    shared = sorted(set(ours.index) & set(theirs.index), key=lambda s: (str(type(s)), s))
    kept, left_out = [], {}
    for seed in shared:
        a, b = ours.loc[seed], theirs.loc[seed]
        why = same_computation(a, b)
        if why:
            left_out.setdefault(why, []).append(seed)
            continue
        kept.append(seed)
    return kept, left_out


def _runs_of(frame: pd.DataFrame, group: str, pair_on: str, variant: str, metric: str) -> tuple[pd.DataFrame, str]:
    """A variant's runs indexed by seed (``value``: the metric, and the computation columns present),
    or an empty frame and why; seeds whose metric is not a finite number are left out, and said."""
    rows = frame[frame[group] == variant]
    if rows.empty:
        return pd.DataFrame(columns=["value"]), f"no runs of {variant!r}"
    seeds = rows[pair_on]
    duplicated = sorted({str(s) for s in seeds[seeds.duplicated()]})
    if duplicated:
        return pd.DataFrame(columns=["value"]), f"{variant!r} has several runs of seed(s) {', '.join(duplicated)}"
    values = pd.to_numeric(rows[metric], errors="coerce").to_numpy(dtype=float)
    out = pd.DataFrame({"value": values, **{k: rows[k].to_numpy() for k in COMPUTATION if k in rows}},
                       index=seeds.to_numpy())
    finite = np.isfinite(values)
    if not finite.all():
        bad = ", ".join(str(s) for s in out.index[~finite])
        return out[finite], f"{variant!r}: {metric} is not a finite number for seed(s) {bad} (left out)"
    return out, ""


def _left_out_words(left_out: Mapping[str, list]) -> str:
    return "; ".join(f"seed{'s' * (len(seeds) > 1)} {', '.join(map(str, seeds))}: {why}"
                     for why, seeds in left_out.items())


def _pair(c: Claim, frame: pd.DataFrame, group: str, pair_on: str, reference: str) -> dict:
    """One comparison of the claim's variant with ``reference``: the kept pairs' values and why seeds
    were left out."""
    ours, why_ours = _runs_of(frame, group, pair_on, c.variant, c.metric)
    theirs, why_theirs = _runs_of(frame, group, pair_on, reference, c.metric)
    problems = [w for w in (why_ours, why_theirs) if w]
    kept, left_out = paired_seeds(ours, theirs)
    shared = len(kept) + sum(len(s) for s in left_out.values())
    if not shared and not problems:
        problems.append(f"no seed in common ({c.variant!r}: {', '.join(map(str, ours.index)) or 'none'}; "
                        f"{reference!r}: {', '.join(map(str, theirs.index)) or 'none'})")
    elif len(kept) < 2 and left_out:   # too few pairs left for a test: say which seeds went and why
        problems.append(f"{'no pair' if not kept else 'only 1 pair'} of one computation "
                        f"({_left_out_words(left_out)})")
    return {"a": ours.loc[kept, "value"].to_numpy(dtype=float), "b": theirs.loc[kept, "value"].to_numpy(dtype=float),
            "kept": kept, "shared": shared, "left_out": left_out, "problems": problems}


def _test_row(c: Claim, frame: pd.DataFrame, group: str, pair_on: str) -> dict:
    row = {"claim": c.claim, "kind": c.kind, "paper": c.paper, "variant": c.variant, "reference": c.reference,
           "metric": c.metric, "test": c.test, "direction": c.direction, "n": 0, "seeds": "", "diff": math.nan,
           "ci_low": math.nan, "ci_high": math.nan, "p": math.nan, "sd": math.nan, "problem": "", "shared": 0,
           "left_out": "", "against": c.reference, "trend": "", "note": c.note}
    # a claim another study decides keeps its numbers here (the same runs): only its verdict is read there
    if not c.testable or c.untested:
        row["problem"] = c.reason or c.untested
        return row
    if c.metric not in frame:
        row["problem"] = f"no {c.metric!r} scores in the record"
        return row
    parts = {other: _pair(c, frame, group, pair_on, other) for other in c.compared}
    row["problem"] = "; ".join(dict.fromkeys(f"{'vs ' + other + ': ' if len(parts) > 1 else ''}{w}"
                                             for other, part in parts.items() for w in part["problems"]))
    row["left_out"] = "; ".join(f"{'vs ' + other + ': ' if len(parts) > 1 else ''}{_left_out_words(part['left_out'])}"
                                for other, part in parts.items() if part["left_out"])
    if c.test == "optimum":
        row["trend"] = sweep_trend(frame, group, c.sweep or (c.neighbours[0], c.variant, c.neighbours[1]), c.metric)
        return _optimum(row, parts)
    part = parts[c.reference]
    row.update(shared=part["shared"])
    if not part["kept"]:
        return row
    a, b = part["a"], part["b"]
    row["seeds"] = ", ".join(map(str, part["kept"]))
    if c.test == "paired_variance":
        test = paired_variance_test(a, b)
        if not (test["sd_a"] > 0 and test["sd_b"] > 0):
            row["problem"] = "; ".join(filter(None, [row["problem"], "identical scores across seeds (no spread)"]))
            row.update(n=test["n"])
            return row
        row.update(n=test["n"], diff=test["ratio"], p=test["p"], sd=math.nan, sd_a=test["sd_a"], sd_b=test["sd_b"])
        return row
    test = paired_test(a, b)
    row.update(n=test["n"], diff=test["mean_diff"], ci_low=test["ci_low"], ci_high=test["ci_high"], p=test["p"],
               sd=mean_ci(a - b)["std"])
    return row


def _optimum(row: dict, parts: Mapping[str, dict]) -> dict:
    """The intersection–union test of an optimum: the variant beats each neighbour in a one-sided paired
    t-test (scipy), and the claim's p is the larger of the two; Δ, its interval, n and the spread are
    those of the binding comparison (the larger p)."""
    from scipy import stats

    tests = {}
    for other, part in parts.items():
        if len(part["kept"]) < 2:
            tests[other] = None
            continue
        a, b = part["a"], part["b"]
        p = float(stats.ttest_rel(a, b, alternative="greater").pvalue)
        tests[other] = {"p": p if math.isfinite(p) else math.nan, "test": paired_test(a, b),
                        "sd": mean_ci(a - b)["std"], "part": part}
    if any(t is None for t in tests.values()):
        if not row["problem"]:
            row["problem"] = "fewer than 2 pairs against " + ", ".join(o for o, t in tests.items() if t is None)
        return row
    binding = max(tests, key=lambda o: -1 if math.isnan(tests[o]["p"]) else tests[o]["p"])
    t = tests[binding]
    # the contrary: the variant *below* some neighbour (one-sided, Bonferroni over the neighbours), which
    # the intersection-union test cannot say; the verdict reads it against the claim's level α/k
    below = {o: float(stats.ttest_rel(x["part"]["a"], x["part"]["b"], alternative="less").pvalue)
             for o, x in tests.items()}
    worst = min(below, key=lambda o: below[o] if math.isfinite(below[o]) else 1.0)
    row["p_below"] = below[worst]   # the one-sided p against that neighbour; p_contrary its Bonferroni over the neighbours
    row["p_contrary"] = min(1.0, len(below) * below[worst]) if math.isfinite(below[worst]) else math.nan
    row["contrary_against"] = worst
    row.update(n=t["test"]["n"], diff=t["test"]["mean_diff"], ci_low=t["test"]["ci_low"],
               ci_high=t["test"]["ci_high"], p=max(x["p"] for x in tests.values()), sd=t["sd"],
               against=binding, shared=t["part"]["shared"],
               seeds=", ".join(map(str, t["part"]["kept"])))
    row["each"] = "; ".join(f"vs {o}: {x['test']['mean_diff']:+.2f} (one-sided p {x['p']:.3g}, n {x['test']['n']})"
                            for o, x in tests.items())
    return row


def sweep_trend(frame: pd.DataFrame, group: str, sweep: Sequence[str], metric: str) -> str:
    """The trend across a sweep, beside an optimum's test: each point's mean over its seeds, and the
    least-squares slope of the score on the point's position with its p (scipy's linregress over
    every run: descriptive, it ignores the pairing)."""
    from scipy import stats

    xs, ys, means = [], [], []
    for position, variant in enumerate(sweep):
        values = pd.to_numeric(frame.loc[frame[group] == variant, metric], errors="coerce").dropna()
        values = values[np.isfinite(values)]
        if values.empty:
            return ""
        means.append(f"{variant} {values.mean():.2f}")
        xs += [position] * len(values)
        ys += values.tolist()
    if len(set(xs)) < 3:
        return ""
    fit = stats.linregress(xs, ys)
    return f"{' → '.join(means)}; slope {fit.slope:+.2f} a step (p {fit.pvalue:.2g})"


def mechanism_reading(claim: Claim, values: Sequence[float]) -> str:
    """The measurement that makes a claim *not testable at this scale*, or "" when its mechanism acts:
    the mean over seeds of the study file's statistic against its threshold (``at_least``/``at_most``),
    decided before the runs. No values: "" (nothing measured is no evidence of an inert mechanism)."""
    m = claim.mechanism or {}
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not m or not finite:
        return ""
    mean = float(np.mean(finite))
    bound, at_least = (m["at_least"], True) if "at_least" in m else (m["at_most"], False)
    if (mean >= bound) if at_least else (mean <= bound):
        return ""
    words = m.get("words") or m["statistic"]
    return (f"{words}: {_number(mean)} over {len(finite)} seeds of {m.get('variant') or claim.variant}, "
            f"{'below' if at_least else 'above'} the {_number(bound)} the mechanism needs")


def mechanism_readings(claims: Sequence[Claim], records: Iterable[Mapping]) -> dict[str, str]:
    """``{claim: measurement}`` for each claim whose mechanism check finds the mechanism inert: the
    study file's ``statistic`` (``part:key`` of a record line, e.g. ``train:loss/clusterns.bml``), its
    mean over each run's second half of logged steps (what the mechanism did once it had started),
    over the runs of the check's variant (:func:`mechanism_reading`)."""
    records = list(records)
    out = {}
    for claim in claims:
        if not claim.mechanism:
            continue
        variant = claim.mechanism.get("variant") or claim.variant
        part, _, key = claim.mechanism["statistic"].partition(":")
        values = []
        for r in records:
            column = [v for v in ((r.get(part) or {}).get(key) or []) if isinstance(v, (int, float))]
            if r.get("variant") == variant and column:
                values.append(float(np.mean(column[len(column) // 2:])))
        reading = mechanism_reading(claim, values)
        if reading:
            out[claim.claim] = reading
    return out


def claims_table(frame: pd.DataFrame, claims: Sequence[Claim], rule: PowerRule | None = None,
                 group: str = "variant", pair_on: str = "seed", inert: Mapping[str, str] | None = None,
                 decided: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per claim (see the module docstring): the comparison over the seeds both variants
    have as one computation (:func:`paired_seeds`), the Holm adjustment within the claim's family, the
    MDE at α/k and its interval, the paper's scaled effect and whether it was detectable, the
    verdict. ``frame`` has one row per run with the ``group`` and ``pair_on`` columns and each
    claim's metric (and the :data:`COMPUTATION` columns, where known). ``inert``: ``{claim: the
    measurement}`` of claims whose mechanism check failed (:func:`mechanism_reading`): they read *not
    testable at this scale* and leave the family; ``decided``: ``{claim: the verdict}`` that another
    study's family gave a comparison the claim shares (``decided_in``)."""
    from dataclasses import replace

    rule = rule or PowerRule()
    if not claims:
        raise ValueError("claims_table: no claims")
    frame = pd.DataFrame(frame)
    for column in (group, pair_on):
        if column not in frame:
            raise ValueError(f"claims_table: the runs have no {column!r} column; columns: {list(frame.columns)}")
    claims = [replace(c, testable=False, reason=inert[c.claim]) if (inert or {}).get(c.claim) else c for c in claims]
    table = pd.DataFrame([_test_row(c, frame, group, pair_on) for c in claims])
    table["p_holm"] = math.nan
    testable = np.array([c.in_family for c in claims])
    for kind in KINDS:
        members = (table["kind"] == kind).to_numpy() & testable
        if members.any():
            # the family is the one planned before the runs: a testable claim that has no test yet (too
            # few shared seeds) stays in it at p = 1, so a partial record cannot shrink the correction
            p = table.loc[members, "p"].to_numpy(dtype=float)
            adjusted = holm(np.where(np.isnan(p), 1.0, p))
            adjusted[np.isnan(p)] = math.nan
            table.loc[members, "p_holm"] = adjusted
    levels, mdes, lows, highs, scaled, detectable, verdicts, needed, targets = [], [], [], [], [], [], [], [], []
    for (_, r), c in zip(table.iterrows(), claims):
        at = level(c, claims, rule.alpha)
        n = int(r["n"])
        # an optimum's tests are one-sided at α/k: the critical value of a two-sided test at 2α/k (the
        # other tail's share of the power is negligible)
        at_power = 2 * at if c.test == "optimum" else at
        if c.test == "paired_variance":
            mde, low, high = detectable_sd_ratio(n, at, rule.power), math.nan, math.nan
        else:
            mde = minimum_detectable_difference(r["sd"], n, at_power, rule.power)
            sd_low, sd_high = sd_interval(r["sd"], n)
            low, high = (minimum_detectable_difference(s, n, at_power, rule.power) for s in (sd_low, sd_high))
        effect = scaled_effect(c, rule) if c.metric == "avg" else math.nan
        # the seeds the target would need with the spread observed here (the plan used the pilot's):
        # what a continuation would run, decided on the spread alone, blind to the difference
        target = target_for(c, rule)
        needed.append(seeds_for(r["sd"], target, at_power, rule.power, 2, 10 ** 6, search=1000)[1]
                      if c.test != "paired_variance" and n >= 2 and math.isfinite(r["sd"]) and math.isfinite(target)
                      else None)
        levels.append(at), mdes.append(mde), lows.append(low), highs.append(high), scaled.append(effect)
        targets.append(target)
        detectable.append(bool(mde <= effect) if math.isfinite(mde) and math.isfinite(effect) else None)
        if not c.testable:
            verdicts.append(f"{NOT_TESTABLE} ({c.reason})")
        elif c.untested:
            verdicts.append(f"{NOT_TESTED}: {c.untested}")
        elif c.decided_in:
            verdicts.append(f"{DECIDED_IN} {c.decided_in}" + (f": {decided[c.claim]}" if c.claim in (decided or {})
                                                              else ""))
        elif c.test == "paired_variance":
            verdicts.append(_variance_verdict(r, c, mde, rule.alpha, target))
        else:
            words = verdict(r["diff"], r["p_holm"], mde, c.direction, n, rule.alpha, target, high,
                            r["problem"], pairs_for_powered_null(r["sd"], target, at_power, rule.power)
                            if n >= 2 and math.isfinite(target) else None)
            contrary = r.get("p_contrary", math.nan)
            if c.test == "optimum" and words.startswith("not detected") and isinstance(contrary, float) \
                    and contrary < at:   # "k = 16 is best" while k = 16 is below a neighbour: the claim is reversed
                words = (f"{REVERSED} (below {r['contrary_against']}: one-sided p {r['p_below']:.2g}, "
                         f"× {len(c.neighbours)} neighbours = {contrary:.2g} < α/k {at:.3g})")
            verdicts.append(words)
    table["level"], table["mde"], table["mde_low"], table["mde_high"] = levels, mdes, lows, highs
    table["scaled_effect"], table["paper_detectable"], table["verdict"] = scaled, detectable, verdicts
    table["target"] = targets
    table["needed"] = pd.Series(needed, dtype=object)
    # Δ in the paper's direction: positive is what the paper says (a check without a sign: variant − reference)
    sign = np.where(table["direction"].to_numpy() == -1, -1.0, 1.0)
    sign = np.where(table["test"].to_numpy() == "paired_variance", 1.0, sign)
    table["paper_diff"] = sign * table["diff"]
    table["paper_ci_low"] = np.where(sign > 0, table["ci_low"], -table["ci_high"])
    table["paper_ci_high"] = np.where(sign > 0, table["ci_high"], -table["ci_low"])
    table["sides"] = [f"{r['reference']} − {r['variant']}" if s < 0 else f"{r['variant']} − {r['against']}"
                      for s, (_, r) in zip(sign, table.iterrows())]
    sizes = family_sizes(claims)
    # every family that has rows gets its words, even one with no claim left to test (all read
    # elsewhere or not testable): the pages print a heading per family
    table.attrs["families"] = {k: f"Holm over {FAMILY_WORDS[k]} ({sizes[k]}, α = {rule.alpha:g})"
                               for k in KINDS if (table["kind"] == k).any()}
    return table


def _variance_verdict(row, claim: Claim, detectable_ratio: float, alpha: float, target: float = math.nan) -> str:
    """The variance claim's words: the sd ratio it would detect against its target ratio (the paper's
    own): a null is powered only where the runs detect a ratio as close to 1 as the target."""
    if not math.isfinite(row["diff"]):
        return f"no test: {row['problem']}" if row["problem"] else "no runs"
    if math.isnan(row["p_holm"]):
        return f"no test (n {int(row['n'])})"
    if row["p_holm"] < alpha:
        lower = row["diff"] < 1
        return HOLDS if lower == (claim.direction < 0) else REVERSED
    if not math.isfinite(detectable_ratio):
        return "not detected"
    if not math.isfinite(target):
        return f"{INCONCLUSIVE} (detects sd ratio ≤ {detectable_ratio:.2f}; no target ratio)"
    if detectable_ratio < target:
        return f"{UNDERPOWERED} (detects sd ratio ≤ {detectable_ratio:.2f} < target {target:.2f})"
    return f"not detected (powered: detects sd ratio ≤ {detectable_ratio:.2f}, target {target:.2f})"


def tally(table: pd.DataFrame, kind: str = "paper") -> dict[str, int]:
    """How many of a family's claims hold, are reversed, are not detected (underpowered, inconclusive),
    not testable at this scale, without a test (no runs, no pairs, not tested) or decided elsewhere."""
    rows = table[table["kind"] == kind]["verdict"]
    # an optimum's reversal carries its test in words ("reversed (below k8: ...)"): counted by its start
    return {"claims": len(rows), "holds here": int(rows.str.startswith(HOLDS).sum()),
            "reversed": int(rows.str.startswith(REVERSED).sum()),
            "not detected": int(rows.str.startswith("not detected").sum()),
            "underpowered": int(rows.str.startswith(UNDERPOWERED).sum()),
            "inconclusive": int(rows.str.startswith(INCONCLUSIVE).sum()),
            NOT_TESTABLE: int(rows.str.startswith(NOT_TESTABLE).sum()),
            "no test": int(rows.str.startswith(("no runs", "no test", NOT_TESTED)).sum()),
            "elsewhere": int(rows.str.startswith(DECIDED_IN).sum())}


def verdict_class(verdict: str) -> str:
    """One verdict's group, as :func:`tally` counts them: holds, reversed, powered null, underpowered,
    inconclusive, not testable, no test (no runs, no pairs, not tested; decided elsewhere too). A
    two-sided claim ("λ 0.1 differs from λ 0.2") that is ``detected (higher|lower)`` holds."""
    for prefix, name in ((UNDERPOWERED, "underpowered"), (INCONCLUSIVE, "inconclusive"), (HOLDS, "holds"),
                         (REVERSED, "reversed"), (NOT_TESTABLE, "not testable"), (DETECTED, "holds")):
        if verdict.startswith(prefix):
            return name
    if verdict.startswith("not detected"):
        return "powered null"
    return "no test"


def format_claims(table: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """Text cells for a :func:`claims_table` (one family's rows or all), verdict first: the verdict,
    Δ in the paper's direction (positive: as the paper says; which variant minus which is said) with
    its interval, n (pairs kept of those shared), then the paper's
    words, both p-values, the MDE at α/k with its interval against the claim's target, whether the
    paper's scaled effect was detectable, the seeds the target needs, the seeds left out and why, and
    a note (an optimum's two tests and the trend across its sweep)."""
    def number(x, d: int = decimals) -> str:
        return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{d}f}"

    def p_text(p) -> str:   # three decimals, and "< 0.001" rather than a p of 0.000
        return number(p, 3) if not (isinstance(p, float) and 0 <= p < 0.0005) else "< 0.001"

    def delta(r) -> str:
        if not math.isfinite(r["diff"]):
            return "–"
        if r["test"] == "paired_variance":
            return f"sd ratio {r['diff']:.2f} ({r['variant']} / {r['reference']})"
        d = decimals if r["metric"] == "avg" else 3
        interval = (f" [{r['paper_ci_low']:.{d}f}, {r['paper_ci_high']:.{d}f}]"
                    if math.isfinite(r["paper_ci_low"]) else "")
        unit = "" if r["metric"] == "avg" else f" {r['metric']}"
        return f"{r['paper_diff']:+.{d}f}{interval}{unit} ({r['sides']})"

    def n_text(r) -> str:
        if not r["shared"]:
            return "–"
        return f"{int(r['n'])} of {int(r['shared'])}" if r["n"] != r["shared"] else f"{int(r['n'])}"

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

    def note(r) -> str:
        parts = [r.get("note") or "", r.get("each") if isinstance(r.get("each"), str) else "",
                 f"trend: {r['trend']}" if r.get("trend") else "",
                 r["problem"] if r["problem"] and math.isfinite(r["diff"]) else ""]
        return "; ".join(p for p in parts if p) or "–"

    rows = list(table.iterrows())
    out = pd.DataFrame({
        "claim": table["claim"], "verdict": table["verdict"],
        "Δ as the paper says [95% CI]": [delta(r) for _, r in rows],
        "n (pairs kept)": [n_text(r) for _, r in rows],
        "paper": table["paper"],
        "p": [p_text(p) for p in table["p"]],
        "p (Holm)": [p_text(p) for p in table["p_holm"]],
        "MDE at α/k [95% CI]": [mde(r) for _, r in rows],
        "target": [number(t) for t in table["target"]],
        "paper's effect detectable (scaled)": [detectable(r) for _, r in rows],
        "seeds for the target MDE": [seeds_text(r) for _, r in rows],
        "seeds left out": [r["left_out"] or "–" for _, r in rows],
        "note": [note(r) for _, r in rows]})
    if (out["paper's effect detectable (scaled)"] == "–").all():   # no scale (the cpu studies dropped theirs)
        out = out.drop(columns="paper's effect detectable (scaled)")
    out.attrs = dict(table.attrs)
    return out.set_index("claim")


def claims_from_mappings(entries: Iterable[Mapping]) -> list[Claim]:
    """Claims from plain mappings (a study file's ``claims:`` entries, already checked for keys)."""
    return [Claim(**dict(e)) for e in entries]
