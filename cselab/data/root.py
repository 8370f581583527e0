"""Where cselab looks for data: ``--data-dir``, else ``$CSELAB_DATA``, else ``./data``."""
from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "CSELAB_DATA"


def data_root(data_dir: str | os.PathLike | None = None) -> Path:
    if data_dir is not None:
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path("data")
