"""A study's worker pool stops when asked and never outlives the study (issue 55): after SIGTERM no queued
run starts and the index tells the interrupted runs from those never started; a worker's death fails its
own run only, naming the log that exists; kill -9 of the study takes its workers with it. Each study is a
few runs of the tiny random BERT, long enough (400 steps) to be caught training."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psutil

from cselab.model.config import load_config
from cselab.workbench.studies.status import checkpoint_step, run_status

from test_studies import base_profile, run_study, write_study

LONG = {"max_steps": 400, "epochs": 100}


def run_dir(root: Path, tiny_model, seed: int, **changes) -> Path:
    return root / "runs" / load_config(None, {**base_profile(tiny_model), "seed": seed, **changes}).default_run_name()


def checkpointed(folder: Path) -> bool:
    try:
        return checkpoint_step(folder) > 0
    except (OSError, ValueError):   # caught between the checkpoint's renames
        return False


def when(condition, then, limit: int = 6000) -> threading.Thread:
    """A thread that calls ``then`` once ``condition()`` holds (checked every 0.1 s)."""
    def watch():
        for _ in range(limit):
            if condition():
                then()
                return
            threading.Event().wait(0.1)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def workers_alive() -> list[psutil.Process]:
    """This process's run workers (spawned interpreters; the resource tracker is not one)."""
    alive = []
    for p in psutil.Process().children(recursive=True):
        try:
            if "spawn_main" in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.Error:   # ended meanwhile
            pass
    return alive


def test_sigterm_stops_a_two_job_study_and_no_queued_run_starts(tiny_model, data_dir, tmp_path):
    """--jobs 2, four runs: SIGTERM once the first two have a checkpoint. Before, a queued run started
    and trained to the end, the index called it "interrupted", and a cselab-workers-* folder stayed."""
    study = write_study(tmp_path / "stop.yaml", tiny_model, runs=[{"label": "long", "seeds": [1, 2, 3, 4], "set": LONG}])
    dirs = {seed: run_dir(tmp_path, tiny_model, seed, **LONG) for seed in (1, 2, 3, 4)}
    temp_before = {p.name for p in Path(tempfile.gettempdir()).glob("cselab-workers-*")}
    presser = when(lambda: checkpointed(dirs[1]) and checkpointed(dirs[2]),
                   lambda: os.kill(os.getpid(), signal.SIGTERM))
    code, text, summary = run_study(tmp_path, study, data_dir, jobs=2)
    presser.join()
    assert code == 130 and summary["interrupted"], text
    assert {r["label"]: r["status"] for r in summary["runs"]} == {
        "long-s1": "interrupted", "long-s2": "interrupted", "long-s3": "not started", "long-s4": "not started"}
    for seed in (1, 2):   # stopped at a checkpoint, resumable
        assert run_status(dirs[seed]).kind == "partial" and 0 < checkpoint_step(dirs[seed]) < 400
    assert not dirs[3].exists() and not dirs[4].exists()   # never started
    state = ("interrupted (2 run(s) stopped at their last checkpoint, 2 run(s) not started): run the same command "
             "again to resume")
    assert f"study stop: {state}" in text
    index = (tmp_path / "reports" / "stop" / "index.md").read_text()
    assert f"- status: **{state}**" in index and index.count("| not started |") == 2
    assert workers_alive() == []
    assert {p.name for p in Path(tempfile.gettempdir()).glob("cselab-workers-*")} <= temp_before


def test_a_stop_request_stops_the_run_after_the_step_even_when_no_signal_lands(tiny_model, data_dir, tmp_path):
    """The check after every step (execute_run's ``stop_requested``): a worker's Ctrl-C raised from its
    signal handler is lost when it lands in a finalizer, and a CI run saw such a run train to its end
    ("trained" where the study said interrupted). Here no signal is sent at all: the request alone stops
    the run after step 5, at its checkpoint of step 4, and the run resumes from there."""
    from cselab.workbench.studies.execute import RunTask, execute_run

    changes = {"max_steps": 20, "epochs": 100, "eval_every": 2}
    cfg = load_config(None, {**base_profile(tiny_model), **changes, "seed": 1, "output_dir": str(tmp_path / "runs")})
    folder = tmp_path / "runs" / cfg.default_run_name()
    task = RunTask("long-s1", str(folder), cfg.to_dict(), False, str(tmp_path / "long-s1.log"), str(data_dir),
                   str(tmp_path), threads=1)
    asked = []

    def after_five_steps() -> bool:
        asked.append(1)
        return len(asked) >= 5

    outcome = execute_run(task, after_five_steps)
    assert outcome.status == "interrupted" and len(asked) == 5, outcome
    assert run_status(folder).kind == "partial" and checkpoint_step(folder) == 4
    again = execute_run(task)
    assert again.status == "resumed" and again.steps == 20


def test_a_dead_worker_fails_its_own_run_only_and_names_the_log_that_exists(tiny_model, data_dir, tmp_path):
    """kill -9 of the worker training the long run: that run fails, naming its partial log (the only one
    there); the run the other worker trains and the queued one (a fresh worker's) still train. Before,
    every run failed and the messages named logs that did not exist."""
    runs = [{"label": "long", "seeds": [1], "set": LONG}, {"label": "short", "seeds": [1, 2]}]
    study = write_study(tmp_path / "dies.yaml", tiny_model, runs=runs)
    partial_log = tmp_path / "reports" / "dies" / "runs" / ".long-s1.partial.log"

    def kill_the_long_runs_worker():
        for worker in workers_alive():
            if any(f.path == str(partial_log) for f in worker.open_files()):
                worker.kill()

    killer = when(lambda: checkpointed(run_dir(tmp_path, tiny_model, 1, **LONG)), kill_the_long_runs_worker)
    code, text, summary = run_study(tmp_path, study, data_dir, jobs=2)
    killer.join()
    assert code == 1, text
    runs = {r["label"]: r for r in summary["runs"]}
    assert {label: r["status"] for label, r in runs.items()} == {
        "long-s1": "failed", "short-s1": "trained", "short-s2": "trained"}
    assert partial_log.is_file() and not partial_log.with_name("long-s1.log").exists()
    assert runs["long-s1"]["error"] == ("the worker process training long-s1 died (killed by signal 9); the run stays "
                                        f"at its last checkpoint; log: {partial_log}")
    assert workers_alive() == []


PARENT = """
import sys
from cselab.workbench.studies import reproduce
sys.exit(reproduce(sys.argv[1], jobs=2, runs_dir=sys.argv[2] + "/runs", reports_dir=sys.argv[2] + "/reports",
                   figures_dir=sys.argv[2] + "/figures", data_dir=sys.argv[3], progress="lines"))
"""


def test_kill_9_of_the_study_leaves_no_process_of_it(tiny_model, data_dir, tmp_path):
    """kill -9 of `cselab reproduce --jobs 2` while both workers train: before, both workers (about 1 GB
    each) and the resource tracker lived on and trained a queued run. Now the workers die with the study
    (PR_SET_PDEATHSIG, a thread watching the parent's pipe) and the resource tracker, left without
    writers, with them; no queued run starts."""
    study = write_study(tmp_path / "orphans.yaml", tiny_model,
                        runs=[{"label": "long", "seeds": [1, 2, 3], "set": LONG}])
    dirs = {seed: run_dir(tmp_path, tiny_model, seed, **LONG) for seed in (1, 2, 3)}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), *sys.path])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(study), str(tmp_path), str(data_dir)], cwd=tmp_path,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(6000):
            if checkpointed(dirs[1]) and checkpointed(dirs[2]) or parent.poll() is not None:
                break
            threading.Event().wait(0.1)
        assert parent.poll() is None, "the study ended before both runs had a checkpoint"
        family = psutil.Process(parent.pid).children(recursive=True)
        assert len([p for p in family if "spawn_main" in " ".join(p.cmdline())]) == 2
        parent.kill()
        parent.wait()
        gone, alive = psutil.wait_procs(family, timeout=30)
        assert alive == [], [p.cmdline() for p in alive]
    finally:
        if parent.poll() is None:
            parent.kill()
    assert not dirs[3].exists()
    assert all(run_status(dirs[seed]).kind == "partial" for seed in (1, 2))
