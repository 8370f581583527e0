"""No cselab writer follows a link it did not create: a link planted where cselab writes a figure, a
record, a run, a lock, a cached evaluation, a snapshot or a report never carries the write to its
target (a file outside every cselab folder). The writer either replaces the link with its own file
(the atomic writes: a new file is renamed over the name) or refuses in one line naming the link."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.io import WriteError, append_jsonl, atomic_write_json, check_not_link
from cselab.model.rundir import RunDir
from cselab.model.train import train

from test_run_safety import error_line, short_dev_set  # noqa: F401  (autouse fixture)
from test_export_resume_and_bad_input import finished_run, study_file, tree  # noqa: F401  (fixture)

PRECIOUS = b"a user's file outside every cselab folder\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A user's file and folder that no cselab folder holds; the tests plant links to them."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_bytes(PRECIOUS)
    return folder


def untouched(outside: Path) -> bool:
    return sorted(p.name for p in outside.iterdir()) == ["precious.txt"] and \
        (outside / "precious.txt").read_bytes() == PRECIOUS


def test_a_figure_replaces_a_link_in_its_place(tmp_path, outside):
    from cselab.workbench.plots import new_figure, save_figure

    folder = tmp_path / "figures" / "dynamics"
    folder.mkdir(parents=True)
    (folder / "stsb_dev.png").symlink_to(outside / "precious.txt")
    fig, ax = new_figure()
    ax[0].plot([0, 1], [0, 1])
    written = save_figure(fig, folder / "stsb_dev.png", check=False)
    assert untouched(outside)
    assert [p.name for p in written] == ["stsb_dev.png", "stsb_dev.pdf"]
    png = folder / "stsb_dev.png"
    assert not png.is_symlink() and png.read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in folder.iterdir()) == ["provenance.json", "stsb_dev.pdf", "stsb_dev.png"]   # no temporary file left


def test_a_record_is_never_appended_through_a_link(tmp_path, outside):
    link = tmp_path / "metrics.jsonl"
    link.symlink_to(outside / "precious.txt")
    with pytest.raises(WriteError) as err:
        append_jsonl(link, {"step": 1})
    assert str(err.value) == (f"{link}: is a symbolic link (to {outside / 'precious.txt'}), where cselab writes "
                              "records; cselab does not write through links: remove the link")
    assert untouched(outside) and link.is_symlink()


def test_an_atomic_write_replaces_the_link_not_its_target(tmp_path, outside):
    link = tmp_path / "results.json"
    link.symlink_to(outside / "precious.txt")
    atomic_write_json(link, {"a": 1})
    assert untouched(outside) and not link.is_symlink() and link.read_text() == '{\n  "a": 1\n}\n'


def test_a_planted_run_lock_is_refused_and_its_target_not_truncated(tiny_config, data_dir, tmp_path, outside, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "r"}))
    runs = Path(tiny_config["output_dir"])
    runs.mkdir(parents=True)
    lock = runs / ".r.lock"
    lock.symlink_to(outside / "precious.txt")
    assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == (f"cselab train: error: {lock}: is a symbolic link (to {outside / 'precious.txt'}), "
                                  "where cselab writes the lock of run r; cselab does not write through links: "
                                  "remove the link")
    assert untouched(outside) and sorted(p.name for p in runs.iterdir()) == [".r.lock"]


@pytest.mark.parametrize("flag", [[], ["--resume"]])
def test_training_into_a_run_folder_that_is_a_link_is_refused(flag, tiny_config, data_dir, tmp_path, outside, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "r"}))
    runs = Path(tiny_config["output_dir"])
    runs.mkdir(parents=True)
    (runs / "r").symlink_to(outside, target_is_directory=True)
    assert main(["train", str(config), "--data-dir", str(data_dir), *flag]) == 2
    assert error_line(capsys) == (f"cselab train: error: {runs / 'r'}: is a symbolic link (to {outside}); train "
                                  "writes a run only into a folder it creates: train (or resume) the run where it "
                                  "lies (output_dir)")
    assert untouched(outside) and sorted(p.name for p in runs.iterdir()) == ["r"]   # no lock file left either


def test_cached_evaluations_are_never_written_into_a_linked_folder(finished_run, data_dir, tmp_path, outside):
    import shutil

    from cselab.model.evaluate.cache import evaluate_run

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    shutil.rmtree(run / "evaluations", ignore_errors=True)
    (run / "evaluations").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WriteError) as err:
        evaluate_run(run, "sts", data_dir=data_dir, tasks=["STSBenchmark"])
    assert str(err.value).startswith(f"{run / 'evaluations'}: is a symbolic link (to {outside}), where cselab "
                                     "writes its cached evaluations;")
    assert untouched(outside)


def test_a_snapshot_is_never_written_into_a_linked_snapshots_folder(tiny_model, tmp_path, outside):
    from cselab.model.encoder import SentenceEncoder
    from cselab.model.train.checkpoints import save_snapshot

    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    run.snapshots_dir.symlink_to(outside, target_is_directory=True)
    with pytest.raises(WriteError, match=r"is a symbolic link .* where cselab writes the run's snapshots;"):
        save_snapshot(run, SentenceEncoder.from_pretrained(tiny_model), 3)
    assert untouched(outside)


def test_check_not_link_passes_files_folders_and_missing_paths(tmp_path):
    (tmp_path / "f").write_text("")
    assert check_not_link(tmp_path / "f", "x") == tmp_path / "f"
    assert check_not_link(tmp_path, "x") == tmp_path
    assert check_not_link(tmp_path / "missing", "x") == tmp_path / "missing"


def test_a_study_writes_no_figure_table_report_or_notebook_through_a_link(tiny_model, data_dir, tmp_path, outside,
                                                                           monkeypatch):
    """Links planted where a study writes: a figure of a notebook (the figure clearing skips links, so
    the link is still there when the notebook saves), its table, the executed notebook and the index."""
    from conftest import REPO

    from cselab.workbench.studies.runner import reproduce

    notebook = {"notebook": str(REPO / "tests" / "notebooks" / "summary.py")}
    study = study_file(tmp_path / "linked.yaml", tiny_model, [{"label": "simcse"}], [notebook])
    figures = tmp_path / "figures" / "linked" / "summary"
    report = tmp_path / "reports" / "linked"
    (report / "tables").mkdir(parents=True)
    figures.mkdir(parents=True)
    targets = {}
    for i, place in enumerate([figures / "loss.png", figures / "loss.pdf", report / "tables" / "best_dev.md",
                               report / "tables" / "best_dev.csv", report / "summary.ipynb", report / "index.md"]):
        targets[place] = outside / f"target-{i}"
        targets[place].write_bytes(PRECIOUS)
        place.symlink_to(targets[place])
    monkeypatch.chdir(tmp_path)
    assert reproduce(study, runs_dir=tmp_path / "runs", data_dir=str(data_dir), reports_dir=tmp_path / "reports",
                     figures_dir=tmp_path / "figures", stream=open(os.devnull, "w"), progress="off") == 0
    for place, target in targets.items():
        assert target.read_bytes() == PRECIOUS, place
        assert not place.is_symlink() and place.stat().st_size > 0, place
