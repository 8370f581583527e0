"""The smoke profile (cselab/workbench/studies/smoke.py): every paper study's grid on a tiny random BERT for
2 steps on a sample of the data root. The default run checks every smoke plan (each config resolved
and validated, the tiny stand-ins built) and executes one study's smoke profile end to end (runs +
notebooks); the slow tests execute the other three."""
from __future__ import annotations

import json
import os

import pytest

from cselab.workbench.studies import load_study, reproduce
from cselab.workbench.studies.smoke import build_stand_ins
from test_paper_studies import STUDIES


@pytest.fixture
def smoke_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(tmp_path / "smoke"))
    return tmp_path / "smoke"


@pytest.mark.parametrize("study", list(STUDIES))
def test_every_run_of_the_grid_becomes_a_two_step_tiny_run(study, smoke_dir, tmp_path):
    gpu = load_study(study, "gpu", runs_root=tmp_path / "runs", notebooks=False)
    smoke = load_study(study, "smoke", runs_root=tmp_path / "runs", notebooks=False)
    assert [r.label for r in smoke.runs] == [r.label for r in gpu.runs]   # the whole grid, same labels
    for real, tiny in zip(gpu.runs, smoke.runs):
        cfg = tiny.config
        assert cfg.model == str(smoke_dir / real.config.model.split("/")[-1])   # one stand-in per backbone
        assert (cfg.max_steps, cfg.corpus, cfg.max_sentences) == (2, "wiki1m-head", 2 * cfg.batch_size)
        assert cfg.dev_max_pairs == 100 and cfg.final_eval is False
        clusterns = real.config.method_params.get("clusterns")
        centroids_from_a_batch = clusterns.num_clusters if clusterns and clusterns.init == "batch" else 0
        eighth = real.config.batch_size // 8
        assert cfg.batch_size == (eighth if eighth >= centroids_from_a_batch else centroids_from_a_batch + eighth)
        assert cfg.method == real.config.method and cfg.seed == real.config.seed
        assert cfg.method_params == real.config.method_params   # every swept hyper-parameter survives
        assert (cfg.snapshot_every is None) == (real.config.snapshot_every is None)
    assert len({r.run_dir for r in smoke.runs}) == len({r.run_dir for r in gpu.runs})   # no two runs merge
    assert not smoke_dir.exists()                      # loading the study names the stand-ins, builds none
    build_stand_ins(smoke.runs)
    tiny = json.loads((smoke_dir / "bert-base-uncased" / "config.json").read_text())
    assert (tiny["hidden_size"], tiny["num_hidden_layers"]) == (32, 12)   # BERT-base's depth: layer settings exist


DEFAULT_RUN = "paper-mixcse"   # one study in the default run (about a minute); the others are slow tests


@pytest.mark.parametrize("study", [s if s == DEFAULT_RUN else pytest.param(s, marks=pytest.mark.slow) for s in STUDIES])
def test_the_smoke_profile_runs_the_whole_study(study, smoke_dir, data_dir, tmp_path):
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = reproduce(study, profile="smoke", runs_dir=tmp_path / "runs", data_dir=str(data_dir),
                         reports_dir=tmp_path / "reports", figures_dir=tmp_path / "figures", progress="lines")
    finally:
        os.chdir(old)
    summary = json.loads((tmp_path / "reports" / study / "study.json").read_text())
    assert code == 0 and summary["ok"], [r for r in summary["runs"] if r["error"]] or summary["notebooks"]
    assert all(nb["status"] == "ok" for nb in summary["notebooks"]), summary["notebooks"]
    assert len(summary["runs"]) == STUDIES[study][1] and all(r["status"] == "trained" for r in summary["runs"])
    # runs and notebooks read every 50th record of the evaluation sets, sampled once beside the stand-ins
    assert f"every 50th record of the data root's evaluation sets (the smoke profile's sample): `{smoke_dir / 'data'}`" in \
        (tmp_path / "reports" / study / "index.md").read_text()
    assert len((smoke_dir / "data" / "downstream/STS/STSBenchmark/sts-test.csv").read_text().splitlines()) == 28


@pytest.mark.slow
def test_the_cpu_demo_smoke_profile_runs_from_nothing(smoke_dir, data_dir, tmp_path):
    """`cselab reproduce cpu-demo --profile smoke` on a fresh state (no stand-ins, no runs): every
    notebook ends ok, the clustering notebook's case study included (its 2-step ClusterNS run never
    starts clustering: one line says so)."""
    assert not smoke_dir.exists()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = reproduce("cpu-demo", profile="smoke", runs_dir=tmp_path / "runs", data_dir=str(data_dir),
                         reports_dir=tmp_path / "reports", figures_dir=tmp_path / "figures", progress="lines")
    finally:
        os.chdir(old)
    summary = json.loads((tmp_path / "reports" / "cpu-demo" / "study.json").read_text())
    assert code == 0 and summary["ok"], summary["notebooks"]
    assert [nb["status"] for nb in summary["notebooks"]] == ["ok"] * 10
    clustering = (tmp_path / "reports" / "cpu-demo" / "clustering.ipynb").read_text()
    assert "clusterns: no case study: " in clustering and "had not started clustering" in clustering


def test_a_smoke_dry_run_writes_nothing_and_estimates_the_stand_ins(smoke_dir, data_dir, tmp_path, capsys):
    """`--profile smoke --dry-run` said "nothing was written" after building 4.7 MB of stand-in
    models; it now names them only, and estimates the runs on their (tiny) size."""
    import io

    out = io.StringIO()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert reproduce("paper-mixcse", profile="smoke", dry_run=True, runs_dir=tmp_path / "runs",
                         data_dir=str(data_dir), reports_dir=tmp_path / "reports", figures_dir=tmp_path / "figures",
                         stream=out) == 0
    finally:
        os.chdir(old)
    text = out.getvalue()
    assert "dry run: nothing was trained, executed or written" in text
    assert "size unknown offline" not in text and "assumed BERT-base" not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # no stand-in, sample, run, report or figure
