"""Where a study's runs execute. Every launcher calls :func:`~cselab.workbench.studies.execute.execute_run` on
each :class:`~cselab.workbench.studies.execute.RunTask` and yields outcomes as runs finish, at most ``jobs``
at a time:

* ``local`` — ``jobs`` worker processes of this machine (:class:`RunWorkers`), each training its runs
  one after another, so that Python, torch and cselab start once per worker, not once per run;
* ``slurm`` — one SLURM job per run through submitit's ``AutoExecutor(cluster="slurm")``;
* ``submitit-local`` — the same submitit code path with ``cluster="local"`` (submitit's
  ``LocalExecutor``: one subprocess per run on this machine); the tests use it to exercise the
  SLURM path without a cluster.

submitit parameters (``timeout_min``, ``gpus_per_node``, ``cpus_per_task``, ``mem_gb``,
``slurm_partition``, ``slurm_account``, ... — AutoExecutor's names) come from the study's
``slurm:`` section, overridden by ``--slurm KEY=VALUE``.
"""
from __future__ import annotations

import math
import os
import signal
import tempfile
import time
import weakref
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Iterator

from .execute import RunOutcome, RunTask, execute_run
from .spec import StudyError

LAUNCHERS = ("local", "submitit-local", "slurm")
SUBMITIT_CLUSTERS = {"submitit-local": "local", "slurm": "slurm"}
MIN_TIMEOUT_MIN = 30      # default job time limit: 3 × the cost estimate, at least this


# The worker pools this process runs: signal_workers() forwards a Ctrl-C to their workers.
_POOLS: "weakref.WeakSet[RunWorkers]" = weakref.WeakSet()


def _worker_started(pids: str) -> None:
    """Each worker, as it starts: in a session of its own, so that a terminal's Ctrl-C reaches the
    study alone, which interrupts the runs itself (once, :func:`signal_workers`); deaf to SIGINT
    while it waits for a run; its pid appended to the pool's file."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(pids, "a") as out:
        out.write(f"{os.getpid()}\n")


def _execute_in_worker(task: RunTask) -> RunOutcome:
    """:func:`~cselab.workbench.studies.execute.execute_run` in a worker: a SIGINT (forwarded by the study on
    Ctrl-C or SIGTERM) raises KeyboardInterrupt in the run, which stops at its last checkpoint."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return execute_run(task)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class RunWorkers:
    """``jobs`` worker processes (spawned, not forked: the study's notebook threads hold locks a fork
    would copy), each calling :func:`~cselab.workbench.studies.execute.execute_run` on one run after another.
    A run in a worker is the same as a run in a fresh process: training seeds every generator itself
    (tests/test_studies.py compares the two)."""

    def __init__(self, jobs: int):
        import multiprocessing

        self.folder = Path(tempfile.mkdtemp(prefix="cselab-workers-"))
        self.pids_file = self.folder / "pids"
        self.executor = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_worker_started, initargs=(str(self.pids_file),))
        _POOLS.add(self)

    def submit(self, task: RunTask):
        return self.executor.submit(_execute_in_worker, task)

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in self.pids_file.read_text().split()]
        except (OSError, ValueError):
            return []

    def close(self) -> None:
        import shutil

        self.executor.shutdown(wait=True, cancel_futures=True)
        _POOLS.discard(self)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "RunWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def signal_workers(signum: int = signal.SIGINT) -> int:
    """Send ``signum`` to every run worker this process started (SIGINT: the running run raises
    KeyboardInterrupt and stops at its last checkpoint). Returns how many were signalled."""
    sent = 0
    for pool in list(_POOLS):
        for pid in pool.pids():
            try:
                os.kill(pid, signum)
                sent += 1
            except ProcessLookupError:   # already gone
                pass
    return sent


class LocalLauncher:
    """Runs in ``jobs`` worker processes of this machine (:class:`RunWorkers`), at most ``jobs`` at a time."""

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, jobs)

    def check_available(self) -> None:
        """Processes of this machine are always available."""

    def run(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        with RunWorkers(min(self.jobs, len(tasks))) as workers:
            pending = {workers.submit(task): task for task in tasks}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield self._outcome(future, pending.pop(future))
            except BaseException:
                for future in pending:   # not started: dropped; started ones stop (Ctrl-C reaches their workers)
                    future.cancel()
                raise

    @staticmethod
    def _outcome(future, task: RunTask) -> RunOutcome:
        try:
            return future.result()
        except Exception as e:   # the worker itself died (killed, out of memory): execute_run never raises
            return RunOutcome(task.label, task.run_dir, "failed",
                              error=f"the worker process running it died ({type(e).__name__}: {e}); log: {task.log}")


def job_timeout_min(task: RunTask) -> int:
    """A generous default time limit for a run's job: 3 × its cost estimate, at least 30 minutes."""
    if task.estimate_seconds is None:
        return 24 * 60
    return max(MIN_TIMEOUT_MIN, math.ceil(3 * task.estimate_seconds / 60))


class SubmititLauncher:
    """One submitit job per run; ``cluster`` is ``"slurm"`` or ``"local"`` — nothing else differs."""

    def __init__(self, cluster: str, folder: str | Path, parameters: dict | None = None, jobs: int = 1,
                 poll_seconds: float | None = None):
        self.cluster = cluster
        self.folder = Path(folder)
        self.parameters = dict(parameters or {})
        self.jobs = max(1, jobs)
        self.poll_seconds = poll_seconds if poll_seconds is not None else (0.5 if cluster == "local" else 10.0)

    def executor(self, folder: str | Path):
        import submitit

        return submitit.AutoExecutor(folder=folder, cluster=self.cluster)

    def check_available(self) -> None:
        """SLURM is there (submitit's own test: ``srun`` on PATH), checked before any run starts or
        any report is written; the local cluster always is."""
        if self.cluster != "slurm":
            return
        from submitit.slurm.slurm import SlurmExecutor

        if SlurmExecutor.affinity() <= 0:
            raise StudyError("--launcher slurm: SLURM is not available here (`srun` is not on PATH); run "
                             "`cselab reproduce` on a SLURM login node, or use --launcher local")

    def job_parameters(self, task: RunTask) -> dict:
        return {"name": f"cselab-{task.label}", "timeout_min": job_timeout_min(task), **self.parameters}

    def run(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        executor = self.executor(self.folder)
        pending, running = list(tasks), {}
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    task = pending.pop(0)
                    executor.update_parameters(**self.job_parameters(task))
                    running[executor.submit(execute_run, task)] = task
                finished = [job for job in running if job.done()]
                for job in finished:
                    yield self._outcome(job, running.pop(job))
                if not finished:
                    time.sleep(self.poll_seconds)
        except BaseException:
            for job in running:
                job.cancel(check=False)
            raise

    @staticmethod
    def _outcome(job, task: RunTask) -> RunOutcome:
        try:
            return job.result()
        except Exception as e:  # the job itself died (time limit, node failure, ...): execute_run never raises
            last = str(e).strip().splitlines()[-1:] or [type(e).__name__]
            return RunOutcome(task.label, task.run_dir, "failed",
                              error=f"submitit job {job.job_id} failed ({last[0]}); log: {job.paths.stderr}")


def check_submitit_parameters(parameters: dict, where: str) -> None:
    """Let submitit validate the parameters (names and types) now, before any run starts."""
    import submitit

    with tempfile.TemporaryDirectory() as tmp:
        try:
            submitit.AutoExecutor(folder=tmp, cluster="local").update_parameters(**parameters)
        except (NameError, AssertionError, ValueError, TypeError) as e:
            raise StudyError(f"{where}: {e}") from None


def make_launcher(kind: str, jobs: int, folder: str | Path, parameters: dict, where: str):
    """The launcher for ``--launcher``. submitit parameters are validated whatever the launcher, so a
    typo in a study's ``slurm:`` section shows up on the first local run, not on the cluster."""
    if kind not in LAUNCHERS:
        raise ValueError(f"--launcher: expected one of {', '.join(LAUNCHERS)}, got {kind!r}")
    if parameters:
        check_submitit_parameters(parameters, where)
    if kind == "local":
        return LocalLauncher(jobs)
    return SubmititLauncher(SUBMITIT_CLUSTERS[kind], folder, parameters, jobs)
