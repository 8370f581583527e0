"""The paper notebooks and the explorer execute under papermill on the tiny runs with tiny
parameters and a cut-down data root: every figure they write is a PNG + PDF shown inline, their
tables hold the expected rows and the numbers of the runs' own cached evaluations, no cell fails."""
from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO

from cselab.model.evaluate.cache import evaluate_run
from cselab.workbench.studies.spec import notebook_parameters

ALL_STS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
TINY_STS = ["STS16"]   # one task keeps the evaluations short; the same options in every test share the cache
STS16_SUBSETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")


def copy_head(source: Path, target: Path, lines: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open(encoding="utf-8", newline="") as f:
        target.write_text("".join(line for _, line in zip(range(lines), f)), encoding="utf-8")


@pytest.fixture(scope="module")
def small_data(data_dir, tmp_path_factory) -> Path:
    """The mirror's files these notebooks read, cut down (40 pairs per STS16 subset, 150 STS-B pairs
    per split, 10 DBpedia abstracts per class, 300 tweets, 600 corpus sentences), so each notebook
    test evaluates in seconds. Results on it are only for the tests."""
    root = tmp_path_factory.mktemp("small-data")
    for subset in STS16_SUBSETS:
        for kind in ("input", "gs"):
            name = f"downstream/STS/STS16-en-test/STS.{kind}.{subset}.txt"
            copy_head(data_dir / name, root / name, 40)
    for split in ("train", "dev", "test"):
        name = f"downstream/STS/STSBenchmark/sts-{split}.csv"
        copy_head(data_dir / name, root / name, 150)
    copy_head(data_dir / "corpus/wiki1m-head.txt", root / "corpus/wiki1m-head.txt", 600)
    copy_head(data_dir / "clustering/short-text/tweet-original-order.txt",
              root / "clustering/short-text/tweet-original-order.txt", 300)
    dbpedia = root / "clustering/dbpedia"
    dbpedia.mkdir(parents=True)
    shutil.copy(data_dir / "clustering/dbpedia/meta.txt", dbpedia / "meta.txt")
    lines = (data_dir / "clustering/dbpedia/test.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    kept, per_class = [], {}
    for line in lines:
        label = next(csv.reader([line]))[0]
        if per_class.setdefault(label, 0) < 10:
            per_class[label] += 1
            kept.append(line)
    (dbpedia / "test.csv").write_text("".join(kept), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def runs(tiny_runs, tmp_path_factory) -> dict[str, Path]:
    """The tiny runs, hard-linked into a folder of this module's own: the evaluations the notebooks
    cache there (on the cut-down data) never reach the shared tiny runs other tests evaluate."""
    root = tmp_path_factory.mktemp("paper-runs")
    return {label: Path(shutil.copytree(path, root / label, copy_function=os.link))
            for label, path in tiny_runs.items()}


def execute(name: str, tmp_path: Path, monkeypatch, **parameters) -> tuple[dict, Path, Path]:
    """Run notebooks/<name>.py with papermill in ``tmp_path``; returns (executed notebook, figures, tables)."""
    import jupytext
    import papermill

    # the kernel is a new process: make it import this checkout's cselab
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    source = tmp_path / f"{name}.ipynb"
    jupytext.write(jupytext.read(REPO / "notebooks" / f"{name}.py"), source)
    figures, tables = tmp_path / "figures", tmp_path / "tables"
    executed = tmp_path / f"{name}.executed.ipynb"
    papermill.execute_notebook(str(source), str(executed), kernel_name="python3", progress_bar=False,
                               cwd=str(tmp_path),
                               parameters={"figures_dir": str(figures), "tables_dir": str(tables), **parameters})
    return json.loads(executed.read_text()), figures, tables


def outputs(notebook: dict, kind: str) -> list:
    return [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
            if kind in o.get("data", {}) or o.get("output_type") == kind]


def printed(notebook: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in outputs(notebook, "stream"))


def check_figures(notebook: dict, figures: Path, expected: set[str]) -> None:
    written = {p.stem for p in figures.glob("*.png")}
    assert written == expected
    for stem in expected:
        png, pdf = (figures / f"{stem}.png").read_bytes(), (figures / f"{stem}.pdf").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000, stem
        assert pdf[:5] == b"%PDF-" and len(pdf) > 1000, stem
    assert len(outputs(notebook, "image/png")) >= len(expected)   # each shown inline
    assert not outputs(notebook, "error")


def read_table(tables: Path, name: str) -> pd.DataFrame:
    assert (tables / f"{name}.md").read_text().startswith("|")
    return pd.read_csv(tables / f"{name}.csv", dtype=str, keep_default_na=False)


def sts16(run: Path, data_dir: Path) -> float:
    """The run's cached STS16 (the notebook computed it on the same data and options)."""
    return evaluate_run(run, "sts", data_dir=data_dir, tasks=TINY_STS)["scores"]["STS16"]


def mean_std(values: list[float]) -> str:
    series = pd.Series(values)
    return f"{series.mean():.2f} ± {series.std():.2f}" if len(values) > 1 else f"{series.mean():.2f}"


def test_paper_notebooks_declare_their_parameters():
    """papermill must read every assignment of the parameters cell (a study passes them by name)."""
    common = {"runs", "variants", "sts_tasks", "data_dir", "figures_dir", "tables_dir", "profile", "record"}
    expected = {
        "paper_mixcse": {"lambda_sweep", "transfer_tasks", "transfer_fast", "transfer_probe", "score_sentences",
                         "score_batch_size", "lambdas", "cap_dims", "cap_omegas", "cap_pairs", "geometry_split", "geometry_max_pairs"},
        "paper_gs_infonce": {"m_sweep", "top4_corpus", "top4_sentences", "top4_batch_sizes", "top4_batches",
                             "top4_models", "noise_figure"},
        "paper_clusterns": {"threshold_sweep", "batch_sweep", "k_sweep", "clustering_tasks", "clustering_seeds",
                            "clustering_max_length", "clustering_max_texts", "transfer_tasks", "transfer_fast",
                            "transfer_probe", "geometry_split", "geometry_max_pairs",
                            "case_corpus", "case_sentences", "case_clusters", "case_per_cluster"},
        "paper_apincse": {"topk_sweep", "layer_sweep", "queue_sweep", "transfer_tasks", "transfer_fast", "transfer_probe",
                          "layer_sentences"},
    }
    for name, own in expected.items():
        assert notebook_parameters(REPO / "notebooks" / f"{name}.py") == common | own, name
    assert notebook_parameters(REPO / "notebooks" / "explorer.py") == {
        "runs", "run", "checkpoint", "sentences", "corpus", "corpus_size", "neighbours", "labelled_set",
        "labelled_size", "projection", "align", "grid_columns", "interactive", "data_dir", "figures_dir", "tables_dir"}


def test_the_demos_two_mixcse_snapshot_score_figures_score_one_number_of_sentences():
    """dynamics' mixcse_scores_snapshots was drawn over 96 sentences and paper_mixcse's copy over 128, with
    different numbers: both take SCORE_SENTENCES (cselab.workbench.analysis.mixcse), the demo overrides
    neither, and each figure's note says the n it scored."""
    import re

    from cselab.workbench.analysis.mixcse import SCORE_SENTENCES
    from cselab.workbench.studies.spec import load_study

    study = load_study("cpu-demo", "cpu", runs_root=REPO / "runs")
    given = {nb.name: nb.parameters for nb in study.notebooks}
    assert "score_sentences" not in given["dynamics"] and "score_sentences" not in given["paper_mixcse"]
    dynamics = (REPO / "notebooks" / "dynamics.py").read_text(encoding="utf-8")
    paper = (REPO / "notebooks" / "paper_mixcse.py").read_text(encoding="utf-8")
    assert re.search(r"^score_sentences = None ", dynamics, re.M) and re.search(r"^score_sentences = None ", paper, re.M)
    assert "score_sentences = SCORE_SENTENCES if score_sentences is None else score_sentences" in dynamics
    assert "pt.by_profile(profile, score_sentences, cpu=SCORE_SENTENCES," in paper
    # the n on each figure is the number of sentences scored, not a number typed beside it
    assert "over the {len(sentences)} first distinct STS-B dev sentences" in dynamics
    assert "over the first {len(score_text)} distinct STS-B dev sentences" in paper
    assert SCORE_SENTENCES == 256


@pytest.mark.slow   # default run: paper-mixcse's smoke study executes this notebook (tests/test_smoke_profile.py)
def test_paper_mixcse(runs, tiny_model, small_data, tmp_path, monkeypatch):
    untuned = f"untuned {Path(tiny_model).name}"
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "simcse-s2", "mixcse-s1", "mixcse-s2")}
    notebook, figures, tables = execute(
        "paper_mixcse", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), sts_tasks=TINY_STS,
        transfer_tasks=[], score_sentences=48, score_batch_size=16, lambdas=[0.2, 0.8], cap_dims=[16, 256],
        cap_omegas=[60, 180], cap_pairs=2000, geometry_split="dev")
    check_figures(notebook, figures, {"scores_training_log", "scores_snapshots_mixcse", "largest_angle",
                                      "gradient_norm", "alignment_uniformity", "spherical_cap",
                                      "lambda_bound"})
    # one λ among the runs: no sweep figure, one line naming the study that draws it; its table stays
    assert "λ sweep: one value here (0.2), a figure needs 3; the paper-mixcse study draws it" in printed(notebook)
    assert read_table(tables, "lambda_sweep")["λ"].tolist() == ["0.2"]
    # the largest angle starts at step 0 (the untrained model), then the probes at 3 and 6
    angles = read_table(tables, "largest_angle")
    assert angles["run"].tolist() == ["SimCSE"] * 3 + ["MixCSE"] * 3
    assert angles["step"].tolist() == ["0", "3", "6"] * 2
    assert angles["largest_angle"].iloc[0] == angles["largest_angle"].iloc[3]   # both start from the same model
    sts_table = read_table(tables, "sts_results").set_index("variant")
    assert list(sts_table.index) == ["SimCSE", "MixCSE"] and set(sts_table["source"]) == {"cselab (2 seeds)†"}   # † best/ chosen on STS-B dev
    assert sts_table.loc["MixCSE", "STS16"] == mean_std([sts16(runs[f"mixcse-s{s}"], small_data) for s in (1, 2)])
    paired = read_table(tables, "sts_vs_simcse")
    assert paired["seeds"].tolist() == ["2", "2"] and paired["p (paired t)"].iloc[0] == ""
    assert 0.0 <= float(paired["p (paired t)"].iloc[1]) <= 1.0                    # two seeds: a paired t-test
    assert read_table(tables, "ablation_study")["variant"].tolist() == ["MixCSE"]
    assert len(read_table(tables, "spherical_cap")) == 4                    # 2 dimensions × 2 radii
    assert read_table(tables, "lambda_bound")["model"].tolist() == [untuned] * 2 + ["MixCSE (best)"] * 2
    assert read_table(tables, "scores_snapshots_mixcse")["step"].tolist() == ["0", "3", "6"]
    assert read_table(tables, "alignment_uniformity")["model"].tolist() == ["SimCSE", "MixCSE", untuned]


@pytest.mark.slow   # default run: MixCSE's paper notebook in its smoke study (tests/test_smoke_profile.py), same helpers
def test_paper_gs_infonce(runs, tiny_model, small_data, tmp_path, monkeypatch):
    untuned = f"untuned {Path(tiny_model).name}"
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "simcse-s2", "gs_infonce-s1")}
    notebook, figures, tables = execute(
        "paper_gs_infonce", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), sts_tasks=TINY_STS,
        top4_corpus="wiki1m-head", top4_sentences=300, top4_batch_sizes=[8, 16, 32], top4_batches=4)
    check_figures(notebook, figures, {"figure1_top4", "noise_similarity"})
    assert "Table 3 (M sweep): 2 values here (0, 3), a figure needs 3; the paper-gs-infonce study draws it" \
        in printed(notebook)
    table2 = read_table(tables, "table2_sts").set_index("variant")
    assert table2.loc["GS-InfoNCE", "STS16"] == f"{sts16(runs['gs_infonce-s1'], small_data):.2f}"
    sweep = read_table(tables, "table3_m_sweep")
    assert sweep["M / batch size"].tolist() == ["0×", "3×"]            # SimCSE counts as 0×, the preset's 3×
    assert sweep["source"].tolist() == ["cselab (2 seeds)", "cselab (1 seed)"]
    top4 = read_table(tables, "figure1_top4")
    assert top4["model"].tolist() == [untuned] * 3 + ["SimCSE"] * 3 + ["GS-InfoNCE"] * 3
    assert read_table(tables, "table1_batch_sizes")["batch size"].tolist() == ["16", "16"]


@pytest.mark.slow   # default run: MixCSE's paper notebook in its smoke study, the same helpers (10-minute budget)
def test_paper_clusterns(runs, tiny_model, small_data, tmp_path, monkeypatch):
    untuned = f"untuned {Path(tiny_model).name}"
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "clusterns-s1")}
    notebook, figures, tables = execute(
        "paper_clusterns", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), sts_tasks=TINY_STS,
        clustering_tasks=["DBpedia", "Tweet"], clustering_seeds=[0], transfer_tasks=[],
        geometry_split="dev", case_corpus="wiki1m-head", case_sentences=200, case_clusters=2, case_per_cluster=3)
    check_figures(notebook, figures, {"figure3_similarity", "figure4_clusters", "figure7_false_negative_rate",
                                      "figure6_alignment_uniformity"})
    texts = printed(notebook)   # one σ, one batch size, one K: the sweeps are left to their study
    for line in ("Figure 5 (σ): one value here (1), a figure needs 2; the paper-clusterns study draws it",
                 "figure8_batch_size (batch size): one value here (16), a figure needs 3; the paper-clusterns",
                 "figure9_clusters (K (clusters)): one value here ("):
        assert line in texts
    assert read_table(tables, "table1_sts")["variant"].tolist() == ["SimCSE", "ClusterNS"]
    assert read_table(tables, "table2")["variant"].tolist() == ["ClusterNS", "SimCSE"]
    table3 = read_table(tables, "table3_threshold")
    assert (table3["L_bml"].tolist(), table3["σ"].tolist()) == (["True"], ["1.0"])   # the tiny run's σ
    dbpedia = read_table(tables, "table5_dbpedia_ami").set_index("variant")
    assert list(dbpedia.index) == ["SimCSE", "ClusterNS", untuned]
    scores = evaluate_run(runs["clusterns-s1"], "clustering", data_dir=small_data, tasks=["DBpedia", "Tweet"],
                          seeds=[0], max_length=None)["scores"]
    assert dbpedia.loc["ClusterNS", "DBpedia (AMI)"] == f"{scores['DBpedia']:.2f}"
    table6 = read_table(tables, "table6_short_text").set_index("variant")
    assert list(table6.columns) == ["source", "Tweet", "Avg. (1 task)"]
    assert table6.loc["ClusterNS", "Tweet"] == f"{scores['Tweet']:.2f}"
    case = read_table(tables, "table10_case_study")
    assert 1 <= case["cluster"].nunique() <= 2 and len(case) <= 6 and case["sentence"].str.len().min() > 0


@pytest.mark.slow   # default run: MixCSE's paper notebook in its smoke study (tests/test_smoke_profile.py), same helpers
def test_paper_apincse(runs, tiny_model, small_data, tmp_path, monkeypatch):
    untuned = f"untuned {Path(tiny_model).name}"
    # the SimCSE run stands in for the -bs64 ablation too, under its own label (longest prefix wins)
    chosen = {"simcse-s1": str(runs["simcse-s1"]), "apincse-s1": str(runs["apincse-s1"]),
            "apincse-bs64-s1": str(runs["simcse-s1"])}
    notebook, figures, tables = execute(
        "paper_apincse", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), sts_tasks=TINY_STS,
        transfer_tasks=[], layer_sentences=48)
    check_figures(notebook, figures, {"figure3_layer_profile"})   # Figure 2 is per task: one here, its table stays
    assert "Figure 2: one STS task here (STS16), the figure is per task" in printed(notebook)
    assert "table4_topk (k (neighbours)): one value here (" in printed(notebook)
    assert read_table(tables, "figure4_queue")["source"].tolist() == ["cselab (1 seed)"]   # the table stays
    assert read_table(tables, "figure2_ablation")["variant"].tolist() == ["APINCSE", "APINCSE-bs64"]
    profile = read_table(tables, "figure3_layer_profile")
    assert profile["model"].tolist() == [untuned] * 3 + ["SimCSE"] * 3 + ["APINCSE"] * 3  # layers 0-2
    assert profile["mean_cos_to_last"].astype(float).iloc[2] == pytest.approx(1.0)
    texts = printed(notebook)
    assert "runs choosing the most similar layer per sentence (no fixed M) are left out: apincse-s1" in texts


@pytest.mark.slow   # the explorer is driven in JupyterLab by tests/browser (default run)
def test_explorer_static(runs, small_data, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "mixcse-s1")}
    notebook, figures, tables = execute(
        "explorer", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), interactive=False, corpus_size=60,
        labelled_size=28, neighbours=3, checkpoint="step 0",
        sentences=["A man is playing a guitar.", "A woman is slicing an onion."])
    check_figures(notebook, figures, {"similarity", "snapshots"})
    table = read_table(tables, "neighbours")
    assert table["query"].tolist() == ["A man is playing a guitar."] * 3 + ["A woman is slicing an onion."] * 3
    assert table["rank"].tolist() == ["1", "2", "3"] * 2


# Slow: under papermill the widget cells of interactive mode hung once on a fresh clone (kernel idle,
# nbclient waiting); interactive mode is driven in a real JupyterLab by tests/browser/test_lab.py.
@pytest.mark.slow
def test_explorer_interactive_executes_headless(runs, small_data, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "mixcse-s1")}
    notebook, figures, tables = execute(
        "explorer", tmp_path, monkeypatch, runs=chosen, data_dir=str(small_data), interactive=True, corpus_size=60,
        labelled_size=28, neighbours=3)
    assert not outputs(notebook, "error")
    assert len(outputs(notebook, "application/vnd.jupyter.widget-view+json")) >= 2   # the two explorers
    state = notebook["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    drawn = [o for w in state.values() if w["model_name"] == "OutputModel" for o in w["state"].get("outputs", [])]
    assert sum("image/png" in o.get("data", {}) for o in drawn) == 2        # heat-map and the snapshot map
    assert not figures.exists()                                             # nothing saved in interactive mode


def test_the_claims_cell_on_runs_of_one_seed_is_one_line(tmp_path, capsys):
    """The paper notebooks on the cpu-demo's runs (one seed per variant): one line saying that no claim
    can be tested with one seed and where the committed verdicts are, not a table of nine rows
    reading "no runs"; two runs of one label (two seeds) are not "one seed per variant"."""
    from synthetic_runs import make_run

    from cselab import workbench

    apincse = ["augmented_positive", "interlayer_negative"]
    runs = {"simcse": make_run(tmp_path / "simcse", ["simcse"]), "apincse": make_run(tmp_path / "apincse", apincse),
            "apincse-no_ap": make_run(tmp_path / "apincse-no_ap", ["interlayer_negative"])}
    assert workbench.claims_cell("paper-apincse", "cpu", runs, None, tmp_path / "tables") is None
    assert capsys.readouterr().out == (
        "No claim can be tested on these runs, one seed per variant: a claim's paired t-test needs two or more "
        "seeds that its two variants share. The committed verdicts, over the study's seeds, are in "
        "docs/cpu-papers.md.\n")
    two = {"simcse-s1": runs["simcse"], "simcse-s2": make_run(tmp_path / "simcse-s2", ["simcse"], seed=2)}
    assert workbench.claims_cell("paper-apincse", "cpu", two, None, tmp_path / "tables") is None
    assert capsys.readouterr().out.startswith("No claim tested here (the runs given (2 runs)): a paired t-test needs")
