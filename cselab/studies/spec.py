"""Study files: load a study YAML, expand its run groups into labelled training configs for one
profile, resolve its notebooks, and validate all of it before anything runs.

A study names runs by label (``<label>[-<key>=<value>...][-s<seed>]``) and places each in the shared
runs root under the trainer's default run name (``<method>-<config hash>``), so the same config in
any study is the same run. The schema is documented in docs/studies.md.
"""
from __future__ import annotations

import difflib
import itertools
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..io import read_utf8
from ..config import ConfigError, TrainConfig, load_config, presets
from ..methods import METHODS
from ..rundir.layout import label_matches
from .smoke import NOTEBOOK_PARAMETERS, SMOKE, smoke_overrides

STUDY_DIR = Path(__file__).parent                           # shipped studies: cselab/studies/<name>.yaml


def _notebooks_dir() -> Path:
    """Where the notebooks are: installed from a wheel, the copy it carries (``cselab/notebooks/``,
    copied from the top-level ``notebooks/`` at build time by setup.py); in a clone or an editable
    install, ``notebooks/`` of the source tree itself, so edits there take effect at once."""
    packaged = Path(__file__).resolve().parents[1] / "notebooks"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "notebooks"


NOTEBOOKS_DIR = _notebooks_dir()   # notebooks/<name>.py
TRAIN_NOTEBOOK = "train"
# Parameters the engine fills in for every analysis notebook (those the notebook declares).
ENGINE_PARAMETERS = ("runs", "figures_dir", "tables_dir", "data_dir", "profile")
# Config keys the engine owns: runs live in the shared runs root under their default name.
ENGINE_KEYS = ("output_dir", "run_name")

STUDY_KEYS = ("name", "description", "profiles", "runs", "notebooks", "slurm")
GROUP_KEYS = ("label", "config", "set", "grid", "seeds", "profiles")
NOTEBOOK_KEYS = ("notebook", "name", "runs", "parameters", "profiles")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+=-]*$")
# The kernel of every notebook the engine executes (a jupytext script without a header gets it).
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


class StudyError(ValueError):
    """A study file that cannot be run; the message names the file, line, run label and key."""


@dataclass
class RunSpec:
    """One training run of a study: its label, resolved config and run directory."""
    label: str
    group: str
    config: TrainConfig
    run_dir: Path

    @property
    def method(self) -> str:
        return "+".join(self.config.method)

    @property
    def seed(self) -> int:
        return self.config.seed


@dataclass
class NotebookSpec:
    """One analysis notebook to execute on a subset of the study's runs."""
    name: str                 # output name: reports/<study>/<name>.ipynb, figures/<study>/<name>/
    path: Path                # jupytext .py or .ipynb source
    runs: list[str]           # run labels, in study order
    parameters: dict          # the study's parameters for it (engine parameters come on top)
    declared: set[str]        # parameter names its tagged cell declares


@dataclass
class Study:
    name: str
    description: str
    path: Path
    profile: str
    runs: list[RunSpec]
    notebooks: list[NotebookSpec]
    slurm: dict = field(default_factory=dict)

    def run(self, label: str) -> RunSpec:
        return next(r for r in self.runs if r.label == label)


# ------------------------------------------------------------------- locating and reading
def available_studies() -> list[str]:
    return sorted(p.stem for p in STUDY_DIR.glob("*.yaml"))


def resolve_study_path(source: str | os.PathLike) -> Path:
    """A shipped study name (``cselab/studies/<name>.yaml``) or a path to a study file."""
    path = Path(source)
    if path.is_file():
        return path
    if str(source) in available_studies():
        return STUDY_DIR / f"{source}.yaml"
    shipped = ", ".join(available_studies()) or "none"
    raise StudyError(f"{source}: no such study file or shipped study (shipped studies: {shipped})")


def _item_lines(text: str, key: str) -> list[int]:
    """1-based line of each item of the top-level sequence ``key`` (for error messages)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for k, v in root.value:
        if getattr(k, "value", None) == key and isinstance(v, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in v.value]
    return []


def _read_yaml(path: Path) -> tuple[dict, str]:
    text = read_utf8(path, StudyError)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise StudyError(f"{path}{line}: cannot parse ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: a study is a mapping with keys {', '.join(STUDY_KEYS)}")
    return data, text


def _check_keys(where: str, mapping: Any, allowed: tuple[str, ...], what: str) -> None:
    if not isinstance(mapping, dict):
        raise StudyError(f"{where}: expected a mapping ({what}), got {mapping!r}")
    for key in mapping:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise StudyError(f"{where}: unknown key {key!r}{suggestion}; valid keys: {', '.join(allowed)}")


def _as_list(where: str, value: Any, item_type: type, what: str) -> list:
    """A non-empty list whose items are ``item_type`` (booleans are not integers here)."""
    ok = isinstance(value, list) and value and all(
        isinstance(v, item_type) and not isinstance(v, bool) for v in value)
    if not ok:
        raise StudyError(f"{where}: expected a non-empty list of {what}, got {value!r}")
    return value


# ------------------------------------------------------------------- run groups
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
        raise StudyError(f"{where}: config: expected a preset name or a config file, got {value!r}")
    relative = study_dir / value          # an absolute path stays as it is
    if relative.is_file():
        return str(relative)
    if value in presets():
        return value
    raise StudyError(f"{where}: config: {value!r} is neither a file next to the study nor a preset "
                     f"(presets: {', '.join(presets())})")


def expand_group(group: dict, where: str, base: dict, study_dir: Path, runs_root: Path,
                 smoke: bool = False) -> list[RunSpec]:
    """The runs of one group: its config source, then the profile's settings, then ``set``, then one
    point of ``grid``, then one of ``seeds``; each config validated by :func:`load_config`. With
    ``smoke`` the smoke settings (:mod:`.smoke`) come last."""
    label = group.get("label")
    if not isinstance(label, str) or not NAME_PATTERN.match(label):
        raise StudyError(f"{where}: label: expected a name of letters, digits and ._+=- , got {label!r}")
    where = f"{where}: run {label!r}"
    source = _config_source(where, group.get("config"), study_dir)
    settings = group.get("set") or {}
    grid = group.get("grid") or {}
    for key, value in (("set", settings), ("grid", grid)):
        if not isinstance(value, dict):
            raise StudyError(f"{where}: {key}: expected a mapping of config keys, got {value!r}")
    settings = flatten(settings)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise StudyError(f"{where}: grid: {key}: expected a non-empty list of values, got {values!r}")
    seeds = group.get("seeds")
    if seeds is not None:
        _as_list(f"{where}: seeds", seeds, int, "integer seeds")
    for key in (*base, *settings, *grid):
        if key.split(".")[0] in ENGINE_KEYS:
            raise StudyError(f"{where}: {key}: set by the study engine (runs go to --runs-dir under their "
                             "default name); remove it")

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
            check_file_name(f"{where} ({run_label[:60]}{'…' if len(run_label) > 60 else ''})", "the label", run_label,
                            ".ipynb", runs_root)
            try:
                cfg = load_config(source, overrides)
                if smoke:
                    cfg = load_config(source, {**overrides, **smoke_overrides(cfg)})
            except ConfigError as e:
                raise StudyError(f"{where} ({run_label}): {e}") from None
            runs.append(RunSpec(run_label, label, cfg, runs_root / cfg.default_run_name()))
    return runs


# ------------------------------------------------------------------- notebooks
def read_notebook(path: Path):
    """A notebook source as an nbformat node (jupytext ``.py`` or ``.ipynb``). A jupytext script
    without a header names no kernel: it gets the python3 kernel every study notebook runs in."""
    import jupytext

    notebook = jupytext.read(path)
    if not notebook.metadata.get("kernelspec", {}).get("name"):
        notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    return notebook


def check_file_name(where: str, what: str, name: str, suffix: str, folder: Path) -> None:
    """A label or name the engine turns into a file or folder name (``<name><suffix>``) must be one
    the file system accepts: checked when the study is validated (``--dry-run`` included), not when
    every run fails."""
    from ..io import name_max, path_component_problem

    limit = name_max(folder) - len(suffix)
    problem = path_component_problem(name, limit)
    if problem is not None:
        room = f" (the file system's {limit + len(suffix)} bytes minus {suffix})" if suffix else ""
        raise StudyError(f"{where}: {what} {problem}{room}; shorten it")


def notebook_parameters(path: Path) -> set[str]:
    """Names declared in the notebook's ``parameters`` cell, as papermill infers them."""
    import nbformat
    import papermill

    with tempfile.TemporaryDirectory() as tmp:
        converted = Path(tmp) / f"{path.stem}.ipynb"
        nbformat.write(read_notebook(path), converted)
        return set(papermill.inspect_notebook(str(converted)))


def resolve_notebook(where: str, value: Any, study_dir: Path) -> Path:
    """``name`` → notebooks/<name>.py; a value with a slash or a .py/.ipynb suffix is a path
    relative to the study file."""
    if not isinstance(value, str) or not value:
        raise StudyError(f"{where}: notebook: expected a notebook name or path, got {value!r}")
    if "/" in value or value.endswith((".py", ".ipynb")):
        path = (study_dir / value).resolve()
        if not path.is_file():
            raise StudyError(f"{where}: notebook: {path} does not exist")
        return path
    path = NOTEBOOKS_DIR / f"{value}.py"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.py"))) or "none"
        raise StudyError(f"{where}: notebook: no notebook {value!r} in {NOTEBOOKS_DIR} (notebooks: {known})")
    return path


def select_runs(where: str, selector: Any, labels: list[str]) -> list[str]:
    """``all`` or a list of labels / label prefixes (``simcse`` selects ``simcse-s1``, ``simcse-s2``)."""
    if selector in (None, "all"):
        return list(labels)
    if isinstance(selector, str):
        selector = [selector]
    if not isinstance(selector, list) or not all(isinstance(s, str) for s in selector):
        raise StudyError(f"{where}: runs: expected 'all' or a list of run labels, got {selector!r}")
    chosen = []
    for item in selector:
        matched = [lab for lab in labels if label_matches(lab, item)]
        if not matched:
            raise StudyError(f"{where}: runs: {item!r} matches no run of this profile (runs: {', '.join(labels)})")
        chosen += [lab for lab in matched if lab not in chosen]
    return [lab for lab in labels if lab in chosen]


def parse_notebook(entry: dict, where: str, study_dir: Path, labels: list[str],
                   declared_cache: dict[Path, set[str]]) -> NotebookSpec:
    path = resolve_notebook(where, entry.get("notebook"), study_dir)
    name = entry.get("name", path.stem)
    where = f"{where}: notebook {name!r}"
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or name in ("runs", "tables", "index"):
        raise StudyError(f"{where}: name: expected a name of letters, digits and ._+=- other than "
                         f"runs/tables/index, got {name!r}")
    parameters = entry.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise StudyError(f"{where}: parameters: expected a mapping, got {parameters!r}")
    check_file_name(where, "the notebook name", name, ".ipynb", study_dir)
    if path not in declared_cache:
        try:
            declared_cache[path] = notebook_parameters(path)
        except Exception as e:   # nbformat / papermill: one line naming the notebook and the study line
            from ..io import first_line

            raise StudyError(f"{where}: {path}: cannot read its parameters ({type(e).__name__}: {first_line(e)})") \
                from None
    declared = declared_cache[path]
    if "runs" not in declared:
        raise StudyError(f"{where}: {path.name} declares no `runs` parameter in its parameters cell, so it "
                         "cannot receive the study's runs")
    for key in parameters:
        if key in ENGINE_PARAMETERS:
            raise StudyError(f"{where}: parameters: {key} is set by the study engine; remove it")
        if key not in declared:
            hint = difflib.get_close_matches(str(key), sorted(declared), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise StudyError(f"{where}: parameters: {path.name} has no parameter {key!r}{suggestion}; "
                             f"its parameters: {', '.join(sorted(declared))}")
    runs = select_runs(where, entry.get("runs", "all"), labels)
    return NotebookSpec(name, path, runs, dict(parameters), declared)


# ------------------------------------------------------------------- the study
def _profiles_of(where: str, entry: dict, known: list[str]) -> list[str] | None:
    chosen = entry.get("profiles")
    if chosen is None:
        return None
    _as_list(f"{where}: profiles", chosen, str, "profile names")
    unknown = [p for p in chosen if p not in known]
    if unknown:
        raise StudyError(f"{where}: profiles: unknown profile {unknown[0]!r} (the study's profiles: {', '.join(known)})")
    return chosen


def load_study(source: str | os.PathLike, profile: str = "cpu", runs_root: str | os.PathLike = "runs",
               notebooks: bool = True) -> Study:
    """Load and validate a study for one profile: every run's config, every notebook and its
    parameters. Raises :class:`StudyError` naming the file, line, run label and key.

    ``notebooks=False`` reads the runs only (no notebook is opened; ``Study.notebooks`` is empty):
    what a notebook needs to find the study's run directories."""
    path = resolve_study_path(source)
    data, text = _read_yaml(path)
    _check_keys(str(path), data, STUDY_KEYS, "a study")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise StudyError(f"{path}: name: expected a name of letters, digits and ._+=- , got {name!r}")
    check_file_name(str(path), "the study name", name, "", Path(runs_root))
    description = data.get("description") or ""
    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict) or not profiles:
        raise StudyError(f"{path}: profiles: expected a mapping of profile name → base config, e.g. {{cpu: {{...}}}}")
    smoke = profile == SMOKE and SMOKE not in profiles   # every study has it: its first profile, shrunk
    if profile not in profiles and not smoke:
        raise StudyError(f"{path}: profiles: no profile {profile!r} (the study's profiles: "
                         f"{', '.join([*profiles, SMOKE])})")
    base = profiles[next(iter(profiles)) if smoke else profile] or {}
    if not isinstance(base, dict):
        raise StudyError(f"{path}: profiles: {profile}: expected a mapping of config keys, got {base!r}")
    base = flatten(base)
    config_keys = sorted({f for f in TrainConfig.__dataclass_fields__ if f != "method_params"} | set(METHODS))
    for key in base:
        if key.split(".")[0] not in config_keys:
            hint = difflib.get_close_matches(key.split(".")[0], config_keys, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise StudyError(f"{path}: profiles: {profile}: unknown config key {key!r}{suggestion}")
    study_dir = path.parent
    runs_root = Path(runs_root)

    groups = data.get("runs")
    if not isinstance(groups, list) or not groups:
        raise StudyError(f"{path}: runs: expected a non-empty list of run groups")
    lines = _item_lines(text, "runs")
    runs: list[RunSpec] = []
    seen: dict[str, str] = {}
    for i, group in enumerate(groups):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: runs[{i}]"
        _check_keys(where, group, GROUP_KEYS, "a run group")
        chosen = _profiles_of(where, group, list(profiles))
        if chosen is not None and (next(iter(profiles)) if smoke else profile) not in chosen:
            continue
        for run in expand_group(group, where, base, study_dir, runs_root, smoke):
            if run.label in seen:
                raise StudyError(f"{where}: run {run.label!r}: the label is used twice (also at {seen[run.label]})")
            seen[run.label] = where
            runs.append(run)
    if not runs:
        raise StudyError(f"{path}: no run belongs to profile {profile!r}")

    labels = [r.label for r in runs]
    entries = (data.get("notebooks") or []) if notebooks else []
    if not isinstance(entries, list):
        raise StudyError(f"{path}: notebooks: expected a list of notebooks")
    lines = _item_lines(text, "notebooks")
    notebooks: list[NotebookSpec] = []
    cache: dict[Path, set[str]] = {}
    for i, entry in enumerate(entries):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: notebooks[{i}]"
        _check_keys(where, entry, NOTEBOOK_KEYS, "a notebook")
        chosen = _profiles_of(where, entry, list(profiles))
        if chosen is not None and (next(iter(profiles)) if smoke else profile) not in chosen:
            continue
        spec = parse_notebook(entry, where, study_dir, labels, cache)
        if smoke:
            spec.parameters.update({k: v for k, v in NOTEBOOK_PARAMETERS.items() if k in spec.parameters})
        if any(n.name == spec.name for n in notebooks):
            raise StudyError(f"{where}: notebook {spec.name!r} is listed twice; give one a `name:`")
        notebooks.append(spec)

    slurm = data.get("slurm") or {}
    if not isinstance(slurm, dict):
        raise StudyError(f"{path}: slurm: expected a mapping of submitit parameters, got {slurm!r}")
    train_notebook = NOTEBOOKS_DIR / f"{TRAIN_NOTEBOOK}.py"
    if not train_notebook.is_file():
        raise StudyError(f"{train_notebook}: the train notebook is missing (studies run from a source checkout)")
    return Study(name, description, path, profile, runs, notebooks, dict(slurm))
