"""Reliability of the research surface, round 2 (issue 32): ``no_duplicates`` never waits for a batch
that cannot come, ``train --overwrite`` replaces only runs (never a user's folder or a link), a failed
start leaves no lock file, user files (``--pairs``, ``--texts``) and evaluation-cache entries are
trusted only after checking, a changed environment is said out loud, and the notebooks answer a run
without best/ or a study of one method with one line or a figure."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from cselab.cli import main
from cselab.config import ConfigError, load_config
from cselab.data.errors import DataError
from cselab.rundir import RunDir
from cselab.train import RunExistsError, train

from test_reliability import error_line, short_dev_set  # noqa: F401  (autouse fixture)
from test_reliability_surface import finished_run, tree  # noqa: F401  (fixture)


# --------------------------------------------------------------------------- 1. no_duplicates
@pytest.fixture
def deadline():
    """A hang becomes a failure after 60 s (there is no pytest-timeout here)."""
    import signal

    def hung(signum, frame):
        raise TimeoutError("still waiting after 60 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("length", [{"max_steps": 5}, {"epochs": 1}])
def test_no_duplicates_on_a_corpus_of_one_repeated_sentence_is_refused_at_once(length, tiny_config, data_dir,
                                                                               tmp_path, deadline):
    corpus = tmp_path / "same400.txt"
    corpus.write_text("the same sentence again\n" * 400)
    cfg = load_config({**tiny_config, "corpus": str(corpus), "max_sentences": None, "batch_size": 8,
                       "no_duplicates": True, **length})
    with pytest.raises(DataError, match=f"^{corpus}: no_duplicates: the corpus has 1 distinct sentence"):
        train(cfg, data_dir=data_dir, progress=False)
    assert not RunDir.for_config(cfg).path.exists()


def test_an_epoch_without_a_batch_stops_instead_of_waiting(monkeypatch, tiny_config, data_dir, deadline):
    """Whatever the cause, a loop that waits for a batch that cannot come ends with an error."""
    import cselab.train.loop as loop

    monkeypatch.setattr(loop, "epoch_batches", lambda *args, **kwargs: [])
    cfg = load_config({**tiny_config, "max_steps": 3})
    with pytest.raises(RuntimeError, match="epoch 0 has no batch of 2 or more sentences"):
        train(cfg, data_dir=data_dir, progress=False)
    assert not RunDir.for_config(cfg).path.exists()


# --------------------------------------------------------------------------- 2. train into a folder that is not a run
@pytest.fixture
def notes_folder(tiny_config, data_dir, tmp_path, monkeypatch):
    """runs/mynotes/{notes.txt, sub/d.csv}: a user's folder where a run would go, and the config file."""
    monkeypatch.setenv("CSELAB_DATA", str(data_dir))
    notes = Path(tiny_config["output_dir"]) / "mynotes"
    (notes / "sub").mkdir(parents=True)
    (notes / "notes.txt").write_text("my notes\n")
    (notes / "sub" / "d.csv").write_text("a,b\n1,2\n")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2}))
    return notes, config


@pytest.mark.parametrize("flag", [[], ["--resume"], ["--overwrite"]])
def test_train_never_touches_a_folder_that_is_not_a_run(flag, notes_folder, capsys):
    notes, config = notes_folder
    before = tree(notes.parent)
    assert main(["train", str(config), "run_name=mynotes", *flag]) == 2
    assert error_line(capsys) == (f"cselab train: error: {notes}: not a cselab run (no config.json); train writes "
                                  "only into a new folder or a run it started: choose another run_name")
    assert tree(notes.parent) == before
    assert sorted(p.name for p in notes.parent.iterdir()) == ["mynotes"]   # no lock file, no staging folder


def test_train_overwrite_refuses_a_folder_whose_config_json_is_not_a_runs(notes_folder, capsys):
    notes, config = notes_folder
    (notes / "config.json").write_text('{"model_type": "bert"}')          # e.g. a Hugging Face model folder
    before = tree(notes.parent)
    assert main(["train", str(config), "run_name=mynotes", "--overwrite"]) == 2
    assert error_line(capsys) == (f"cselab train: error: {notes / 'config.json'}: not a cselab run config (expected "
                                  "a JSON object with 'config_hash'; got {\"model_type\": \"bert\"})")
    assert tree(notes.parent) == before


def test_train_overwrite_of_a_symlinked_run_keeps_the_link_and_its_target(tiny_config, data_dir, tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.setenv("CSELAB_DATA", str(data_dir))
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "real"})
    real = train(cfg, data_dir=data_dir, progress=False)
    link = real.with_name("lnk")
    link.symlink_to(real, target_is_directory=True)
    before = tree(real)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2}))
    for _ in range(2):   # the second time used to end in a raw [Errno 20]
        assert main(["train", str(config), "run_name=lnk", "--overwrite"]) == 2
        assert error_line(capsys) == (f"cselab train: error: {link}: is a symbolic link (to {real}); --overwrite "
                                      "replaces only a run folder itself: overwrite the run where it lies")
    assert link.is_symlink() and tree(real) == before
    assert not link.with_name("lnk.old").exists() and not link.with_name("lnk.overwrite").exists()


def test_remove_dir_of_a_link_removes_the_link_only(tmp_path):
    from cselab.io import COMPLETE_MARKER, mark_complete, remove_dir

    target = tmp_path / "target"
    target.mkdir()
    mark_complete(target, {"step": 1})
    (tmp_path / "lnk").symlink_to(target, target_is_directory=True)
    remove_dir(tmp_path / "lnk")
    assert not (tmp_path / "lnk").is_symlink() and (target / COMPLETE_MARKER).is_file()


@pytest.mark.parametrize("name, problem", [
    (" ", "is only white space"),
    ("\t", "is only white space"),
    (" run", "begins or ends with white space"),
    ("run\n", "begins or ends with white space"),
    ("a\nb", "holds a control character"),
])
def test_run_name_of_white_space_or_control_characters_is_refused(name, problem, tmp_path):
    runs = tmp_path / "runs"
    with pytest.raises(ConfigError) as err:
        load_config({"output_dir": str(runs), "run_name": name})
    assert str(err.value) == (f"run_name: {name!r} {problem}; a run name is one folder name inside output_dir "
                              f"({runs})")
    assert not runs.exists()


# --------------------------------------------------------------------------- 3. failed starts leave no lock file
@pytest.mark.parametrize("failure", ["data", "model", "exists"])
def test_a_failed_start_leaves_no_lock_file(failure, tiny_config, data_dir, tmp_path):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    if failure == "data":
        (tmp_path / "empty-data").mkdir()
        with pytest.raises(DataError):
            train(cfg, data_dir=tmp_path / "empty-data", progress=False)
    elif failure == "model":
        cfg = load_config({**tiny_config, "model": str(tmp_path / "no-model"), "max_steps": 2, "eval_every": 2})
        run = RunDir.for_config(cfg)
        with pytest.raises(Exception):
            train(cfg, data_dir=data_dir, progress=False)
    else:
        run.path.parent.mkdir(parents=True)
        (run.path.parent / "x").write_text("")
        cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "run_name": "x"})
        run = RunDir.for_config(cfg)
        with pytest.raises(OSError):
            train(cfg, data_dir=data_dir, progress=False)
    assert not run.lock_file.exists()
    assert not run.path.exists() or run.path.is_file()


# --------------------------------------------------------------------------- 4. the evaluation cache
@pytest.mark.parametrize("content, problem", [
    ('{"scores": {"STS13": 1', "not valid JSON"),
    ("\x00\x01garbage", "not valid JSON"),
    ("[]", "not a cached sts result (expected a JSON object, got a list)"),
    ("{}", "not a cached sts result (no 'scores')"),
    ('{"scores": [], "options": {}}', "not a cached sts result ('scores' is a list, not an object)"),
])
def test_a_damaged_cache_entry_is_computed_again_with_a_warning(content, problem, finished_run, data_dir, tmp_path,
                                                               caplog):
    from cselab.evaluate import evaluate_run
    from cselab.evaluate.cache import evaluation_file

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    first = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    entry = evaluation_file(run, "sts", tasks=["STS13"])
    entry.write_text(content)
    with caplog.at_level("WARNING", logger="cselab.evaluate"):
        again = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    assert again["scores"] == pytest.approx(first["scores"])
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{entry}") and problem in warnings[0]
    assert warnings[0].endswith("; computing it again")
    assert json.loads(entry.read_text())["scores"] == again["scores"]     # the entry is whole again
