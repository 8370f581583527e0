"""A study file's claims, power rule, record extras and record figures (the ``claims:``, ``power:``,
``record_extras:`` and ``record_figures:`` keys), checked with file and line, and the seeds the
power plan gives the run groups whose ``seeds`` is ``plan``.

The claims are fixed here, before any run: the paper's (``kind: paper``, one Holm family per study
profile) and the workbench's own checks (``kind: check``, a family of their own). Their statistics
live in :mod:`cselab.workbench.claims`; this module only reads them from the file.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from ..claims import Claim, PowerRule, power_plan, seeds_per_variant
from .study_file import StudyError, as_list, check_keys, profile_entries

CLAIM_KEYS = ("claim", "variant", "reference", "paper", "direction", "metric", "kind", "paper_effect", "pilot_sd",
              "pilot", "test", "testable", "reason", "profiles", "target", "target_rule", "neighbours", "sweep",
              "mechanism", "decided_in", "untested", "note")
POWER_KEYS = tuple(f.name for f in fields(PowerRule))
EXTRA_KEYS = ("extra", "variants", "options", "profiles")
FIGURE_KEYS = ("name", "kind", "title", "x", "y", "points", "series", "variants", "part", "key", "keys", "profiles",
               "hue", "method", "scale", "x_key", "y_key", "untuned", "note", "together")
FIGURE_KINDS = ("sweep", "curves", "grouped", "plane", "profile")   # profile: a per-layer probe statistic
PLAN = "plan"


@dataclass
class RecordExtra:
    """An evaluation a record keeps beside the training's own numbers (computed at record time)."""
    extra: str
    variants: list[str]
    options: dict = field(default_factory=dict)


@dataclass
class RecordFigure:
    """A seed-level figure drawn from the record alone (see cselab.workbench.paper_tables.record_report)."""
    name: str
    kind: str
    spec: dict


@dataclass
class ClaimsSpec:
    claims: list[Claim] = field(default_factory=list)
    rule: PowerRule | None = None
    extras: list[RecordExtra] = field(default_factory=list)
    figures: list[RecordFigure] = field(default_factory=list)

    observed: dict = field(default_factory=dict)   # re-planning: {claim: (sd, n)} from the record so far

    def plan(self):
        return power_plan(self.claims, self.rule, self.observed or None) if self.claims and self.rule else None

    def planned_seeds(self) -> dict[str, int]:
        plan = self.plan()
        return seeds_per_variant(plan, self.rule) if plan is not None else {}


def _items(path, text: str, data: dict, key: str, allowed: tuple, what: str, profile: str, known: list[str]):
    entries = data.get(key) or []
    if not isinstance(entries, list):
        raise StudyError(f"{path}: {key}: expected a list of {what}s")
    for where, entry in profile_entries(path, text, key, entries, allowed, what, profile, known):
        yield where, {k: v for k, v in entry.items() if k != "profiles"}


def _rule(path, data: dict, profile: str) -> PowerRule | None:
    power = data.get("power") or {}
    if not isinstance(power, dict):
        raise StudyError(f"{path}: power: expected a mapping of profile → power rule")
    settings = power.get(profile)
    if settings is None:
        return None
    check_keys(f"{path}: power: {profile}", settings, POWER_KEYS, "a power rule")
    try:
        return PowerRule(**settings)
    except (TypeError, ValueError) as e:
        raise StudyError(f"{path}: power: {profile}: {e}") from None


def read_claims_spec(path, data: dict, text: str, profile: str, known: list[str], variants: set[str]) -> ClaimsSpec:
    """The claims, power rule, record extras and record figures of ``profile``; every variant they
    name must be a run group of the profile (``variants``: the run labels without their seed)."""
    spec = ClaimsSpec(rule=_rule(path, data, profile))

    def need_variant(where: str, name, what: str) -> str:
        if not isinstance(name, str) or name not in variants:
            raise StudyError(f"{where}: {what} {name!r} is not a run group of profile {profile!r} "
                             f"(its groups: {', '.join(sorted(variants))})")
        return name

    for where, entry in _items(path, text, data, "claims", CLAIM_KEYS, "claim", profile, known):
        for key in ("claim", "variant", "reference"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise StudyError(f"{where}: claim: {key}: expected a non-empty text, got {entry.get(key)!r}")
        need_variant(where, entry["variant"], "variant")
        need_variant(where, entry["reference"], "reference")
        for key in ("neighbours", "sweep"):
            if key in entry:
                as_list(f"{where}: {key}", entry[key], str, "run groups")
                for name in entry[key]:
                    need_variant(where, name, key[:-1] if key == "neighbours" else "sweep point")
        mechanism = entry.get("mechanism")
        if mechanism is not None and not isinstance(mechanism, dict):
            raise StudyError(f"{where}: mechanism: expected a mapping (statistic, at_least or at_most, variant, words)")
        if mechanism and mechanism.get("variant") is not None:
            need_variant(where, mechanism["variant"], "mechanism variant")
        if "decided_in" in entry and (not isinstance(entry["decided_in"], str)
                                      or entry["decided_in"] == Path(str(path)).stem):
            raise StudyError(f"{where}: decided_in: expected another study's name, got {entry['decided_in']!r}")
        try:
            spec.claims.append(Claim(**entry))
        except (TypeError, ValueError) as e:
            raise StudyError(f"{where}: {e}") from None
    if spec.claims and spec.rule is None:
        raise StudyError(f"{path}: claims of profile {profile!r} need a power rule (power: {{{profile}: ...}})")
    for where, entry in _items(path, text, data, "record_extras", EXTRA_KEYS, "record extra", profile, known):
        names = entry.get("variants")
        as_list(f"{where}: variants", names, str, "run groups")
        options = entry.get("options") or {}
        if not isinstance(options, dict):
            raise StudyError(f"{where}: options: expected a mapping, got {options!r}")
        from ...model.evaluate.suites import SUITES

        if entry.get("extra") not in SUITES:
            raise StudyError(f"{where}: extra: expected a suite ({', '.join(SUITES)}), got {entry.get('extra')!r}")
        spec.extras.append(RecordExtra(str(entry.get("extra")), [need_variant(where, n, "variant") for n in names],
                                       options))
    for where, entry in _items(path, text, data, "record_figures", FIGURE_KEYS, "record figure", profile, known):
        kind = entry.get("kind")
        if kind not in FIGURE_KINDS:
            raise StudyError(f"{where}: kind: expected one of {', '.join(FIGURE_KINDS)}, got {kind!r}")
        if entry.get("scale", "linear") not in ("linear", "log", "share"):
            raise StudyError(f"{where}: scale: expected linear, log or share, got {entry.get('scale')!r}")
        if entry.get("together") and (kind != "curves" or len(entry.get("variants") or {}) != 1):
            raise StudyError(f"{where}: together: draws one variant's statistics in one panel (kind: curves, one variant)")
        if kind == "plane" and not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("x_key", "y_key")):
            raise StudyError(f"{where}: a plane needs x_key and y_key (probe statistics, e.g. alignment, uniformity)")
        if kind == "profile" and not (isinstance(entry.get("key"), str) and entry.get("key")
                                      and entry.get("part", "probe") == "probe"):
            raise StudyError(f"{where}: a profile needs key: a probe statistic with one value per layer "
                             "(e.g. layer_cls_sim), read at the last probe step")
        if kind == "sweep" and entry.get("series"):
            groups = entry["series"]
            if not isinstance(groups, dict) or not all(isinstance(g, dict) and g for g in groups.values()):
                raise StudyError(f"{where}: series: expected {{series name: {{x value: run group}}}}")
        else:
            named = entry.get("points") if kind == "sweep" else entry.get("variants")
            if not isinstance(named, dict) or not named:
                raise StudyError(f"{where}: {'points' if kind == 'sweep' else 'variants'}: expected a mapping of "
                                 "x value or name → run group")
            groups = {"": named}
        for named in groups.values():
            for name in named.values():
                need_variant(where, name, "variant")
        spec.figures.append(RecordFigure(str(entry.get("name")), kind, entry))
    return spec


def planned_group_seeds(where: str, label: str, grid: dict, planned: dict[str, int]) -> list[int]:
    """``seeds: plan`` → seeds 1 … n for the group, n from the power plan."""
    if grid:
        raise StudyError(f"{where}: run {label!r}: seeds: plan needs a group without grid (one variant a group)")
    if label not in planned:
        raise StudyError(f"{where}: run {label!r}: seeds: plan, but no claim of this profile names it")
    return list(range(1, planned[label] + 1))
