"""The project root: where the relative paths of the notebooks and their defaults (``runs/``,
``data/``, ``figures/``, ``reports/``) point, wherever Jupyter started the kernel.

JupyterLab starts a notebook's kernel in the notebook's own folder (``notebooks/``), papermill and
``cselab reproduce`` in the directory they were run from; the defaults mean the same folders in all
three because they are resolved against the root, found in this order:

1. ``$CSELAB_ROOT`` (``cselab reproduce`` sets it to its own working directory for the kernels it
   starts, so a study's relative paths keep meaning what they mean to the command);
2. the nearest cselab checkout (a ``pyproject.toml`` naming the ``cselab`` project) at or above the
   notebook a Jupyter server opened (``$JPY_SESSION_NAME``, which jupyter_server gives its kernels);
3. the nearest cselab checkout at or above the working directory;
4. the working directory itself (a project of one's own, with cselab installed as a package).

The checkout cselab itself is imported from is not a candidate on purpose: a script or test run in
another folder would otherwise write its runs and figures into the source tree.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

ROOT_ENV = "CSELAB_ROOT"
SESSION_ENV = "JPY_SESSION_NAME"   # jupyter_server: the path of the notebook a kernel was started for
_PROJECT_NAME = re.compile(r'^name\s*=\s*"cselab"\s*$', re.MULTILINE)


def is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is the root of a cselab checkout (its pyproject.toml names the project)."""
    try:
        return bool(_PROJECT_NAME.search((folder / "pyproject.toml").read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def find_checkout(start: str | os.PathLike) -> Path | None:
    """The nearest cselab checkout at or above ``start`` (a file or a folder), or None."""
    start = Path(start).absolute()
    for folder in (start, *start.parents):
        if folder.is_dir() and is_checkout(folder):
            return folder
    return None


def project_root() -> Path:
    """The folder relative paths are resolved against (absolute; see the module's docstring)."""
    override = os.environ.get(ROOT_ENV)
    if override:
        return Path(override).expanduser().absolute()
    session = os.environ.get(SESSION_ENV)
    found = (find_checkout(Path(session).parent) if session else None) or find_checkout(Path.cwd())
    return found or Path.cwd()


def project_path(path: str | os.PathLike) -> Path:
    """``path`` resolved against the project root; absolute paths are returned as given, and so are
    relative ones when the root is the working directory (nothing to resolve: results and messages
    keep the short relative form)."""
    path = Path(path).expanduser()
    if path.is_absolute():
        return path
    root = project_root()
    if root == Path.cwd().absolute():
        return path
    return root / path
