"""Which runs of a study are which of a paper's variants, and the variant groups split per backbone.

**Variants by label prefix.** A notebook maps the paper's variant names to run-label prefixes,
e.g. ``{"APINCSE": "apincse", "-AP": "apincse-no_ap"}``; the results layer's one rule
(:func:`cselab.workbench.results.match_variants`: a prefix selects its label's seeds and grid points, never a
longer label) says which runs each variant has, so ``apincse-no_ap-s1`` is "-AP" and
``apincse-pooler-s1`` no APINCSE run. The runs of one variant must share one config apart
from the seed (and the settings that only record, :data:`cselab.model.config.NON_IDENTITY_KEYS`):
:func:`variant_runs` says which key differs when they do not, so a sweep group never slips into a
variant's mean unnoticed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ...model.config import LATER_KEYS, NON_IDENTITY_KEYS
from ...model.io import read_jsonl
from ..published import BACKBONES, paper_backbone
from ..comparisons import BACKBONE_JOIN, group_runs, groups_of, variant_of
from ..results import VariantSpec, match_variants
from ...model.rundir import RunDir, read_config
from ...model.rundir.readers import config_difference
from .backbones import group_model, run_model


class VariantError(ValueError):
    """The runs given cannot be a paper's variants (none matches, or one variant's runs differ in more
    than the seed); the message names the runs. A notebook shows it as one line."""


def unmatched(runs: Mapping[str, Path], variants: VariantSpec) -> list[str]:
    """Labels that no variant prefix selects (shown by the notebooks so nothing is dropped silently)."""
    matched = match_variants(runs, variants)
    return [label for label in runs if label not in matched]

def identity_without_seed(run_dir: str | os.PathLike) -> dict:
    """A run's config without the seed and the settings that only record or place it."""
    config = dict(read_config(run_dir))
    for key in (*NON_IDENTITY_KEYS, "seed"):
        config.pop(key, None)
    for key, default in LATER_KEYS.items():   # a run made before the key existed is the same variant
        if config.get(key) == default:
            config.pop(key, None)
    return config

def variant_runs(runs: Mapping[str, Path], variants: VariantSpec,
                 check: bool | Sequence[str] = True) -> dict[str, dict[str, Path]]:
    """``{variant: {label: run dir}}`` (see the module docs). Runs of one checked variant (all with
    ``check=True``, or those named in ``check``; a sweep group is not one) and one backbone that
    differ in more than the seed are an error naming the two labels and the key."""
    groups = groups_of(group_runs(runs, variants), runs)   # the one grouping rule: label prefixes here
    checked = list(groups) if check is True else list(check or [])
    for variant, members in groups.items():
        if variant not in checked:
            continue
        by_model: dict[str, list[str]] = {}
        for label, path in members.items():   # one backbone's runs may use other settings (e.g. its lr)
            by_model.setdefault(run_model(path), []).append(label)
        for labels in by_model.values():
            first, *rest = labels
            reference = identity_without_seed(members[first])
            for label in rest:
                difference = config_difference(reference, identity_without_seed(members[label]))
                if difference:
                    raise VariantError(f"variant {variant!r}: runs {first!r} and {label!r} differ in {difference}, not "
                                     "only in the seed; give one of them its own label prefix")
    return groups

def groups_table(groups: Mapping[str, Mapping[str, Path]]) -> pd.DataFrame:
    """Which runs each variant has: runs, backbone (``model``), seeds."""
    rows = [{"variant": name, "runs": ", ".join(members), "model": group_model(members),
             "seeds": ", ".join(str(read_config(p).get("seed")) for p in members.values())}
            for name, members in groups.items()]
    return pd.DataFrame(rows, columns=["variant", "runs", "model", "seeds"]).set_index("variant")

def select_variants(runs: Mapping[str, Path], variants: VariantSpec,
                    sweeps: VariantSpec) -> tuple[dict[str, dict[str, Path]], dict[str, dict[str, Path]]]:
    """What every paper notebook starts with: ``(found, swept)`` — the runs of each variant
    (:func:`variant_runs`, every prefix of ``variants`` checked) and the runs of each sweep, kept
    apart. An error when no run matches a variant; prints the runs that no prefix selects, if any."""
    spec = {**variants, **sweeps}
    found = variant_runs(runs, spec, check=list(variants))
    swept = {name: found.pop(name, {}) for name in sweeps}
    if not found:
        raise VariantError(f"no run matches the variants {dict(variants)}; runs: {list(runs)}")
    left_out = unmatched(runs, spec)
    if left_out:   # said, so that nothing is dropped silently; nothing to say when every run is used
        print(f"left out, not among this paper's variants: {', '.join(left_out)}")
    return found, swept


def split_by_backbone(groups: Mapping[str, Mapping[str, Path]]) -> dict[str, dict[str, Path]]:
    """Groups as they are when every run starts from one backbone; otherwise each group split per
    backbone, named ``<variant> · <backbone>`` (e.g. ``SimCSE · RoBERTa-base``)."""
    per_run = {label: run_model(p) for members in groups.values() for label, p in members.items()}
    if len(set(per_run.values())) <= 1:
        return {name: dict(members) for name, members in groups.items()}
    out: dict[str, dict[str, Path]] = {}
    for name, members in groups.items():
        for label, path in members.items():
            model = per_run[label]
            out.setdefault(f"{name}{BACKBONE_JOIN}{BACKBONES.get(paper_backbone(model), model)}", {})[label] = path
    return out

def representatives(groups: Mapping[str, Mapping[str, Path]], names: Sequence[str] | None = None) -> dict[str, Path]:
    """One run per group (its first, i.e. lowest-listed seed), for figures with a line per variant."""
    chosen = [n for n in groups if names is None or variant_of(n) in names]
    return {name: next(iter(groups[name].values())) for name in chosen}

def one_run_warning(groups: Mapping[str, Mapping[str, Path]], names: Sequence[str] | None = None,
                    record: str = "docs/cpu-papers.md") -> str:
    """What a figure of :func:`representatives` (one run per variant) must say on its face: it is one
    seed, whose order of the variants another seed may reverse (the demo's APINCSE layer profile sat
    above SimCSE's at every layer, the record's 5–6 seeds put it below), and where the reading over
    seeds is."""
    counts = [len(groups[n]) for n in groups if names is None or variant_of(n) in names]
    most, least = max(counts, default=1), min(counts, default=1)
    line = "one run" if most == 1 else (f"the first of its {least} seeds' runs" if least == most
                                        else f"the first of its {least}–{most} seeds' runs")
    return (f"One seed: each trained line is {line}. Another seed may order them otherwise; "
            f"the reading over seeds is the record's ({record}).")


def used_runs(*groupings: Mapping[str, Mapping[str, Path]]) -> dict[str, Path]:
    """Every run of the given groups, each once, in order."""
    out: dict[str, Path] = {}
    for grouping in groupings:
        for members in grouping.values():
            out.update(members)
    return out

def runs_with(runs: Mapping[str, Path], key: str, kind: str = "train") -> dict[str, Path]:
    """The runs whose ``kind`` records hold a value of ``key`` (e.g. ``largest_angle`` in probe
    records, which only runs trained with ``probe_every`` have). NaN is no value: ClusterNS logs
    its hard-negative cosine as NaN until its clustering starts, so a run stopped before then has
    nothing to draw."""
    return {label: Path(path) for label, path in runs.items()
            if any(r.get("kind") == kind and pd.notna(r.get(key)) for r in read_jsonl(RunDir(Path(path)).metrics_file))}

