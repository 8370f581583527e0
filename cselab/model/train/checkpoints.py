"""The folders a run saves while it trains, and resuming from ``last/``.

* ``last/`` (every evaluation): the model plus everything a resumed run needs to continue exactly
  (optimizer, schedule, scaler, loss state, counters, every process's random stream) and the
  settings it must be resumed with (resolved precisions, number of processes, execution);
* ``best/`` (an evaluation that improves the ``select_by`` score): the model, with its step and scores;
* ``snapshots/step-N/`` (every ``snapshot_every`` steps): the model only, for analyses over training.

Each is written into a staging folder and swapped in whole, so a crash never leaves half a folder.
Only process 0 writes; every process takes part in gathering the random streams.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..encoder import SentenceEncoder
from ..export import run_facts
from ..io import check_not_link, first_line, staged_dir
from ..rundir import RunDir, load_state, save_state
from ..rundir.state import state_json
from ..utils import rng_state, set_rng_state
from . import ddp, execution
from .training import Training, TrainState


# what resume_from_checkpoint reads of a checkpoint (save_checkpoint writes more: precisions, settings)
CHECKPOINT_ENTRIES = ("optimizer", "scheduler", "scaler", "loss", "train_state", "rng")


def save_checkpoint(t: Training, run: RunDir, processes: ddp.Processes, precisions: dict, settings: dict) -> None:
    """``last/`` at the current step (``settings``: :func:`cselab.model.train.execution.execution_settings`)."""
    rngs = processes.gather_rng_states(rng_state())   # every process's dropout stream
    t.checkpoint_step = t.state.step
    if not processes.is_main:
        return
    with staged_dir(run.last_dir, {"step": t.state.step}) as tmp:
        t.encoder.save(tmp, card=run_facts(run.path))
        save_state({"optimizer": t.optimizer.state_dict(), "scheduler": t.scheduler.state_dict(),
                    "scaler": t.scaler.state_dict(), "loss": t.loss_fn.state_dict(),
                    "train_state": dataclasses.asdict(t.state), "rng": rngs[0], "rng_per_process": rngs,
                    "precision": precisions, "world_size": {"world_size": processes.world_size},
                    execution.KEY: settings}, tmp)


def resume_from_checkpoint(t: Training, run: RunDir, processes: ddp.Processes, precisions: dict,
                           settings: dict) -> None:
    """Brings ``t`` (built on ``last/``'s model) back to the checkpoint: optimizer, schedule, scaler,
    loss state, counters and random streams; the metrics logged after its step are dropped, since
    the resumed run logs them again. A setting that differs from the checkpoint's is an error."""
    saved = load_state(run.last_dir, required=CHECKPOINT_ENTRIES)
    for what, target in (("optimizer", t.optimizer), ("scheduler", t.scheduler), ("scaler", t.scaler),
                         ("loss", t.loss_fn)):
        try:
            target.load_state_dict(saved[what])
        except (RuntimeError, ValueError, KeyError, TypeError) as e:   # e.g. another queue size's buffers
            raise ValueError(f"{state_json(run.last_dir)}: its {what} state does not fit this run's config "
                             f"({state_mismatch(e)}); was last/ copied from another run?") from None
    t.state = TrainState(**saved["train_state"])
    check_resumed_setting(saved, "precision", precisions, run.last_dir)
    check_resumed_setting(saved, "world_size", {"world_size": processes.world_size}, run.last_dir)
    execution.check_resume(saved.get(execution.KEY), settings, run.last_dir)
    set_rng_state(processes.scatter_rng_states(saved["rng_per_process"]) if "rng_per_process" in saved
                  else saved["rng"])
    if processes.is_main:
        run.truncate_metrics(t.state.step)
    t.checkpoint_step = t.state.step


def state_mismatch(e: BaseException) -> str:
    """The line of torch's ``load_state_dict`` error that says what differs (its first line only
    says that loading failed: "Error(s) in loading state_dict for ContrastiveLoss:")."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[1] if len(lines) > 1 and lines[0].endswith(":") else first_line(e)


def check_resumed_setting(saved: dict, key: str, now: dict, last_dir: Path) -> None:
    """Resuming is exact only with what the checkpoint was written with: the resolved precisions
    (``precision: auto`` means bf16 on one machine and fp32 on another) and the number of processes
    (each has its own dropout stream). A difference is an error naming both and what to do."""
    before = saved.get(key)
    if before is not None and before != now:
        how = (f"resume it with torchrun --nproc_per_node {before['world_size']}" if key == "world_size" and
               before.get("world_size", 1) > 1 else "resume it in one process" if key == "world_size" else
               "resume it on a machine where the config resolves the same way")
        raise ValueError(f"{last_dir}: the checkpoint was written with {before}, this run would continue with {now}; "
                         f"a resumed run is exact only with the same setting ({how}, or start a new run)")


def save_best(run: RunDir, encoder: SentenceEncoder, step: int, stsb_dev: float, select_by: str,
              extra: dict) -> None:
    """``best/``: the model, its step, STS-B dev and the ``select_by`` score when that is another one."""
    with staged_dir(run.best_dir, {"step": step}) as tmp:
        encoder.save(tmp, extra={"step": step, "stsb_dev": stsb_dev, "select_by": select_by, **extra},
                     card=run_facts(run.path))


def save_snapshot(run: RunDir, encoder: SentenceEncoder, step: int) -> None:
    """A model-only folder (no optimizer state) for analyses over training (the explorer)."""
    check_not_link(run.snapshots_dir, "the run's snapshots")   # a resumed run's snapshots/ replaced by a link
    with staged_dir(run.snapshot_dir(step), {"step": step}) as tmp:
        encoder.save(tmp, extra={"step": step})
