"""Progress bars for long jobs (``tqdm.auto``: a widget in notebooks, text on a terminal).

tqdm reads ``TQDM_DISABLE`` only when it is first imported and lets an explicit ``disable=``
argument override it, so a bar that cselab turns on on purpose would ignore the variable. Every
cselab bar goes through :func:`progress_bar`, which checks the variable at the moment the bar is
made: ``TQDM_DISABLE=1`` (any value but ``""``, ``0``, ``false``, ``no``, ``off``) silences them all,
including after the process has started (the CLI's ``--quiet`` sets it).
"""
from __future__ import annotations

import os
from typing import Iterable

from tqdm.auto import tqdm

OFF_VALUES = ("", "0", "false", "no", "off")


def progress_disabled_by_env() -> bool:
    """True when ``TQDM_DISABLE`` asks for silence."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in OFF_VALUES


def progress_bar(iterable: Iterable | None = None, *, total: float | None = None, desc: str | None = None,
                 unit: str = "it", enabled: bool = True, leave: bool = True, **kwargs) -> tqdm:
    """A ``tqdm.auto`` bar, shown when ``enabled`` and not silenced by ``TQDM_DISABLE``."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave,
                disable=not enabled or progress_disabled_by_env(), dynamic_ncols=True, **kwargs)
