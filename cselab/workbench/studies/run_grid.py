"""A study's run groups → runs: a group's config source, then the profile's settings, ``set``, one
point of ``grid`` and one of ``seeds``, each combination a labelled :class:`LabelledRun`
(``<label>[-<key>=<value>...][-s<seed>]``, :func:`plan_group`: no config resolved yet) and, validated,
a :class:`RunSpec` placed in the runs root under its default run name (:func:`expand_group`).
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...model.config import ConfigError, TrainConfig, load_config, presets
from .claims_spec import PLAN, planned_group_seeds
from ...model.options import shown
from .smoke import smoke_overrides
from .study_file import NAME_PATTERN, StudyError, as_list, check_file_name

# Config keys the engine owns: runs live in the shared runs root under their default name.
ENGINE_KEYS = ("output_dir", "run_name")


@dataclass
class RunSpec:
    """One training run of a study: its label, resolved config and run directory."""
    label: str
    group: str
    config: TrainConfig
    run_dir: Path
    stand_in_for: str | None = None   # the smoke profile: the backbone the config's tiny model stands in for

    @property
    def method(self) -> str:
        return "+".join(self.config.method)

    @property
    def seed(self) -> int:
        return self.config.seed


def flatten(mapping: dict, prefix: str = "") -> dict:
    """``{"mixcse": {"mix_lambda": 0.2}}`` → ``{"mixcse.mix_lambda": 0.2}``: sections merge key by
    key over a preset instead of replacing it. Empty mappings stay as they are."""
    out = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _label_value(value: Any) -> str:
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, list):
        text = "+".join(_label_value(v) for v in value)
    else:
        text = str(value)
    return re.sub(r"[^A-Za-z0-9._+=-]", "_", text)


def _grid_names(keys: list[str]) -> dict[str, str]:
    """Short names for grid keys in labels: the last dotted part, unless two keys share it."""
    leaves = [k.split(".")[-1] for k in keys]
    return {k: leaf if leaves.count(leaf) == 1 else k for k, leaf in zip(keys, leaves)}


def _config_source(where: str, value: Any, study_dir: Path) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise StudyError(f"{where}: config: expected a preset name or a config file, got {shown(value)}")
    relative = study_dir / value          # an absolute path stays as it is
    if relative.is_file():
        return str(relative)
    if value in presets():
        return value
    raise StudyError(f"{where}: config: {shown(value)} is neither a file next to the study nor a preset "
                     f"(presets: {', '.join(presets())})")


# The most runs a study may have. The paper studies have about 100; a grid whose product is beyond
# this is a typo (three 100-value lists: a million runs, two hours of config validation before the
# first run), refused before any run is expanded.
MAX_STUDY_RUNS = 5_000


@dataclass
class LabelledRun:
    """One run as the study file plans it: its label and group, and what its config is made of (a
    config source and overrides). The config is resolved (:func:`load_config`) on first use and then
    kept: reading a record's claims and labels needs none, and :func:`expand_group` validates it."""
    label: str
    group: str
    where: str                  # file:line: run 'group' (for errors)
    source: str | None
    overrides: dict
    runs_root: Path
    smoke: bool = False
    _resolved: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def resolve(self) -> tuple[TrainConfig, str | None]:
        """The run's config (and, with ``smoke``, the backbone its tiny model stands in for)."""
        if self._resolved is None:
            try:
                cfg = load_config(self.source, self.overrides)
                real = cfg.model
                if self.smoke:
                    cfg = load_config(self.source, {**self.overrides, **smoke_overrides(cfg)})
            except ConfigError as e:
                raise StudyError(f"{self.where} ({self.label}): {e}") from None
            self._resolved = (cfg, real if self.smoke else None)
        return self._resolved

    @property
    def config(self) -> TrainConfig:
        return self.resolve()[0]

    @property
    def run_dir(self) -> Path:
        return self.runs_root / self.config.default_run_name()

    def spec(self) -> RunSpec:
        cfg, stand_in_for = self.resolve()
        return RunSpec(self.label, self.group, cfg, self.run_dir, stand_in_for)


def plan_group(group: dict, where: str, base: dict, study_dir: Path, runs_root: Path,
               smoke: bool = False, room: int = MAX_STUDY_RUNS,
               planned: dict[str, int] | None = None) -> list[LabelledRun]:
    """The runs of one group, labelled, their configs not yet resolved: its config source, then the
    profile's settings, then ``set``, then one point of ``grid``, then one of ``seeds`` (every check
    of the group's own keys made here). ``room``: how many runs the study may still have (more is a
    :class:`StudyError` before anything is expanded)."""
    label = group.get("label")
    if not isinstance(label, str) or not NAME_PATTERN.match(label):
        raise StudyError(f"{where}: label: expected a name of letters, digits and ._+=- , got {shown(label)}")
    where = f"{where}: run {shown(label)}"
    source = _config_source(where, group.get("config"), study_dir)
    settings = group.get("set") or {}
    grid = group.get("grid") or {}
    for key, value in (("set", settings), ("grid", grid)):
        if not isinstance(value, dict):
            raise StudyError(f"{where}: {key}: expected a mapping of config keys, got {shown(value)}")
    settings = flatten(settings)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise StudyError(f"{where}: grid: {key}: expected a non-empty list of values, got {shown(values)}")
    seeds = group.get("seeds")
    if seeds == PLAN:   # the power plan's seeds (cselab/workbench/studies/claims_spec.py); [1] while it is made
        seeds = planned_group_seeds(where, label, grid, planned) if planned is not None else [1]
    elif seeds is not None:
        as_list(f"{where}: seeds", seeds, int, "integer seeds (or plan)")
    for key in (*base, *settings, *grid):
        if key.split(".")[0] in ENGINE_KEYS:
            raise StudyError(f"{where}: {key}: set by the study engine (runs go to --runs-dir under their "
                             "default name); remove it")

    count = math.prod(len(values) for values in grid.values()) * len(seeds or [None])
    if count > room:
        raise StudyError(f"{where}: its grid and seeds make {count:,} runs, and a study has at most "
                         f"{MAX_STUDY_RUNS:,} ({MAX_STUDY_RUNS - room:,} before this group); shorten the lists")
    names = _grid_names(list(grid))
    runs = []
    for point in itertools.product(*grid.values()) if grid else [()]:
        chosen = dict(zip(grid, point))
        for seed in seeds or [None]:
            run_label = label + "".join(f"-{names[k]}={_label_value(v)}" for k, v in chosen.items())
            overrides = {**base, **settings, **chosen}
            if seed is not None:
                run_label += f"-s{seed}"
                overrides["seed"] = seed
            overrides.update(output_dir=str(runs_root), run_name=None)
            runs.append(LabelledRun(run_label, label, where, source, overrides, runs_root, smoke))
    return runs


def expand_group(group: dict, where: str, base: dict, study_dir: Path, runs_root: Path,
                 smoke: bool = False, room: int = MAX_STUDY_RUNS,
                 planned: dict[str, int] | None = None) -> list[RunSpec]:
    """The runs of one group (:func:`plan_group`), each label one the file system accepts and each
    config validated by :func:`load_config`. With ``smoke`` the smoke settings (:mod:`.smoke`) come last."""
    runs = []
    for run in plan_group(group, where, base, study_dir, runs_root, smoke, room, planned):
        check_file_name(f"{run.where} ({run.label[:60]}{'…' if len(run.label) > 60 else ''})", "the label",
                        run.label, ".ipynb", runs_root)
        runs.append(run.spec())
    return runs
