"""What changes a run's numbers beyond its config: the execution settings.

The config (and so the run folder's name and hash) fixes the experiment. The bytes of its results
depend besides on how it was executed: the kind of device, the precisions ``auto`` resolved to, the
number of processes (each has its own dropout stream) and, on a CPU, the number of intra-op threads
(``torch.get_num_threads()``: it sets how sums inside matrix products and reductions are split, so
the last bits of every activation, and from there the weights, differ). They are recorded in each
checkpoint and in ``results.json`` under ``execution``; a resume under different settings is refused
(it would splice two numeric histories into one run folder), and a study that reuses a run trained
under other settings says so in its index (cselab/workbench/studies/status.py).

They are recorded and checked rather than hashed into the run's name: a thread count is a property
of the machine, not of the experiment (the same study on a 16-core and an 8-core machine is the same
set of experiments, and must find the same runs), and old run names stay valid.
"""
from __future__ import annotations

from pathlib import Path

import torch

KEY = "execution"   # the entry in the checkpoint's trainer state and in results.json


def execution_settings(device: torch.device, world_size: int, precisions: dict) -> dict:
    """This process's settings for a run on ``device`` with ``world_size`` processes."""
    return {"device": device.type, "threads": torch.get_num_threads(), "world_size": world_size, **precisions}


def resume_mismatch(saved: dict | None, now: dict) -> str | None:
    """How ``now`` differs from a checkpoint's recorded settings in what a resume must keep equal:
    the device kind, and on a CPU the thread count (None when it may resume; a checkpoint from
    before the settings were recorded is not checked). The precisions and the process count have
    their own checks (cselab.model.train.checkpoints.check_resumed_setting)."""
    if not isinstance(saved, dict):
        return None
    if saved.get("device") not in (None, now["device"]):
        return (f"the checkpoint was written on a {saved['device']} device, this run would continue on "
                f"{now['device']}; resume it with device={saved['device']}")
    threads = saved.get("threads")
    if now["device"] == "cpu" and threads is not None and threads != now["threads"]:
        return (f"the checkpoint was written with {threads} intra-op thread(s) (torch.get_num_threads()), this "
                f"process has {now['threads']}; resume it with OMP_NUM_THREADS={threads}")
    return None


def check_resume(saved: dict | None, now: dict, last_dir: Path) -> None:
    """Refuse, in one line, a resume that would continue the run under other execution settings."""
    problem = resume_mismatch(saved, now)
    if problem is not None:
        raise ValueError(f"{last_dir}: {problem} (a resumed run is byte-identical to an uninterrupted one only under "
                         "the same settings), or start a new run with --overwrite")
