"""Executing a study's parts: the analysis notebooks with papermill, and one run of a study as a
plain function call (:func:`execute_run`, which trains through :func:`cselab.model.train.train`).

:func:`execute_run` is what every launcher calls, in a worker process of this machine (``local``)
or in a submitit job (``submitit-local``, ``slurm``): it takes a plain, picklable :class:`RunTask`
and returns a :class:`RunOutcome`; failures come back as outcomes naming the run's log and the
exception, never as exceptions, so the same code reports them whatever process ran the run.
Notebooks run in kernels of their own (papermill); :func:`signal_kernels` forwards a Ctrl-C to them.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...model.io import check_not_link, first_line, read_json
from .figure_source import figure_source
from ...model.rundir.layout import RunDir
from .status import checkpoint_step, run_status

logger = logging.getLogger(__name__)

KERNEL = "python3"
# Kernel managers of the notebooks this process is executing. jupyter_client starts kernels in their
# own session, so a Ctrl-C in the terminal does not reach them: signal_kernels() forwards it.
_KERNEL_MANAGERS: "weakref.WeakSet" = weakref.WeakSet()


@functools.cache
def _tracked_kernel_manager_class():
    from jupyter_client.manager import AsyncKernelManager

    from ...model.project import ROOT_ENV

    class TrackedKernelManager(AsyncKernelManager):
        """nbclient's default kernel manager, remembered so that its kernel can be interrupted; its
        kernels talk to it encrypted and resolve relative paths from the directory they start in."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _KERNEL_MANAGERS.add(self)
            # ipykernel >= 7 logs "Kernel is running over TCP without encryption ..." to its stderr for
            # every kernel started without CurveZMQ keys (kernelapp.init_sockets; a log line of the kernel
            # process, not a Python warning). jupyter_client >= 8.10 provisions the keys itself under
            # transport_encryption="auto" when the kernelspec declares "curve" support, which makes the
            # warning's premise false instead of hiding it; older versions have neither the trait nor it.
            if self.has_trait("transport_encryption") and _zmq_has_curve():
                self.transport_encryption = "auto"

        async def _async_interrupt_kernel(self):
            # jupyter_client interrupts every kernel before shutting it down. Between notebooks the
            # kernel is idle, and ipykernel then prints "ERROR | KeyboardInterrupt caught in kernel"
            # into the study's output, which reads as a failure; the shutdown ends the kernel anyway.
            # A user's Ctrl-C reaches a running cell through signal_kernels, not through here.
            if self.shutting_down:
                return None
            return await super()._async_interrupt_kernel()

        async def _async_pre_start_kernel(self, **kw):
            # papermill runs the kernel in its cwd (the study's working directory): relative paths in
            # the notebook must mean what they mean to `cselab reproduce`, not the checkout's root
            # (cselab.model.project), even when the command runs elsewhere or $CSELAB_ROOT says otherwise.
            kw["env"] = {**(kw.get("env") or os.environ), ROOT_ENV: os.path.abspath(kw.get("cwd") or os.getcwd())}
            return await super()._async_pre_start_kernel(**kw)

    return TrackedKernelManager


def _zmq_has_curve() -> bool:
    import zmq

    return bool(zmq.has("curve"))


def _kernel_manager_class(extra_env: dict[str, str] | None):
    """The tracked kernel manager, starting its kernel with ``extra_env`` added to this process's
    environment (per notebook: notebooks of one study may run in parallel threads)."""
    base = _tracked_kernel_manager_class()
    if not extra_env:
        return base

    class KernelManagerWithEnv(base):
        async def _async_pre_start_kernel(self, **kw):
            kw["env"] = {**kw.get("env", os.environ), **extra_env}
            return await super()._async_pre_start_kernel(**kw)

    return KernelManagerWithEnv


@dataclass
class TimeSplit:
    """Where one executed notebook's or run's seconds went: its cells (for a run, the training call;
    of which encoding sentences and fitting K-means/UMAP, as cselab.model.timing measured them) and the
    rest — starting the kernel and saving the notebook, or a run's set-up and log — as
    ``total − cells``."""
    total: float
    cells: float | None = None
    encode: float | None = None
    fit: float | None = None

    @property
    def kernel(self) -> float | None:
        return None if self.cells is None else max(0.0, self.total - self.cells)

    def to_dict(self) -> dict:
        return {"total": self.total, "kernel": self.kernel, "cells": self.cells, "encode": self.encode,
                "fit": self.fit}


def cell_seconds(executed: str | os.PathLike) -> float | None:
    """The sum of papermill's per-cell durations in an executed notebook (None when unreadable)."""
    import json

    try:
        cells = json.loads(Path(executed).read_text())["cells"]
        return float(sum((c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0) for c in cells))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def signal_kernels(signum: int = signal.SIGINT) -> int:
    """Send ``signum`` to every notebook kernel this process is running (SIGINT = Jupyter's
    "interrupt": the running cell raises KeyboardInterrupt). Returns how many were signalled."""
    sent = 0
    for manager in list(_KERNEL_MANAGERS):
        process = getattr(getattr(manager, "provisioner", None), "process", None)
        if process is not None and process.poll() is None:
            process.send_signal(signum)
            sent += 1
    return sent


@dataclass
class RunTask:
    """Everything a worker needs to execute one run (plain data: it travels to submitit jobs)."""
    label: str
    run_dir: str
    config: dict              # the full resolved config (TrainConfig.to_dict())
    resume: bool
    log: str                  # the run's log: what training said, its results or the error's traceback
    data_dir: str | None
    cwd: str                  # working directory of the run (relative paths resolve from here)
    threads: int = 0          # torch CPU threads for the run (0: torch's default)
    estimate_seconds: float | None = None
    lock_file: str | None = None   # the run's lock (cselab/model/rundir/layout.py): another process may hold it


@dataclass
class RunOutcome:
    label: str
    run_dir: str
    status: str               # reused | resumed | trained | failed | interrupted | not started
    seconds: float = 0.0
    best_stsb_dev: float | None = None
    steps: int | None = None
    error: str | None = None
    train_seconds: float | None = None    # the training itself (results.json), of ``seconds``
    split: TimeSplit | None = None
    note: str | None = None   # e.g. another process trained it while this study waited for its lock

    @property
    def ok(self) -> bool:
        return self.status not in NOT_DONE


# what a run that did not finish here is: its error, a Ctrl-C that stopped it at its last checkpoint,
# or a Ctrl-C before any worker took it
NOT_DONE = ("failed", "interrupted", "not started")


class NotebookFailed(RuntimeError):
    """A notebook stopped with an error; the message names the notebook, cell and exception
    (``ename``: the exception's class name, None when the notebook did not get to run a cell)."""

    def __init__(self, message: str, ename: str | None = None):
        super().__init__(message)
        self.ename = ename


def describe_failure(error: Exception, notebook: str | os.PathLike) -> str:
    """One line for a failed notebook: the executed notebook, the failing cell (index in the executed
    notebook, execution count and first source line) and the exception."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(error, PapermillExecutionError):
        first = next((line for line in (error.source or "").splitlines() if line.strip()), "")
        return (f"{notebook}: cell {error.cell_index} (In [{error.exec_count}]: {first.strip()[:80]}) raised "
                f"{error.ename}: {error.evalue}")
    return f"{notebook}: {type(error).__name__}: {error}"


def thread_env(threads: int) -> dict[str, str]:
    """The environment that limits a fresh kernel to ``threads`` CPU threads (torch and scikit-learn
    read OpenMP's variable, UMAP's numba its own); empty for 0, the libraries' defaults."""
    if threads <= 0:
        return {}
    return {name: str(threads) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}


PARTIAL_SUFFIX = ".partial.ipynb"


def partial_output(output: Path) -> Path:
    """Where papermill writes ``output`` while it executes (hidden; put in place when execution ends)."""
    return output.with_name(f".{output.stem}{PARTIAL_SUFFIX}")


def remove_partials(folder: Path) -> None:
    """Remove what executions killed earlier left in ``folder`` (their hidden partial notebooks):
    called by a study, under its lock, before it executes anything there."""
    if folder.is_dir() and not folder.is_symlink():
        for entry in folder.glob(f".*{PARTIAL_SUFFIX}"):
            if entry.is_file() and not entry.is_symlink():
                entry.unlink()


def unpaired(notebook):
    """``notebook`` (an nbformat node read from a jupytext ``.py``) without jupytext's metadata. The
    executed copy is a plain ``.ipynb``: with the source's ``jupytext.formats`` (``py:percent``) in its
    metadata, jupytext's contents manager (JupyterLab under ``make lab``) takes it for one half of a
    pair whose formats do not include ipynb, and refuses to open it."""
    notebook.metadata.pop("jupytext", None)
    return notebook


# How often a notebook's kernel is started before a start that never answered counts as the notebook's failure.
KERNEL_START_ATTEMPTS = 3


def kernel_never_started(error: Exception, partial: Path) -> bool:
    """Whether ``error`` (from papermill) is a kernel that never answered its first request — jupyter_client's
    "Kernel didn't respond in N seconds" or "Kernel died before replying to kernel_info" — before any
    cell ran (no executed cell in the partial notebook): a start worth retrying, not the notebook's
    own failure."""
    text = str(error)
    if not ("didn't respond" in text or "died before replying" in text):
        return False
    try:
        cells = read_json(partial).get("cells", [])
    except (OSError, ValueError):   # no partial notebook yet, or one cut short: no cell ran
        return True
    return not any(c.get("execution_count") for c in cells)


def execute_notebook(source: str | os.PathLike, output: str | os.PathLike, parameters: dict,
                     cwd: str | os.PathLike | None = None, split: TimeSplit | None = None, threads: int = 0) -> Path:
    """Execute a jupytext ``.py`` (or ``.ipynb``) notebook with papermill into ``output``; raises
    :class:`NotebookFailed` with the failing cell. papermill saves the executed notebook after each
    cell, so a failed one keeps its outputs up to the error. ``split``: filled with where the time
    went (also when the notebook fails). ``threads``: the CPU threads of the notebook's kernel
    (:func:`thread_env`; 0 keeps the libraries' defaults)."""
    import tempfile

    import papermill
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    from ...model.timing import ENV, TIMED_KINDS
    from .spec import read_notebook

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    # papermill saves after every cell: into a hidden partial file, put in place when execution
    # ends (done or failed), so a kill -9 leaves the earlier complete notebook, not a half one. It
    # ends in .ipynb: papermill warns about any other suffix, and a warnings filter around the call
    # would not hold, since a study executes notebooks in parallel threads and warning filters are
    # process-wide (the warning leaked into `make demo`'s output).
    partial = partial_output(output)
    partial.unlink(missing_ok=True)   # left by a process killed earlier
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cselab-timing-") as tmp:
        timings = Path(tmp, "timings.json")
        manager = _kernel_manager_class({ENV: str(timings), **thread_env(threads),
                                         **figure_source(Path(source), parameters)})
        try:
            for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
                try:
                    papermill.execute_notebook(unpaired(read_notebook(Path(source))), str(partial),
                                               parameters=parameters, kernel_name=KERNEL, progress_bar=False,
                                               cwd=str(cwd) if cwd else None, kernel_manager_class=manager)
                    break
                except RuntimeError as e:
                    if not kernel_never_started(e, partial):
                        raise
                    if attempt == KERNEL_START_ATTEMPTS:
                        # the notebook's failure, not the study's: the study goes on to its other notebooks
                        raise NotebookFailed(f"{output}: its kernel did not start in {KERNEL_START_ATTEMPTS} "
                                             f"attempts ({first_line(e)})") from None
                    # a fresh kernel picks fresh ports: two kernels started at once can race for one
                    # (ipykernel's "Address already in use", then "Kernel didn't respond in 60 seconds")
                    logger.warning("%s: its kernel did not start (%s); starting another (attempt %d of %d)",
                                   output.name, e, attempt + 1, KERNEL_START_ATTEMPTS)
                    partial.unlink(missing_ok=True)
        except PapermillExecutionError as e:
            if partial.exists():
                os.replace(partial, output)
            raise NotebookFailed(describe_failure(e, output), e.ename) from None
        except DeadKernelError as e:
            # the kernel died under a cell (killed for memory, a crash in native code): that notebook failed
            raise NotebookFailed(f"{output}: its kernel died ({first_line(e)})") from None
        finally:
            if partial.exists():
                os.replace(partial, output)
            if split is not None:
                split.total = time.perf_counter() - started
                split.cells = cell_seconds(output)
                measured = read_json(timings) if timings.is_file() else {}
                split.encode, split.fit = (measured.get(k) for k in TIMED_KINDS)
    return output


# How often a run whose lock another process took (between this study's wait and its kernel's start)
# is waited for again before it counts as failed.
LOCK_RETRIES = 5


def wait_for_run_lock(lock_file: Path, log: Path | None = None) -> float | None:
    """Block until no process holds the run's lock (another ``cselab reproduce`` or ``cselab train``
    training it); returns the seconds waited, None when it was free. The lock is released at once:
    training takes it. While it waits, ``log`` (the run's log) says so."""
    from filelock import FileLock, Timeout

    from ...model.io import atomic_write_text

    lock_file.parent.mkdir(parents=True, exist_ok=True)
    check_not_link(lock_file, "a run's lock")
    try:
        with FileLock(lock_file, timeout=0):
            return None
    except Timeout:
        pass
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(log, f"waiting for another process that holds the run's lock ({lock_file})\n")
    started = time.perf_counter()
    with FileLock(lock_file, timeout=-1):
        return time.perf_counter() - started


def execute_run(task: RunTask, stop_requested: Callable[[], bool] = lambda: False) -> RunOutcome:
    """Train (or resume) one run by calling :func:`cselab.model.train.train` in this process; never raises
    for a failed run (a Ctrl-C that stops it comes back as an ``interrupted`` outcome: the run stays at
    its last checkpoint and resumes next time). ``stop_requested`` is asked after every step: when it
    says yes the run stops there as at a Ctrl-C. The worker's own Ctrl-C raises at once, but an
    exception raised from a signal handler is lost when it lands in a finalizer (Python prints
    "Exception ignored" and goes on), and the run then trained to its end (a CI run saw it); the
    check after each step cannot be lost. A run another process holds (a concurrent study or
    ``cselab train``) is waited for, then reused when that process finished it, resumed when it
    left it partial."""
    from ...model.rundir.layout import RunLockedError

    started = time.perf_counter()
    run_dir = Path(task.cwd, task.run_dir)
    waited: float | None = None   # seconds spent waiting for another process's lock; None: never held

    def outcome(status: str, **kw) -> RunOutcome:
        if waited is not None and "note" not in kw:
            kw["note"] = f"waited {waited:.0f} s for another process that held the run's lock"
        return RunOutcome(task.label, task.run_dir, status, time.perf_counter() - started, **kw)

    for attempt in range(LOCK_RETRIES + 1):
        if task.lock_file is not None:
            seconds = wait_for_run_lock(Path(task.cwd, task.lock_file), Path(task.cwd, task.log))
            waited = waited if seconds is None else (waited or 0.0) + seconds
        status = run_status(run_dir)
        if status.kind == "finished":   # another process finished it meanwhile
            when = ("after this study planned it" if waited is None else
                    f"while this study waited {waited:.0f} s for its lock")
            if waited is not None:
                from ...model.io import atomic_write_text

                atomic_write_text(Path(task.cwd, task.log), f"reused: trained by another process {when}\n")
            return outcome("reused", best_stsb_dev=status.best_stsb_dev, steps=status.steps_done,
                           note=f"trained by another process {when}")
        resume = status.kind == "partial"
        resumed_from = checkpoint_step(run_dir) if resume else 0
        split = TimeSplit(0.0)
        try:
            results = train_logged(task, resume, split, stop_requested)
        except RunLockedError as e:
            if task.lock_file is not None and attempt < LOCK_RETRIES:
                continue   # taken by another process just before this run started: wait for it again
            return outcome("failed", error=f"{task.log}: RunLockedError: {e}")
        except KeyboardInterrupt:
            return outcome("interrupted", error=f"{task.log}: interrupted; the run stays at its last checkpoint and "
                                           "resumes when the study runs again")
        except Exception as e:   # the run's own error (bad data, a refused config, ...): its traceback is in the log
            return outcome("failed", error=f"{task.log}: {type(e).__name__}: {first_line(e)}")
        break
    return outcome("resumed" if resumed_from else "trained", best_stsb_dev=results.get("best_stsb_dev"),
                   steps=results.get("steps"), train_seconds=results.get("train_seconds"), split=split)


def stop_when(stop_requested: Callable[[], bool]) -> Callable:
    """A training callback that raises KeyboardInterrupt after the step at which ``stop_requested()``
    first says yes (the run then stays at its last checkpoint, as after a Ctrl-C)."""
    def check(state, record) -> None:
        if stop_requested():
            raise KeyboardInterrupt(f"stop requested after step {state.step}")
    return check


def train_logged(task: RunTask, resume: bool, split: TimeSplit,
                 stop_requested: Callable[[], bool] = lambda: False) -> dict:
    """One run's training, as the train notebook does it, written to the run's log (its directory,
    the config, what the ``cselab`` loggers say, the results or the traceback): in ``task.cwd``
    with ``task.threads`` torch threads (both restored after), the output directory taken from
    there. Returns the run's ``results.json``; ``split`` gets where the seconds went."""
    import json
    import logging
    import traceback

    import torch

    from ...model import timing
    from ...model.config import load_config
    from ...model.train import train

    started = time.perf_counter()
    log = Path(task.cwd, task.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    partial = log.with_name(f".{log.stem}.partial{log.suffix}")   # the finished log appears whole
    threads = torch.get_num_threads()
    before = timing.totals()
    with open(partial, "w", encoding="utf-8") as out, working_dir(task.cwd):
        handler = logging.StreamHandler(out)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger = logging.getLogger("cselab")
        logger.addHandler(handler)
        try:
            if task.threads:
                torch.set_num_threads(task.threads)
            cfg = load_config(task.config)
            cfg = load_config(task.config, {"output_dir": str(Path(task.cwd, cfg.output_dir))})
            run_dir = RunDir.for_config(cfg).path
            print(f"run directory: {run_dir}", file=out)
            if resume:
                step = checkpoint_step(run_dir)
                print(f"resuming from the checkpoint at step {step}" if step else
                      "no checkpoint yet: training from step 0", file=out)
            print(json.dumps(cfg.to_dict(), indent=1), file=out, flush=True)
            cells = time.perf_counter()
            try:
                run = train(cfg, resume=resume, data_dir=task.data_dir, progress=False,
                            callbacks=[stop_when(stop_requested)])
            finally:
                split.cells = time.perf_counter() - cells
            results = read_json(RunDir(run).results_file)
            print(f"steps: {results['steps']} of {results['total_steps']}; best STS-B dev "
                  f"{results['best_stsb_dev']:.2f} at step {results['best_step']}; "
                  f"{results['train_seconds']:.1f} s of training", file=out)
            return results
        except BaseException:
            out.write(traceback.format_exc())
            raise
        finally:
            logger.removeHandler(handler)
            torch.set_num_threads(threads)
            after = timing.totals()
            split.encode, split.fit = (after[k] - before[k] for k in timing.TIMED_KINDS)
            split.total = time.perf_counter() - started
            out.close()
            os.replace(partial, log)


@contextlib.contextmanager
def working_dir(path: str | os.PathLike):
    """Run the block in ``path`` (relative paths of a run's config resolve from the study's folder),
    the previous working directory restored after."""
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
