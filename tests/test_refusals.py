"""Refusals leave nothing behind and name the right thing: a refused start leaves no lock file, a
read-only place is named by its option before anything runs (and an earlier executed notebook
stays), a killed study's index links no deleted figure."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.train import train

from test_run_safety import error_line, short_dev_set  # noqa: F401  (autouse fixture)
from test_export_resume_and_bad_input import study_file, tree


@pytest.mark.parametrize("kind", ["model folder", "link to a run"])
def test_a_refused_overwrite_leaves_no_lock_file(kind, tiny_config, tiny_model, data_dir, tmp_path, capsys):
    import shutil

    runs = Path(tiny_config["output_dir"])
    runs.mkdir(parents=True)
    if kind == "model folder":
        shutil.copytree(tiny_model, runs / "x")        # a Hugging Face folder: has a config.json
    else:
        real = train(load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "real"}),
                     data_dir=data_dir, progress=False)
        (runs / "x").symlink_to(real, target_is_directory=True)
    before = tree(runs)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2}))
    assert main(["train", str(config), "run_name=x", "--overwrite", "--data-dir", str(data_dir)]) == 2
    error_line(capsys)
    assert not (runs / ".x.lock").exists()
    assert tree(runs) == before


def _mount(where: Path, options: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True).returncode == 0


@pytest.fixture
def read_only(tmp_path):
    """A folder on a tmpfs mounted read-only (skipped where mounting needs a root this is not);
    ``read_only(fill)`` calls ``fill(folder)`` while it is still writable."""
    disk = tmp_path / "ro"
    if not _mount(disk, "size=4m"):
        pytest.skip("mounting a tmpfs needs root")

    def make(fill=None) -> Path:
        if fill is not None:
            fill(disk)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        return disk

    yield make
    subprocess.run(["umount", str(disk)], check=True)


@pytest.mark.parametrize("option", ["--runs-dir", "--figures-dir", "--reports-dir"])
def test_a_read_only_place_is_named_by_its_option_before_anything_runs(option, read_only, tiny_model, data_dir,
                                                                        tmp_path, capsys):
    from conftest import REPO

    notebook = {"notebook": str(REPO / "tests" / "notebooks" / "summary.py")}
    study = study_file(tmp_path / "ro-study.yaml", tiny_model, [{"label": "simcse"}], [notebook])
    places = {"--runs-dir": tmp_path / "runs", "--reports-dir": tmp_path / "reports",
              "--figures-dir": tmp_path / "figures"}
    earlier = b'{"cells": [], "an earlier complete execution": true}'

    def fill(disk):
        (disk / "ro-study" / "summary").mkdir(parents=True)
        (disk / "ro-study" / "summary" / "loss.png").write_bytes(b"\x89PNG earlier")
        (disk / "ro-study" / "summary.ipynb").write_bytes(earlier)
    places[option] = read_only(fill)
    (tmp_path / "reports" / "ro-study").mkdir(parents=True)
    if option != "--reports-dir":
        (tmp_path / "reports" / "ro-study" / "summary.ipynb").write_bytes(earlier)
    before = tree(tmp_path)
    assert main(["reproduce", str(study), "--data-dir", str(data_dir),
                 *(x for o, p in places.items() for x in (o, str(p)))]) == 2
    folder = places[option] / "ro-study" / "summary" if option == "--figures-dir" else \
        places[option] / "ro-study" if option == "--reports-dir" else places[option]
    where = places[option] if option == "--runs-dir" else folder
    assert error_line(capsys) == f"cselab reproduce: error: {option}: cannot write in {where} (read-only file system)"
    assert tree(tmp_path) == before       # nothing trained, no index, the earlier executed notebook kept


def test_a_study_killed_mid_notebook_links_no_deleted_figure_and_the_next_run_clears_its_partial(
        tiny_model, data_dir, tmp_path, monkeypatch):
    """kill -9 of ``cselab reproduce`` while a notebook runs: that notebook had emptied its figures
    folder, so the index written at the start must not link the figures it found then; the hidden
    partial notebook the kill left is removed by the next run of the study."""
    import json
    import os
    import re
    import signal
    import sys
    import time

    from conftest import REPO

    from cselab.workbench.studies import load_study
    from cselab.workbench.studies.runner import reproduce

    marker = tmp_path / "started.txt"
    waiting = {"notebook": str(REPO / "tests" / "notebooks" / "waiting.py"), "parameters": {"marker": str(marker)}}
    study = study_file(tmp_path / "killed.yaml", tiny_model, [{"label": "simcse"}], [waiting])
    monkeypatch.chdir(tmp_path)
    train(load_study(study, runs_root=tmp_path / "runs").runs[0].config, data_dir=data_dir, progress=False)
    figures = tmp_path / "figures" / "killed" / "waiting"
    figures.mkdir(parents=True)
    for name in "abcde":   # what an earlier execution drew
        (figures / f"{name}.png").write_bytes(b"\x89PNG earlier")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "cselab.cli", "reproduce", str(study), "--runs-dir",
                             str(tmp_path / "runs"), "--data-dir", str(data_dir)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the notebook never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    reports = tmp_path / "reports" / "killed"
    index = (reports / "index.md").read_text()
    assert not list(figures.glob("*.png"))                         # the notebook had emptied its folder
    links = re.findall(r"\]\(([^)]+)\)", index)
    assert links and all((reports / link).exists() for link in links), links
    assert "(being redrawn: each notebook empties its figures folder before it runs; listed when the study ends)" \
        in index
    assert [p.name for p in reports.glob(".*.partial.ipynb")] == [".waiting.partial.ipynb"]   # left by the kill

    summary = {"notebook": str(REPO / "tests" / "notebooks" / "summary.py")}
    study_file(tmp_path / "killed.yaml", tiny_model, [{"label": "simcse"}], [summary])   # the study, edited
    assert reproduce(study, runs_dir=tmp_path / "runs", data_dir=str(data_dir), stream=open(os.devnull, "w"),
                     progress="off") == 0
    assert not list(reports.rglob(".*.partial.ipynb"))
    assert json.loads((reports / "study.json").read_text())["ok"]
    index = (reports / "index.md").read_text()
    assert "![summary/loss.png](../../figures/killed/summary/loss.png)" in index


def test_train_into_a_read_only_output_dir_names_it(read_only, tiny_config, data_dir, tmp_path, capsys):
    runs = read_only()
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2, "output_dir": str(runs)}))
    assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == f"cselab train: error: output_dir: cannot write in {runs} (read-only file system)"


def test_a_study_whose_record_cannot_be_written_says_so_before_it_trains(read_only, tiny_model, data_dir, tmp_path,
                                                                          capsys):
    """A read-only --figures-dir with no notebook to write there: the study trained every run, printed
    "not recorded" for each, then "all succeeded" with exit status 0. The record's folder is now checked
    with the others, before anything runs; a record that is a link is refused there too."""
    study = study_file(tmp_path / "ro-record.yaml", tiny_model, [{"label": "simcse"}])
    figures = read_only()
    args = ["reproduce", str(study), "--data-dir", str(data_dir), "--runs-dir", str(tmp_path / "runs"),
            "--reports-dir", str(tmp_path / "reports")]
    assert main([*args, "--figures-dir", str(figures)]) == 2
    assert error_line(capsys) == (f"cselab reproduce: error: --figures-dir: cannot write in {figures}, where "
                                  f"{figures / 'ro-record'} would be created (read-only file system)")
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("")
    (tmp_path / "figures" / "ro-record").mkdir(parents=True)
    (tmp_path / "figures" / "ro-record" / "record.jsonl").symlink_to(elsewhere)
    assert main([*args, "--figures-dir", str(tmp_path / "figures")]) == 2
    record = tmp_path / "figures" / "ro-record" / "record.jsonl"
    assert error_line(capsys) == (f"cselab reproduce: error: {record}: is a symbolic link (to {elsewhere}), where "
                                  "cselab writes the study's record; cselab does not write through links: remove the "
                                  "link")
    assert not (tmp_path / "runs").exists() and elsewhere.read_text() == ""


def test_a_run_the_study_could_not_record_is_not_all_succeeded(tiny_model, data_dir, tmp_path, monkeypatch, capsys):
    """The record refusing a line once the run is trained (the disk filled, the folder became read-only):
    the study says which run is not recorded where and why, and exits 1, not "all succeeded" with 0."""
    from cselab.workbench.studies import runner

    def refuse(path, records):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(runner, "put_records", refuse)
    study = study_file(tmp_path / "unrecorded.yaml", tiny_model, [{"label": "simcse"}])
    record = tmp_path / "figures" / "unrecorded" / "record.jsonl"
    assert main(["reproduce", str(study), "--data-dir", str(data_dir), "--runs-dir", str(tmp_path / "runs"),
                 "--reports-dir", str(tmp_path / "reports"), "--figures-dir", str(tmp_path / "figures")]) == 1
    out = capsys.readouterr().out
    assert f"record: simcse not recorded in {record}: OSError: [Errno 30] Read-only file system" in out
    assert (f"study unrecorded: 1 failed or skipped; 1 run(s) not recorded in {record} (OSError: [Errno 30] "
            "Read-only file system)") in out
    assert "all succeeded" not in out
    index = (tmp_path / "reports" / "unrecorded" / "index.md").read_text()
    assert "- simcse: not recorded in the study's record: OSError: [Errno 30] Read-only file system" in index
