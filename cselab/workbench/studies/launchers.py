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

import contextlib
import math
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
import weakref
from multiprocessing.connection import wait as mp_wait
from pathlib import Path
from typing import Iterator

from .execute import RunOutcome, RunTask, execute_run
from .spec import StudyError

LAUNCHERS = ("local", "submitit-local", "slurm")
SUBMITIT_CLUSTERS = {"submitit-local": "local", "slurm": "slurm"}
MIN_TIMEOUT_MIN = 30      # default job time limit: 3 × the cost estimate, at least this


# The worker pools this process runs: signal_workers() forwards a Ctrl-C to their workers.
_POOLS: "weakref.WeakSet[RunWorkers]" = weakref.WeakSet()
PR_SET_PDEATHSIG = 1          # prctl(2): the signal a Linux process gets when its parent dies
STOP_GRACE_SECONDS = 30       # how long close() waits for an idle worker to exit before killing it


def _exit_with_parent(parent_pid: int) -> None:
    """A worker must not train on after its study died (``kill -9``: no handler of the study runs, and a
    worker left alone would take its next run and idle for minutes holding a GB). On Linux the kernel
    kills it with the parent (PR_SET_PDEATHSIG, set through ctypes; it fires when the thread that started
    the worker ends, which is the study's main thread); everywhere a thread watches the parent's end of
    the pipe multiprocessing keeps open for the worker's life, and exits when it closes."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:   # it died before prctl took effect
        os._exit(1)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=lambda: (parent.join(), os._exit(1)), name="cselab-parent-watch", daemon=True).start()


def _worker_main(conn, parent_pid: int) -> None:
    """A worker: runs from ``conn`` one at a time, each outcome sent back, until the study sends None
    or goes away. It runs in a session of its own, so that a terminal's Ctrl-C reaches the study alone,
    which interrupts the runs itself (once, :func:`signal_workers`). A SIGINT while a run trains raises
    KeyboardInterrupt in it (the run stops at its last checkpoint), and the run also asks the mark after
    every step, so a KeyboardInterrupt lost in a finalizer still stops it; one while it waits for a run
    only marks it stopped: the run it is then given is not started."""
    os.setsid()
    _exit_with_parent(parent_pid)
    state = {"running": False, "stopped": False}

    def interrupt(signum, frame):
        first = not state["stopped"]
        state["stopped"] = True
        if first and state["running"]:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):   # the study closed its end or is gone
            task = None
        if task is None:
            _exit_now()
        try:
            state["running"] = True
            outcome = not_started(task) if state["stopped"] else execute_run(task, lambda: state["stopped"])
        except KeyboardInterrupt:     # before or after the training call, which catches its own
            outcome = interrupted(task)
        finally:
            state["running"] = False
        try:
            conn.send(outcome)
        except OSError:
            _exit_now()


def _exit_now() -> None:
    """A worker's end. Nothing of a run is left to write (its log and outcome are out), so the
    interpreter's teardown of torch is skipped: seconds a study would wait for at its end (3 s against
    0.2 s on a loaded machine). multiprocessing's finalizers still run, as at a normal exit: they
    unlink the semaphores the run's libraries created, which the resource tracker reported as leaked
    (two a study) when the worker skipped them."""
    from multiprocessing import util

    util._run_finalizers()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def not_started(task: RunTask) -> RunOutcome:
    return RunOutcome(task.label, task.run_dir, "not started",
                      error=f"{task.label}: not started (the study was interrupted); it trains when the study runs "
                            "again")


def interrupted(task: RunTask) -> RunOutcome:
    return RunOutcome(task.label, task.run_dir, "interrupted",
                      error=f"{task.log}: interrupted; the run stays at its last checkpoint and resumes when the "
                            "study runs again")


def existing_log(task: RunTask) -> str:
    """The log a run that a dead worker was training left: the finished log, else the one being written
    (:func:`~cselab.workbench.studies.execute.train_logged` writes ``.<label>.partial.log`` and moves it in
    place when the run ends, which a killed worker never does)."""
    log = Path(task.cwd, task.log)
    for path in (log, log.with_name(f".{log.stem}.partial{log.suffix}")):
        if path.is_file():
            return str(path)
    return f"no log was written ({task.log} does not exist)"


class _Worker:
    def __init__(self, process, conn):
        self.process, self.conn = process, conn


class RunWorkers:
    """Up to ``jobs`` worker processes (spawned, not forked: the study's notebook threads hold locks a fork
    would copy), each given one run at a time through a pipe of its own and calling
    :func:`~cselab.workbench.studies.execute.execute_run` on it, so that nothing is queued inside a
    worker: after :meth:`stop` no run starts. A run in a worker is the same as a run in a fresh process:
    training seeds every generator itself (tests/test_studies.py compares the two). A worker that dies
    (killed, out of memory) fails the run it was training only; the next run gets a fresh worker."""

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)
        self.stopping = False
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        _POOLS.add(self)

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_worker_main, args=(theirs, os.getpid()), name="cselab-run-worker")
        process.start()
        theirs.close()
        worker = _Worker(process, ours)
        self._workers.append(worker)
        return worker

    def _drop(self, worker: _Worker) -> None:
        self._workers.remove(worker)
        worker.conn.close()
        worker.process.join(timeout=STOP_GRACE_SECONDS)

    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def stop(self, signum: int = signal.SIGINT) -> int:
        """Start no further run, and send ``signum`` to every worker (SIGINT: a training run stops at its
        last checkpoint; SIGKILL: at once). Safe in a signal handler: it takes no lock. Returns how many
        were signalled."""
        self.stopping = True
        sent = 0
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):   # already gone
                os.kill(pid, signum)
                sent += 1
        return sent

    def run(self, tasks: list[RunTask], poll_seconds: float = 0.2) -> Iterator[RunOutcome]:
        """Each task's outcome as it finishes; after :meth:`stop`, the running runs' outcomes (interrupted)
        and a "not started" one for each task no worker took."""
        queue, busy = list(tasks), {}
        idle: list[_Worker] = []
        while queue or busy:
            while queue and not self.stopping and (idle or len(self._workers) < self.jobs):
                worker, task = idle.pop() if idle else self._start(), queue.pop(0)
                try:
                    worker.conn.send(task)
                except OSError:   # it died while idle: the run never reached it
                    self._drop(worker)
                    queue.insert(0, task)
                    continue
                busy[worker] = task
            if self.stopping:
                while queue:
                    yield not_started(queue.pop(0))
                if not busy:
                    break
            ready = set(mp_wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=poll_seconds))
            for worker, task in list(busy.items()):
                if worker.conn in ready:
                    try:
                        outcome = worker.conn.recv()
                        idle.append(worker)
                    except (EOFError, OSError):
                        outcome = self._died(worker, task)
                elif worker.process.sentinel in ready:
                    outcome = self._died(worker, task)
                else:
                    continue
                del busy[worker]
                yield outcome

    def _died(self, worker: _Worker, task: RunTask) -> RunOutcome:
        self._drop(worker)
        code = worker.process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return RunOutcome(task.label, task.run_dir, "failed",
                          error=f"the worker process training {task.label} died ({how}); the run stays at its last "
                                f"checkpoint; log: {existing_log(task)}")

    def close(self) -> None:
        """Idle workers are told to exit; a worker still training (the study itself is failing) is
        killed: its run stays at its last checkpoint."""
        for worker in list(self._workers):
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for worker in list(self._workers):
            worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers.clear()
        _POOLS.discard(self)

    def __enter__(self) -> "RunWorkers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def signal_workers(signum: int = signal.SIGINT) -> int:
    """Stop every run worker pool this process started (:meth:`RunWorkers.stop`: no run starts after it,
    ``signum`` reaches the workers; SIGINT: the running run raises KeyboardInterrupt and stops at its last
    checkpoint). Returns how many workers were signalled."""
    return sum(pool.stop(signum) for pool in list(_POOLS))


class LocalLauncher:
    """Runs in ``jobs`` worker processes of this machine (:class:`RunWorkers`), at most ``jobs`` at a time.
    It stops when asked (:func:`signal_workers`): the study need not interrupt the loop collecting its
    outcomes, which then says how each run ended."""
    stops_when_asked = True

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, jobs)

    def check_available(self) -> None:
        """Processes of this machine are always available."""

    def run(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        with RunWorkers(min(self.jobs, len(tasks))) as workers:
            yield from workers.run(tasks)


def job_timeout_min(task: RunTask) -> int:
    """A generous default time limit for a run's job: 3 × its cost estimate, at least 30 minutes."""
    if task.estimate_seconds is None:
        return 24 * 60
    return max(MIN_TIMEOUT_MIN, math.ceil(3 * task.estimate_seconds / 60))


class SubmititLauncher:
    """One submitit job per run; ``cluster`` is ``"slurm"`` or ``"local"`` — nothing else differs. A
    Ctrl-C interrupts its polling loop, which cancels the running jobs."""
    stops_when_asked = False

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
