"""cselab.workbench.paper_tables: runs → the paper's variants (longest label prefix), configs checked,
backbones, our summaries beside the published rows, sweeps, last logged values, the untuned
backbone, paired tests within a backbone, the notebooks' small helpers."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cselab.workbench.paper_tables import (assign_variants, average_label, averages_summary, backbone_label, backbone_note,
                                 comparison_table, for_legend, group_model, groups_table, identity_without_seed,
                                 interlayer_index, last_values, num_layers, one_per_backbone, paired_comparison,
                                 published_beside, published_notes, published_transposed, representatives,
                                 run_model, runs_by_backbone, runs_with, seeds_label, select_variants, slug,
                                 split_by_backbone, sts_options, suite_columns, suite_summary,
                                 sweep_results, sweep_runs, unmatched, untuned, used_runs, variant_frame,
                                 variant_of, variant_runs, with_published_column)
from cselab.workbench.published import published_frame
from cselab.workbench.results import group_results
from cselab.model.rundir import RunDir
from synthetic_runs import STS, sts_results, write_run


def make_run(root: Path, label: str, model: str = "bert-base-uncased", seed: int = 1, method=("simcse",),
             sections: dict | None = None, base: float = 70.0, hard_neg: tuple = ()) -> Path:
    """A run folder with a config, train records and an STS result (task i scores base + i + seed/10)."""
    config = {"model": model, "method": list(method), "seed": seed, "batch_size": 64, "output_dir": str(root),
              "run_name": label, "probe_every": None, **(sections or {})}
    records = [{"kind": "train", "step": i + 1, "loss": 1.0, **({"sim/clusterns.hard_neg_cos": v} if v is not None else {})}
               for i, v in enumerate(hard_neg or (None,))]
    scores = {t: base + i + seed / 10 for i, t in enumerate(STS)}
    return write_run(root / label, config, records, sts_results(scores, steps=1))


def results_of(runs: dict) -> dict:
    return {label: RunDir(path).results()["sts"] for label, path in runs.items()}


def test_a_variant_has_the_runs_of_its_prefixes_not_of_longer_labels():
    labels = ["apincse-s1", "apincse-no_ap-s1", "apincse-no_apx-s1", "simcse", "simcse2-s1", "other-s1"]
    groups = assign_variants(labels, {"APINCSE": "apincse", "-AP": "apincse-no_ap", "SimCSE": ["simcse"],
                                      "absent": "nothing"})
    # apincse-no_apx-s1: another label, which neither "apincse" nor "apincse-no_ap" selects
    assert groups == {"APINCSE": ["apincse-s1"], "-AP": ["apincse-no_ap-s1"], "SimCSE": ["simcse"]}
    assert unmatched(dict.fromkeys(labels, Path(".")), {"SimCSE": "simcse"}) == [
        "apincse-s1", "apincse-no_ap-s1", "apincse-no_apx-s1", "simcse2-s1", "other-s1"]
    with pytest.raises(ValueError, match="'simcse' is given to both 'A' and 'B'"):
        assign_variants(labels, {"A": "simcse", "B": ["x", "simcse"]})


def test_variant_runs_refuse_runs_that_differ_in_more_than_the_seed(tmp_path):
    runs = {"mixcse-s1": make_run(tmp_path, "mixcse-s1", seed=1, sections={"mixcse": {"mix_lambda": 0.2}}),
            "mixcse-s2": make_run(tmp_path, "mixcse-s2", seed=2, sections={"mixcse": {"mix_lambda": 0.2}}),
            "mixcse-lam-s1": make_run(tmp_path, "mixcse-lam-s1", sections={"mixcse": {"mix_lambda": 0.1}})}
    groups = variant_runs(runs, {"MixCSE": "mixcse", "sweep": "mixcse-lam"})
    assert {v: list(m) for v, m in groups.items()} == {"MixCSE": ["mixcse-s1", "mixcse-s2"], "sweep": ["mixcse-lam-s1"]}
    assert list(variant_runs(runs, {"MixCSE": "mixcse"})["MixCSE"]) == ["mixcse-s1", "mixcse-s2"]   # not mixcse-lam
    with pytest.raises(ValueError, match=r"'mixcse-s1' and 'mixcse-lam-s1' differ in mixcse.mix_lambda \(0.2 vs 0.1\)"):
        variant_runs(runs, {"MixCSE": ["mixcse", "mixcse-lam"]})


def test_summary_beside_the_published_rows(tmp_path):
    runs = {f"simcse-s{s}": make_run(tmp_path, f"simcse-s{s}", seed=s, base=70) for s in (1, 2)}
    runs.update({f"gs-s{s}": make_run(tmp_path, f"gs-s{s}", seed=s, method=("gs_infonce",), base=72) for s in (1, 2)})
    groups = variant_runs(runs, {"SimCSE": "simcse", "GS-InfoNCE": "gs"})
    summary = suite_summary(results_of(runs), groups, "sts", STS)
    # STS12 of the two SimCSE seeds: 70.1 and 70.2 → 70.15 ± 0.0707
    assert summary.loc["SimCSE", ("STS12", "mean")] == pytest.approx(70.15)
    assert summary.loc["GS-InfoNCE", ("Avg.", "mean")] == pytest.approx(75.15)
    table = comparison_table(summary, published_frame("gs_infonce", "Table 2", backbone="bert-base-uncased",
                                                      variants=list(groups), index="variant", numeric=False))
    # † : these runs predate select_by, so their checkpoints were chosen on STS-B dev
    assert list(table["source"]) == ["cselab (2 seeds)†", "cselab (2 seeds)†", "published, GS-InfoNCE Table 2",
                                     "published, GS-InfoNCE Table 2"]
    assert table.iloc[0]["STS12"] == "70.15 ± 0.07" and table.iloc[3]["STS-B"] == "79.70"
    assert list(table.index) == ["SimCSE", "GS-InfoNCE", "SimCSE", "GS-InfoNCE"]
    # a subset of tasks: our average is not the paper's, so it gets its own column
    subset = suite_summary(results_of(runs), groups, "sts", ["STS16"])
    wide = comparison_table(subset, published_frame("gs_infonce", "Table 2", backbone="bert-base-uncased",
                                                    index="variant", numeric=False))
    assert list(wide.columns[:3]) == ["source", "STS16", "Avg. (1 task)"] and wide.iloc[0]["Avg."] == "–"
    assert wide.iloc[2]["Avg. (1 task)"] == "–" and wide.iloc[2]["Avg."] == "76.25"
    # the frame for paired tests: one row per run with its variant and seed
    frame = variant_frame(results_of(runs), groups)
    assert list(frame["variant"]) == ["SimCSE", "SimCSE", "GS-InfoNCE", "GS-InfoNCE"] and list(frame["seed"]) == [1, 2, 1, 2]


def test_sweep_results_fills_the_runs_without_the_key(tmp_path):
    runs = {"simcse-s1": make_run(tmp_path, "simcse-s1"),
            "gs-m=1-s1": make_run(tmp_path, "gs-m=1-s1", method=("gs_infonce",), sections={"gs_infonce": {"noise_ratio": 1.0}}),
            "gs-m=3-s1": make_run(tmp_path, "gs-m=3-s1", method=("gs_infonce",), sections={"gs_infonce": {"noise_ratio": 3.0}})}
    frame = sweep_results(results_of(runs), runs, "gs_infonce.noise_ratio", default=0.0, name="M / batch size")
    assert list(frame["M / batch size"]) == [0.0, 1.0, 3.0]
    assert frame.loc[0, "STS12"] == pytest.approx(70.1)
    with pytest.raises(ValueError, match=r"the runs \['simcse-s1'\] have no value"):
        sweep_results(results_of(runs), runs, "gs_infonce.noise_ratio")


def test_backbones_options_and_last_values(tmp_path):
    runs = {"a": make_run(tmp_path, "a", model="roberta-base", hard_neg=(0.5, 0.4)),
            "b": make_run(tmp_path, "b", model="all-minilm-l6", hard_neg=(0.3, None))}
    assert {m: list(r) for m, r in runs_by_backbone(runs).items()} == {"roberta-base": ["a"], "all-minilm-l6": ["b"]}
    assert "RoBERTa-base" in backbone_note("roberta-base", "ClusterNS Table 1")
    assert "no published numbers" in backbone_note("all-minilm-l6", "ClusterNS Table 1")
    last = last_values(runs, ["sim/clusterns.hard_neg_cos"])
    assert last.loc["a", "sim/clusterns.hard_neg_cos"] == 0.4 and last.loc["b", "sim/clusterns.hard_neg_cos"] == 0.3
    assert sts_options(STS) == {} and sts_options(["STS16"]) == {"tasks": ["STS16"]}
    assert suite_columns("short_text", ["GoogleNews-S", "Tweet"]) == ({"GoogleNews-S": "G-S", "Tweet": "Tweet"},
                                                                      "Avg. (2 tasks)")
    assert suite_columns("dbpedia", ["DBpedia"]) == ({"DBpedia": "DBpedia (AMI)"}, None)
    assert suite_columns("transfer", ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC"])[1] == "Avg."
    with pytest.raises(ValueError, match="subset"):
        suite_columns("short_text", ["DBpedia"])
    assert average_label(STS) == "Avg." and average_label(["STS12", "STS13"]) == "Avg. (2 tasks)"
    with pytest.raises(ValueError, match="subset"):
        sts_options(["STS17"])
    assert isinstance(last, pd.DataFrame)


def test_runs_none_means_the_finished_cpu_demo_runs(tmp_path, monkeypatch):
    from cselab import workbench
    from cselab.workbench.studies.spec import load_study

    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="finished runs of the study 'cpu-demo'.* in runs/.*cselab reproduce cpu-demo"):
        workbench.load_runs(None)
    spec = load_study("cpu-demo", "cpu", runs_root=tmp_path / "runs")
    finished = spec.runs[0]   # one finished run (results.json), one partial (config.json only)
    for run, files in ((finished, ("config.json", "metrics.jsonl", "results.json")), (spec.runs[1], ("config.json",))):
        run.run_dir.mkdir(parents=True)
        for name in files:
            (run.run_dir / name).write_text("{}")
    with pytest.warns(UserWarning, match=f"{spec.runs[1].label} \\(partial"):
        assert workbench.load_runs(None) == {finished.label: Path("runs") / finished.run_dir.name}


def test_evaluate_a_snapshot(tiny_runs, data_dir):
    from cselab.model.encoder import SentenceEncoder
    from cselab.model.evaluate import evaluate_sts
    from cselab.model.evaluate.cache import evaluate_run

    run = tiny_runs["simcse-s2"]
    result = evaluate_run(run, "sts", model="step-0", data_dir=data_dir, tasks=["STS16"])
    direct = evaluate_sts(SentenceEncoder.from_pretrained(run / "snapshots" / "step-000000"), tasks=["STS16"],
                          data_dir=data_dir)
    assert result["scores"]["STS16"] == pytest.approx(direct["scores"]["STS16"]) and result["model"] == "step-0"
    assert len(list((run / "evaluations").glob("sts-step-0-*.json"))) == 1
    with pytest.raises(FileNotFoundError, match=r"no snapshots/step-000004/ model to evaluate \(train with snapshot_every\)"):
        evaluate_run(run, "sts", model="step-4", data_dir=data_dir, tasks=["STS16"])
    with pytest.raises(ValueError, match="step-<N>"):
        evaluate_run(run, "sts", model="first", data_dir=data_dir)


def test_variants_span_backbones_and_sweeps_keep_to_theirs(tmp_path):
    runs = {"mixcse-s1": make_run(tmp_path, "mixcse-s1", sections={"lr": 3e-5}),
            "mixcse-large-s1": make_run(tmp_path, "mixcse-large-s1", model="bert-large-uncased", sections={"lr": 1e-5}),
            "mixcse-lam-s1": make_run(tmp_path, "mixcse-lam-s1", sections={"lr": 3e-5, "mixcse": {"mix_lambda": 0.1}})}
    found = variant_runs(runs, {"MixCSE": ["mixcse", "mixcse-large"], "sweep": "mixcse-lam"}, check=["MixCSE"])   # other lr, other backbone: fine
    assert list(found["MixCSE"]) == ["mixcse-s1", "mixcse-large-s1"]
    sweep = sweep_runs(found["sweep"], found["MixCSE"])
    assert list(sweep) == ["mixcse-s1", "mixcse-lam-s1"]              # not the BERT-large run
    assert list(sweep_runs({}, found["MixCSE"])) == ["mixcse-s1"]       # no sweep group: the first backbone's point
    split = split_by_backbone(found)
    assert list(split) == ["MixCSE · BERT-base", "MixCSE · BERT-large", "sweep · BERT-base"]
    runs["mixcse-s2"] = make_run(tmp_path, "mixcse-s2", seed=2, sections={"lr": 5e-5})
    with pytest.raises(ValueError, match=r"'mixcse-s1' and 'mixcse-s2' differ in lr \(3e-05 vs 5e-05\)"):
        variant_runs(runs, {"MixCSE": "mixcse", "sweep": "mixcse-lam"}, check=["MixCSE"])


def test_by_profile():
    from cselab.workbench.paper_tables import by_profile

    assert by_profile("cpu", None, cpu=[], gpu=["MR"]) == [] and by_profile("gpu", None, cpu=[], gpu=["MR"]) == ["MR"]
    assert by_profile("cpu", ["CR"], cpu=[], gpu=["MR"]) == ["CR"]       # a given value wins
    assert by_profile("smoke", None, cpu=[], gpu=["MR"]) == []            # the smoke profile: the cpu sizes
    with pytest.raises(ValueError, match="profile must be one of"):
        by_profile("tpu", None, 1, 2)


def test_paired_comparison_cell_adjusts_and_bootstraps_single_seed_variants(tmp_path, monkeypatch, capsys):
    import numpy as np

    import cselab.workbench.analysis.compare as compare
    from cselab.workbench import paired_comparison_cell
    from cselab.workbench.results import bootstrap_spearman_difference, holm

    runs = {f"simcse-s{s}": make_run(tmp_path, f"simcse-s{s}", seed=s) for s in (1, 2, 3)}
    runs.update({f"mixcse-s{s}": make_run(tmp_path, f"mixcse-s{s}", seed=s, method=("mixcse",), base=70.5 + s / 20)
                 for s in (1, 2, 3)})
    runs.update({f"clusterns-s{s}": make_run(tmp_path, f"clusterns-s{s}", seed=s, method=("clusterns",),
                                             base=70.0 + (0.3, -0.1, 0.1)[s - 1]) for s in (1, 2, 3)})
    runs["gs-s1"] = make_run(tmp_path, "gs-s1", seed=1, method=("gs_infonce",), base=71.0)
    groups = variant_runs(runs, {"SimCSE": "simcse", "MixCSE": "mixcse", "ClusterNS": "clusterns", "GS": "gs"})
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 5, 50)
    pairs = {"simcse-s1": gold + rng.normal(0, 1, 50), "gs-s1": gold + rng.normal(0, 0.5, 50)}
    asked = []

    def pair_scores(chosen, tasks, data_dir):        # stands in for the cached per-pair STS evaluation
        asked.append((sorted(chosen), list(tasks)))
        return {label: {"STSBenchmark": (pairs[label], gold)} for label in chosen}

    monkeypatch.setattr(compare, "sts_pair_scores", pair_scores)
    table = paired_comparison_cell(results_of(runs), groups, tmp_path / "tables", ["STSBenchmark"], None,
                                   bootstrap_resamples=300)
    assert asked == [(["gs-s1", "simcse-s1"], ["STSBenchmark"])]           # only the single-seed comparison
    # on the average, MixCSE: d = 0.55, 0.60, 0.65 (detected); ClusterNS: d = 0.3, −0.1, 0.1 (not)
    raw = table.loc[["MixCSE", "ClusterNS"], "p (paired t)"].astype(float)
    assert table.loc["ClusterNS", "p (Holm)"] == f"{holm(raw.tolist())[1]:.3f}"
    assert table.loc["ClusterNS", "reading"].startswith("no detectable effect (MDE ")
    assert table.loc["MixCSE", "reading"] == "detected (higher)"
    assert table.loc[["MixCSE", "ClusterNS", "GS"], "Holm family"].tolist() == [
        "Holm over 2 variants vs SimCSE on avg"] * 2 + [""]
    expected = bootstrap_spearman_difference(pairs["gs-s1"], pairs["simcse-s1"], gold, 300, 0)
    assert table.loc["GS", "Δ, 95% test-pair bootstrap (1 seed)"] == (
        f"{expected['diff']:+.2f} [{expected['ci_low']:.2f}, {expected['ci_high']:.2f}]")
    assert table.loc["MixCSE", "Δ, 95% test-pair bootstrap (1 seed)"] == ""
    assert (tmp_path / "tables" / "sts_vs_simcse.md").read_text().startswith("|")
    assert paired_comparison_cell(results_of(runs), {"MixCSE": groups["MixCSE"]}, tmp_path / "none") is None
    assert capsys.readouterr().out.strip() == "no SimCSE runs to compare with" and not (tmp_path / "none").exists()


# ------------------------------------------------------------------- the names no test called before
def test_identity_leaves_out_the_seed_recording_keys_and_later_defaults(tmp_path):
    run = make_run(tmp_path, "simcse-s3", seed=3, sections={"select_by": "stsb_dev", "dev_max_pairs": None,
                                                           "heldout_sentences": 2048, "log_every": 5})
    # seed, output_dir, run_name, probe_every, log_every: not identity; select_by and dev_max_pairs at
    # their defaults: a run made before they existed is the same variant; heldout_sentences ≠ 1024 counts
    assert identity_without_seed(run) == {"model": "bert-base-uncased", "method": ["simcse"], "batch_size": 64,
                                          "heldout_sentences": 2048}


def test_select_variants_keeps_sweeps_apart_and_names_the_rest(tmp_path, capsys):
    runs = {"simcse-s1": make_run(tmp_path, "simcse-s1", seed=1),
            "simcse-s2": make_run(tmp_path, "simcse-s2", seed=2),
            "mixcse-s1": make_run(tmp_path, "mixcse-s1", method=("mixcse",), sections={"mixcse": {"mix_lambda": 0.2}}),
            "mixcse-lam-s1": make_run(tmp_path, "mixcse-lam-s1", method=("mixcse",),
                                      sections={"mixcse": {"mix_lambda": 0.1}}),
            "other-s1": make_run(tmp_path, "other-s1", model="roberta-base")}
    found, swept = select_variants(runs, {"SimCSE": "simcse", "MixCSE": "mixcse"},
                                   {"λ sweep": "mixcse-lam", "σ sweep": "clusterns-sigma"})
    assert {v: list(m) for v, m in found.items()} == {"SimCSE": ["simcse-s1", "simcse-s2"], "MixCSE": ["mixcse-s1"]}
    assert {v: list(m) for v, m in swept.items()} == {"λ sweep": ["mixcse-lam-s1"], "σ sweep": []}
    assert capsys.readouterr().out == "left out, not among this paper's variants: other-s1\n"
    with pytest.raises(ValueError, match=r"no run matches the variants \{'APINCSE': 'apincse'\}"):
        select_variants(runs, {"APINCSE": "apincse"}, {})

    table = groups_table(found)
    assert table.to_dict("index") == {
        "SimCSE": {"runs": "simcse-s1, simcse-s2", "model": "bert-base-uncased", "seeds": "1, 2"},
        "MixCSE": {"runs": "mixcse-s1", "model": "bert-base-uncased", "seeds": "1"}}
    assert list(used_runs(found, swept, {"again": {"simcse-s1": runs["simcse-s1"]}})) == [
        "simcse-s1", "simcse-s2", "mixcse-s1", "mixcse-lam-s1"]          # every run once, in order


def test_representatives_and_runs_with_a_logged_key(tmp_path):
    runs = {"clusterns-s1": make_run(tmp_path, "clusterns-s1", model="roberta-base", hard_neg=(0.5, 0.4)),
            "clusterns-s2": make_run(tmp_path, "clusterns-s2", model="roberta-base", seed=2, hard_neg=(0.5,)),
            "clusterns-b-s1": make_run(tmp_path, "clusterns-b-s1"),
            "simcse-s1": make_run(tmp_path, "simcse-s1", model="roberta-base"),
            # stopped before its clustering started: the cosine was logged, as NaN only
            "clusterns-early-s1": make_run(tmp_path, "clusterns-early-s1", hard_neg=(float("nan"), float("nan")))}
    groups = split_by_backbone(variant_runs({k: v for k, v in runs.items() if "early" not in k},
                                            {"ClusterNS": ["clusterns", "clusterns-b"], "SimCSE": "simcse"}))
    assert list(groups) == ["ClusterNS · RoBERTa-base", "ClusterNS · BERT-base", "SimCSE · RoBERTa-base"]
    assert [variant_of(name) for name in groups] == ["ClusterNS", "ClusterNS", "SimCSE"]
    assert representatives(groups, ["ClusterNS"]) == {"ClusterNS · RoBERTa-base": runs["clusterns-s1"],
                                                      "ClusterNS · BERT-base": runs["clusterns-b-s1"]}
    assert list(representatives(groups)) == list(groups)
    # only runs whose train records hold the key (the others logged no hard-negative cosine)
    assert runs_with(runs, "sim/clusterns.hard_neg_cos") == {"clusterns-s1": runs["clusterns-s1"],
                                                            "clusterns-s2": runs["clusterns-s2"]}
    assert runs_with(runs, "sim/clusterns.hard_neg_cos", kind="probe") == {}


def test_backbones_of_runs_and_groups(tmp_path):
    from cselab.model.encoder.backbone import model_config_file

    runs = {"a-s1": make_run(tmp_path, "a-s1", model="roberta-base"), "b-s1": make_run(tmp_path, "b-s1"),
            "a-s2": make_run(tmp_path, "a-s2", model="roberta-base", seed=2)}
    assert run_model(runs["a-s1"]) == "roberta-base"
    assert group_model({k: runs[k] for k in ("a-s1", "a-s2")}) == "roberta-base"
    assert group_model(runs) == "mixed: roberta-base, bert-base-uncased"
    assert one_per_backbone(runs) == {"roberta-base": ("a-s1", runs["a-s1"]),
                                      "bert-base-uncased": ("b-s1", runs["b-s1"])}
    assert backbone_label("bert-large-uncased") == "BERT-large" and backbone_label("/models/tiny-bert") == "tiny-bert"

    with pytest.raises(FileNotFoundError, match="no saved model"):
        num_layers(runs["a-s1"])
    best = RunDir(runs["a-s1"]).best_dir            # a saved model's config is all num_layers reads
    best.mkdir()
    model_config_file(best).write_text('{"num_hidden_layers": 12}')
    assert num_layers(runs["a-s1"]) == 12
    # −2 of 12 layers is hidden state 11 (the paper's M = 11); most_similar has no fixed layer
    index = interlayer_index([-2, 3, "most_similar"], runs, ["a-s1", "a-s1", "a-s1"])
    assert index[:2] == [11.0, 3.0] and pd.isna(index[2])


def test_published_rows_beside_our_groups(tmp_path):
    runs = {"simcse-s1": make_run(tmp_path, "simcse-s1"), "gs-s1": make_run(tmp_path, "gs-s1", method=("gs_infonce",)),
            "new-s1": make_run(tmp_path, "new-s1"), "mini-s1": make_run(tmp_path, "mini-s1", model="all-minilm-l6")}
    groups = variant_runs(runs, {"SimCSE": "simcse", "GS-InfoNCE": "gs", "New": "new", "MiniLM": "mini"})
    beside = published_beside("gs_infonce", "Table 2", groups)   # New: not in the paper; MiniLM: not its backbone
    assert list(beside.index) == ["SimCSE", "GS-InfoNCE"] and beside.attrs["source"] == "GS-InfoNCE Table 2"
    assert beside.loc["GS-InfoNCE", "Avg."] == "77.63" and beside.loc["SimCSE", "STS12"] == "68.40"
    assert published_beside("gs_infonce", "Table 2", groups, numeric=True).loc["SimCSE", "Avg."] == pytest.approx(76.25)
    assert published_beside("gs_infonce", "Table 2", {"MiniLM": groups["MiniLM"]}) is None
    # ClusterNS Table 2 has a column per backbone: ours is named like our table's
    split = {"SimCSE · BERT-base": groups["SimCSE"]}
    assert published_beside("clusterns", "Table 2", split, as_column="Avg.").to_dict("index") == {
        "SimCSE · BERT-base": {"Avg.": "76.25"}}
    with pytest.raises(ValueError, match="GS-InfoNCE Table 2 has 8 columns for bert-base-uncased"):
        published_beside("gs_infonce", "Table 2", groups, as_column="Avg.")

    notes = published_notes(groups, "GS-InfoNCE Table 2").splitlines()
    assert notes == [f"- {backbone_note('bert-base-uncased', 'GS-InfoNCE Table 2')}",
                     f"- {backbone_note('all-minilm-l6', 'GS-InfoNCE Table 2')}"]


def test_published_tables_turned_to_rows_and_a_published_column():
    table5 = published_transposed("clusterns", "Table 5", rename={"RoBERTa": "untuned RoBERTa-base"})
    assert list(table5.index) == ["untuned RoBERTa-base", "SimCSE", "ClusterNS"] and list(table5.columns) == ["AMI"]
    assert table5.loc["ClusterNS", "AMI"] == pytest.approx(73.55) and table5.columns.name is None
    assert table5.attrs["source"] == "ClusterNS Table 5"
    table3 = published_transposed("clusterns", "Table 3", tags={"bml": True}, numeric=False)
    assert list(table3.index) == ["σ = 0.2", "σ = 0.4", "σ = 0.6"]
    assert table3.loc["σ = 0.4", "STS average"] == "77.98"
    assert table3.loc["σ = 0.2", "hard negative similarity"] == "0.1814"

    ours = pd.DataFrame({"Avg.": [76.0, 76.5]}, index=[0.0, 1.0])
    out = with_published_column(ours, {1.0: "77.10", 3.0: "77.63"}, "published")
    assert out["published"].tolist() == ["–", "77.10"] and "published" not in ours
    assert with_published_column(ours, None, "published")["published"].tolist() == ["–", "–"]


def test_averages_summary_seed_counts_and_sts_selection(tmp_path):
    runs = {f"mixcse-s{s}": make_run(tmp_path, f"mixcse-s{s}", seed=s, method=("mixcse",)) for s in (1, 2)}
    runs.update({f"single-s{s}": make_run(tmp_path, f"single-s{s}", seed=s, method=("mixcse",), base=72,
                                          sections={"select_by": "last"}) for s in (1, 2)})
    groups = variant_runs(runs, {"MixCSE": "mixcse", "MixCSE single": "single"})
    sts = results_of(runs)                                      # avg = base + 3 + seed / 10
    transfer = {"mixcse-s1": {"avg": 85.0}, "mixcse-s2": {"avg": 86.0}, "single-s1": {"avg": 84.0}}
    summary = averages_summary(groups, {"STS Avg.": sts, "transfer Avg.": transfer})
    assert summary.loc["MixCSE", ("STS Avg.", "mean")] == pytest.approx(73.15)
    assert summary.loc["MixCSE", ("transfer Avg.", "mean")] == pytest.approx(85.5)
    # single-s2 has no transfer result: left out of both columns
    assert summary.loc["MixCSE single", ("STS Avg.", "n")] == 1
    assert summary.loc["MixCSE single", ("STS Avg.", "mean")] == pytest.approx(75.1)
    assert seeds_label(summary).tolist() == ["cselab (2 seeds)", "cselab (1 seed)"]
    with pytest.raises(ValueError, match="no run has every suite's result"):
        averages_summary(groups, {"STS Avg.": sts, "transfer Avg.": {}})

    # runs chosen by select_by: last read no STS data, so only MixCSE gets the † mark
    sts16 = suite_summary(sts, groups, "sts", ["STS16"])
    assert sts16.attrs["sts_selected"] == ["MixCSE"] and list(sts16.columns.get_level_values(0).unique()) == [
        "STS16", "Avg. (1 task)"]
    assert sts16.loc["MixCSE single", ("STS16", "mean")] == pytest.approx(72 + 4 + 0.15)
    assert list(comparison_table(sts16)["source"]) == ["cselab (2 seeds)†", "cselab (2 seeds)"]
    assert group_results(sts, {"MixCSE": groups["MixCSE"], "none": {"x": Path(".")}}) == {
        "MixCSE": [sts["mixcse-s1"], sts["mixcse-s2"]]}


def test_paired_comparison_stays_within_a_backbone(tmp_path):
    runs = {f"simcse-s{s}": make_run(tmp_path, f"simcse-s{s}", seed=s) for s in (1, 2, 3)}
    runs.update({f"mixcse-s{s}": make_run(tmp_path, f"mixcse-s{s}", seed=s, method=("mixcse",), base=70.5 + s / 20)
                 for s in (1, 2, 3)})
    runs["mixcse-r-s1"] = make_run(tmp_path, "mixcse-r-s1", model="roberta-base", method=("mixcse",))
    groups = split_by_backbone(variant_runs(runs, {"SimCSE": "simcse", "MixCSE": ["mixcse", "mixcse-r"]}))
    table = paired_comparison(results_of(runs), groups)
    # no SimCSE on RoBERTa-base: its MixCSE group has nothing to be compared with
    assert list(table.index) == ["SimCSE · BERT-base", "MixCSE · BERT-base"]
    assert table.loc["SimCSE · BERT-base", "Δ vs baseline"] == "(baseline)"
    assert table.loc["MixCSE · BERT-base", "Δ vs baseline"] == "+0.60"      # 0.55, 0.60, 0.65 on the average
    assert table.loc["MixCSE · BERT-base", "seeds"] == 3
    assert paired_comparison(results_of(runs), {"MixCSE": groups["MixCSE · BERT-base"]}) is None


def test_untuned_rows_from_snapshot_zero(tiny_runs, tiny_model, data_dir):
    from cselab.model.evaluate.cache import evaluate_run

    run = tiny_runs["simcse-s2"]
    groups = {"SimCSE": {"simcse-s2": run}, "MixCSE": {"mixcse-s1": tiny_runs["mixcse-s1"]}}
    results, extra = untuned(groups, "sts", data_dir=data_dir, tasks=["STS16"])
    # one backbone (the tiny BERT): its first run with snapshots stands for it, named by its folder
    assert extra == {f"untuned {Path(tiny_model).name}": {"simcse-s2@step-0": run}}
    assert results["simcse-s2@step-0"] == evaluate_run(run, "sts", model="step-0", data_dir=data_dir, tasks=["STS16"])
    assert results["simcse-s2@step-0"]["model"] == "step-0"


def test_untuned_rows_from_the_backbone_when_no_run_kept_snapshots(tiny_runs, tiny_model, data_dir, tmp_path):
    """Runs without a step-0 snapshot (the cpu profiles keep none) still get their untuned point: the
    backbone their first run names, with its pooler; the same scores as the snapshot 0 of a run that kept one."""
    import shutil

    from cselab.model.evaluate.cache import evaluate_run
    from cselab.model.rundir import RunDir

    run = tmp_path / "simcse-s2"
    shutil.copytree(tiny_runs["simcse-s2"], run)
    for folder in RunDir(run).snapshots().values():
        shutil.rmtree(folder)
    assert not RunDir(run).snapshots()
    results, extra = untuned({"SimCSE": {"simcse-s2": run}}, "sts", data_dir=data_dir, tasks=["STS16"])
    assert extra == {f"untuned {Path(tiny_model).name}": {"simcse-s2@backbone": run}}
    snapshot = evaluate_run(tiny_runs["simcse-s2"], "sts", model="step-0", data_dir=data_dir, tasks=["STS16"])
    assert results["simcse-s2@backbone"]["model"] == "backbone"
    assert results["simcse-s2@backbone"]["scores"]["STS16"] == pytest.approx(snapshot["scores"]["STS16"], abs=1e-4)


def test_notebook_odds_and_ends():
    assert for_legend({"simcse-s1": Path("a")}) == {"": Path("a")}      # one line: no legend
    assert for_legend({"a": Path("a"), "b": Path("b")}) == {"a": Path("a"), "b": Path("b")}
    assert slug("MixCSE w/o stop-gradient") == "mixcse_w_o_stop-gradient"
    assert slug("SimCSE · RoBERTa-base") == "simcse_roberta-base" and slug("λ") == "x"
