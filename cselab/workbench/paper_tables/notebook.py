"""Odds and ends of the paper notebooks: the ``profile`` sizing of their costly parameters, runs
for a figure with one line per run, and group names as file-name parts."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping


PROFILES = ("cpu", "gpu", "smoke")   # smoke: every run for 2 steps on a tiny model, the cpu sizes (studies/smoke.py)

def by_profile(profile: str, value, cpu, gpu):
    """A cost parameter: ``value`` when given, else its size for the study profile — ``cpu``
    (minutes on 2 cores, e.g. after the cpu-demo study) or ``gpu`` (the paper's)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if value is not None:
        return value
    return gpu if profile == "gpu" else cpu

def for_legend(runs: Mapping[str, Path]) -> dict[str, Path]:
    """Runs to plot with one line per run: a single run is left unlabelled, so its figure has no
    legend for its one line (its name is in the notebook's text)."""
    return {"": next(iter(runs.values()))} if len(runs) == 1 else dict(runs)

def slug(name: str) -> str:
    """A file-name part for a group or run name (``MixCSE w/o stop-gradient`` → ``mixcse_w_o_stop-gradient``)."""
    import re

    return re.sub(r"[^a-z0-9.+=-]+", "_", name.lower()).strip("_") or "x"
