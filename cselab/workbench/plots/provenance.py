"""Where each saved figure came from, written by the code that saves it (never by hand).

Every folder a figure is saved into holds ``provenance.json``: for each figure file, the commit of
the checkout that drew it (``-dirty`` when cselab's source had uncommitted changes), the command
that ran, what it was drawn from (a study's record, or a notebook and its runs), the CPU kind, the
date, and ``drawn_by``: the drawing code — the plotting package, the cselab modules on the stack
when it was saved, and the notebook that drew it. A test (tests/test_figure_provenance.py) fails
when a committed figure's commit is older than the last change to its drawing code: the figure
must be drawn again (``make findings``, ``make demo-figures``).

The PNG bytes stay free of dates and versions (same figure → same bytes); what changes from one
drawing to the next lives here.
"""
from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

# set by a study for its notebooks' kernels: the notebook and the runs their figures are drawn from
from ..studies.figure_source import SOURCE_ENV, checkout_root, source_environment

PROVENANCE_FILE = "provenance.json"
PROVENANCE_FORMAT = 1
COMMAND_ENV = "CSELAB_COMMAND"    # the command a study's kernels were started by (cselab.cli sets it)
PLOTS_PACKAGE = "cselab/workbench/plots"   # every figure's style, checker and most of its drawing
STACK_PREFIX = "cselab/workbench/"          # the modules on the stack that count as drawing code
_log = logging.getLogger(__name__)


def _relative(filename: str, root: Path) -> str | None:
    try:
        return Path(filename).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def drawing_code(extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The plotting package, the cselab workbench modules on the caller's stack (the function that
    saved the figure and whatever called it) and ``extra`` (a notebook), as checkout-relative paths."""
    root = checkout_root()
    found = {PLOTS_PACKAGE, *extra}
    frame = sys._getframe(1)
    while frame is not None:
        path = _relative(frame.f_code.co_filename, root)
        if path and path.startswith(STACK_PREFIX) and not path.startswith(PLOTS_PACKAGE + "/"):
            found.add(path)
        frame = frame.f_back
    return sorted(found)


def command() -> str:
    """The command that is drawing: the one a study's kernel was started by, else this process's."""
    if os.environ.get(COMMAND_ENV):
        return os.environ[COMMAND_ENV]
    argv = list(sys.argv)
    if argv and Path(argv[0]).name in ("__main__.py", "cselab"):
        argv[0] = "cselab"
    elif argv:
        argv[0] = Path(argv[0]).name
    return shlex.join(argv)


def cpu_kind() -> str:
    """torch's CPU capability and what makes bf16 native here (``AVX512/avx512_bf16``)."""
    import torch

    from ...model.utils import native_bf16

    return f"{torch.backends.cpu.get_cpu_capability()}/{native_bf16()}"


def _environment_source() -> tuple[str | None, list[str]]:
    raw = os.environ.get(SOURCE_ENV)
    if not raw:
        return None, []
    try:
        data = json.loads(raw)
        return str(data.get("source") or ""), [str(c) for c in data.get("code") or []]
    except (ValueError, AttributeError):
        return raw, []


def read_provenance(folder: str | os.PathLike) -> dict[str, dict]:
    """``{figure file name: entry}`` of a folder (empty when it has no provenance file)."""
    path = Path(folder) / PROVENANCE_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != PROVENANCE_FORMAT or not isinstance(data.get("figures"), dict):
        raise ValueError(f"{path}: not a provenance file of format {PROVENANCE_FORMAT}")
    return data["figures"]


def record_provenance(files: list[Path], source: str | None = None, code: tuple[str, ...] = ()) -> dict:
    """Write (atomically) the entry of each of ``files`` — one figure's formats, saved together —
    into its folder's provenance file; returns the entry. ``source``: what the figure is drawn from
    (else the study's environment, else the command)."""
    from ...model.io import atomic_write_text
    from ...model.rundir.layout import git_commit

    env_source, env_code = _environment_source()
    entry = {"commit": _drawing_commit(git_commit()), "command": command(), "source": source or env_source or command(),
             "cpu": cpu_kind(), "date": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
             "drawn_by": drawing_code((*code, *env_code))}
    for folder, names in _by_folder(files).items():
        try:
            figures = read_provenance(folder)
        except ValueError as e:   # a broken file is replaced, and said: it is regenerated, never edited
            _log.warning("%s; writing a new one", e)
            figures = {}
        figures.update({name: entry for name in names})
        text = json.dumps({"format": PROVENANCE_FORMAT, "figures": dict(sorted(figures.items()))}, indent=1, ensure_ascii=False)
        atomic_write_text(Path(folder) / PROVENANCE_FILE, text + "\n")
    return entry


def _drawing_commit(commit: str | None) -> str | None:
    """The checkout's commit, ``-dirty`` also when a notebook (which draws figures too) has uncommitted
    changes: git_commit() looks at the package's source only."""
    import subprocess

    if not commit or commit.endswith("-dirty"):
        return commit
    try:
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "notebooks"],
                                 cwd=checkout_root(), capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return commit
    return commit + "-dirty" if changed else commit


def _by_folder(files: list[Path]) -> Mapping[Path, list[str]]:
    out: dict[Path, list[str]] = {}
    for f in files:
        out.setdefault(Path(f).parent, []).append(Path(f).name)
    return out


__all__ = ["PROVENANCE_FILE", "SOURCE_ENV", "COMMAND_ENV", "checkout_root", "command", "cpu_kind", "drawing_code",
           "read_provenance", "record_provenance", "source_environment"]
