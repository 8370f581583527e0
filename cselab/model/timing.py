"""Where a process's time goes: seconds spent encoding sentences and fitting (K-means, UMAP), for
the study's index page (cselab/workbench/studies/report.py).

The encoder's batched passes add to ``encode``, the fits to ``fit``. A study executes each notebook
in a kernel whose environment names a file in :data:`ENV`; the totals are written there (at most
once a second while the kernel works, and when it exits), and the study reads them back. Outside a
study nothing is written and the cost is one clock read per batch.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections import defaultdict
from typing import Iterator

ENV = "CSELAB_TIMINGS"
TIMED_KINDS = ("encode", "fit")
_totals: dict[str, float] = defaultdict(float)
_lock = threading.Lock()
_last_write = 0.0


def totals() -> dict[str, float]:
    """Seconds per kind so far in this process."""
    return {k: _totals.get(k, 0.0) for k in TIMED_KINDS}


def reset() -> None:
    with _lock:
        _totals.clear()


def add(kind: str, seconds: float) -> None:
    if kind not in TIMED_KINDS:
        raise ValueError(f"timing kind must be one of {TIMED_KINDS}, got {kind!r}")
    global _last_write
    with _lock:
        _totals[kind] += seconds
        now = time.monotonic()
        if os.environ.get(ENV) and now - _last_write >= 1.0:
            _last_write = now
            _write()


@contextlib.contextmanager
def timed(kind: str) -> Iterator[None]:
    """Add the block's wall-clock seconds to ``kind`` (also when it raises)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        add(kind, time.perf_counter() - start)


def _write() -> None:
    path = os.environ.get(ENV)
    if path:
        from .io import atomic_write_json

        with contextlib.suppress(OSError):   # a timing file must never fail the notebook
            atomic_write_json(path, totals())


@atexit.register
def flush() -> None:
    """Write the totals now (at exit, and after every notebook cell: a kernel shut down hard never exits)."""
    with _lock:
        _write()
