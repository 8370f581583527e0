"""When a study's notebooks start: as soon as their runs have outcomes and one of the jobs places is
free, counting the runs that still train on this machine (cselab/workbench/studies/schedule.py)."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from cselab.workbench.studies.report import NotebookResult
from cselab.workbench.studies.schedule import NotebookSchedule


class Recorder:
    """Fake notebook execution: records which runs were done when each notebook was started."""

    def __init__(self):
        self.started, self.results = [], {}
        self.runs_done: list[str] = []

    def start(self, i, nb):   # called as the schedule hands the notebook to a worker
        self.started.append((nb.name, tuple(self.runs_done)))

    def execute(self, nb):
        if nb.name == "broken-engine":
            raise RuntimeError("a bug of the engine")
        return NotebookResult(nb, "ok", seconds=0.0)

    def done(self, i, result):
        self.results[i] = (result.spec.name, result.status, result.note)

    def schedule(self, notebooks, runs, jobs, runs_here=True):
        return NotebookSchedule(notebooks, runs, jobs, runs if runs_here else [], self.execute, self.done, self.start)

    def finish(self, schedule, label, ok=True):
        self.runs_done.append(label)
        schedule.run_done(label, ok)


def nb(name, *runs):
    return SimpleNamespace(name=name, runs=list(runs))


def started_after(recorder, name):
    return dict(recorder.started)[name]


@pytest.mark.parametrize("jobs, runs_here, explorer_after", [
    (2, True, ("a", "b")),        # b done: one run left trains, one place free -> beside run c
    (1, True, ("a", "b", "c")),   # one place, taken by the runs until the last is done
    (2, False, ("a",)),           # runs on SLURM take no place here: as soon as its run a is done
])
def test_a_notebook_starts_as_soon_as_its_runs_are_done_and_a_place_is_free(jobs, runs_here, explorer_after):
    r = Recorder()
    notebooks = [nb("geometry", "a", "b", "c"), nb("explorer", "a")]
    schedule = r.schedule(notebooks, ["a", "b", "c"], jobs, runs_here)
    for label in ("a", "b", "c"):
        r.finish(schedule, label)
    schedule.wait()
    assert started_after(r, "explorer") == explorer_after
    assert started_after(r, "geometry") == ("a", "b", "c")
    assert r.results == {0: ("geometry", "ok", None), 1: ("explorer", "ok", None)}


def test_notebooks_of_failed_runs_are_skipped_and_a_run_without_outcome_counts_as_failed():
    r = Recorder()
    notebooks = [nb("of-a", "a"), nb("of-b", "b"), nb("of-c", "c"), nb("of-a-and-b", "a", "b")]
    schedule = r.schedule(notebooks, ["a", "b", "c"], 2)
    r.finish(schedule, "a")
    r.finish(schedule, "b", ok=False)
    schedule.wait()   # c never got an outcome (the launcher broke): its notebook is skipped too
    assert [name for name, _ in r.started] == ["of-a"]
    assert r.results[1] == ("of-b", "skipped", "skipped: its runs b failed")
    assert r.results[2] == ("of-c", "skipped", "skipped: its runs c failed")
    assert r.results[3] == ("of-a-and-b", "skipped", "skipped: its runs b failed")


def test_at_most_jobs_notebooks_at_once_in_the_study_order():
    running, peak, lock = [0], [0], threading.Lock()
    order = []

    def execute(notebook):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            order.append(notebook.name)
        threading.Event().wait(0.05)
        with lock:
            running[0] -= 1
        return NotebookResult(notebook, "ok")

    results = {}
    notebooks = [nb(f"n{i}", "a") for i in range(6)]
    schedule = NotebookSchedule(notebooks, ["a"], 2, ["a"], execute, lambda i, res: results.update({i: res}))
    schedule.run_done("a", True)
    schedule.wait()
    assert peak[0] == 2 and sorted(results) == list(range(6))
    assert order[:2] == ["n0", "n1"] and sorted(order) == [f"n{i}" for i in range(6)]


def test_an_engine_error_in_a_notebook_thread_is_raised_by_wait():
    r = Recorder()
    schedule = r.schedule([nb("broken-engine", "a"), nb("fine", "a")], ["a"], 1)
    r.finish(schedule, "a")
    with pytest.raises(RuntimeError, match="a bug of the engine"):
        schedule.wait()
