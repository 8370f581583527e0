"""The analysis notebooks (dynamics, geometry, clustering, embedding_maps, compare) run end to end under
papermill on the tiny runs of every method, with tiny parameters: every figure they save is a PNG
and a PDF, every figure is shown in the executed notebook as an image/png output, every table is
written as Markdown and CSV with the expected rows, and nothing errs."""
from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from conftest import REPO
from synthetic_runs import linked_runs

from cselab.model.rundir import read_config

NOTEBOOKS = ("dynamics", "geometry", "clustering", "embedding_maps", "compare")


@pytest.fixture
def base(tiny_runs) -> str:
    """How the notebooks name the tiny runs' backbone: "untuned <folder name>"."""
    from cselab.workbench.analysis.logged import untuned_name
    from cselab.model.rundir import read_config

    return untuned_name(read_config(tiny_runs['simcse-s1'])['model'])


@pytest.fixture
def runs(tiny_runs, tmp_path) -> dict[str, Path]:
    """The tiny runs seen through folders of links: the notebooks' evaluations are cached in these
    folders (this test's), not in the session's run directories."""
    return linked_runs(tiny_runs, tmp_path)


def execute(name: str, tmp_path: Path, monkeypatch, parameters: dict) -> tuple[dict, Path, Path]:
    """Run notebooks/<name>.py in a kernel that imports this checkout's cselab, with one torch
    thread (the tiny model gains nothing from more, and a shared machine loses a lot); returns the
    executed notebook (JSON), the figures folder and the tables folder."""
    import jupytext
    import papermill

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    source = tmp_path / f"{name}.ipynb"
    jupytext.write(jupytext.read(REPO / "notebooks" / f"{name}.py"), source)
    figures, tables = tmp_path / "figures", tmp_path / "tables"
    output = tmp_path / f"{name}.out.ipynb"
    papermill.execute_notebook(str(source), str(output), kernel_name="python3", progress_bar=False, cwd=str(tmp_path),
                               parameters={"figures_dir": str(figures), "tables_dir": str(tables), **parameters})
    return json.loads(output.read_text()), figures, tables


def check_outputs(notebook: dict, figures: Path, expected_figures: set[str]) -> None:
    """The figures written are exactly the expected ones, each as a non-empty PNG and PDF, and the
    executed notebook shows at least one image per figure and no error."""
    written = {p.name for p in figures.iterdir()}
    assert written == {f"{n}.{ext}" for n in expected_figures for ext in ("png", "pdf")} | {"provenance.json"}
    for name in expected_figures:
        assert (figures / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (figures / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    outputs = [out for cell in notebook["cells"] for out in cell.get("outputs", [])]
    assert not [out for out in outputs if out.get("output_type") == "error"]
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert len(images) >= len(expected_figures)


def notebook_text(notebook: dict) -> str:
    """Everything the executed notebook printed (stream outputs), joined."""
    return "".join("".join(out.get("text", "")) for cell in notebook["cells"] for out in cell.get("outputs", [])
                   if out.get("output_type") == "stream")


def table_rows(tables: Path, name: str) -> list[dict]:
    """The CSV rows of a table, after checking its Markdown twin exists."""
    assert (tables / f"{name}.md").read_text().startswith("|")
    with open(tables / f"{name}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_dynamics(runs, base, data_dir, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "mixcse-s1", "gs_infonce-s1", "clusterns-s1", "apincse-s1")}
    notebook, figures, tables = execute("dynamics", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "score_sentences": 16, "score_batch_size": 8,
        "top4_batch_sizes": [4, 8], "top4_batches": 3, "top4_sentences": 32})
    check_outputs(notebook, figures, {
        "loss_parts", "similarity_all_runs", *(f"similarity_{label}" for label in chosen), "method_statistics",
        "mixcse_scores_records", "mixcse_scores_snapshots", "gradient_norms", "top4_vs_batch_size", "stsb_dev"})
    # the tiny runs evaluate STS-B dev once during training, and before it (step 0): a curve of two points
    scores = table_rows(tables, "mixcse_scores_snapshots")
    assert [(r["run"], r["step"]) for r in scores] == [("simcse-s1", "0"), ("simcse-s1", "3"), ("simcse-s1", "6"),
                                                      ("mixcse-s1", "0"), ("mixcse-s1", "3"), ("mixcse-s1", "6")]
    top4 = table_rows(tables, "top4_curve")
    assert [(r["model"], r["batch_size"]) for r in top4] == [
        (m, b) for m in (base, "simcse-s1", "gs_infonce-s1") for b in ("4", "8")]
    assert all(r["n_batches"] == "3" and r["k"] == "4" for r in top4)


def test_geometry(runs, base, data_dir, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "simcse-s2", "mixcse-s1", "apincse-s1")}
    notebook, figures, tables = execute("geometry", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "sts_tasks": ["STS16"], "layer_sentences": 16})
    check_outputs(notebook, figures, {"alignment_uniformity", "alignment_uniformity_trajectories", "probe_geometry",
                                      "layer_cls_similarity", "layer_cls_similarity_probes"})
    geometry = table_rows(tables, "geometry")
    # the trained models, then the untuned backbones they started from (their step-0 snapshots)
    untuned = [f"{base}, [CLS]", f"{base}, layer-attention pooler"]
    assert [r["run"] for r in geometry] == [*chosen, *untuned]
    assert [r["group"] for r in geometry] == ["SimCSE", "SimCSE", "MixCSE", "APINCSE", *untuned]
    assert all(-4.0 <= float(r["uniformity"]) <= 0.0 and 0.0 <= float(r["alignment"]) <= 4.0 for r in geometry)
    layers = table_rows(tables, "layer_cls_similarity")
    assert [r["layer"] for r in layers] == ["0", "1", "2"]                # the tiny BERT: embeddings + 2 layers
    assert list(layers[0]) == ["layer", base, *chosen]
    assert all(float(layers[2][name]) == pytest.approx(1.0) for name in list(layers[2])[1:])   # the last layer
    for label in chosen:                                                  # cached in the run directories
        assert len(list((runs[label] / "evaluations").glob("geometry-best-*.json"))) == 1


@pytest.fixture(scope="module")
def deeper_run(tiny_model, data_dir, tmp_path_factory) -> Path:
    """A SimCSE run of seed 1, as the tiny runs' simcse-s1, on another backbone: the tiny BERT with
    a third layer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from cselab.model.config import load_config
    from cselab.model.train import train

    backbone = tmp_path_factory.mktemp("tiny-bert-3")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(backbone)
    AutoTokenizer.from_pretrained(tiny_model).save_pretrained(backbone)
    cfg = load_config({"model": str(backbone), "method": "simcse", "seed": 1, "corpus": "wiki1m-head",
                       "max_sentences": 160, "batch_size": 16, "max_steps": 6, "eval_every": 6, "log_every": 1,
                       "probe_every": 3, "probe_sentences": 32, "snapshot_every": 3, "final_eval": False, "lr": 1e-4,
                       "dev_max_pairs": 200, "output_dir": str(tmp_path_factory.mktemp("deeper-runs")),
                       "run_name": "simcse-s1"})
    return train(cfg, data_dir=data_dir, progress=False)


def test_geometry_on_runs_of_two_backbones(runs, deeper_run, base, data_dir, tmp_path, monkeypatch):
    """Backbones of 2 and 3 layers: the per-layer table has a row per layer of the deeper one, empty
    where the shallower has none (it stopped with pandas' "All arrays must be of the same length")."""
    chosen = {"simcse-s1": str(runs["simcse-s1"]), "mixcse-s1": str(runs["mixcse-s1"]),
              "simcse-deep-s1": str(deeper_run)}
    notebook, figures, tables = execute("geometry", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "sts_tasks": ["STS16"], "layer_sentences": 16})
    check_outputs(notebook, figures, {"alignment_uniformity", "alignment_uniformity_trajectories", "probe_geometry",
                                      "layer_cls_similarity", "layer_cls_similarity_probes"})
    layers = table_rows(tables, "layer_cls_similarity")
    deep = next(name for name in layers[0] if name.startswith("untuned") and name != base)
    assert [r["layer"] for r in layers] == ["0", "1", "2", "3"]
    assert [r[base] for r in layers][3] == "" and [r["simcse-s1"] for r in layers][3] == ""   # 2 layers: none at 3
    assert float(layers[2]["simcse-s1"]) == pytest.approx(1.0) and float(layers[3]["simcse-deep-s1"]) == pytest.approx(1.0)
    assert float(layers[3][deep]) == pytest.approx(1.0) and layers[2]["simcse-deep-s1"] != ""
    assert [r["group"] for r in table_rows(tables, "geometry")][:3] == ["SimCSE", "MixCSE", "simcse-deep"]


def test_compare_on_runs_of_two_backbones(runs, deeper_run, data_dir, tmp_path, monkeypatch):
    """Runs labelled by their folders (simcse-s1 on each backbone): the comparison keeps the backbone
    most runs start from and says which runs it left out (it stopped with "two runs of
    group='SimCSE' with seed=1")."""
    chosen = {"simcse-s1": str(runs["simcse-s1"]), "simcse-s2": str(runs["simcse-s2"]),
              "mixcse-s1": str(runs["mixcse-s1"]), "mixcse-s2": str(runs["mixcse-s2"]),
              "simcse-f0f0f0f0f0": str(deeper_run)}   # labelled by a run folder's name: simcse
    notebook, figures, tables = execute("compare", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "sts_tasks": ["STS16"]})
    check_outputs(notebook, figures, {"sts_vs_baseline"})
    model = next(iter({str(read_config(runs["simcse-s1"])["model"])}))
    assert (f"the runs start from 2 backbones: compared here, the 4 runs from {model}; left out 1 from "
            f"{read_config(deeper_run)['model']} (simcse-f0f0f0f0f0) (set backbone to compare those)"
            in notebook_text(notebook))
    assert [r["run"] for r in table_rows(tables, "sts_runs")] == ["simcse-s1", "simcse-s2", "mixcse-s1", "mixcse-s2"]
    versus = table_rows(tables, "sts_vs_baseline")
    assert [(r["group"], r["seeds"]) for r in versus] == [("SimCSE", "2"), ("MixCSE", "2")]


def test_clustering(runs, data_dir, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "simcse-s2", "mixcse-s1", "clusterns-s1")}
    notebook, figures, tables = execute("clustering", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "tasks": ["DBpedia", "AgNews", "Tweet"], "seeds": [0, 1],
        "max_texts": 60, "case_sentences": 48, "case_clusters": 3, "case_per_cluster": 2})
    check_outputs(notebook, figures, {"clustering_scores"})
    ami = table_rows(tables, "dbpedia_ami")
    assert [(r["group"], r["runs"]) for r in ami] == [("SimCSE", "2"), ("MixCSE", "1"), ("ClusterNS", "1")]
    assert " ± " in ami[0]["DBpedia (AMI)"] and " ± " not in ami[1]["DBpedia (AMI)"]
    for name in ("short_text_accuracy", "short_text_nmi"):
        rows = table_rows(tables, name)
        assert [r["group"] for r in rows] == ["SimCSE", "MixCSE", "ClusterNS"] and list(rows[0])[2:] == ["AG", "Tweet"]
    per_run = table_rows(tables, "clustering_runs")
    assert [r["run"] for r in per_run] == list(chosen)
    assert [c for c in per_run[0] if c.startswith("Tweet")] == ["Tweet acc", "Tweet NMI", "Tweet AMI"]
    assert all(0.0 <= float(r["AgNews acc"]) <= 100.0 for r in per_run)
    case = table_rows(tables, "case_study_clusterns-s1")
    clusters = [r["cluster"] for r in case]
    assert 1 <= len(set(clusters)) <= 3 and all(clusters.count(c) <= 2 for c in clusters)
    assert all(-1.0 <= float(r["cos_to_centroid"]) <= 1.0 and r["sentence"] for r in case)
    cached = json.loads(next((runs["simcse-s1"] / "evaluations").glob("clustering-best-*.json")).read_text())
    assert cached["details"]["AgNews"]["n"] == 60 and cached["seeds"] == [0, 1]


def test_embedding_maps(runs, base, data_dir, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "clusterns-s1", "apincse-s1")}
    notebook, figures, tables = execute("embedding_maps", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "per_class": 3, "projection": "pca", "panels_per_figure": 3,
        "max_length": 32})
    check_outputs(notebook, figures, {"umap_1", "umap_2"})
    panels = table_rows(tables, "umap_panels")
    # one figure per starting model: its untuned map first, then its runs'
    assert [(r["panel"], r["figure"]) for r in panels] == [
        (f"{base}, [CLS]", "1"), ("simcse-s1", "1"), ("clusterns-s1", "1"),
        (f"{base}, layer-attention pooler", "2"), ("apincse-s1", "2")]
    assert all(r["projection"] == "pca" and r["points"] == "42" for r in panels)   # 3 × 14 DBpedia classes
    assert panels[0]["model"] == "start of simcse-s1, clusterns-s1" and panels[1]["model"] == "simcse-s1/best"


def test_compare(runs, data_dir, tmp_path, monkeypatch):
    own = tmp_path / "own.tsv"   # the user's labelled texts: 3 labels, 4 texts each
    own.write_text("".join(f"{c}\t{c} sentence {i}\n" for c in ("red", "green", "blue") for i in range(4)))
    notebook, figures, tables = execute("compare", tmp_path, monkeypatch, {
        "runs": {k: str(v) for k, v in runs.items()}, "data_dir": str(data_dir), "sts_tasks": ["STS16"],
        "clustering_tasks": ["Tweet"], "clustering_max_texts": 60, "texts": {"own": str(own)},
        "variants": {"SimCSE": "simcse", "MixCSE": "mixcse", "APINCSE": "apincse"}, "ablation_control": "SimCSE",
        "sweep_key": "mixcse.mix_lambda", "sweep_label": "λ"})
    check_outputs(notebook, figures, {"sts_vs_baseline", "ablation"})    # one λ: the sweep is a table, no figure
    assert "sweep of mixcse.mix_lambda: 1 value(s) here [0.2], a figure needs 3" in notebook_text(notebook)
    assert [r["run"] for r in table_rows(tables, "sts_runs")] == list(runs)
    groups = ["SimCSE", "MixCSE", "GS-InfoNCE", "ClusterNS", "APINCSE"]
    methods = table_rows(tables, "sts_methods")
    assert [(r["group"], r["runs"]) for r in methods] == list(zip(groups, ["2", "2", "1", "1", "1"]))
    assert list(methods[0]) == ["group", "runs", "STS16"]          # one task: no average beside it
    versus = table_rows(tables, "sts_vs_baseline")
    assert [r["group"] for r in versus] == groups and versus[0]["Δ vs baseline"] == "(baseline)"
    assert versus[1]["p (paired t)"] not in ("", "–") and versus[2]["p (paired t)"] == "–"   # 2 seeds vs 1
    assert versus[1]["Holm family"] == "Holm over 1 groups vs SimCSE on avg"      # only MixCSE has 2 seeds
    assert versus[1]["p (Holm)"] == versus[1]["p (paired t)"] and versus[1]["reading"]
    per_task = table_rows(tables, "sts_vs_baseline_per_task")
    assert "(p " in per_task[1]["STS16"] and ", Holm " in per_task[1]["STS16"]
    # STS16 alone: its "average" is not a second test in the family (it doubled the Holm p before)
    assert per_task[1]["Holm family"] == "Holm over MixCSE's 1 scores"
    # one shared seed: the paired bootstrap over the STS16 test pairs, against simcse-s1
    bootstrap = table_rows(tables, "sts_vs_baseline_bootstrap")
    assert [(r["group"], r["task"], r["run"], r["baseline_run"]) for r in bootstrap] == [
        (g, "STS16", f"{label}-s1", "simcse-s1") for g, label in (("GS-InfoNCE", "gs_infonce"), ("ClusterNS", "clusterns"),
                                                                  ("APINCSE", "apincse"))]
    assert all(float(r["ci_low"]) <= float(r["diff"]) <= float(r["ci_high"]) for r in bootstrap)
    # how a row is paired said once, not "(n 1; test pairs)" in every cell
    assert per_task[2]["STS16"] == (f"{float(bootstrap[0]['diff']):+.2f} [{float(bootstrap[0]['ci_low']):.2f}, "
                                    f"{float(bootstrap[0]['ci_high']):.2f}]")
    assert [r["paired on"] for r in per_task] == ["", "2 seeds"] + ["1 seed; 95% interval over test pairs"] * 3
    for name in ("clustering_methods", "clustering_vs_baseline", "custom_texts_methods"):
        assert [r["group"] for r in table_rows(tables, name)] == groups
    assert all(100 / 3 - 0.01 <= float(r["own"].split(" ")[0]) <= 100 for r in table_rows(tables, "custom_texts_methods"))
    assert not (tables / "transfer_methods.csv").exists()                 # transfer_tasks [] skips it
    assert [(r["group"], r["runs"]) for r in table_rows(tables, "ablation")] == [
        ("SimCSE", "2"), ("MixCSE", "2"), ("APINCSE", "1")]
    assert table_rows(tables, "sweep") == [{"group": "MixCSE", "mixcse.mix_lambda": "0.2", "runs": "2",
                                            "avg": methods[1]["STS16"]}]
    for path in runs.values():   # every evaluation is cached in its run directory (beside each a hidden lock)
        entries = {p.name for p in (path / "evaluations").iterdir()}
        assert {name.split("-")[0] for name in entries if name.endswith(".json") and not name.startswith(".")} == {
            "sts", "clustering"}
        assert {name for name in entries if name.startswith(".")} <= {f".{n}.lock" for n in entries}


@pytest.mark.slow   # test_compare executes the notebook; this adds the transfer suite
def test_compare_transfer(runs, data_dir, tmp_path, monkeypatch):
    chosen = {k: str(runs[k]) for k in ("simcse-s1", "simcse-s2", "mixcse-s1", "mixcse-s2")}
    notebook, figures, tables = execute("compare", tmp_path, monkeypatch, {
        "runs": chosen, "data_dir": str(data_dir), "sts_tasks": ["STS16"], "transfer_tasks": ["CR"]})
    check_outputs(notebook, figures, {"sts_vs_baseline"})
    transfer = table_rows(tables, "transfer_methods")
    assert list(transfer[0]) == ["group", "runs", "CR", "Avg."] and [r["runs"] for r in transfer] == ["2", "2"]
    assert transfer[0]["CR"] == transfer[0]["Avg."] and " ± " in transfer[0]["CR"]
    versus = table_rows(tables, "transfer_vs_baseline")
    assert [r["group"] for r in versus] == ["SimCSE", "MixCSE"] and versus[1]["seeds"] == "2"
    cached = json.loads(next((runs["mixcse-s2"] / "evaluations").glob("transfer-best-*.json")).read_text())
    assert cached["options"] == {"tasks": ["CR"], "fast": True} and cached["kfold"] == 5


def test_runs_none_without_finished_runs_says_what_to_run(tmp_path, monkeypatch):
    import papermill

    with pytest.raises(papermill.PapermillExecutionError) as error:
        execute("compare", tmp_path, monkeypatch, {})
    assert "cselab reproduce cpu-demo --profile cpu --runs-dir runs" in str(error.value)
    # shown as one line (workbench.setup), and still a failed cell for papermill
    assert error.value.ename == "RunsNotFound" and len(error.value.traceback) == 1
    assert error.value.traceback[0].startswith("RunsNotFound: runs = None stands for the finished runs")


def test_parameters_are_declared_with_defaults_and_help(tmp_path):
    """`papermill --help-notebook` shows every parameter with its default and its comment; runs
    defaults to None (the cpu-demo study's runs), outputs to figures/<name> and reports/<name>/tables."""
    import jupytext
    import papermill

    for name in NOTEBOOKS:
        notebook = jupytext.read(REPO / "notebooks" / f"{name}.py")
        tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, name
        converted = tmp_path / f"{name}.ipynb"
        jupytext.write(notebook, converted)
        declared = papermill.inspect_notebook(str(converted))
        assert declared["runs"]["default"] == "None", name
        assert declared["figures_dir"]["default"] == f'"figures/{name}"', name
        assert declared["tables_dir"]["default"] == f'"reports/{name}/tables"', name
        assert "data_dir" in declared, name
        undocumented = [p for p, info in declared.items() if not info["help"]]
        assert not undocumented, f"{name}: parameters without a comment: {undocumented}"
        assigned = re.findall(r"^(\w+) = ", tagged[0].source, flags=re.M)
        assert list(declared) == assigned, f"{name}: a parameter line papermill cannot parse"


def test_compare_finds_the_ablation_in_the_run_labels(tmp_path):
    """compare's defaults (variants None): the cpu-demo's labels are an ablation of APINCSE, found
    without a parameter, with the pooler alone as the control; labels of methods only hold none."""
    from synthetic_runs import make_run

    from cselab.workbench.comparisons import ablation_in_labels

    apincse = ["augmented_positive", "interlayer_negative"]
    demo = {label: make_run(tmp_path / label, method) for label, method in (
        ("simcse", ["simcse"]), ("mixcse", ["mixcse"]), ("apincse", apincse), ("apincse-no_ap", ["interlayer_negative"]),
        ("apincse-no_in", ["augmented_positive"]), ("apincse-pooler", ["simcse"]))}
    variants, control = ablation_in_labels(demo)
    assert variants == {"SimCSE": "simcse", "APINCSE": "apincse", "APINCSE-AP": "apincse-no_ap",
                        "APINCSE-IN": "apincse-no_in", "APINCSE pooler only": "apincse-pooler"}
    assert control == "APINCSE pooler only"
    # seeds of the same labels: the same variants; without the pooler-only run: no control
    seeded = {f"{label}-s1": path for label, path in demo.items() if label != "apincse-pooler"}
    assert ablation_in_labels(seeded) == ({"SimCSE": "simcse", "APINCSE": "apincse", "APINCSE-AP": "apincse-no_ap",
                                           "APINCSE-IN": "apincse-no_in"}, None)
    # a method and no ablation of it (the tiny runs' labels), or an ablation without its full method
    assert ablation_in_labels({k: demo[k] for k in ("simcse", "mixcse", "apincse")}) == ({}, None)
    assert ablation_in_labels({k: demo[k] for k in ("simcse", "apincse-no_ap", "apincse-no_in")}) == ({}, None)


def test_a_cell_says_what_scoring_will_cost_before_it_starts(data_dir, tmp_path, monkeypatch):
    """sts_cost_note: the study cost model's 80 s for the 26,083 distinct sentences of the 7-task
    suite on 2 cores with MiniLM (6 layers of 384), scaled by transformer-layer parameters. BERT-base's
    12 layers of 768 hold 85,054,464 of them against MiniLM's 10,646,784 (× 7.9887); STS-B test has
    2,551 distinct sentences: 80 · 2551 / 26083 · 7.9887 = 62.5 s a run. A run whose final table
    has the task costs nothing; the whole suite costs 80 · 7.9887 = 639.1 s a run."""
    import torch
    from synthetic_runs import sts_results, write_run

    from cselab.workbench.notebook import sts_cost_note

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    bert = {"model": "bert-base-uncased", "method": ["simcse"], "seed": 1}
    runs = {"a": write_run(tmp_path / "a", bert, []), "b": write_run(tmp_path / "b", {**bert, "seed": 2}, []),
            "done": write_run(tmp_path / "done", bert, [], sts_results({"STSBenchmark": 80.0}))}
    assert sts_cost_note(runs, ["STSBenchmark"], data_dir) == (
        "2 runs × 1 STS task to score: about 2 min 05 s on 2 CPU cores (the study cost model; cached in each run "
        "directory, so once)")
    assert sts_cost_note({"a": runs["a"]}, None, data_dir).startswith(
        "1 run × 7 STS tasks to score: about 10 min 39 s on 2 CPU cores (the study cost model; cached in each run "
        "directory, so once); sts_tasks = ['STSBenchmark'] is the demo's smaller set")
    assert sts_cost_note({"done": runs["done"]}, ["STSBenchmark"], data_dir) is None      # nothing to score


def test_the_baseline_table_on_runs_of_one_seed_has_no_empty_columns():
    """One seed a group (the cpu-demo's runs): no interval, no test, no Holm family, so no column of
    "–" and "[–, –]" for them; with a second seed the columns are back (d = +1, +3: mean +2)."""
    import pandas as pd

    from cselab.workbench.comparisons import baseline_table

    one = pd.DataFrame({"group": ["SimCSE", "MixCSE"], "seed": [1, 1], "avg": [70.0, 71.0]})
    table = baseline_table(one, "avg", "SimCSE")
    assert list(table.columns) == ["seeds", "mean ± std", "Δ vs baseline", "reading"]
    assert table.loc["MixCSE"].tolist() == [1, "71.00 ± –", "+1.00", "no test (n 1)"]
    two = pd.DataFrame({"group": ["SimCSE", "SimCSE", "MixCSE", "MixCSE"], "seed": [1, 2, 1, 2],
                        "avg": [70.0, 70.0, 71.0, 73.0]})
    table = baseline_table(two, "avg", "SimCSE")
    assert "p (Holm)" in table and "Holm family" in table and table.loc["MixCSE", "Δ vs baseline"] == "+2.00"
