"""A study's notebook entries → :class:`NotebookSpec`: where the notebooks are, reading one (jupytext
or ``.ipynb``) and the parameters its tagged cell declares, the runs it gets, and the checks of its
name and parameters.
"""
from __future__ import annotations

import difflib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model.options import shown
from ...model.rundir.layout import label_matches
from .study_file import NAME_PATTERN, StudyError, check_file_name


def _notebooks_dir() -> Path:
    """Where the notebooks are: installed from a wheel, the copy it carries (``cselab/notebooks/``,
    copied from the top-level ``notebooks/`` at build time by setup.py); in a clone or an editable
    install, ``notebooks/`` of the source tree itself, so edits there take effect at once."""
    here = Path(__file__).resolve()   # cselab/workbench/studies/notebook_specs.py
    packaged = here.parents[2] / "notebooks"
    return packaged if packaged.is_dir() else here.parents[3] / "notebooks"


NOTEBOOKS_DIR = _notebooks_dir()   # notebooks/<name>.py
# Parameters the engine fills in for every analysis notebook (those the notebook declares).
ENGINE_PARAMETERS = ("runs", "figures_dir", "tables_dir", "data_dir", "profile", "record")
# The kernel of every notebook the engine executes (a jupytext script without a header gets it).
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


@dataclass
class NotebookSpec:
    """One analysis notebook to execute on a subset of the study's runs."""
    name: str                 # output name: reports/<study>/<name>.ipynb, figures/<study>/<name>/
    path: Path                # jupytext .py or .ipynb source
    runs: list[str]           # run labels, in study order
    parameters: dict          # the study's parameters for it (engine parameters come on top)
    declared: set[str]        # parameter names its tagged cell declares


def read_notebook(path: Path):
    """A notebook source as an nbformat node (jupytext ``.py`` or ``.ipynb``). A jupytext script
    without a header names no kernel: it gets the python3 kernel every study notebook runs in."""
    import jupytext

    notebook = jupytext.read(path)
    if not notebook.metadata.get("kernelspec", {}).get("name"):
        notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    return notebook


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
        raise StudyError(f"{where}: notebook: expected a notebook name or path, got {shown(value)}")
    if "/" in value or value.endswith((".py", ".ipynb")):
        path = (study_dir / value).resolve()
        if not path.is_file():
            raise StudyError(f"{where}: notebook: {path} does not exist")
        return path
    path = NOTEBOOKS_DIR / f"{value}.py"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.py"))) or "none"
        raise StudyError(f"{where}: notebook: no notebook {shown(value)} in {NOTEBOOKS_DIR} (notebooks: {known})")
    return path


def select_runs(where: str, selector: Any, labels: list[str]) -> list[str]:
    """``all`` or a list of labels / label prefixes (``simcse`` selects ``simcse-s1``, ``simcse-s2``)."""
    if selector in (None, "all"):
        return list(labels)
    if isinstance(selector, str):
        selector = [selector]
    if not isinstance(selector, list) or not all(isinstance(s, str) for s in selector):
        raise StudyError(f"{where}: runs: expected 'all' or a list of run labels, got {shown(selector)}")
    chosen = []
    for item in selector:
        matched = [lab for lab in labels if label_matches(lab, item)]
        if not matched:
            raise StudyError(f"{where}: runs: {shown(item)} matches no run of this profile (runs: {', '.join(labels)})")
        chosen += [lab for lab in matched if lab not in chosen]
    return [lab for lab in labels if lab in chosen]


def parse_notebook(entry: dict, where: str, study_dir: Path, labels: list[str],
                   declared_cache: dict[Path, set[str]]) -> NotebookSpec:
    """One ``notebooks:`` entry checked: its notebook, name, parameters (those its parameters cell
    declares, none of the engine's) and runs; ``declared_cache`` reads each notebook once."""
    path = resolve_notebook(where, entry.get("notebook"), study_dir)
    name = entry.get("name", path.stem)
    where = f"{where}: notebook {shown(name)}"
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or name in ("runs", "tables", "index"):
        raise StudyError(f"{where}: name: expected a name of letters, digits and ._+=- other than "
                         f"runs/tables/index, got {shown(name)}")
    parameters = entry.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise StudyError(f"{where}: parameters: expected a mapping, got {shown(parameters)}")
    check_file_name(where, "the notebook name", name, ".ipynb", study_dir)
    if path not in declared_cache:
        try:
            declared_cache[path] = notebook_parameters(path)
        except Exception as e:   # nbformat / papermill: one line naming the notebook and the study line
            from ...model.io import first_line

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
            raise StudyError(f"{where}: parameters: {path.name} has no parameter {shown(key)}{suggestion}; "
                             f"its parameters: {', '.join(sorted(declared))}")
    runs = select_runs(where, entry.get("runs", "all"), labels)
    return NotebookSpec(name, path, runs, dict(parameters), declared)
