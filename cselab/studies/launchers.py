"""Where a study's runs execute. Every launcher calls :func:`~cselab.studies.execute.execute_run` on
each :class:`~cselab.studies.execute.RunTask` and yields outcomes as runs finish, at most ``jobs``
at a time:

* ``local`` — threads of this process, each driving its own notebook kernel (a separate process);
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
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Iterator

from .execute import RunOutcome, RunTask, WarmKernel, execute_run
from .spec import StudyError

LAUNCHERS = ("local", "submitit-local", "slurm")
SUBMITIT_CLUSTERS = {"submitit-local": "local", "slurm": "slurm"}
MIN_TIMEOUT_MIN = 30      # default job time limit: 3 × the cost estimate, at least this


class LocalLauncher:
    """Runs in threads of this process; each thread executes its runs' train notebooks one after the
    other in one warm kernel (its own process, :class:`~cselab.studies.execute.WarmKernel`)."""

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, jobs)

    def check_available(self) -> None:
        """Threads of this process are always available."""

    def run(self, tasks: list[RunTask]) -> Iterator[RunOutcome]:
        if not tasks:
            return
        kernels, lock = {}, threading.Lock()

        def execute_in_warm_kernel(task: RunTask) -> RunOutcome:
            # one warm kernel per worker thread: its runs follow one another, never overlap
            with lock:
                kernel = kernels.setdefault(threading.get_ident(), WarmKernel())
            return execute_run(task, kernel)

        try:
            with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="cselab-run") as pool:
                pending = {pool.submit(execute_in_warm_kernel, task) for task in tasks}
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for future in done:
                            yield future.result()
                except BaseException:
                    for future in pending:   # not started: drop; started ones finish (Ctrl-C reaches their kernels)
                        future.cancel()
                    raise
        finally:
            for kernel in kernels.values():
                kernel.close()


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
