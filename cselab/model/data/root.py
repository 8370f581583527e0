"""Where cselab looks for data: ``--data-dir``, else ``$CSELAB_DATA``, else ``./data``. Relative
paths are taken from the project root (:mod:`cselab.model.project`), so that a notebook JupyterLab opened
in ``notebooks/`` finds the checkout's ``data/`` (from the root itself nothing changes)."""
from __future__ import annotations

import os
from pathlib import Path

from ..project import project_path

ENV_VAR = "CSELAB_DATA"


def data_root(data_dir: str | os.PathLike | None = None) -> Path:
    if data_dir is None:
        data_dir = os.environ.get(ENV_VAR) or "data"
    return project_path(data_dir)


def data_root_source(data_dir: str | os.PathLike | None = None) -> str:
    """Where :func:`data_root` took the root from, for an error message: the option, the variable
    or the default folder."""
    if data_dir is not None:
        return "--data-dir"
    return f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "the default data root ./data"
