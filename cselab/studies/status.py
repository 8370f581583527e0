"""Where a run directory stands, read from its files (nothing is loaded but small JSON):
``finished`` (``results.json`` present: reuse it), ``partial`` (``config.json`` present, no
``results.json``: resume it), ``new`` (no run there yet)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..io import read_json
from ..train.state import load_plain_entry

# The trainer's files (cselab/train/rundir.py and state.py).
RESULTS = "results.json"
CONFIG = "config.json"
CHECKPOINT = "last"


@dataclass
class RunStatus:
    kind: str                      # "new" | "partial" | "finished"
    steps_done: int = 0            # finished: steps trained; partial: steps in the last checkpoint
    best_stsb_dev: float | None = None

    def describe(self, total_steps: int | None = None) -> str:
        if self.kind == "partial":
            of = f"/{total_steps}" if total_steps else ""
            return f"partial (checkpoint at step {self.steps_done}{of})" if self.steps_done else "partial (no checkpoint)"
        return self.kind


def checkpoint_step(run_dir: str | os.PathLike) -> int:
    """Optimizer steps in the run's ``last/`` checkpoint (0 when there is none)."""
    try:
        return int(load_plain_entry(Path(run_dir) / CHECKPOINT, "train_state")["step"])
    except FileNotFoundError:
        return 0


def run_status(run_dir: str | os.PathLike) -> RunStatus:
    run_dir = Path(run_dir)
    if (run_dir / RESULTS).is_file():
        results = read_json(run_dir / RESULTS)
        return RunStatus("finished", int(results.get("steps", 0)), results.get("best_stsb_dev"))
    if (run_dir / CONFIG).is_file():
        return RunStatus("partial", checkpoint_step(run_dir))
    return RunStatus("new")
