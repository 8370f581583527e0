"""Where a run directory stands, read from its files (nothing is loaded but small JSON):
``finished`` (``results.json`` present: reuse it), ``partial`` (``config.json`` present, no
``results.json``: resume it), ``new`` (no run there yet)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...model.config import NON_IDENTITY_KEYS, TrainConfig
from ...model.io import read_json
from ...model.rundir.layout import RunDir
from ...model.rundir.state import load_plain_entry, state_json

# Settings outside the run's identity that change what the run directory records (not its result).
OBSERVATION_KEYS = tuple(k for k in NON_IDENTITY_KEYS if k not in ("output_dir", "run_name", "device",
                                                                  "eval_batch_size"))


@dataclass
class RunStatus:
    kind: str                      # "new" | "partial" | "finished"
    steps_done: int = 0            # finished: steps trained; partial: steps in the last checkpoint
    best_stsb_dev: float | None = None
    train_seconds: float | None = None   # finished: its training loop's seconds (results.json)

    def describe(self, total_steps: int | None = None) -> str:
        if self.kind == "partial":
            of = f"/{total_steps}" if total_steps else ""
            return f"partial (checkpoint at step {self.steps_done}{of})" if self.steps_done else "partial (no checkpoint)"
        return self.kind


def checkpoint_step(run_dir: str | os.PathLike) -> int:
    """Optimizer steps in the run's ``last/`` checkpoint (0 when there is none)."""
    last = RunDir(Path(run_dir)).last_dir
    try:
        state = load_plain_entry(last, "train_state")
    except FileNotFoundError:
        return 0
    except KeyError as e:   # a KeyError's message is quoted: say it as it is
        raise ValueError(e.args[0]) from None
    step = state.get("step") if isinstance(state, dict) else None
    if isinstance(step, bool) or not isinstance(step, int):
        raise ValueError(f"{state_json(last)}: not a cselab checkpoint (its train_state has no step)")
    return step


def run_status(run_dir: str | os.PathLike) -> RunStatus:
    run = RunDir(Path(run_dir))
    results = run.results()
    if results is not None:
        return RunStatus("finished", int(results.get("steps", 0)), results.get("best_stsb_dev"),
                         results.get("train_seconds"))
    if run.config_file.is_file():
        return RunStatus("partial", checkpoint_step(run_dir))
    return RunStatus("new")


def observation_differences(run_dir: str | os.PathLike, cfg: TrainConfig) -> list[str]:
    """Recording settings (``probe_every``, ``log_every``, ...) in which an existing run differs from
    ``cfg``: the run is still the same run (same hash) and is reused, but its metrics were recorded
    with its own settings — e.g. a reused run without probes has no alignment/uniformity records."""
    run = RunDir(Path(run_dir))
    if not run.config_file.is_file():
        return []
    saved = run.read_config()   # checked: a damaged config.json is one error naming it
    wanted = cfg.to_dict()
    return [f"recorded with {key}={saved.get(key)!r}, the study asks {wanted[key]!r}"
            for key in OBSERVATION_KEYS if key in saved and saved[key] != wanted[key]]


# Execution settings (cselab/model/train/execution.py): recorded by every run, not part of its name.
EXECUTION = "execution"


def recorded_execution(run_dir: str | os.PathLike) -> dict | None:
    """The execution settings a run recorded: ``results.json``'s for a finished run, its last
    checkpoint's for a partial one; None when it recorded none (trained by an older cselab, or
    stopped before its first checkpoint)."""
    run = RunDir(Path(run_dir))
    try:
        if run.results_file.is_file():
            found = read_json(run.results_file).get(EXECUTION)
        else:
            found = load_plain_entry(run.last_dir, EXECUTION)
    except (OSError, KeyError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def _describe(settings: dict, keys) -> str:
    return ", ".join(f"{k}={settings[k]}" for k in keys)


def execution_differences(run_dir: str | os.PathLike, expected: dict) -> list[str]:
    """What a study must say about reusing (or resuming) a run trained under other execution
    settings than the study's ``expected`` ones (the keys the study knows; ``threads`` only on a
    CPU): its numbers are not those a run trained here would have, byte for byte."""
    run = RunDir(Path(run_dir))
    if not run.results_file.is_file() and not run.last_dir.is_dir():
        return []
    recorded = recorded_execution(run_dir)
    if recorded is None:
        return ["its execution settings (threads, processes, device) were not recorded (trained by an older "
                "cselab): it may not be byte-identical to a run trained here"]
    keys = [k for k in expected if k in recorded and recorded[k] != expected[k]
            and not (k == "threads" and "cpu" not in (recorded.get("device"), expected.get("device")))]
    if not keys:
        return []
    return [f"trained with {_describe(recorded, keys)}; this study trains with {_describe(expected, keys)}: "
            "the same config, but not byte-identical numbers (see docs/reliability.md, Run directories)"]
