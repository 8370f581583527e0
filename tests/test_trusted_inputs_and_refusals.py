"""Trusted inputs and refusals: ``no_duplicates`` never waits for a batch
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
from cselab.model.config import ConfigError, load_config
from cselab.model.data.errors import DataError
from cselab.model.rundir import RunDir
from cselab.model.train import RunExistsError, train

from synthetic_runs import linked_runs
from test_run_safety import error_line, short_dev_set  # noqa: F401  (autouse fixture)
from test_export_resume_and_bad_input import finished_run, tree  # noqa: F401  (fixture)


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
    import cselab.model.train.loop as loop

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
    for _ in range(2):   # the second time too: one line, not a raw [Errno 20]
        assert main(["train", str(config), "run_name=lnk", "--overwrite"]) == 2
        assert error_line(capsys) == (f"cselab train: error: {link}: is a symbolic link (to {real}); --overwrite "
                                      "replaces only a run folder itself: overwrite the run where it lies")
    assert link.is_symlink() and tree(real) == before
    assert not link.with_name("lnk.old").exists() and not link.with_name("lnk.overwrite").exists()


def test_remove_dir_of_a_link_removes_the_link_only(tmp_path):
    from cselab.model.io import COMPLETE_MARKER, mark_complete, remove_dir

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
    from cselab.model.evaluate import evaluate_run
    from cselab.model.evaluate.cache import evaluation_file

    run = Path(shutil.copytree(finished_run, tmp_path / "run"))
    first = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    entry = evaluation_file(run, "sts", tasks=["STS13"])
    entry.write_text(content)
    with caplog.at_level("WARNING", logger="cselab.model.evaluate"):
        again = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    assert again["scores"] == pytest.approx(first["scores"])
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and warnings[0].startswith(f"{entry}") and problem in warnings[0]
    assert warnings[0].endswith("; computing it again")
    assert json.loads(entry.read_text())["scores"] == again["scores"]     # the entry is whole again


# --------------------------------------------------------------------------- 5. --pairs and --texts
def _write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("a\ta2\tnan\nb\tb2\t3\nc\tc2\t4\n", ":1: gold score 'nan' is not a number"),      # not a header
    ("a\ta2\tNaN\nb\tb2\t3\nc\tc2\t4\n", ":1: gold score 'NaN' is not a number"),
    ("a\ta2\t5\nb\tb2\tinf\nc\tc2\t4\n", ":2: gold score 'inf' is not a finite number"),
    ("a\ta2\t5\nb\tb2\t-inf\nc\tc2\t4\n", ":2: gold score '-inf' is not a finite number"),
    ("s1\ts2\tscore\na\ta2\t1e400\nb\tb2\t3\n", ":2: gold score '1e400' is not a finite number"),
    ("a\tb\t1\na\tb\t2\n  a \t b\t3\n", ": every line holds the same pair ('a', 'b'); a correlation needs at least two "
     "different pairs"),
])
def test_a_pairs_file_with_non_finite_scores_or_one_pair_is_refused(text, message, tmp_path):
    from cselab.model.data.custom import load_pairs_file

    path = _write(tmp_path, "bad.tsv", text)
    with pytest.raises(DataError) as err:
        load_pairs_file(path)
    assert str(err.value) == f"{path}{message}"


def test_many_identical_pairs_are_one_line_on_the_cli(tiny_model, data_dir, tmp_path, capsys):
    path = _write(tmp_path, "same.tsv", "".join(f"a cat\ta dog\t{i % 5}\n" for i in range(100_000)))
    assert main(["eval", str(tiny_model), "--tasks", "STS13", "--pairs", str(path), "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == (f"cselab eval: error: {path}: every line holds the same pair ('a cat', 'a dog'); a "
                                  "correlation needs at least two different pairs")


@pytest.mark.parametrize("option", ["--pairs", "--texts"])
def test_a_device_file_is_not_called_a_folder(option, tiny_model, data_dir, capsys):
    suite = ["--suite", "clustering"] if option == "--texts" else []
    assert main(["eval", str(tiny_model), *suite, option, os.devnull, "--data-dir", str(data_dir)]) == 2
    what = "pairs" if option == "--pairs" else "texts"
    assert error_line(capsys) == (f"cselab eval: error: {os.devnull}: expected a {what} file, found a special file "
                                  "(a device, pipe or socket); give a regular file")


def test_one_distinct_text_under_three_labels_is_refused(tmp_path):
    from cselab.model.data.custom import load_texts_file

    path = _write(tmp_path, "same.tsv", "a\tthe same text\nb\tthe same text\nc\tthe same  text\na\tthe same text\n")
    with pytest.raises(DataError) as err:
        load_texts_file(path)
    assert str(err.value) == (f"{path}: 1 distinct text(s) for 3 labels; K-means with K = 3 needs at least 3 "
                              "different texts")


def test_embeddings_that_coincide_give_one_warning_not_sklearns(caplog, recwarn):
    import numpy as np

    from cselab.model.evaluate.clustering import cluster_embeddings

    x = np.zeros((6, 4))
    x[3:] = 1.0                                       # two distinct points for K = 3
    with caplog.at_level("WARNING", logger="cselab.model.evaluate"):
        out = cluster_embeddings(x, np.array([0, 0, 1, 1, 2, 2]), seeds=[0, 1])
    assert out["n_clusters"] == 3
    assert [w for w in recwarn if "ConvergenceWarning" in type(w.message).__name__] == []
    notes = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert notes == ["K-means with K = 3: the 6 embeddings hold only 2 distinct points, so at most 2 clusters are "
                     "found (the model maps different texts to one embedding)"]


# --------------------------------------------------------------------------- 6. $CSELAB_SMOKE_DIR
def test_a_smoke_dir_that_is_a_file_is_one_line_naming_the_variable(data_dir, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "smoke-file"
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(blocker))
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "cpu-demo", "--profile", "smoke", "--dry-run", "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == (f"cselab reproduce: error: $CSELAB_SMOKE_DIR: {blocker} is a file, not a folder; "
                                  "choose a folder")
    assert blocker.read_text() == "not a folder\n"


# --------------------------------------------------------------------------- 7. a changed environment is said
def _other_versions(run: Path) -> None:
    """Pretend the run was started under other torch and transformers versions (config.json's record)."""
    saved = json.loads((run / "config.json").read_text())
    saved["versions"].update(torch="1.0.0", transformers="3.0.0")
    (run / "config.json").write_text(json.dumps(saved))


def _torch_now() -> str:
    from cselab.model.rundir.layout import package_versions

    return f"torch 1.0.0 → {package_versions()['torch']}, transformers 3.0.0 → {package_versions()['transformers']}"


def test_resume_under_other_package_versions_is_said(tiny_config, data_dir, caplog):
    from test_run_safety import Crash, crash_at

    cfg = load_config({**tiny_config, "max_steps": 4, "eval_every": 2})
    run = RunDir.for_config(cfg)
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    _other_versions(run.path)
    with caplog.at_level("WARNING", logger="cselab"):
        train(cfg, data_dir=data_dir, resume=True, progress=False)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"{run.path}: resuming under other package versions than the run was started with "
                        f"({_torch_now()}): the resumed run is not byte-identical to an uninterrupted one"]


def test_a_train_start_outside_the_lockfile_says_so(tiny_config, data_dir, caplog, monkeypatch):
    import cselab.model.rundir.layout as layout

    differs = {"file": "cselab/model/locks/cpu.txt", "sha256": "0" * 64, "matches": False, "differences": 2,
               "first_differences": ["torch: locked 9.0.0, installed 2.0.0", "numpy: locked 9.0, installed 1.0"]}
    monkeypatch.setattr(layout, "lockfile_info", lambda: differs)
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    with caplog.at_level("INFO", logger="cselab"):
        run = train(cfg, data_dir=data_dir, progress=False)
    notes = [r.getMessage() for r in caplog.records if "lockfile" in r.getMessage()]
    assert notes == [f"{run}: note: this environment differs from the tested lockfile cselab/model/locks/cpu.txt in 2 "
                     "package(s) (torch: locked 9.0.0, installed 2.0.0; numpy: locked 9.0, installed 1.0); "
                     "config.json records it, and numbers may differ from a run under the lockfile"]


def test_a_study_and_its_dry_run_say_when_a_run_was_trained_under_other_versions(tiny_model, data_dir, tmp_path,
                                                                                 monkeypatch, capsys):
    from test_export_resume_and_bad_input import study_file

    from cselab.workbench.studies import load_study
    from cselab.workbench.studies.runner import make_plan

    path = study_file(tmp_path / "versions.yaml", tiny_model, [{"label": "simcse"}])
    monkeypatch.chdir(tmp_path)
    study = load_study(path, runs_root=tmp_path / "runs")
    spec = study.runs[0]
    train(spec.config, data_dir=data_dir, progress=False)
    _other_versions(spec.run_dir)
    note = (f"trained under other package versions ({_torch_now()}): the same config, but not byte-identical "
            "numbers")
    assert note in make_plan(study, threads=None)[0].notes
    assert main(["reproduce", str(path), "--dry-run", "--runs-dir", str(tmp_path / "runs"), "--data-dir",
                 str(data_dir)]) == 0
    assert f"  note: simcse: {note}" in capsys.readouterr().out


def test_the_dry_run_shows_a_thread_mismatch(tiny_model, data_dir, tmp_path, monkeypatch, capsys):
    """docs/studies.md: the dry run says when a reused run was trained with another thread count."""
    import torch

    from test_export_resume_and_bad_input import study_file

    from cselab.workbench.studies import load_study

    path = study_file(tmp_path / "threads.yaml", tiny_model, [{"label": "simcse"}])
    monkeypatch.chdir(tmp_path)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        train(load_study(path, runs_root=tmp_path / "runs").runs[0].config, data_dir=data_dir, progress=False)
        torch.set_num_threads(2)
        assert main(["reproduce", str(path), "--dry-run", "--runs-dir", str(tmp_path / "runs"), "--data-dir",
                     str(data_dir)]) == 0
    finally:
        torch.set_num_threads(before)
    assert ("  note: simcse: trained with threads=1; this study trains with threads=2: the same config, but not "
            "byte-identical numbers (see docs/reliability.md, Run directories)") in capsys.readouterr().out


# --------------------------------------------------------------------------- 8. notebooks
def test_compare_with_one_methods_runs_draws_what_one_method_can_show(tiny_runs, thin_data, tmp_path, monkeypatch):
    from test_notebooks_analysis import execute, notebook_text, table_rows

    runs = linked_runs({k: tiny_runs[k] for k in ("simcse-s1", "simcse-s2")}, tmp_path)
    notebook, figures, tables = execute("compare", tmp_path, monkeypatch, {
        "runs": {k: str(v) for k, v in runs.items()}, "data_dir": str(thin_data)})
    outputs = [out for cell in notebook["cells"] for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    assert "no paired tests: every run is in the baseline group 'SimCSE'; add another group's runs to compare " \
           "with it" in notebook_text(notebook)
    assert [(r["group"], r["runs"]) for r in table_rows(tables, "sts_methods")] == [("SimCSE", "2")]
    assert not figures.exists() or not any(figures.iterdir())      # nothing to draw against itself


def _run_copy(finished_run, tmp_path, name="run") -> Path:
    return Path(shutil.copytree(finished_run, tmp_path / name))


def test_notebook_runs_without_best_are_one_line_that_mentions_last(finished_run, tmp_path):
    from cselab.workbench import RunsNotFound, load_runs

    run = _run_copy(finished_run, tmp_path)
    shutil.rmtree(run / "best")
    with pytest.raises(RunsNotFound) as err:
        load_runs({"simcse-s1": str(run)}, need_best=True)
    assert str(err.value) == (f"runs: no best/ model: simcse-s1: {run}: this run has no best/ model yet (it has "
                              f"last/, the checkpoint of step 4: evaluate that with `cselab eval {run / 'last'}`)")
    assert load_runs({"simcse-s1": str(run)}) == {"simcse-s1": run}      # a notebook of logged records only
    for name in ("dynamics", "geometry", "embedding_maps", "clustering", "compare"):   # the notebooks that load best/
        from conftest import REPO

        assert "workbench.load_runs(runs, need_best=True)" in (REPO / "notebooks" / f"{name}.py").read_text()


def test_evaluating_a_run_without_best_mentions_last(finished_run, tmp_path):
    from cselab.model.evaluate import evaluate_run

    run = _run_copy(finished_run, tmp_path)
    shutil.rmtree(run / "best")
    with pytest.raises(FileNotFoundError) as err:
        evaluate_run(run, "geometry")
    assert str(err.value) == (f"{run}: this run has no best/ model yet (it has last/, the checkpoint of step 4: "
                              f"evaluate that with `cselab eval {run / 'last'}`)")


@pytest.mark.parametrize("content, problem", [
    ("[]", "not a cselab run config (expected a JSON object; got [])"),
    ('{"config_hash": "x", "config": []}', "not a cselab run config ('config' is not an object)"),
    ("{", "not valid JSON (Expecting property name enclosed in double quotes)"),
])
def test_a_run_whose_config_json_is_damaged_is_one_line_naming_it(content, problem, finished_run, tmp_path):
    from cselab.model.rundir import read_config
    from cselab.workbench import RunsNotFound, load_runs

    run = _run_copy(finished_run, tmp_path)
    (run / "config.json").write_text(content)
    with pytest.raises(ValueError) as err:
        read_config(run)
    assert str(err.value).startswith(f"{run / 'config.json'}") and problem in str(err.value)
    with pytest.raises(RunsNotFound) as err:
        load_runs({"r": str(run)})
    assert str(err.value).startswith(f"runs: not a run directory: r: {run} ({run / 'config.json'}")
    assert problem in str(err.value)


# --------------------------------------------------------------------------- 9. reproduce: figures folders
def test_reproduce_refuses_a_study_figures_folder_that_is_a_link(tiny_model, tmp_path, capsys):
    from conftest import REPO
    from test_export_resume_and_bad_input import study_file

    notebook = {"notebook": str(REPO / "tests" / "notebooks" / "summary.py")}
    study = study_file(tmp_path / "places.yaml", tiny_model, [{"label": "simcse"}], [notebook])
    target = tmp_path / "elsewhere"
    (target / "summary").mkdir(parents=True)
    (target / "summary" / "keep.png").write_bytes(b"\x89PNG keep")
    link = tmp_path / "fig" / "places"
    link.parent.mkdir()
    link.symlink_to(target)
    before = tree(tmp_path)
    assert main(["reproduce", str(study), "--runs-dir", str(tmp_path / "runs"), "--reports-dir",
                 str(tmp_path / "reports"), "--figures-dir", str(tmp_path / "fig")]) == 2
    assert error_line(capsys) == (f"cselab reproduce: error: {link}: the figures folder of study 'places' is a "
                                  f"symbolic link (to {target}); the study empties the folders inside it before its "
                                  "notebooks run and does not delete through links: remove the link or choose another "
                                  "--figures-dir")
    assert tree(tmp_path) == before


def test_emptying_a_notebooks_figures_folder_removes_only_figures(tmp_path):
    from cselab.workbench.studies.runner import clear_figures

    folder = tmp_path / "summary"
    (folder / "mine").mkdir(parents=True)
    (folder / "old.png").write_bytes(b"png")
    (folder / "old.pdf").write_bytes(b"pdf")
    (folder / "old.problems.json").write_text("{}")
    (folder / "notes.json").write_text("{}")
    (folder / "notes.txt").write_text("mine\n")
    (folder / "mine" / "x.png").write_bytes(b"png")
    clear_figures(folder)
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == ["mine", "mine/x.png", "notes.json",
                                                                                  "notes.txt"]
    (folder / "notes.txt").unlink()
    (folder / "notes.json").unlink()
    shutil.rmtree(folder / "mine")
    (folder / "again.png").write_bytes(b"png")
    clear_figures(folder)
    assert not folder.exists()                                   # only figures were there: the folder goes too


def test_reproduce_killed_mid_notebook_leaves_an_index_that_says_so(tiny_model, data_dir, tmp_path, monkeypatch):
    """kill -9 of ``cselab reproduce`` while a notebook runs: the index no longer says the last
    study's "ok" (it says the study is in progress or was killed), no partial .ipynb stands under
    the notebook's name, and the earlier complete one is kept."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO
    from test_export_resume_and_bad_input import study_file

    from cselab.workbench.studies import load_study

    marker = tmp_path / "started.txt"
    notebook = {"notebook": str(REPO / "tests" / "notebooks" / "waiting.py"), "parameters": {"marker": str(marker)}}
    study = study_file(tmp_path / "killed.yaml", tiny_model, [{"label": "simcse"}], [notebook])
    monkeypatch.chdir(tmp_path)
    train(load_study(study, runs_root=tmp_path / "runs").runs[0].config, data_dir=data_dir, progress=False)
    reports = tmp_path / "reports" / "killed"
    reports.mkdir(parents=True)
    (reports / "index.md").write_text("- status: **all runs and notebooks succeeded**\n[waiting](waiting.ipynb)\n")
    (reports / "waiting.ipynb").write_text('{"cells": [], "complete": true}')
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
        os.killpg(proc.pid, signal.SIGKILL)        # the study and its kernel, as kill -9 of the session would
        proc.wait()
    index = (reports / "index.md").read_text()
    assert "succeeded" not in index
    assert "- status: **in progress" in index and "run the same command again" in index
    assert json.loads((reports / "waiting.ipynb").read_text()) == {"cells": [], "complete": True}
    # the killed execution's partial file is hidden (a leading dot), never under the notebook's name
    assert not [p for p in reports.iterdir() if p.name.endswith(".ipynb") and p.name != "waiting.ipynb"
                and not p.name.startswith(".")]


# --------------------------------------------------------------------------- beyond the issue
def test_the_smoke_sample_never_replaces_a_folder_cselab_did_not_write(data_dir, tmp_path):
    """$CSELAB_SMOKE_DIR=. in a project whose ./data is the real data root: the sample goes to
    ./data and would have replaced it."""
    from cselab.model.data.sample import sample_data_root
    from cselab.model.io import WriteError

    mine = tmp_path / "data"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    with pytest.raises(WriteError) as err:
        sample_data_root(data_dir, mine, 50)
    assert str(err.value) == (f"{mine}: exists and was not written by cselab (no .complete.json); it is where the "
                              "data sample goes: move it, or choose another folder")
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_the_smoke_stand_in_never_replaces_a_folder_cselab_did_not_write(tmp_path, monkeypatch):
    from cselab.model.io import WriteError
    from cselab.workbench.studies.smoke import tiny_backbone

    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(tmp_path))
    mine = tmp_path / "bert-base-uncased"
    mine.mkdir()
    (mine / "thesis.tex").write_text("\\chapter{}\n")
    with pytest.raises(WriteError) as err:
        tiny_backbone("bert-base-uncased")
    assert str(err.value) == (f"{mine}: exists and was not written by cselab (no .complete.json); it is where the "
                              "stand-in model for bert-base-uncased goes: move it, or choose another folder")
    assert sorted(p.name for p in mine.iterdir()) == ["thesis.tex"]


@pytest.mark.parametrize("name, content", [("results.json", "[]"), ("config.json", "[]")])
def test_reproduce_over_a_run_with_a_damaged_json_file_is_one_line_naming_it(name, content, tiny_model, data_dir,
                                                                            tmp_path, monkeypatch, capsys):
    from test_export_resume_and_bad_input import study_file

    from cselab.workbench.studies import load_study

    path = study_file(tmp_path / "damaged.yaml", tiny_model, [{"label": "simcse"}])
    monkeypatch.chdir(tmp_path)
    run = train(load_study(path, runs_root=tmp_path / "runs").runs[0].config, data_dir=data_dir, progress=False)
    (run / name).write_text(content)
    assert main(["reproduce", str(path), "--dry-run", "--runs-dir", str(tmp_path / "runs"), "--data-dir",
                 str(data_dir)]) == 2
    line = error_line(capsys)
    assert line.startswith(f"cselab reproduce: error: {run / name}: not a cselab ") and "got []" in line


@pytest.mark.parametrize("how", ["env", "option"])
def test_a_data_root_that_is_a_file_is_one_line_naming_where_it_came_from(how, data_dir, tmp_path, monkeypatch,
                                                                          capsys):
    blocker = tmp_path / "data-file"
    blocker.write_text("not a folder\n")
    args = ["data", "fetch", "--mirror", str(data_dir)]
    if how == "env":
        monkeypatch.setenv("CSELAB_DATA", str(blocker))
        what = "$CSELAB_DATA"
    else:
        args += ["--data-dir", str(blocker)]
        what = "--data-dir"
    assert main(args) == 2
    assert error_line(capsys) == f"cselab data: error: {what}: {blocker} is a file, not a folder; choose a folder"
    assert blocker.read_text() == "not a folder\n"


def test_a_damaged_sample_marker_is_rebuilt_not_an_error_forever(data_dir, tmp_path, caplog):
    """The smoke sample's completeness marker is its cache key: a truncated one is rebuilt with a warning."""
    from cselab.model.data.sample import sample_data_root
    from cselab.model.io import COMPLETE_MARKER

    target = sample_data_root(data_dir, tmp_path / "sample", 50)
    (target / COMPLETE_MARKER).write_text('{"sample_of": ')
    with caplog.at_level("WARNING", logger="cselab.model.data"):
        assert sample_data_root(data_dir, target, 50) == target
    assert json.loads((target / COMPLETE_MARKER).read_text())["every"] == 50
    assert any(str(target / COMPLETE_MARKER) in r.getMessage() and "building it again" in r.getMessage()
               for r in caplog.records)


def test_read_results_of_a_damaged_results_json_is_one_line_naming_it(finished_run, tmp_path):
    from cselab.model.rundir import read_results

    run = _run_copy(finished_run, tmp_path)
    (run / "results.json").write_text("[]")
    with pytest.raises(ValueError, match=f"^{run / 'results.json'}: not a cselab results file"):
        read_results({"r": run})


@pytest.mark.parametrize("option, what", [("pairs", "pairs file"), ("texts", "texts file")])
def test_a_cached_evaluation_of_a_folder_as_pairs_or_texts_is_one_line(option, what, finished_run, tmp_path):
    from cselab.model.evaluate import evaluate_run

    run = _run_copy(finished_run, tmp_path)
    folder = tmp_path / "mine"
    folder.mkdir()
    suite = "sts" if option == "pairs" else "clustering"
    with pytest.raises(DataError) as err:
        evaluate_run(run, suite, tasks=[], **{option: {"mine": str(folder)}})
    assert str(err.value) == f"{folder}: expected a {what}, found a folder"


@pytest.mark.parametrize("name", ["dynamics", "geometry"])
def test_dynamics_and_geometry_on_a_run_without_best_end_in_one_line_mentioning_last(name, finished_run, tmp_path,
                                                                                     monkeypatch):
    import papermill
    from test_notebooks_analysis import execute

    run = _run_copy(finished_run, tmp_path, "simcse-s1")
    shutil.rmtree(run / "best")
    with pytest.raises(papermill.PapermillExecutionError) as error:
        execute(name, tmp_path, monkeypatch, {"runs": {"simcse-s1": str(run)}})
    assert error.value.ename == "RunsNotFound" and len(error.value.traceback) == 1
    assert error.value.traceback[0].startswith("RunsNotFound: runs: no best/ model: simcse-s1: ")
    assert "it has last/, the checkpoint of step 4" in error.value.traceback[0]
