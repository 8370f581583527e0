"""Export, resume and bad input: ``cselab export`` and ``run_name`` never delete what
they read or do not own, a run folder holds one numeric history (execution settings recorded,
resumes under other settings refused, studies say when they reuse such a run), the study engine and
the CLI answer bad input with one line naming the file, line, label or option, and a diverging or
degenerate run says so first."""
from __future__ import annotations

import errno
import io
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from cselab.cli import main
from cselab.model.config import TEMPERATURE_MIN, ConfigError, load_config
from cselab.model.rundir import RunDir, load_state
from cselab.model.train import train
from cselab.model.utils import precision_name, resolve_precision
from cselab.model.options import shown

from test_run_safety import Crash, crash_at, error_line, short_dev_set  # noqa: F401  (autouse fixture)


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under ``root``: what "byte-identical afterwards" compares."""
    return {p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*")) if not p.name.endswith(".lock")}


@pytest.fixture(scope="module")
def finished_run(tiny_model, data_dir, tmp_path_factory) -> Path:
    """A finished 4-step tiny run (best/, last/, metrics.jsonl, results.json), copied by each test."""
    root = tmp_path_factory.mktemp("finished")
    cfg = load_config({"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 64, "batch_size": 16,
                       "max_steps": 4, "eval_every": 2, "log_every": 1, "final_eval": False, "lr": 1e-4,
                       "output_dir": str(root), "run_name": "run"})
    return train(cfg, data_dir=data_dir, progress=False)


@pytest.fixture
def workspace(finished_run, tmp_path) -> Path:
    """tmp/holder/{run (a finished run), user.txt (a user's file)} and tmp/other-run (another run)."""
    holder = tmp_path / "holder"
    shutil.copytree(finished_run, holder / "run")
    (holder / "user.txt").write_text("a user's notes\n")
    shutil.copytree(finished_run, tmp_path / "other-run")
    return tmp_path


# --------------------------------------------------------------------------- 1. export
@pytest.mark.parametrize("source, out, overwrite, message", [
    ("holder/run", "holder/run", True, "{out}: is the source run {ws}/holder/run; export into a new folder"),
    ("holder/run/best", "holder/run/best", True, "{out}: is the source model {ws}/holder/run/best; export into a "
     "new folder"),
    ("holder/run/best", "holder/run/last", True, "{out}: lies inside the source run {ws}/holder/run; export into a "
     "new folder outside it"),
    ("holder/run", "holder/run/export", False, "{out}: lies inside the source run {ws}/holder/run; export into a "
     "new folder outside it"),
    ("holder/run/best", "holder", True, "{out}: contains the source model {ws}/holder/run/best; export into a new "
     "folder outside it"),
    ("holder/run", "other-run/exported", False, "{out}: lies inside the run directory {ws}/other-run (its folders "
     "belong to the trainer); export into a folder outside any run"),
    ("holder/run", "other-run", True, "{out}: is the run directory {ws}/other-run (its folders belong to the "
     "trainer); export into a folder outside any run"),
    ("holder/run", "user-folder", True, "{out}: not a cselab model folder (no cselab.json); --overwrite replaces "
     "only a model folder `cselab export` wrote: choose another folder"),
    ("holder/run", "holder/user.txt", False, "{out}: is a file, not a folder; export writes a folder: choose "
     "another name"),
    ("holder/run", "holder/user.txt", True, "{out}: is a file, not a folder; export writes a folder: choose "
     "another name"),
    ("holder/run", "holder/user.txt/sub", False, "{out}: cannot write ({ws}/holder/user.txt is a file, not a folder)"),
])
def test_export_never_deletes_what_it_reads_or_does_not_own(source, out, overwrite, message, workspace, capsys):
    (workspace / "user-folder").mkdir()
    (workspace / "user-folder" / "data.csv").write_text("1,2\n")
    before = tree(workspace)
    args = ["export", str(workspace / source), str(workspace / out)] + (["--overwrite"] if overwrite else [])
    assert main(args) == 2
    assert error_line(capsys) == "cselab export: error: " + message.format(out=workspace / out, ws=workspace)
    assert tree(workspace) == before                       # byte for byte, and nothing new (no OUT.old, no .tmp)


def test_export_overwrites_only_its_own_export_and_keeps_a_users_file(workspace, capsys):
    source, out = workspace / "holder" / "run", workspace / "exported"
    assert main(["export", str(source), str(out)]) == 0
    recorded = json.loads((out / ".complete.json").read_text())["files"]
    assert "model.safetensors" in recorded and "cselab.json" in recorded and "1_Pooling/config.json" in recorded
    assert main(["export", str(source), str(out), "--overwrite"]) == 0     # its own export: replaced
    capsys.readouterr()
    (out / "notes.md").write_text("mine\n")
    before = tree(workspace)
    assert main(["export", str(source), str(out), "--overwrite"]) == 2
    assert error_line(capsys) == (f"cselab export: error: {out}: holds notes.md, which `cselab export` did not "
                                  "write; --overwrite would delete it: move it away or choose another folder")
    assert tree(workspace) == before


def test_export_to_an_unwritable_place_is_one_line(workspace, capsys, monkeypatch):
    import tempfile

    def refused(*args, **kwargs):   # what a folder without write permission answers (root ignores chmod)
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    out = workspace / "locked" / "export"
    before = tree(workspace)
    assert main(["export", str(workspace / "holder" / "run"), str(out)]) == 2
    assert error_line(capsys) == f"cselab export: error: {out}: cannot write (permission denied)"
    assert tree(workspace) == before


def test_export_of_a_run_without_best_says_what_eval_says(workspace, capsys):
    run = workspace / "holder" / "run"
    shutil.rmtree(run / "best")
    assert main(["export", str(run), str(workspace / "out")]) == 2
    exported = error_line(capsys)
    assert main(["eval", str(run), "--tasks", "STS12"]) == 2
    evaluated = error_line(capsys)
    expected = (f"{run}: this run has no best/ model yet (it has last/, the checkpoint of step 4: evaluate that "
                f"with `cselab eval {run / 'last'}`)")
    assert exported == f"cselab export: error: {expected}" and evaluated == f"cselab eval: error: {expected}"
    assert not (workspace / "out").exists()


# --------------------------------------------------------------------------- 1. run_name, output_dir
@pytest.mark.parametrize("name, problem", [
    ("../../escaped", "holds '/': it must be one folder name, not a path (use output_dir for the location)"),
    ("/tmp/x", "holds '/': it must be one folder name, not a path (use output_dir for the location)"),
    ("a/b", "holds '/': it must be one folder name, not a path (use output_dir for the location)"),
    ("../other", "holds '/': it must be one folder name, not a path (use output_dir for the location)"),
    ("..", "names the parent of the enclosing folder"),
    (".", "names the enclosing folder itself"),
    ("", "is empty"),
    ("x" * 246, "is 246 bytes long; at most 245 fit (the file system's 255 minus 10 for the run's <name>.overwrite/ "
     "staging folder)"),
])
def test_run_name_must_be_one_plain_folder_name(name, problem, tmp_path):
    runs = tmp_path / "runs"
    with pytest.raises(ConfigError) as err:
        load_config({"output_dir": str(runs), "run_name": name})
    assert str(err.value) == (f"run_name: {shown(name)} {problem}; a run name is one folder name inside output_dir "
                              f"({runs})")
    assert load_config({"output_dir": str(runs), "run_name": "x" * 245}).run_name == "x" * 245


def test_run_name_climbing_out_with_overwrite_leaves_the_other_folder_untouched(tiny_config, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "thesis.tex").write_text("\\chapter{Results}\n")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(tiny_config))
    before = tree(tmp_path)
    assert main(["train", str(config), "run_name=../other", "--overwrite"]) == 2
    assert error_line(capsys).startswith("cselab train: error: run_name: '../other' holds '/'")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("where", ["file", "below a file"])
def test_output_dir_that_is_a_file_is_one_line(where, tiny_config, data_dir, tmp_path, capsys):
    blocker = tmp_path / "runs-file"
    blocker.write_text("not a folder\n")
    output_dir = blocker if where == "file" else blocker / "runs"
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "output_dir": str(output_dir)}))
    before = tree(tmp_path)
    assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
    what = "is a file" if where == "file" else f"lies below {blocker}, which is a file"
    assert error_line(capsys) == f"cselab train: error: output_dir: {output_dir} {what}, not a folder; choose a folder"
    assert tree(tmp_path) == before


# --------------------------------------------------------------------------- 4. options and noise
@pytest.mark.parametrize("suite, option, applies", [
    ("geometry", ["--tasks", "STS12"], "clustering / sts / transfer"),   # the registry's order: by name
    ("sts", ["--split", "dev"], "geometry"),
    ("sts", ["--seeds", "1"], "clustering"),
    ("geometry", ["--fast"], "transfer"),
    ("clustering", ["--aggregate", "mean"], "sts"),
])
def test_eval_refuses_an_option_its_suite_would_ignore(suite, option, applies, tiny_model, capsys):
    assert main(["eval", str(tiny_model), "--suite", suite, *option]) == 2
    assert error_line(capsys) == (f"cselab eval: error: {option[0]}: does not apply to --suite {suite} (only to "
                                  f"--suite {applies}); remove it")


def test_abbreviated_and_unknown_options_are_errors(tiny_config, tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(tiny_config))
    for args in (["train", str(config), "--over"], ["export", "a", "b", "--overwrit"], ["eval", "m", "--no-such"]):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2
        assert f"unrecognized arguments: {args[-1]}" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_spearman_of_a_constant_is_nan_without_a_warning():
    from cselab.model.evaluate.sts import spearman

    gold = np.array([0.0, 1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # scipy's ConstantInputWarning would raise here
        assert math.isnan(spearman(np.full(4, 0.7), gold)) and math.isnan(spearman(gold, np.ones(4)))
        assert math.isnan(spearman(np.array([0.1, np.nan, 0.3, 0.4]), gold))
        assert spearman(np.array([0.3, 0.1, 0.2, 0.9]), gold) == pytest.approx(0.4)   # ranks 3,1,2,4 vs 1..4


def test_a_collapsed_model_stops_with_cselabs_error_first(tiny_config, data_dir, tmp_path, capsys, monkeypatch):
    """Every embedding alike (a collapsed model): the dev score is NaN, and the first stderr line is
    cselab's error, not scipy's ConstantInputWarning."""
    from cselab.model.encoder import SentenceEncoder

    monkeypatch.setattr(SentenceEncoder, "encode", lambda self, sentences, **kw: np.ones((len(sentences), 32),
                                                                                       dtype=np.float32))
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "max_steps": 2, "eval_every": 2}))
    from scipy.stats import ConstantInputWarning

    with warnings.catch_warnings():
        for category in (ConstantInputWarning, RuntimeWarning):   # scipy's and numpy's "invalid value"
            warnings.simplefilter("error", category)
        assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys).startswith("cselab train: error: step 2: the STS-B dev score is nan (the model "
                                         "diverged); stopping.")


def test_a_temperature_below_what_fp32_logits_carry_is_refused():
    assert TEMPERATURE_MIN == 2.0 ** -13
    with pytest.raises(ConfigError) as err:
        load_config({"temperature": 1e-12})
    assert str(err.value) == ("temperature: must be >= 2^-13 ≈ 0.000122: the logits cos/τ reach 1/τ, and fp32 (the "
                              "InfoNCE's precision) rounds a logit that large by more than 5e-4 nat, so the loss is "
                              "rounding, not signal, got 1e-12")
    # the bound: half an fp32 ulp of the largest logit 1/τ is 2^-11 nat exactly at τ = 2^-13
    assert np.spacing(np.float32(1 / TEMPERATURE_MIN)) / 2 == 2.0 ** -11
    assert load_config({"temperature": TEMPERATURE_MIN}).temperature == TEMPERATURE_MIN
    assert load_config({"temperature": 0.001}).temperature == 0.001   # SimCSE's smallest ablated τ


# --------------------------------------------------------------------------- 2. one numeric history
@pytest.fixture
def one_thread():
    """Training at 1 intra-op thread (the count is process-wide: restored afterwards)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_resume_under_another_thread_count_is_refused_and_the_same_count_is_byte_identical(
        tiny_config, data_dir, tmp_path, one_thread):
    base = {**tiny_config, "max_steps": 4, "eval_every": 2, "log_every": 1}
    straight = train(load_config({**base, "output_dir": str(tmp_path / "straight")}), data_dir=data_dir,
                     progress=False)
    cfg = load_config({**base, "output_dir": str(tmp_path / "resumed")})
    run = RunDir.for_config(cfg)
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    auto = {e: precision_name(resolve_precision("auto", torch.device("cpu"), evaluation=e)) for e in (False, True)}
    expected = {"device": "cpu", "threads": 1, "world_size": 1, "precision": auto[False], "eval_precision": auto[True]}
    assert load_state(run.last_dir)["execution"] == expected
    before = tree(run.path)
    torch.set_num_threads(2)
    with pytest.raises(ValueError) as err:
        train(cfg, data_dir=data_dir, resume=True, progress=False)
    assert str(err.value) == (f"{run.last_dir}: the checkpoint was written with 1 intra-op thread(s) "
                              "(torch.get_num_threads()), this process has 2; resume it with OMP_NUM_THREADS=1 (a "
                              "resumed run is byte-identical to an uninterrupted one only under the same settings), "
                              "or start a new run with --overwrite")
    assert tree(run.path) == before                       # refused before anything was written
    torch.set_num_threads(1)
    train(cfg, data_dir=data_dir, resume=True, progress=False)
    results = json.loads(run.results_file.read_text())
    assert results["execution"] == expected == json.loads((straight / "results.json").read_text())["execution"]
    assert run.metrics_file.read_bytes() == (straight / "metrics.jsonl").read_bytes()
    for folder in ("best", "last"):
        assert (run.path / folder / "model.safetensors").read_bytes() == (straight / folder / "model.safetensors"
                                                                          ).read_bytes()


def test_a_resume_on_another_device_kind_is_refused():
    from cselab.model.train.execution import resume_mismatch

    saved = {"device": "cuda", "threads": 8, "world_size": 1, "precision": "bf16", "eval_precision": "bf16"}
    assert resume_mismatch(saved, {**saved, "device": "cpu"}) == (
        "the checkpoint was written on a cuda device, this run would continue on cpu; resume it with device=cuda")
    assert resume_mismatch(saved, {**saved, "threads": 2}) is None           # threads matter on a CPU only
    assert resume_mismatch(None, {**saved, "device": "cpu"}) is None         # an older checkpoint: not checked


def study_file(path: Path, tiny_model, runs: list, notebooks: list | None = None) -> Path:
    profile = {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 64, "batch_size": 16,
               "max_steps": 2, "eval_every": 2, "log_every": 1, "final_eval": False, "lr": 1.0e-4}
    study = {"name": path.stem, "profiles": {"cpu": profile}, "runs": runs,
             **({"notebooks": notebooks} if notebooks else {})}
    path.write_bytes(yaml.safe_dump(study, sort_keys=False, allow_unicode=True).encode())
    return path


def test_a_study_says_when_it_reuses_a_run_trained_under_other_settings(tiny_model, data_dir, tmp_path, one_thread):
    from cselab.workbench.studies import load_study
    from cselab.workbench.studies.runner import make_plan, threads_per_run

    study = load_study(study_file(tmp_path / "reuse.yaml", tiny_model, [{"label": "simcse"}]), runs_root=tmp_path)
    spec = study.runs[0]
    train(spec.config, data_dir=data_dir, progress=False)         # trained by `cselab train` at 1 thread
    assert make_plan(study, threads=1)[0].notes == []
    assert make_plan(study, threads=2)[0].notes == [
        "trained with threads=1; this study trains with threads=2: the same config, but not byte-identical numbers "
        "(see docs/reliability.md, Run directories)"]
    results = json.loads((spec.run_dir / "results.json").read_text())
    del results["execution"]                                       # a run of an older cselab
    (spec.run_dir / "results.json").write_text(json.dumps(results))
    assert make_plan(study, threads=1)[0].notes == [
        "its execution settings (threads, processes, device) were not recorded (trained by an older cselab): it may "
        "not be byte-identical to a run trained here"]
    cores = torch.get_num_threads()
    assert threads_per_run(1, "local") == cores and threads_per_run(2, "local") == max(1, cores // 2)
    assert threads_per_run(cores + 1, "submitit-local") == 1 and threads_per_run(2, "slurm") == 0


# --------------------------------------------------------------------------- 3. the study engine speaks in one line
def test_study_validation_errors_name_the_file_line_or_label(tiny_model, tmp_path, capsys):
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: latin\nprofiles: {cpu: {}}\ndescription: caf\xe9\n")
    long = study_file(tmp_path / "long.yaml", tiny_model, [{"label": "simcse", "grid": {"corpus": ["x" * 300]}}])
    before = tree(tmp_path)
    assert main(["reproduce", str(latin), "--dry-run", "--runs-dir", str(tmp_path / "runs")]) == 2
    assert error_line(capsys) == f"cselab reproduce: error: {latin}:3: not valid UTF-8 (byte 48 of the file); save it " \
                                 "as UTF-8"
    assert main(["reproduce", str(long), "--dry-run", "--runs-dir", str(tmp_path / "runs")]) == 2
    assert error_line(capsys) == (
        f"cselab reproduce: error: {long}:14: run 'simcse' (simcse-corpus={'x' * 46}…): the label is 314 bytes long, "
        "more than the 249 that fit in a file name here (the file system's 255 bytes minus .ipynb); shorten it")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("case", ["runs-dir file", "reports-dir below a file", "figures link", "slurm"])
def test_reproduce_refuses_bad_places_and_launchers_before_writing_anything(case, tiny_model, tmp_path, capsys,
                                                                            monkeypatch):
    from conftest import REPO

    notebook = {"notebook": str(REPO / "tests" / "notebooks" / "summary.py")}
    study = study_file(tmp_path / "places.yaml", tiny_model, [{"label": "simcse"}], [notebook])
    (tmp_path / "a-file").write_text("a file\n")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.png").write_bytes(b"\x89PNG keep")
    dirs = {"--runs-dir": tmp_path / "runs", "--reports-dir": tmp_path / "reports",
            "--figures-dir": tmp_path / "figures"}
    extra = []
    if case == "runs-dir file":
        dirs["--runs-dir"] = tmp_path / "a-file"
        message = f"--runs-dir: {tmp_path / 'a-file'} is a file, not a folder; choose a folder"
    elif case == "reports-dir below a file":
        dirs["--reports-dir"] = tmp_path / "a-file" / "reports"
        message = (f"--reports-dir: {dirs['--reports-dir']} lies below {tmp_path / 'a-file'}, which is a file, "
                   "not a folder; choose a folder")
    elif case == "figures link":
        link = tmp_path / "figures" / "places" / "summary"
        link.parent.mkdir(parents=True)
        link.symlink_to(target)
        message = (f"{link}: the figures folder of notebook 'summary' is a symbolic link (to {target}); the study "
                   "empties this folder before the notebook runs and does not delete through links: remove the "
                   "link or choose another --figures-dir")
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))      # no srun
        extra = ["--launcher", "slurm"]
        message = ("--launcher slurm: SLURM is not available here (`srun` is not on PATH); run `cselab reproduce` "
                   "on a SLURM login node, or use --launcher local")
    before = tree(tmp_path)
    args = ["reproduce", str(study), *extra] + [x for option, path in dirs.items() for x in (option, str(path))]
    assert main(args) == 2
    assert error_line(capsys) == f"cselab reproduce: error: {message}"
    assert tree(tmp_path) == before                                # no index, no run, the link's target kept


def test_a_headerless_jupytext_notebook_gets_the_python3_kernel(tiny_model, tmp_path):
    from cselab.workbench.studies import load_study
    from cselab.workbench.studies.spec import notebook_parameters, read_notebook

    plain = tmp_path / "plain.py"
    plain.write_text('# %% tags=["parameters"]\nruns = {}\nscale = 2\n\n# %%\nprint(len(runs) * scale)\n')
    assert read_notebook(plain).metadata["kernelspec"]["name"] == "python3"
    assert notebook_parameters(plain) == {"runs", "scale"}
    study = load_study(study_file(tmp_path / "plain.yaml", tiny_model, [{"label": "simcse"}],
                                  [{"notebook": "plain.py", "parameters": {"scale": 3}}]), runs_root=tmp_path)
    assert study.notebooks[0].declared == {"runs", "scale"}


def test_a_launcher_that_breaks_leaves_an_index_that_says_so(tiny_model, data_dir, tmp_path, monkeypatch):
    from cselab.workbench.studies import reproduce
    from cselab.workbench.studies.launchers import LocalLauncher

    def broken(self, tasks):
        raise RuntimeError("submission refused\nsecond line")
        yield

    monkeypatch.setattr(LocalLauncher, "run", broken)
    study = study_file(tmp_path / "broken.yaml", tiny_model, [{"label": "simcse"}])
    code = reproduce(study, runs_dir=tmp_path / "runs", reports_dir=tmp_path / "reports",
                     figures_dir=tmp_path / "figures", data_dir=str(data_dir), stream=io.StringIO(), progress="lines")
    assert code == 1
    summary = json.loads((tmp_path / "reports" / "broken" / "study.json").read_text())
    assert [(r["status"], r["error"]) for r in summary["runs"]] == [
        ("failed", "--launcher local: RuntimeError: submission refused")]
    assert "not run" not in (tmp_path / "reports" / "broken" / "index.md").read_text()


# The other `cselab reproduce` (or `cselab train`) of the same run: trains it holding its lock, and
# waits at step 1 for a line on stdin, so that the study meets the lock for sure.
TRAIN_HOLDING_THE_LOCK = textwrap.dedent("""
    import json, sys
    from cselab.model.config import load_config
    from cselab.model.train import train

    def pause(state, record):
        if state.step == 1:
            print("training", flush=True)
            sys.stdin.readline()

    train(load_config(json.loads(sys.argv[1])), data_dir=sys.argv[2], progress=False, callbacks=[pause])
""")


def test_a_concurrent_study_waits_for_the_locked_run_then_reuses_it(tiny_model, data_dir, tmp_path, monkeypatch):
    from cselab.workbench.studies import load_study, reproduce

    study_path = study_file(tmp_path / "twice.yaml", tiny_model, [{"label": "simcse"}])
    spec = load_study(study_path, runs_root=tmp_path / "runs").runs[0]
    other = subprocess.Popen([sys.executable, "-c", TRAIN_HOLDING_THE_LOCK, json.dumps(spec.config.to_dict()),
                              str(data_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        assert other.stdout.readline().strip() == "training"
        log = tmp_path / "reports" / "twice" / "runs" / "simcse.log"   # the study's worker says it waits there
        codes = []
        study = threading.Thread(target=lambda: codes.append(reproduce(
            study_path, runs_dir=tmp_path / "runs", reports_dir=tmp_path / "reports",
            figures_dir=tmp_path / "figures", data_dir=str(data_dir), stream=io.StringIO(), progress="lines")))
        study.start()
        for _ in range(1200):
            if log.is_file() and log.read_text().startswith("waiting for another process that holds the run's lock"):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the study never waited for the run's lock")
        other.stdin.write("go\n")
        other.stdin.flush()
        assert other.wait(timeout=300) == 0
        study.join(timeout=300)
    finally:
        other.kill()
    assert codes == [0]
    summary = json.loads((tmp_path / "reports" / "twice" / "study.json").read_text())
    (run,) = summary["runs"]
    assert run["status"] == "reused" and run["error"] is None
    assert run["note"].startswith("trained by another process while this study waited ")
    assert run["best_stsb_dev"] == json.loads((spec.run_dir / "results.json").read_text())["best_stsb_dev"]
    assert log.read_text().startswith("reused: trained by another process while this study waited")   # not trained here
    index = (tmp_path / "reports" / "twice" / "index.md").read_text()
    assert "| reused " in index and "trained by another process while this study waited" in index
