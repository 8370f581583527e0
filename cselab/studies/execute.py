"""Executing notebooks with papermill, and one run of a study (its ``train`` notebook).

:func:`execute_run` is what every launcher calls, in this process (``local``) or in a submitit job
(``submitit-local``, ``slurm``): it takes a plain, picklable :class:`RunTask` and returns a
:class:`RunOutcome`; failures come back as outcomes with the failing cell, never as exceptions, so
the same code reports them whatever process ran the run.
"""
from __future__ import annotations

import functools
import os
import signal
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from ..io import read_json
from .status import RESULTS, checkpoint_step

KERNEL = "python3"
# Kernel managers of the notebooks this process is executing. jupyter_client starts kernels in their
# own session, so a Ctrl-C in the terminal does not reach them: signal_kernels() forwards it.
_KERNEL_MANAGERS: "weakref.WeakSet" = weakref.WeakSet()


@functools.cache
def _tracked_kernel_manager_class():
    from jupyter_client.manager import AsyncKernelManager

    from ..project import ROOT_ENV

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

        async def _async_pre_start_kernel(self, **kw):
            # papermill runs the kernel in its cwd (the study's working directory): relative paths in
            # the notebook must mean what they mean to `cselab reproduce`, not the checkout's root
            # (cselab.project), even when the command runs elsewhere or $CSELAB_ROOT says otherwise.
            kw["env"] = {**(kw.get("env") or os.environ), ROOT_ENV: os.path.abspath(kw.get("cwd") or os.getcwd())}
            return await super()._async_pre_start_kernel(**kw)

    return TrackedKernelManager


def _zmq_has_curve() -> bool:
    import zmq

    return bool(zmq.has("curve"))


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
    notebook: str             # the train notebook's source
    output: str               # where the executed notebook goes
    data_dir: str | None
    cwd: str                  # working directory of the kernel (relative paths resolve from here)
    threads: int = 0          # torch CPU threads in the kernel (0: torch's default)
    estimate_seconds: float | None = None


@dataclass
class RunOutcome:
    label: str
    run_dir: str
    status: str               # reused | resumed | trained | failed
    seconds: float = 0.0
    best_stsb_dev: float | None = None
    steps: int | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status != "failed"


class NotebookFailed(RuntimeError):
    """A notebook stopped with an error; the message names the notebook, cell and exception."""


def describe_failure(error: Exception, notebook: str | os.PathLike) -> str:
    """One line for a failed notebook: the executed notebook, the failing cell (index in the executed
    notebook, execution count and first source line) and the exception."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(error, PapermillExecutionError):
        first = next((line for line in (error.source or "").splitlines() if line.strip()), "")
        return (f"{notebook}: cell {error.cell_index} (In [{error.exec_count}]: {first.strip()[:80]}) raised "
                f"{error.ename}: {error.evalue}")
    return f"{notebook}: {type(error).__name__}: {error}"


def execute_notebook(source: str | os.PathLike, output: str | os.PathLike, parameters: dict,
                     cwd: str | os.PathLike | None = None) -> Path:
    """Execute a jupytext ``.py`` (or ``.ipynb``) notebook with papermill into ``output``; raises
    :class:`NotebookFailed` with the failing cell. papermill saves the executed notebook after each
    cell, so a failed one keeps its outputs up to the error."""
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(jupytext.read(source), str(output), parameters=parameters, kernel_name=KERNEL,
                                   progress_bar=False, cwd=str(cwd) if cwd else None,
                                   kernel_manager_class=_tracked_kernel_manager_class())
    except PapermillExecutionError as e:
        raise NotebookFailed(describe_failure(e, output)) from None
    return output


def execute_run(task: RunTask) -> RunOutcome:
    """Train (or resume) one run through the train notebook; never raises for a failed run."""
    started = time.perf_counter()
    resumed_from = checkpoint_step(Path(task.cwd, task.run_dir)) if task.resume else 0
    parameters = {"config": task.config, "resume": task.resume, "data_dir": task.data_dir,
                  "threads": task.threads, "progress": False}

    def outcome(status: str, **kw) -> RunOutcome:
        return RunOutcome(task.label, task.run_dir, status, time.perf_counter() - started, **kw)

    try:
        execute_notebook(task.notebook, task.output, parameters, task.cwd)
    except NotebookFailed as e:
        return outcome("failed", error=str(e))
    except Exception as e:  # the kernel died, papermill could not start it, ...
        return outcome("failed", error=describe_failure(e, task.output))
    results_file = Path(task.cwd, task.run_dir, RESULTS)
    if not results_file.is_file():
        return outcome("failed", error=f"{task.output}: the notebook finished but {results_file} is missing")
    results = read_json(results_file)
    return outcome("resumed" if resumed_from else "trained", best_stsb_dev=results.get("best_stsb_dev"),
                   steps=results.get("steps"))
