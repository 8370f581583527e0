"""When a study's notebooks execute: each as soon as every run it reads has an outcome, in the
study's order, at most ``jobs`` processes on this machine at once counting the runs still training
here.

With the local launchers a study trains ``min(jobs, runs left)`` runs at once, so while its last
runs train some of the ``jobs`` places are free: a notebook whose runs are done takes one (the
cpu-demo's explorer, which reads two runs, executes beside the seventh run instead of after it).
Runs on SLURM take no place here. A notebook whose runs failed is skipped, not executed.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

from .report import NotebookResult
from .spec import NotebookSpec


class NotebookSchedule:
    """``training_here``: the labels of the runs this machine trains (reused runs, aliases and SLURM
    jobs take no place). Call :meth:`run_done` for every run label as it gets an outcome, then :meth:`wait`; ``execute``
    runs one notebook (in a worker thread) and ``done`` receives each result with the notebook's
    index in the study, in the order they finish; ``started``, when given, hears of each notebook
    as it is handed to a worker. :meth:`stop` (after Ctrl-C) starts nothing more."""

    def __init__(self, notebooks: Sequence[NotebookSpec], run_labels: Sequence[str], jobs: int,
                 training_here: Sequence[str], execute: Callable[[NotebookSpec], NotebookResult],
                 done: Callable[[int, NotebookResult], None],
                 started: Callable[[int, NotebookSpec], None] | None = None):
        self.jobs = max(1, jobs)
        self._training_here = set(training_here)             # runs this machine trains (none on SLURM)
        self.execute, self.done, self.started = execute, done, started
        self._waiting = list(enumerate(notebooks))          # not started yet, in the study's order
        self._pending_runs = set(run_labels)                 # runs without an outcome yet
        self._failed_runs: set[str] = set()
        self._running = 0
        self._stopped = False
        self._errors: list[BaseException] = []
        self._cond = threading.Condition()
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="cselab-notebook")

    def _free_places(self) -> int:
        training = min(self.jobs, len(self._training_here & self._pending_runs))
        return self.jobs - training - self._running

    def run_done(self, label: str, ok: bool) -> None:
        with self._cond:
            self._pending_runs.discard(label)
            if not ok:
                self._failed_runs.add(label)
            self._dispatch()

    def _dispatch(self) -> None:
        """Skip what can never run, start what is ready while places are free (holding the lock)."""
        for item in list(self._waiting):
            i, nb = item
            if self._stopped or set(nb.runs) & self._pending_runs:
                continue
            failed = [label for label in nb.runs if label in self._failed_runs]
            if failed:
                self._waiting.remove(item)
                self.done(i, NotebookResult(nb, "skipped", note=f"skipped: its runs {', '.join(failed)} failed"))
            elif self._free_places() > 0:
                self._waiting.remove(item)
                self._running += 1
                if self.started is not None:
                    self.started(i, nb)
                self._pool.submit(self._execute, i, nb)
        self._cond.notify_all()

    def _execute(self, i: int, nb: NotebookSpec) -> None:
        result = None
        try:
            result = self.execute(nb)
        except BaseException as e:   # a bug of the engine, not a failed notebook: re-raised by wait()
            self._errors.append(e)
        finally:
            with self._cond:
                self._running -= 1
                if result is not None and not self._stopped:   # one Ctrl-C stopped did not finish
                    self.done(i, result)
                self._dispatch()

    def wait(self) -> None:
        """Block until every notebook has finished or been skipped (call after the last run_done: a
        run still without an outcome then counts as failed)."""
        with self._cond:
            self._failed_runs |= self._pending_runs
            self._pending_runs.clear()
            self._dispatch()
            while (self._waiting and not self._stopped) or self._running:
                if self._errors:
                    break
                self._cond.wait(timeout=1.0)   # a timeout keeps Ctrl-C prompt in the main thread
        self._pool.shutdown(wait=True)
        if self._errors:
            raise self._errors[0]

    def halt(self) -> None:
        """Start no further notebook (a Ctrl-C's first act, from the signal handler: it sets a flag and
        takes no lock); :meth:`stop` then waits for the running ones."""
        self._stopped = True

    def stop(self) -> None:
        """Start no further notebook; the running ones end (Ctrl-C has reached their kernels) and are
        not reported: they did not finish."""
        with self._cond:
            self._stopped = True
        self._pool.shutdown(wait=True, cancel_futures=True)
