"""Studies (`cselab reproduce`): validation, planning and cost, runs through the train notebook with
reuse and resume, failing runs and notebooks, the submitit path, the index page."""
from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import re
import struct
from pathlib import Path

import pytest
import yaml

from conftest import REPO

from cselab.cli import main as cli_main
from cselab.model.config import load_config
from cselab.model.io import read_json, read_jsonl
from cselab.workbench.studies import StudyError, load_study, reproduce
from cselab.workbench.studies.runner import threads_per_run
from cselab.workbench.studies.cost import (corpus_size, estimate_run, format_seconds, layer_parameters, seconds_per_step,
                                 total_steps)
from cselab.model.train import train

NOTEBOOKS = REPO / "tests" / "notebooks"


def base_profile(tiny_model) -> dict:
    """Two optimizer steps of the tiny BERT, one STS-B dev evaluation, no final STS suite."""
    return {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 64, "batch_size": 16,
            "max_steps": 2, "eval_every": 2, "log_every": 1, "final_eval": False, "lr": 1.0e-4}


def write_study(path: Path, tiny_model, runs: list, notebooks: list | None = None, **extra) -> Path:
    study = {"name": path.stem, "description": "a test study", "profiles": {"cpu": base_profile(tiny_model)},
             "runs": runs, **({"notebooks": notebooks} if notebooks is not None else {}), **extra}
    path.write_text(yaml.safe_dump(study, sort_keys=False))
    return path


@contextlib.contextmanager
def working_dir(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_study(root: Path, study: Path, data_dir: Path, **kwargs) -> tuple[int, str, dict]:
    """reproduce() with every output under ``root``; returns (exit code, printed text, study.json)."""
    stream = io.StringIO()
    with working_dir(root):
        code = reproduce(study, runs_dir=root / "runs", reports_dir=root / "reports", figures_dir=root / "figures",
                         data_dir=str(data_dir), stream=stream, progress="lines", **kwargs)
    summary_file = root / "reports" / load_study(study, runs_root=root / "runs").name / "study.json"
    return code, stream.getvalue(), read_json(summary_file) if summary_file.is_file() else {}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def image_outputs(notebook: Path) -> list[bytes]:
    cells = json.loads(notebook.read_text())["cells"]
    return [base64.b64decode(out["data"]["image/png"]) for cell in cells for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})]


# ------------------------------------------------------------------- a two-run study, twice
@pytest.fixture(scope="module")
def two_runs(tiny_model, data_dir, tmp_path_factory):
    """The two-run study executed once (shared by the tests that only read its runs)."""
    root = tmp_path_factory.mktemp("study")
    study = write_study(root / "two-runs.yaml", tiny_model, runs=[{"label": "simcse", "seeds": [1, 2]}],
                        notebooks=[{"notebook": str(NOTEBOOKS / "summary.py"), "parameters": {"title": "loss"}}])
    code, text, summary = run_study(root, study, data_dir, jobs=2)   # both runs at once (two kernels)
    return root, study, code, text, summary


def again_by_label(summary: dict) -> dict:
    return {r["label"]: r for r in summary["runs"]}


def test_two_run_study_runs_end_to_end_then_reuses_its_runs(two_runs, tiny_model, data_dir):
    root, study, code, text, summary = two_runs
    assert code == 0, text
    assert [(r["label"], r["status"]) for r in summary["runs"]] == [("simcse-s1", "trained"), ("simcse-s2", "trained")]
    # each run lives in the shared root under the trainer's default name for its config
    for seed, run in zip((1, 2), summary["runs"]):
        cfg = load_config(None, {**base_profile(tiny_model), "seed": seed})
        run_dir = root / "runs" / cfg.default_run_name()
        assert Path(run["run_dir"]) == run_dir
        assert read_json(run_dir / "config.json")["config_hash"] == cfg.config_hash()
        results = read_json(run_dir / "results.json")
        assert results["steps"] == 2 and run["best_stsb_dev"] == results["best_stsb_dev"]
        assert f"run {run['label']}: trained" in text
        # the run's log: its directory, its config and its results
        printed = (root / "reports" / "two-runs" / "runs" / f"{run['label']}.log").read_text()
        assert f"run directory: {run_dir}" in printed and f'"seed": {seed}' in printed
        assert f"best STS-B dev {results['best_stsb_dev']:.2f} at step 2" in printed
    # the analysis notebook: three inline PNGs (cell ending in `fig`, display(fig), workbench.show), 330×250
    # (3.4 × 2.6 in at the inline 100 dpi), the figure saved as PNG + PDF, the table as .md + .csv
    report = root / "reports" / "two-runs"
    images = image_outputs(report / "summary.ipynb")
    assert [png_size(i) for i in images] == [(330, 250)] * 3
    folder = root / "figures" / "two-runs" / "summary"
    assert sorted(p.name for p in folder.iterdir()) == ["loss.pdf", "loss.png", "provenance.json"]
    drawn = json.loads((folder / "provenance.json").read_text())["figures"]["loss.png"]   # the notebook and its runs
    assert "summary.py on 2 run(s): " in drawn["source"] and drawn["command"]
    devs = [r["best_stsb_dev"] for r in summary["runs"]]
    csv_lines = (report / "tables" / "best_dev.csv").read_text().splitlines()
    assert csv_lines[0] == "run,best STS-B dev"
    assert [line.split(",")[0] for line in csv_lines[1:]] == ["simcse-s1", "simcse-s2"]
    assert [float(line.split(",")[1]) for line in csv_lines[1:]] == pytest.approx(devs)
    index = (report / "index.md").read_text()
    for link in ("](summary.ipynb)", "](runs/simcse-s1.log)", "](runs/simcse-s2.log)",
                 "](../../figures/two-runs/summary/loss.png)", "](tables/best_dev.md)", "](tables/best_dev.csv)"):
        assert link in index, link
    assert "all runs and notebooks succeeded" in index
    for run in summary["runs"]:
        assert f"| {run['best_stsb_dev']:.2f} " in index
    # the time split: each run's training loop (results.json) inside its training call, inside its
    # total; its dev evaluations encoded in its worker; the summary notebook encodes and fits nothing
    for run in summary["runs"]:
        split = run["time_split"]
        assert run["train_seconds"] == read_json(Path(run["run_dir"]) / "results.json")["train_seconds"]
        assert 0 < run["train_seconds"] < split["cells"] < split["total"] <= run["seconds"]
        assert split["kernel"] == pytest.approx(split["total"] - split["cells"])
        assert 0 < split["encode"] < split["cells"] and split["fit"] == 0.0   # the dev evaluation and probes
        assert re.search(rf"\| run {run['label']} +\| {run['seconds']:.1f} +\| {split['kernel']:.1f} +\| "
                         rf"{run['train_seconds']:.1f} +\|", index)
    nb_split = summary["notebooks"][0]["time_split"]
    assert (nb_split["encode"], nb_split["fit"]) == (0.0, 0.0) and 0 < nb_split["cells"] < nb_split["total"]
    assert "## Time" in index and re.search(r"\| notebook summary +\|", index)
    # the wall-clock phases: the runs (two at a time) were done before the study's end
    assert 0 < summary["runs_done_seconds"] < summary["wall_seconds"]
    assert re.search(r"Wall time .+, 2 process\(es\) at a time; the last run finished after ", index)

    # second invocation: both runs reused (no training: metrics and the runs' logs untouched)
    run_dirs = [Path(r["run_dir"]) for r in summary["runs"]]
    metrics = [(d / "metrics.jsonl").read_bytes() for d in run_dirs]
    stamps = [(d / "metrics.jsonl").stat().st_mtime_ns for d in run_dirs]
    logs = [(report / "runs" / f"{r['label']}.log").stat().st_mtime_ns for r in summary["runs"]]
    code, text, again = run_study(root, study, data_dir)
    assert code == 0, text
    assert [r["status"] for r in again["runs"]] == ["reused", "reused"]
    assert "2 runs, 0 to train or resume" in text
    assert [(d / "metrics.jsonl").read_bytes() for d in run_dirs] == metrics
    assert [(d / "metrics.jsonl").stat().st_mtime_ns for d in run_dirs] == stamps
    assert [(report / "runs" / f"{r['label']}.log").stat().st_mtime_ns for r in summary["runs"]] == logs
    assert [r["best_stsb_dev"] for r in again["runs"]] == devs
    assert again["notebooks"][0]["status"] == "ok" and len(image_outputs(report / "summary.ipynb")) == 3
    # the index of the second invocation still records what each run's training cost (results.json)
    index_again = (report / "index.md").read_text()
    for run in summary["runs"]:
        assert again_by_label(again)[run["label"]]["train_seconds"] == run["train_seconds"]
        assert f"reused (its training loop took {format_seconds(run['train_seconds'])})" in index_again
    total = format_seconds(sum(r["train_seconds"] for r in summary["runs"]))
    assert f"The 2 reused runs' training loops took {total} in all when they were trained" in index_again


def test_the_engine_records_each_run_it_trains_or_reuses(two_runs, tiny_model, data_dir):
    from cselab.workbench.studies.record import read_record, record_path

    root, study, code, text, summary = two_runs
    records = read_record(record_path(root / "figures", "two-runs"))
    assert [(r["label"], r["variant"], r["seed"]) for r in records] == [("simcse-s1", "simcse", 1),
                                                                       ("simcse-s2", "simcse", 2)]
    for record, run in zip(records, summary["runs"]):
        results = read_json(Path(run["run_dir"]) / "results.json")
        assert record["best"]["stsb_dev"] == pytest.approx(results["best_stsb_dev"], rel=1e-5)
        assert record["config_hash"] == read_json(Path(run["run_dir"]) / "config.json")["config_hash"]
        assert record["execution"]["device"] == "cpu" and record["cpu"]["native_bf16"]
        saved = read_json(Path(run["run_dir"]) / "config.json")   # format 2: the whole config, the code that ran
        assert record["format"] == 2 and record["code"] == saved["code"] and len(record["code"]["sha256"]) == 64
        assert record["config"] == {k: v for k, v in saved["config"].items() if k != "output_dir"}


def test_a_continuation_trains_only_what_it_names_and_never_replaces_a_recorded_line(two_runs, data_dir, tmp_path):
    """--only picks runs by label (with --runs-only); a line the record holds for a config is kept even
    where a folder of that config exists here (it may be another computation: its pairs rest on it);
    a line a re-plan records says so, with the date."""
    from datetime import datetime, timezone

    from cselab.workbench.studies.record import read_record, record_path, write_record

    root, study, *_ = two_runs
    source = read_record(record_path(root / "figures", "two-runs"))
    other = {**source[0], "code": {**source[0]["code"], "sha256": "f" * 64}, "train_seconds": 1.0}
    figures = tmp_path / "figures"
    write_record(record_path(figures, "two-runs"), [other])

    def again(**kwargs):
        stream = io.StringIO()
        with working_dir(root):
            code = reproduce(study, runs_dir=root / "runs", reports_dir=tmp_path / "reports", figures_dir=figures,
                             data_dir=str(data_dir), stream=stream, progress="lines", notebooks=False, **kwargs)
        return code, stream.getvalue()

    with pytest.raises(ValueError, match="--only .*add --runs-only"):
        reproduce(study, runs_dir=root / "runs", figures_dir=figures, data_dir=str(data_dir), only=["simcse-s1"])
    with pytest.raises(ValueError, match="no run of study two-runs .* has such a label"):
        again(only=["mixcse-s*"])
    code, text = again(only=["simcse-s1"])
    assert code == 0, text
    assert "1 runs, 0 to train" in text and "simcse-s2" not in text
    assert read_record(record_path(figures, "two-runs")) == [other]   # kept, not replaced by the folder here
    code, text = again(only=["simcse-s2"], replan=True)
    lines = {r["label"]: r for r in read_record(record_path(figures, "two-runs"))}
    assert code == 0 and lines["simcse-s1"] == other
    assert lines["simcse-s2"]["plan"] == {"name": "re-plan", "made": datetime.now(timezone.utc).date().isoformat()}
    assert lines["simcse-s2"]["code"] == source[1]["code"]


def test_failing_run_and_notebook_are_reported_and_the_rest_completes(two_runs, tiny_model, data_dir):
    root, *_ = two_runs
    study = write_study(root / "failures.yaml", tiny_model, runs=[
        {"label": "simcse", "seeds": [1, 2]},                               # finished in two_runs: reused
        {"label": "broken", "set": {"corpus": str(root / "no-such-corpus.txt")}},
    ], notebooks=[
        {"notebook": str(NOTEBOOKS / "failing.py"), "runs": ["simcse-s1"]},
        {"notebook": str(NOTEBOOKS / "summary.py"), "runs": ["simcse"]},
        {"notebook": str(NOTEBOOKS / "summary.py"), "name": "with-broken", "runs": ["broken", "simcse-s2"]},
    ])
    code, text, summary = run_study(root, study, data_dir, jobs=2)   # two notebooks at once
    assert code == 1
    # listed in the study's order whatever order they finished in, each kernel with cores / 2 threads
    assert [n["name"] for n in summary["notebooks"]] == ["failing", "summary", "with-broken"]
    printed = "".join("".join(o.get("text", "")) for c in
                      json.loads((root / "reports" / "failures" / "summary.ipynb").read_text())["cells"]
                      for o in c.get("outputs", []))
    assert f"intra-op threads: {threads_per_run(2, 'local')}" in printed
    runs = {r["label"]: r for r in summary["runs"]}
    assert [runs[k]["status"] for k in ("simcse-s1", "simcse-s2", "broken")] == ["reused", "reused", "failed"]
    # the failing run: its log named, with the data error naming the missing file; the traceback in the log
    error = runs["broken"]["error"]
    assert "runs/broken.log: " in error and "no-such-corpus.txt" in error
    log = (root / "reports" / "failures" / "runs" / "broken.log").read_text()
    assert "Traceback (most recent call last)" in log and "no-such-corpus.txt" in log
    notebooks = {n["name"]: n for n in summary["notebooks"]}
    assert notebooks["failing"]["status"] == "failed"
    assert ("failing.ipynb: cell 4 (In [4]: raise ValueError" in notebooks["failing"]["note"]
            and "ValueError: this notebook fails on purpose (1 runs)" in notebooks["failing"]["note"])
    assert notebooks["summary"]["status"] == "ok"
    assert len(image_outputs(root / "reports" / "failures" / "summary.ipynb")) == 3
    assert notebooks["with-broken"]["status"] == "skipped" and "broken" in notebooks["with-broken"]["note"]
    assert not (root / "reports" / "failures" / "with-broken.ipynb").exists()
    index = (root / "reports" / "failures" / "index.md").read_text()
    assert "## Failures" in index and "this notebook fails on purpose" in index and "no-such-corpus.txt" in index
    assert "](summary.ipynb)" in index and "3 failed or skipped" in index


def test_dry_run_lists_runs_statuses_and_costs_and_writes_nothing(two_runs, tiny_model, data_dir):
    root, *_ = two_runs
    study = write_study(root / "plan.yaml", tiny_model, runs=[
        {"label": "simcse", "seeds": [1, 2]}, {"label": "same", "seeds": [1]},
        {"label": "probed", "seeds": [2], "set": {"probe_every": 1}},   # recording only: still simcse-s2's run
        {"label": "mix", "set": {"method": "mixcse"}, "grid": {"mixcse.mix_lambda": [0.1, 0.3]}}])
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    code, text, _ = run_study(root, study, data_dir, dry_run=True)
    assert code == 0
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before
    assert not (root / "reports" / "plan").exists()
    spec = load_study(study, runs_root=root / "runs")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in text.splitlines() if line.startswith("| ") and "label" not in line}
    assert list(rows) == ["simcse-s1", "simcse-s2", "same-s1", "probed-s2", "mix-mix_lambda=0.1", "mix-mix_lambda=0.3"]
    assert rows["simcse-s1"][4] == "finished" and rows["simcse-s1"][6] == "0 s"
    assert rows["same-s1"][4] == "same run as simcse-s1" and rows["same-s1"][3] == rows["simcse-s1"][3]
    assert rows["probed-s2"][4] == "same run as simcse-s2"
    assert "  note: probed-s2: recorded with probe_every=None, the study asks 1" in text.splitlines()
    for label in ("mix-mix_lambda=0.1", "mix-mix_lambda=0.3"):
        run = spec.run(label)
        assert rows[label][3] == str(run.run_dir) and rows[label][4] == "new" and rows[label][5] == "2"
        expected = estimate_run(run.config, "cpu", data_dir=data_dir).seconds
        assert rows[label][6] == format_seconds(expected)
    total = 2 * estimate_run(spec.run("mix-mix_lambda=0.1").config, "cpu", data_dir=data_dir).seconds
    assert f"ESTIMATED total: {format_seconds(total)} for the 2 runs to train or resume" in text
    assert "nothing was trained, executed or written" in text


def test_interrupted_run_is_resumed_not_restarted(tiny_model, data_dir, tmp_path):
    study = write_study(tmp_path / "resume.yaml", tiny_model, runs=[{"label": "simcse", "set": {"max_steps": 4}}])
    cfg = load_study(study, runs_root=tmp_path / "runs").runs[0].config

    def interrupt(state, record):
        if state.step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[interrupt])
    run_dir = tmp_path / "runs" / cfg.default_run_name()
    assert not (run_dir / "results.json").exists() and (run_dir / "last").is_dir()
    # mark the first record (step 0's): a resumed run keeps the records up to its checkpoint (step 2), a restart
    # would write them anew
    records = read_jsonl(run_dir / "metrics.jsonl")
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2, 3]
    records[0]["marker"] = "written before the interruption"
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    code, text, summary = run_study(tmp_path, study, data_dir, dry_run=True)
    assert "partial (checkpoint at step 2/4)" in text
    code, text, summary = run_study(tmp_path, study, data_dir)
    assert code == 0, text
    assert summary["runs"][0]["status"] == "resumed"
    after = read_jsonl(run_dir / "metrics.jsonl")
    assert after[0]["marker"] == "written before the interruption"
    assert [r["step"] for r in after if r["kind"] == "train"] == [1, 2, 3, 4]
    assert [r["step"] for r in after if r["kind"] == "eval"] == [0, 2, 4]
    assert read_json(run_dir / "results.json")["steps"] == 4
    log = (tmp_path / "reports" / "resume" / "runs" / "simcse.log").read_text()
    assert "resuming from the checkpoint at step 2" in log


@pytest.mark.slow   # a submitit subprocess per run; the local launcher's tests cover the engine
def test_submitit_local_launcher_runs_a_tiny_run(tiny_model, data_dir, tmp_path):
    study = write_study(tmp_path / "submitit.yaml", tiny_model, runs=[{"label": "simcse"}],
                        slurm={"timeout_min": 10, "slurm_partition": "unused-locally"})
    code, text, summary = run_study(tmp_path, study, data_dir, launcher="submitit-local")
    assert code == 0, text
    run = summary["runs"][0]
    assert run["status"] == "trained" and read_json(Path(run["run_dir"]) / "results.json")["steps"] == 2
    logs = list((tmp_path / "reports" / "submitit" / "submitit").glob("*_log.out"))
    assert len(logs) == 1   # one submitit job ran the run


# ------------------------------------------------------------------- validation
@pytest.mark.parametrize("group, message", [
    ({"label": "simcse", "set": {"bach_size": 8}}, "run 'simcse' (simcse): override: unknown key 'bach_size' "
                                                    "(did you mean 'batch_size'?)"),
    ({"label": "simcse", "set": {"lr": "fast"}}, "run 'simcse' (simcse): lr: expected a number, got 'fast'"),
    ({"label": "mix", "set": {"method": "mixcse"}, "grid": {"mixcse.mix_lambda": [0.2, 1.5]}},
     "run 'mix' (mix-mix_lambda=1.5): mixcse: "),
    ({"label": "simcse", "set": {"output_dir": "elsewhere"}}, "run 'simcse': output_dir: set by the study engine"),
    ({"label": "simcse", "seeds": [1, "two"]}, "run 'simcse': seeds: expected a non-empty list of integer seeds"),
    ({"label": "simcse", "config": "no-such-preset"}, "run 'simcse': config: 'no-such-preset' is neither"),
    ({"label": "simcse", "sett": {}}, "unknown key 'sett' (did you mean 'set'?)"),
    ({"label": "simcse", "profiles": ["gpu"]}, "profiles: unknown profile 'gpu'"),
])
def test_study_validation_errors_name_the_file_line_label_and_key(tiny_model, tmp_path, group, message):
    study = write_study(tmp_path / "bad.yaml", tiny_model, runs=[{"label": "ok"}, group])
    with pytest.raises(StudyError) as error:
        load_study(study, runs_root=tmp_path / "runs")
    # the second group starts on the line after the first (runs: is a YAML block list)
    text = (tmp_path / "bad.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if t.startswith("- label:") and "ok" not in t)
    assert str(error.value).startswith(f"{study}:{line}: ")
    assert message in str(error.value)


@pytest.mark.parametrize("notebook, message", [
    ({"notebook": str(NOTEBOOKS / "summary.py"), "parameters": {"titel": "x"}},
     "notebook 'summary': parameters: summary.py has no parameter 'titel' (did you mean 'title'?)"),
    ({"notebook": str(NOTEBOOKS / "summary.py"), "parameters": {"runs": {}}},
     "notebook 'summary': parameters: runs is set by the study engine"),
    ({"notebook": str(NOTEBOOKS / "summary.py"), "runs": ["mixcse"]},
     "notebook 'summary': runs: 'mixcse' matches no run of this profile (runs: ok)"),
    ({"notebook": "no-such-notebook"}, "notebook: no notebook 'no-such-notebook' in"),
    ({"notebook": str(NOTEBOOKS / "summary.py"), "name": "runs"}, "name: expected a name"),
])
def test_notebook_validation_errors(tiny_model, tmp_path, notebook, message):
    study = write_study(tmp_path / "bad.yaml", tiny_model, runs=[{"label": "ok"}], notebooks=[notebook])
    with pytest.raises(StudyError) as error:
        load_study(study, runs_root=tmp_path / "runs")
    assert str(error.value).startswith(f"{study}:")
    assert message in str(error.value)


def test_study_level_errors(tiny_model, tmp_path, capsys):
    study = write_study(tmp_path / "s.yaml", tiny_model, runs=[{"label": "ok"}])
    with pytest.raises(StudyError, match=r"s\.yaml: profiles: no profile 'gpu' \(the study's profiles: cpu, smoke\)"):
        load_study(study, profile="gpu")
    with pytest.raises(StudyError, match="no such study file or shipped study"):
        load_study(tmp_path / "missing.yaml")
    bad = write_study(tmp_path / "slurm.yaml", tiny_model, runs=[{"label": "ok"}], slurm={"slurm_partitio": "gpu"})
    with pytest.raises(StudyError, match=r"slurm\.yaml: slurm: .*Unknown argument 'partitio'"):
        reproduce(bad, dry_run=True, runs_dir=tmp_path / "runs")     # checked whatever the launcher
    profile = write_study(tmp_path / "profile.yaml", tiny_model, runs=[{"label": "ok"}])
    profile.write_text(profile.read_text().replace("max_steps:", "max_step:"))
    with pytest.raises(StudyError, match=r"profile\.yaml: profiles: cpu: unknown config key 'max_step' "
                                         r"\(did you mean 'max_steps'\?\)"):
        load_study(profile)
    # the command line: exit status 2 and one line naming the file and key, nothing written
    with working_dir(tmp_path):
        code = cli_main(["reproduce", str(study), "--profile", "gpu", "--dry-run"])
    assert code == 2
    assert "cselab reproduce: error: " in capsys.readouterr().err
    assert not (tmp_path / "reports").exists() and not (tmp_path / "runs").exists()


def test_labels_grid_seeds_and_layering(tiny_model, tmp_path):
    preset = tmp_path / "preset.yaml"
    preset.write_text(yaml.safe_dump({"method": "mixcse", "mixcse": {"mix_lambda": 0.4, "variant": "official"},
                                      "temperature": 0.1, "batch_size": 64}))
    study = write_study(tmp_path / "grid.yaml", tiny_model, runs=[
        {"label": "mix", "config": "preset.yaml", "set": {"temperature": 0.07},
         "grid": {"mixcse.mix_lambda": [0.1, 0.2], "lr": [1.0e-4, 3.0e-5]}, "seeds": [7, 8]}])
    spec = load_study(study, runs_root=tmp_path / "runs")
    assert [r.label for r in spec.runs] == [
        f"mix-mix_lambda={lam}-lr={lr}-s{seed}" for lam in (0.1, 0.2) for lr in (0.0001, 3e-05) for seed in (7, 8)]
    run = spec.run("mix-mix_lambda=0.2-lr=3e-05-s8")
    cfg = run.config
    # preset < profile < set < grid < seed; sections merge key by key over the preset
    assert (cfg.batch_size, cfg.temperature, cfg.lr, cfg.seed) == (16, 0.07, 3e-05, 8)
    assert (cfg.method_params["mixcse"].mix_lambda, cfg.method_params["mixcse"].variant) == (0.2, "official")
    assert run.run_dir == tmp_path / "runs" / cfg.default_run_name() and cfg.output_dir == str(tmp_path / "runs")
    assert len({r.run_dir for r in spec.runs}) == 8


# ------------------------------------------------------------------- cost model
def test_layer_parameters_of_bert_base_match_its_checkpoint():
    # BERT-base: 109,482,240 parameters − 23,837,184 embeddings − 590,592 pooler
    assert layer_parameters(12, 768, 3072) == 85_054_464


def test_cost_estimates_by_hand(data_dir, monkeypatch):
    # one H200, BERT-base, bf16 (auto on CUDA), batch 64 × 32: 30 s overhead + 1000 × 0.041 s
    # + 9 dev evaluations (8, and step 0's before training) × 1.0 s + the STS suite 7.0 s = 87 s
    gpu = load_config("simcse-bert-base", {"max_steps": 1000})
    assert gpu.eval_every == 125 and gpu.final_eval
    assert estimate_run(gpu, "gpu").seconds == pytest.approx(87.0)
    # the CPU reference: MiniLM fp32, MixCSE (+5 %): 15 s + 100 × 2.0 × 1.05 + 5 evaluations × 8 s = 265 s;
    # resumed from step 60 (no step-0 evaluation again): 15 + 40 × 2.1 + 2 × 8 = 115 s; bf16 halves the step time
    cpu = load_config(None, {"method": "mixcse", "max_steps": 100, "eval_every": 25, "final_eval": False,
                             "device": "cpu"})
    monkeypatch.setenv("CSELAB_NATIVE_BF16", "off")   # auto is fp32 on a CPU without native bf16
    assert estimate_run(cpu, "cpu").seconds == pytest.approx(265.0)
    assert estimate_run(cpu, "cpu", steps_done=60).seconds == pytest.approx(115.0)
    assert estimate_run(cpu, "cpu", finished=True).seconds == 0.0
    bf16 = load_config(None, {"precision": "bf16", "device": "cpu"})
    assert seconds_per_step(bf16, "cpu")[0] == pytest.approx(1.0)
    # where bf16 is native, auto trains in it: 15 + 100 × 1.05 + 5 × 8 = 160 s (the AMX cpu studies'
    # estimates were twice their measured times while auto was read as fp32)
    monkeypatch.setenv("CSELAB_NATIVE_BF16", "on")
    assert estimate_run(cpu, "cpu").seconds == pytest.approx(160.0)
    monkeypatch.setenv("CSELAB_NATIVE_BF16", "off")
    # steps from the corpus: one epoch of the mirror's wiki1m head at batch 64, capped by max_sentences
    from cselab.model.data import load_corpus

    n = len(load_corpus("wiki1m-head", data_dir=data_dir))
    assert corpus_size("wiki1m-head", data_dir) == n == 11914
    assert total_steps(load_config(None, {"corpus": "wiki1m-head"}), data_dir) == 187          # ⌈11914 / 64⌉
    assert total_steps(load_config(None, {"corpus": "wiki1m-head", "max_sentences": 640, "epochs": 2}), data_dir) == 20
    assert total_steps(load_config(None, {"corpus": str(data_dir / "missing.txt")}), data_dir) is None


def test_ctrl_c_interrupts_the_running_kernel_and_writes_the_index(two_runs, tiny_model, data_dir):
    """SIGINT while a notebook runs: the engine forwards it to the kernel (which jupyter_client starts
    in its own session), marks the study interrupted, writes the index and returns 130."""
    import signal
    import threading

    root, *_ = two_runs
    marker = root / "waiting-started.txt"
    study = write_study(root / "ctrl-c.yaml", tiny_model, runs=[{"label": "simcse", "seeds": [1]}], notebooks=[
        {"notebook": str(NOTEBOOKS / "waiting.py"), "parameters": {"marker": str(marker)}}])

    def press_ctrl_c_once_the_notebook_waits():
        for _ in range(6000):   # the kernel starts within seconds; give up after 10 minutes
            if marker.is_file():
                os.kill(os.getpid(), signal.SIGINT)
                return
            threading.Event().wait(0.1)

    presser = threading.Thread(target=press_ctrl_c_once_the_notebook_waits, daemon=True)
    presser.start()
    code, text, summary = run_study(root, study, data_dir)
    presser.join()
    assert code == 130
    assert summary["interrupted"] and summary["runs"][0]["status"] == "reused"
    assert summary["notebooks"] == []        # the interrupted notebook did not finish
    assert "interrupted: run the same command again to resume" in text
    assert "**interrupted: run the same command again to resume**" in (root / "reports" / "ctrl-c" / "index.md").read_text()
    # the kernel got the KeyboardInterrupt in its waiting cell (papermill saved the traceback)
    executed = (root / "reports" / "ctrl-c" / "waiting.ipynb").read_text()
    assert "KeyboardInterrupt" in executed


def test_train_notebook_executes_under_papermill(tiny_config, data_dir, tmp_path):
    """The train notebook on its own: a config file plus overrides → a run in output_dir."""
    import jupytext
    import papermill

    from cselab.workbench.studies.spec import notebook_parameters

    source = REPO / "notebooks" / "train.py"
    assert notebook_parameters(source) == {"config", "overrides", "output_dir", "resume", "overwrite", "data_dir",
                                           "threads", "progress"}
    config_file = tmp_path / "tiny.yaml"
    config_file.write_text(yaml.safe_dump({k: v for k, v in tiny_config.items() if k != "output_dir"}))
    overrides = {"max_steps": 2, "eval_every": 2, "seed": 5}
    papermill.execute_notebook(jupytext.read(source), str(tmp_path / "train.ipynb"), kernel_name="python3",
                               progress_bar=False, parameters={
                                   "config": str(config_file), "overrides": overrides, "data_dir": str(data_dir),
                                   "output_dir": str(tmp_path / "runs"), "progress": False})
    cfg = load_config(config_file, {**overrides, "output_dir": str(tmp_path / "runs")})
    run_dir = tmp_path / "runs" / cfg.default_run_name()
    results = read_json(run_dir / "results.json")
    assert results["steps"] == 2 and read_json(run_dir / "config.json")["config"]["seed"] == 5
    printed = json.dumps(json.loads((tmp_path / "train.ipynb").read_text())["cells"])
    assert f"run directory: {run_dir}" in printed
    assert f"best STS-B dev {results['best_stsb_dev']:.2f} at step 2" in printed


def test_runs_in_one_worker_equal_runs_in_fresh_processes(tiny_config, data_dir, tmp_path):
    """The local launcher's worker trains run after run in one process
    (cselab.workbench.studies.launchers.RunWorkers): each run must come out as it does in a process of its own —
    the same records at every step and the same weights — and each run's encode seconds are its own,
    not the worker's running total."""
    from safetensors.numpy import load_file

    from cselab.workbench.studies.execute import RunTask
    from cselab.workbench.studies.launchers import RunWorkers

    def tasks(root: Path) -> list[RunTask]:
        out = []
        for method in ("simcse", "mixcse"):
            cfg = load_config(None, {**tiny_config, "method": method, "max_steps": 2, "eval_every": 2,
                                     "output_dir": str(root)})
            out.append(RunTask(method, str(root / cfg.default_run_name()), cfg.to_dict(), False,
                               str(tmp_path / "logs" / f"{root.name}-{method}.log"), str(data_dir), str(tmp_path),
                               threads=1))
        return out

    def records(run_dir: str) -> list[dict]:
        timed = {"time", "seconds", "elapsed", "wall"}
        return [{k: v for k, v in r.items() if not any(t in k for t in timed)} for r in read_jsonl(Path(run_dir) /
                                                                                                  "metrics.jsonl")]

    with RunWorkers(1) as worker:
        warm = list(worker.run(tasks(tmp_path / "warm")))
        assert len(worker.pids()) == 1   # both in one worker process
    fresh = []
    for task in tasks(tmp_path / "fresh"):
        with RunWorkers(1) as worker:
            fresh.extend(worker.run([task]))
    for w, f in zip(warm, fresh):
        assert (w.status, f.status) == ("trained", "trained") and w.best_stsb_dev == f.best_stsb_dev
        assert records(w.run_dir) == records(f.run_dir)
        for folder in ("best", "last"):
            a, b = (load_file(Path(d, folder, "model.safetensors")) for d in (w.run_dir, f.run_dir))
            assert a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)
        assert 0 < w.split.encode < w.split.cells
    # the second run in the worker: its own encode seconds, about what a fresh process measures for it
    assert warm[1].split.encode < 3 * fresh[1].split.encode


def test_ctrl_c_stops_a_training_run_at_its_checkpoint_and_the_study_resumes_it(tiny_model, data_dir, tmp_path):
    """SIGINT while a run trains in a worker: the engine forwards it to the worker (which runs in its
    own session), the run stops at its last checkpoint, the study says interrupted (130) and the
    same command resumes the run from that checkpoint."""
    import signal
    import threading

    from cselab.workbench.studies.status import checkpoint_step, run_status

    # a checkpoint every 20 steps of 100: stopped after the first, the resume below trains the rest (it
    # trained 400 steps with a dev evaluation every 2: 100 s of the default run)
    long = {"max_steps": 100, "epochs": 100, "eval_every": 20}
    study = write_study(tmp_path / "ctrl-c-run.yaml", tiny_model, runs=[{"label": "long", "seeds": [1], "set": long}])
    run_dir = tmp_path / "runs" / load_config(None, {**base_profile(tiny_model), "seed": 1, **long}).default_run_name()

    def press_ctrl_c_once_a_checkpoint_is_written():
        for _ in range(6000):   # the first checkpoint comes after eval_every steps
            if checkpoint_step(run_dir):
                os.kill(os.getpid(), signal.SIGINT)
                return
            threading.Event().wait(0.1)

    presser = threading.Thread(target=press_ctrl_c_once_a_checkpoint_is_written, daemon=True)
    presser.start()
    code, text, summary = run_study(tmp_path, study, data_dir)
    presser.join()
    assert code == 130 and summary["interrupted"], text
    assert summary["runs"][0]["status"] == "interrupted"
    assert run_status(run_dir).kind == "partial"
    stopped_at = checkpoint_step(run_dir)
    assert 0 < stopped_at < 100
    log = (tmp_path / "reports" / "ctrl-c-run" / "runs" / "long-s1.log").read_text()
    assert "KeyboardInterrupt" in log
    # the same command again: resumed from that checkpoint, not restarted
    code, text, summary = run_study(tmp_path, study, data_dir)
    assert code == 0, text
    assert summary["runs"][0]["status"] == "resumed"
    log = (tmp_path / "reports" / "ctrl-c-run" / "runs" / "long-s1.log").read_text()
    assert f"resuming from the checkpoint at step {stopped_at}" in log


def test_a_study_trains_esimcse_and_simcse_pp_beside_simcse(tiny_model, data_dir, tmp_path):
    """The methods added as one file each run in a study like the others: trained by the study's
    workers, their statistics in the run's metrics, their cost in the dry run."""
    runs = [{"label": "simcse"}, {"label": "esimcse", "set": {"method": "esimcse", "esimcse": {"queue_size": 32}}},
            {"label": "simcse_pp", "set": {"method": "simcse_pp"}}]
    study = write_study(tmp_path / "new-methods.yaml", tiny_model, runs=runs)
    code, text, _ = run_study(tmp_path, study, data_dir, dry_run=True)
    assert code == 0 and all(label in text for label in ("esimcse", "simcse_pp")), text
    code, text, summary = run_study(tmp_path, study, data_dir)
    assert code == 0, text
    assert [(r["label"], r["status"]) for r in summary["runs"]] == [
        ("simcse", "trained"), ("esimcse", "trained"), ("simcse_pp", "trained")]
    metrics = {r["label"]: read_jsonl(Path(r["run_dir"]) / "metrics.jsonl") for r in summary["runs"]}
    assert any("sim/esimcse.queue_fill" in m for m in metrics["esimcse"])
    assert any("loss/simcse_pp.dcl" in m for m in metrics["simcse_pp"])


def test_a_kernel_being_shut_down_is_not_interrupted_first():
    """jupyter_client interrupts a kernel before every shutdown; ipykernel then printed "ERROR |
    KeyboardInterrupt caught in kernel" into `make demo`'s output when an idle kernel was closed. The
    study's kernel manager skips that interrupt while shutting down, and still interrupts otherwise."""
    import signal

    from jupyter_core.utils import run_sync

    from cselab.workbench.studies.execute import _tracked_kernel_manager_class

    class Provisioner:   # stands in for the kernel process: records the signals it gets
        has_process, signals = True, []

        async def send_signal(self, signum):
            self.signals.append(signum)

    manager = _tracked_kernel_manager_class()(kernel_name="python3")
    manager.provisioner = Provisioner()
    manager.shutting_down = True
    run_sync(manager._async_interrupt_kernel)()
    assert manager.provisioner.signals == []
    manager.shutting_down = False
    run_sync(manager._async_interrupt_kernel)()
    assert manager.provisioner.signals == [signal.SIGINT]


def test_notebooks_executed_side_by_side_warn_nothing_and_leave_no_partial_file(tmp_path, recwarn):
    """A study executes notebooks in parallel threads. papermill warns about an output path not
    ending in .ipynb, and a warnings filter around its call did not hold across threads (filters are
    process-wide): the warning reached `make demo`'s output. The partial file now ends in .ipynb."""
    import threading

    from cselab.workbench.studies.execute import execute_notebook

    source = tmp_path / "tiny.py"
    source.write_text("# %%\nanswer = 6 * 7\nprint(answer)\n")
    threads = [threading.Thread(target=execute_notebook, args=(source, tmp_path / f"out{i}.ipynb", {}),
                                kwargs={"cwd": tmp_path}) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [str(w.message) for w in recwarn if "does not end in one of" in str(w.message)] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out0.ipynb", "out1.ipynb", "tiny.py"]


def test_an_executed_notebook_is_a_plain_ipynb_that_jupyterlab_opens(tmp_path):
    """The executed copy of a jupytext notebook carried the source's ``jupytext.formats: py:percent``:
    JupyterLab (jupytext's contents manager, as `make lab` sets it up) then refused it, "Unable to read
    paired notebook ... matches none of the export formats". It now opens, with its outputs."""
    import asyncio

    from cselab.workbench.jupyterlab import NotebookContentsManager
    from cselab.workbench.studies.execute import execute_notebook

    source = tmp_path / "tiny.py"
    source.write_text((REPO / "notebooks" / "train.py").read_text().split("# %%")[0]   # the repository's header
                      + "# %%\nanswer = 6 * 7\nprint(answer)\n")
    assert "formats: py:percent" in source.read_text()
    (tmp_path / "reports").mkdir()
    execute_notebook(source, tmp_path / "reports" / "tiny.ipynb", {}, cwd=tmp_path)
    model = asyncio.run(NotebookContentsManager(root_dir=str(tmp_path)).get("reports/tiny.ipynb"))
    assert model["type"] == "notebook" and "jupytext" not in model["content"]["metadata"]
    cell = model["content"]["cells"][-1]
    assert cell["source"] == "answer = 6 * 7\nprint(answer)" and cell["outputs"][0]["text"] == "42\n"


def test_a_continuation_may_name_any_seed_up_to_the_cap_of_a_sized_group():
    """``reproduce --replan --only`` chooses among each sized group's seeds up to the power rule's seed
    space (twice the cap): a re-plan counts seeds, and a seed of another computation pairs with nothing
    new, so a continuation names the seeds that pair (MixCSE without the stop-gradient: the first
    plan's 5 seeds are of another computation than MixCSE's seeds 6-7 here; ClusterNS's seeds 15-20
    are the GPU's, so the CPU's next pairs are 21 on)."""
    plain = load_study("paper-mixcse", "cpu", "runs", notebooks=False)
    capped = load_study("paper-mixcse", "cpu", "runs", notebooks=False, up_to_cap=True)
    labels = {r.label for r in capped.runs}
    assert {r.label for r in plain.runs} < labels
    assert "mixcse-no_sg-s6" not in {r.label for r in plain.runs}
    assert {"mixcse-no_sg-s6", "mixcse-no_sg-s21", "mixcse-no_sg-s40"} <= labels and "mixcse-no_sg-s41" not in labels
    assert capped.claims.rule.max_seeds == 20 and capped.claims.rule.seed_space == 40
    same = {r.label: r.config.config_hash() for r in plain.runs}
    assert all(same[r.label] == r.config.config_hash() for r in capped.runs if r.label in same)
