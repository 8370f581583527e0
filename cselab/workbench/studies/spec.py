"""Study files: load a study YAML, expand its run groups into labelled training configs for one
profile, resolve its notebooks, and validate all of it before anything runs.

A study names runs by label (``<label>[-<key>=<value>...][-s<seed>]``) and places each in the shared
runs root under the trainer's default run name (``<method>-<config hash>``), so the same config in
any study is the same run. The schema is documented in docs/studies.md.

This module holds :class:`Study` and :func:`load_study`, which reads the file top to bottom, and
:class:`StudyPlan` and :func:`read_study_plan`, which read the same steps without resolving one run
config (what a record is read against: claims, power plan, labels, groups); the parts live beside
it: :mod:`.study_file` (YAML with line numbers, key checks, which profile an entry belongs to,
:class:`StudyError`), :mod:`.run_grid` (run groups → :class:`LabelledRun` → :class:`RunSpec`),
:mod:`.notebook_specs` (notebook entries → :class:`NotebookSpec`). The names other modules and tests
take from here are re-exported.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ...model.config import TrainConfig
from ...model.methods import METHODS
from ...model.options import shown
from .notebook_specs import (ENGINE_PARAMETERS, KERNELSPEC, NOTEBOOKS_DIR, NotebookSpec,
                             notebook_parameters, parse_notebook, read_notebook, resolve_notebook, select_runs)
from .claims_spec import ClaimsSpec, read_claims_spec
from .record import variant_of_label
from .run_grid import ENGINE_KEYS, MAX_STUDY_RUNS, LabelledRun, RunSpec, expand_group, flatten, plan_group
from .smoke import NOTEBOOK_PARAMETERS, SMOKE
from .study_file import (DEFAULT_FIGURES_DIR, GROUP_KEYS, NAME_PATTERN, NOTEBOOK_KEYS, STUDY_KEYS, StudyError,
                         check_file_name, check_keys, figures_dir_of, profile_entries, read_yaml)

__all__ = ["ENGINE_KEYS", "ENGINE_PARAMETERS", "GROUP_KEYS", "KERNELSPEC", "NAME_PATTERN", "NOTEBOOKS_DIR",
           "NOTEBOOK_KEYS", "STUDY_DIR", "STUDY_KEYS", "NotebookSpec", "LabelledRun", "RunSpec", "Study",
           "StudyError", "StudyPlan", "available_studies", "check_file_name", "expand_group", "flatten", "load_study",
           "notebook_parameters", "parse_notebook", "read_notebook", "read_study_plan", "resolve_notebook",
           "resolve_study_path", "select_runs", "study_figures_dir"]

STUDY_DIR = Path(__file__).parent                           # shipped studies: cselab/workbench/studies/<name>.yaml


@dataclass
class Study:
    name: str
    description: str
    path: Path
    profile: str
    runs: list[RunSpec]
    notebooks: list[NotebookSpec]
    slurm: dict = field(default_factory=dict)
    claims: ClaimsSpec = field(default_factory=ClaimsSpec)   # claims, power rule, record extras and figures
    smoke: bool = False   # a smoke profile: tiny runs, and a sample of the data root (studies/smoke.py)
    profiles: list[str] = field(default_factory=list)   # every profile the study file defines
    figures_dir: str = DEFAULT_FIGURES_DIR   # its folder (record.jsonl, figures) is <figures_dir>/<name>/

    def run(self, label: str) -> RunSpec:
        return next(r for r in self.runs if r.label == label)


@dataclass
class StudyPlan:
    """A study as its record is read against it (:func:`read_study_plan`): its claims, power plan,
    record figures and the labels and groups of its planned runs, without one run config resolved.
    A run's ``config`` (and ``run_dir``) is resolved by :func:`load_config` when first asked for (the
    stale-line check asks: :func:`cselab.workbench.studies.record.read_study_record`) and then kept."""
    name: str
    description: str
    path: Path
    profile: str
    runs: list[LabelledRun]
    claims: ClaimsSpec = field(default_factory=ClaimsSpec)
    smoke: bool = False
    profiles: list[str] = field(default_factory=list)
    figures_dir: str = DEFAULT_FIGURES_DIR

    def run(self, label: str) -> LabelledRun:
        return next(r for r in self.runs if r.label == label)


# ------------------------------------------------------------------- locating
def available_studies() -> list[str]:
    return sorted(p.stem for p in STUDY_DIR.glob("*.yaml"))


def resolve_study_path(source: str | os.PathLike) -> Path:
    """A shipped study name (``cselab/workbench/studies/<name>.yaml``) or a path to a study file."""
    path = Path(source)
    if path.is_file():
        return path
    if str(source) in available_studies():
        return STUDY_DIR / f"{source}.yaml"
    shipped = ", ".join(available_studies()) or "none"
    raise StudyError(f"{source}: no such study file or shipped study (shipped studies: {shipped})")


# ------------------------------------------------------------------- the steps of load_study
def smoke_base(profile: str, profiles: list[str]) -> str | None:
    """The profile that ``profile`` shrinks when it is a smoke profile (``smoke``: the study's first;
    ``smoke-cpu``: its ``cpu``), else None (a study may also define a profile named ``smoke`` itself)."""
    if SMOKE in profiles or not profiles:
        return None
    if profile == SMOKE:
        return profiles[0]
    base = profile[len(SMOKE) + 1:] if profile.startswith(f"{SMOKE}-") else None
    return base if base in profiles else None


@dataclass
class _Profile:
    """The profile a study is loaded for: the study's profile names, the one whose settings apply
    (for ``smoke``, the study's first, shrunk later) and its settings, flattened."""
    names: list[str]
    applied: str
    smoke: bool
    base: dict


def _study_name(path: Path, data: dict, runs_root: Path) -> str:
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(f"{path}: name: expected a name of letters, digits and ._+=- , got {shown(name)}")
    check_file_name(str(path), "the study name", name, "", runs_root)
    return name


def _profile(path: Path, data: dict, profile: str) -> _Profile:
    """The settings of ``profile``, every key a config key (or a method's section)."""
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict) or not profiles:
        raise StudyError(f"{path}: profiles: expected a mapping of profile name → base config, e.g. {{cpu: {{...}}}}")
    # every study has ``smoke`` (its first profile, shrunk) and ``smoke-<profile>`` (that one, shrunk)
    smoke_of = smoke_base(profile, list(profiles))
    smoke = smoke_of is not None
    if profile not in profiles and not smoke:
        raise StudyError(f"{path}: profiles: no profile {shown(profile)} (the study's profiles: "
                         f"{', '.join([*profiles, *(f'{SMOKE}-{p}' if i else SMOKE for i, p in enumerate(profiles))])})")
    applied = smoke_of if smoke else profile
    base = profiles[applied] or {}
    if not isinstance(base, dict):
        raise StudyError(f"{path}: profiles: {profile}: expected a mapping of config keys, got {shown(base)}")
    base = flatten(base)
    config_keys = sorted({f for f in TrainConfig.__dataclass_fields__ if f != "method_params"} | set(METHODS))
    for key in base:
        if key.split(".")[0] not in config_keys:
            hint = difflib.get_close_matches(key.split(".")[0], config_keys, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise StudyError(f"{path}: profiles: {profile}: unknown config key {shown(key)}{suggestion}")
    return _Profile(list(profiles), applied, smoke, base)


def _runs(path: Path, data: dict, text: str, profile: _Profile, runs_root: Path, requested: str,
          planned: dict[str, int] | None = None, expand=expand_group) -> list:
    """Every run of the profile's groups (``expand``: :func:`expand_group`, validated :class:`RunSpec`;
    :func:`plan_group`, :class:`LabelledRun` with their configs unresolved), each label once; ``planned``:
    the power plan's seeds per group (None: one seed for a group whose seeds are planned)."""
    groups = data.get("runs")
    if not isinstance(groups, list) or not groups:
        raise StudyError(f"{path}: runs: expected a non-empty list of run groups")
    runs: list = []
    seen: dict[str, str] = {}
    for where, group in profile_entries(path, text, "runs", groups, GROUP_KEYS, "a run group", profile.applied,
                                        profile.names):
        for run in expand(group, where, profile.base, path.parent, runs_root, profile.smoke,
                          MAX_STUDY_RUNS - len(runs), planned):
            if run.label in seen:
                raise StudyError(f"{where}: run {shown(run.label)}: the label is used twice (also at {seen[run.label]})")
            seen[run.label] = where
            runs.append(run)
    if not runs:
        raise StudyError(f"{path}: no run belongs to profile {shown(requested)}")
    return runs


def _notebooks(path: Path, data: dict, text: str, profile: _Profile, labels: list[str]) -> list[NotebookSpec]:
    """Every notebook of the profile (:func:`parse_notebook`), each name once; with ``smoke`` the
    parameters that name data shrunk."""
    entries = data.get("notebooks") or []
    if not isinstance(entries, list):
        raise StudyError(f"{path}: notebooks: expected a list of notebooks")
    notebooks: list[NotebookSpec] = []
    cache: dict[Path, set[str]] = {}
    for where, entry in profile_entries(path, text, "notebooks", entries, NOTEBOOK_KEYS, "a notebook",
                                        profile.applied, profile.names):
        spec = parse_notebook(entry, where, path.parent, labels, cache)
        if profile.smoke:
            spec.parameters.update({k: v for k, v in NOTEBOOK_PARAMETERS.items() if k in spec.parameters})
        if any(n.name == spec.name for n in notebooks):
            raise StudyError(f"{where}: notebook {shown(spec.name)} is listed twice; give one a `name:`")
        notebooks.append(spec)
    return notebooks


def _slurm(path: Path, data: dict) -> dict:
    slurm = data.get("slurm") or {}
    if not isinstance(slurm, dict):
        raise StudyError(f"{path}: slurm: expected a mapping of submitit parameters, got {shown(slurm)}")
    return dict(slurm)


def study_figures_dir(source: str | os.PathLike) -> str:
    """The figures root of a study (its record is ``<figures_dir>/<name>/record.jsonl``): the study file's
    ``figures_dir``, else ``figures``. Reads the file's YAML only (no run is validated)."""
    path = resolve_study_path(source)
    data, text = read_yaml(path)
    return figures_dir_of(path, data, text)


# ------------------------------------------------------------------- the study
def _read(source: str | os.PathLike, profile: str, runs_root: str | os.PathLike, expand, observed=None,
          up_to_cap: bool = False):
    """What :func:`load_study` and :func:`read_study_plan` share, top to bottom: the file, its name,
    the profile, the runs (``expand``), the claims and the runs again with the power plan's seeds
    (``up_to_cap``: every planned group up to the rule's seed space, what a continuation may choose from)."""
    path = resolve_study_path(source)
    data, text = read_yaml(path)
    check_keys(str(path), data, STUDY_KEYS, "a study")
    name = _study_name(path, data, Path(runs_root))
    chosen = _profile(path, data, profile)
    runs = _runs(path, data, text, chosen, Path(runs_root), profile, expand=expand)
    # the claims name the run groups; their power plan gives the groups whose seeds are `plan`
    claims = read_claims_spec(path, data, text, chosen.applied, chosen.names,
                              {variant_of_label(r.label)[0] for r in runs})
    if observed is not None and claims.claims:   # re-plan on the spreads a record shows (``--replan``)
        from ..claims import observed_spreads

        claims.observed = observed_spreads(claims.claims, observed)
    if claims.claims and not chosen.smoke:
        planned = claims.planned_seeds()
        if up_to_cap and claims.rule is not None:
            planned = {group: max(n, claims.rule.seed_space) for group, n in planned.items()}
        runs = _runs(path, data, text, chosen, Path(runs_root), profile, planned, expand=expand)
    return path, data, text, name, chosen, runs, claims


def load_study(source: str | os.PathLike, profile: str = "cpu", runs_root: str | os.PathLike = "runs",
               notebooks: bool = True, observed=None, up_to_cap: bool = False) -> Study:
    """Load and validate a study for one profile: every run's config, every notebook and its
    parameters. Raises :class:`StudyError` naming the file, line, run label and key. ``observed``:
    a record's runs (:func:`cselab.workbench.studies.record.records_frame`); the power plan then takes each
    claim's spread from them (the seeds a claim needs, re-estimated on the spread alone).
    ``up_to_cap``: every group the power plan sizes has its seeds up to the rule's seed space
    (:attr:`cselab.workbench.claims.PowerRule.seed_space`, twice ``max_seeds``), what ``reproduce
    --replan --only`` chooses from: a continuation pairs seeds within one computation, and a seed of
    another computation holds a number but buys no pair.

    ``notebooks=False`` reads the runs only (no notebook is opened; ``Study.notebooks`` is empty):
    what a notebook needs to find the study's run directories. What reads a record needs less:
    :func:`read_study_plan`."""
    path, data, text, name, chosen, runs, claims = _read(source, profile, runs_root, expand_group, observed,
                                                         up_to_cap)
    specs = _notebooks(path, data, text, chosen, [r.label for r in runs]) if notebooks else []
    slurm = _slurm(path, data)
    return Study(name, data.get("description") or "", path, profile, runs, specs, slurm, claims, chosen.smoke,
                 chosen.names, figures_dir_of(path, data, text))


def read_study_plan(source: str | os.PathLike, profile: str = "cpu", runs_root: str | os.PathLike = "runs") -> StudyPlan:
    """The study as a record is read against it: what :func:`load_study` reads and checks of the file,
    its profile, its claims, power plan and record figures, and every planned run's label and group,
    but no run config resolved (no :func:`load_config`) and no notebook or slurm setting read. What
    the record-to-page path takes (cselab/workbench/paper_tables/record_report.py); a run's config is
    resolved when asked for (:class:`LabelledRun`)."""
    path, data, text, name, chosen, runs, claims = _read(source, profile, runs_root, plan_group)
    return StudyPlan(name, data.get("description") or "", path, profile, runs, claims, chosen.smoke, chosen.names,
                     figures_dir_of(path, data, text))
