"""The library behind the analysis notebooks: which statistics runs logged, run groups and their
paired comparisons (the results layer's tests, as the notebook shows them), sweeps, clustering frames, starting models and snapshot
series, probes at step 0, the runs of a study, the clustering sample cap and the new figures."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex, to_rgb
import synthetic_runs
from synthetic_runs import make_run, make_runs
from test_plots import assert_drawn
from toy_encoders import HashedBagOfWords

from cselab import workbench
from cselab.workbench.analysis.compare import (clustering_detail_frame, clustering_metric_frame, describe_sts_average,
                                     sts_results)
from cselab.workbench.comparisons import (config_value, difference_panels, group_runs, grouped_table, per_task_comparison,
                                resolve_baseline, sweep_frame, with_groups)
from cselab.workbench.analysis.logged import (base_encoder, base_groups, is_similarity, logged_keys, logged_statistics,
                                    pick_runs, probe_layer_profiles, run_methods, runs_logging, snapshot_series,
                                    start_probe_records)
from cselab.model.data.clustering import ClusteringData, load_dbpedia
from cselab.model.evaluate import evaluate_clustering
from cselab.workbench.plots import (check_figure, key_words, legend_outside, plot_metric_grid, plot_paired_differences,
                          plot_profile_grid, plot_umap_panels, save_figure)
from cselab.workbench.plots.core import distinct_colors, figure_note
from cselab.workbench.results import compare_to_baseline, paired_tests, single_seed_bootstrap


def write_run(path, config: dict, records: list[dict], results: dict | None = None):
    """A run directory with exactly these records (and a results.json when given)."""
    return synthetic_runs.write_run(path, config, records, results, config_hash="x")


@pytest.fixture
def logged(tmp_path):
    a = write_run(tmp_path / "a", {"method": ["clusterns"], "seed": 1}, [
        {"kind": "train", "step": 1, "loss": 3.0, "loss/info_nce": 3.0, "sim/pos_cos": 0.9, "sim/neg_cos": 0.3,
         "sim/clusterns.false_neg_rate": 0.5, "sim/clusterns.started": 1.0, "sim/clusterns.hard_neg_cos": 0.6,
         "sim/my_method.extra_cos": 0.1},
        {"kind": "train", "step": 2, "loss": 2.0, "loss/info_nce": 1.9, "loss/clusterns.bml": 0.1,
         "sim/pos_cos": 0.8, "sim/neg_cos": 0.2}])
    b = write_run(tmp_path / "b", {"method": ["mixcse"], "seed": 1}, [
        {"kind": "train", "step": 1, "loss": 2.5, "sim/pos_cos": 0.7, "sim/mixcse.mixed_cos_reverse": 0.4,
         "sim/unused_cos": None},
        {"kind": "probe", "step": 2, "alignment": 0.3}])
    return {"a": a, "b": b}


# ------------------------------------------------------------------- what runs logged
def test_logged_statistics_keep_what_some_run_logged_in_label_order(logged):
    assert logged_keys(logged, "loss") == ["loss", "loss/info_nce", "loss/clusterns.bml"]
    assert logged_keys(logged, "", kind="probe") == ["step", "alignment"]
    stats = logged_statistics(logged)
    # core first, then the methods' label order (clusterns before mixcse), unlabelled cosines last;
    # a key with no value in any run and unlabelled bookkeeping (clusterns.started) are left out
    assert stats == {"similarity": ["pos_cos", "neg_cos", "clusterns.hard_neg_cos", "mixcse.mixed_cos_reverse",
                                    "my_method.extra_cos"],
                     "other": ["clusterns.false_neg_rate"]}
    assert list(runs_logging(logged, "sim/mixcse.mixed_cos_reverse")) == ["b"]
    assert list(runs_logging(logged, "sim/neg_cos")) == ["a"]
    assert runs_logging(logged, "sim/never") == {}
    assert [is_similarity(s) for s in ("neg_cos", "clusterns.batch_cos", "augmented_positive.queue_fill",
                                       "clusterns.false_neg_rate", "interlayer_negative.layer_hist.1")] == [
        True, True, False, False, False]


def test_methods_and_picking_runs(tmp_path):
    runs = make_runs(tmp_path / "runs")
    assert run_methods(runs) == {"simcse-s1": "simcse", "simcse-s2": "simcse", "mixcse-s1": "mixcse",
                                 "mixcse-s2": "mixcse"}
    assert list(pick_runs(runs, ["mixcse", "simcse"])) == ["simcse-s1", "mixcse-s1"]
    assert list(pick_runs(runs, None, per_method=None)) == list(runs)
    assert list(pick_runs(runs, ["mixcse"], per_method=2)) == ["mixcse-s1", "mixcse-s2"]
    assert pick_runs(runs, ["clusterns"]) == {}


def test_base_groups_name_each_starting_model(tmp_path):
    config = {"model": "all-minilm-l6", "pooler": "cls", "method": ["simcse"]}
    runs = {"s": write_run(tmp_path / "s", config, []),
            "m": write_run(tmp_path / "m", {**config, "method": ["mixcse"]}, [])}
    assert base_groups(runs) == {"untuned all-MiniLM-L6-v2": ["s", "m"]}   # the alias by its Hub name
    runs["a"] = write_run(tmp_path / "a", {**config, "pooler": "layer_attention"}, [])
    runs["p"] = write_run(tmp_path / "p", {**config, "model": str(tmp_path / "s"), "pooler": "avg",
                                           "pooler_options": {"k": 1}}, [])
    assert base_groups(runs) == {"untuned all-MiniLM-L6-v2, [CLS]": ["s", "m"],
                                 "untuned all-MiniLM-L6-v2, layer-attention pooler": ["a"],
                                 'untuned s, mean pooling {"k": 1}': ["p"]}   # a local folder by its name


def test_probe_layer_profiles_first_and_last(tmp_path):
    runs = make_runs(tmp_path / "runs")
    profiles = probe_layer_profiles({"mixcse-s1": runs["mixcse-s1"], "simcse-s1": runs["simcse-s1"]})
    # synthetic probes every 10 steps up to 40 with layer_cls_sim [0.2 + offset, 0.6, 1.0]
    assert profiles == {"mixcse-s1": {"step 10": [0.2 + 0.1, 0.6, 1.0], "step 40": [0.2 + 0.1, 0.6, 1.0]},
                        "simcse-s1": {"step 10": [0.2, 0.6, 1.0], "step 40": [0.2, 0.6, 1.0]}}
    assert probe_layer_profiles(runs["simcse-s2"], steps="last") == {"simcse-s2": {"step 40": [0.2, 0.6, 1.0]}}
    with pytest.raises(ValueError, match="steps must be"):
        probe_layer_profiles(runs, steps="all")
    bare = make_run(tmp_path / "bare", ["simcse"], steps=40)
    (bare / "metrics.jsonl").write_text('{"kind": "probe", "step": 10, "alignment": 0.1}\n')
    with pytest.raises(ValueError, match="no layer_cls_sim"):
        probe_layer_profiles(bare)


# ------------------------------------------------------------------- groups and comparisons
def test_run_groups_by_config_keys_with_names(tmp_path):
    runs = {"simcse-s1": write_run(tmp_path / "1", {"method": ["simcse"], "seed": 1, "batch_size": 64}, []),
            "apincse-s1": write_run(tmp_path / "2", {"method": ["augmented_positive", "interlayer_negative"], "seed": 1,
                                                     "batch_size": 64, "augmented_positive": {"top_k": 8}}, []),
            "apincse-k16-s2": write_run(tmp_path / "3", {"method": ["augmented_positive", "interlayer_negative"],
                                                         "seed": 2, "batch_size": 64,
                                                         "augmented_positive": {"top_k": 16}}, [])}
    groups = group_runs(runs)
    assert groups.to_dict("list") == {"run": ["simcse-s1", "apincse-s1", "apincse-k16-s2"],
                                      "group": ["SimCSE", "APINCSE", "APINCSE"], "seed": [1, 1, 2],
                                      "method": ["simcse", "augmented_positive+interlayer_negative"] * 1 +
                                                ["augmented_positive+interlayer_negative"]}
    by_k = group_runs(runs, ["method", "augmented_positive.top_k"],
                      names={"simcse, augmented_positive.top_k=None": "S"})
    assert list(by_k["group"]) == ["S", "augmented_positive+interlayer_negative, augmented_positive.top_k=8",
                                   "augmented_positive+interlayer_negative, augmented_positive.top_k=16"]
    # by label (without the seed): runs named apart stay apart, named as figures name them; APINCSE's
    # pooler-only control has SimCSE's method but is no SimCSE seed
    runs["apincse-pooler"] = write_run(tmp_path / "4", {"method": ["simcse"], "seed": 1, "batch_size": 64,
                                                        "pooler": "layer_attention"}, [])
    assert list(group_runs(runs)["group"]) == ["SimCSE", "APINCSE", "APINCSE", "SimCSE"]
    by_label = group_runs(runs, ["label"])
    assert list(by_label["group"]) == ["SimCSE", "APINCSE", "apincse-k16", "APINCSE pooler only"]
    assert resolve_baseline("simcse", by_label) == "SimCSE"
    del runs["apincse-pooler"]
    assert config_value({"method": ["a", "b"], "x": {"y": 3}}, "x.y") == 3
    assert config_value({"method": ["a", "b"]}, "method") == "a+b" and config_value({}, "x.y") is None
    assert resolve_baseline("simcse", groups) == "SimCSE" and resolve_baseline("APINCSE", groups) == "APINCSE"
    with pytest.raises(ValueError, match="baseline 'mixcse' is none of the groups"):
        resolve_baseline("mixcse", groups)
    scores = pd.DataFrame({"run": ["apincse-s1", "simcse-s1"], "avg": [1.0, 2.0], "seed": [9, 9]})
    merged = with_groups(scores, groups)
    assert merged.to_dict("list") == {"run": ["apincse-s1", "simcse-s1"], "group": ["APINCSE", "SimCSE"],
                                      "seed": [1, 1], "method": ["augmented_positive+interlayer_negative", "simcse"],
                                      "avg": [1.0, 2.0]}


def test_comparison_groups_keep_one_backbone_and_one_run_per_seed(tmp_path, capsys):
    from synthetic_runs import write_run

    def run(name, method, seed, model="all-minilm-l6", **config):
        return write_run(tmp_path / name, {"method": method, "seed": seed, "model": model, **config}, [])

    # the compare notebook on runs of two backbones: the SimCSE run of each had seed 1, and the
    # paired test took them for two runs of one seed ("two runs of group='SimCSE' with seed=1")
    runs = {"simcse-s1": run("a", ["simcse"], 1), "mixcse-s1": run("b", ["mixcse"], 1),
            "simcse-s2": run("c", ["simcse"], 2), "tiny-simcse-s1": run("d", ["simcse"], 1, model="tiny-bert")}
    kept, groups = workbench.comparison_groups(runs, ["method"])
    assert list(kept) == ["simcse-s1", "mixcse-s1", "simcse-s2"]
    assert groups.to_dict("list")["group"] == ["SimCSE", "MixCSE", "SimCSE"]
    assert capsys.readouterr().out.strip() == (
        "the runs start from 2 backbones: compared here, the 3 runs from all-minilm-l6; left out 1 from tiny-bert "
        "(tiny-simcse-s1) (set backbone to compare those)")
    kept, _ = workbench.comparison_groups(runs, ["method"], backbone="tiny-bert")
    assert list(kept) == ["tiny-simcse-s1"]
    with pytest.raises(workbench.BadParameter, match=r"^backbone 'bert-base' is not the model of any run; the runs "
                                                     r"start from all-minilm-l6 \(3 runs\), tiny-bert \(1 run\)$"):
        workbench.comparison_groups(runs, ["method"], backbone="bert-base")
    # one backbone, two runs of one group and seed (APINCSE's pooler-only control has SimCSE's
    # method): one line naming both and the key they differ in; grouped by label they are apart
    runs = {"simcse": run("e", ["simcse"], 42, pooler="cls"), "apincse-pooler": run("f", ["simcse"], 42,
                                                                                       pooler="layer_attention")}
    with pytest.raises(workbench.BadParameter) as error:
        workbench.comparison_groups(runs, ["method"])
    assert str(error.value) == ("runs 'simcse' and 'apincse-pooler' are both group 'SimCSE' with seed 42 (grouped by "
                                "['method']; they differ in pooler ('cls' vs 'layer_attention')): group_by = ['label'] "
                                "groups runs by their labels, or add the key that differs to group_by")
    assert workbench.comparison_groups(runs, ["label"])[1].to_dict("list")["group"] == ["SimCSE", "APINCSE pooler only"]


def test_label_groups_drop_seeds_folder_hashes_and_the_swept_point():
    from cselab.workbench.comparisons import label_group

    assert label_group("apincse-no_ap-s2") == "apincse-no_ap" and label_group("simcse-f8fbb5c8ad") == "simcse"
    assert label_group("apincse-topk-top_k=8-s1") == "apincse-topk-top_k=8"
    assert label_group("apincse-topk-top_k=8-s1", "augmented_positive.top_k") == "apincse-topk"
    assert label_group("a-x=-2-top_k=8-s2", "augmented_positive.top_k") == "a-x=-2"
    assert label_group("a-top_k=8-x=-2", "augmented_positive.top_k") == "a-x=-2"


def paired_frame() -> pd.DataFrame:
    """SimCSE and two methods over seeds 1–3; MixCSE beats SimCSE by 1, 2, 3 on task A."""
    return pd.DataFrame({
        "group": ["SimCSE"] * 3 + ["MixCSE"] * 3 + ["ClusterNS"],
        "seed": [1, 2, 3, 1, 2, 3, 1],
        "A": [70.0, 71.0, 72.0, 71.0, 73.0, 75.0, 69.5],
        "B": [60.0, 60.0, 60.0, 60.5, 60.5, 60.5, 61.0]})


def test_per_task_comparison_gives_the_paired_test_per_task():
    frame = paired_frame().assign(C=[70.0, 70.0, 70.0, 71.0, 71.1, 71.2, 70.0])
    table = per_task_comparison(frame, ["A", "B", "C"], baseline="SimCSE")
    # A: d = 1, 2, 3 → mean 2, sd 1, t = 2 / (1 / √3) = 3.464 with 2 df → p = 0.0742 (two-sided)
    # C: d = 1.0, 1.1, 1.2 → mean 1.1, sd 0.1, t = 19.05 → p = 0.00274
    # Holm over MixCSE's two tested scores: C 2 · 0.00274 = 0.0055; A max(0.0742, 0.0055) = 0.0742
    # MDE of A: TTestPower effect 3.264 (n 3, α 0.05, power 0.8) · sd 1
    # B: d = 0.5 three times: no spread, no test (no member of the family); ClusterNS: one shared seed
    # how a row is paired is said once, in "paired on", not in every cell
    assert table.to_dict("index") == {
        "SimCSE": {"A": "(baseline)", "B": "(baseline)", "C": "(baseline)", "paired on": "", "Holm family": ""},
        "MixCSE": {"A": "+2.00 (p 0.074, Holm 0.074): no detectable effect (MDE 3.26)", "B": "+0.50 (no spread)",
                   "C": "+1.10 (p 0.003, Holm 0.005)", "paired on": "3 seeds", "Holm family": "Holm over MixCSE's 2 scores"},
        "ClusterNS": {"A": "-0.50", "B": "+1.00", "C": "+0.00", "paired on": "1 seed", "Holm family": ""}}
    assert table.index.name == "group"
    # runs of one seed (the cpu-demo's): no test, no Holm family, and no column of empty cells for it
    one_seed = per_task_comparison(frame[frame["seed"] == 1], ["A", "B"], baseline="SimCSE")
    assert list(one_seed.columns) == ["A", "B", "paired on"]
    assert one_seed.loc["MixCSE"].tolist() == ["+1.00", "+0.50", "1 seed"]
    tests = paired_tests(frame, ["A", "C"], baseline="SimCSE", family="task").set_index(["group", "task"])
    assert tests.loc[("MixCSE", "A"), "p_holm"] == pytest.approx(tests.loc[("MixCSE", "A"), "p"])   # alone on A
    assert tests.loc[("MixCSE", "C"), "family"] == "Holm over 1 groups on C"
    everything = paired_tests(frame, ["A", "C"], baseline="SimCSE", family="all").set_index(["group", "task"])
    assert everything.loc[("MixCSE", "C"), "reading"] == "detected (higher)"
    with pytest.raises(ValueError, match="family must be one of"):
        paired_tests(frame, ["A"], family="method")


def test_single_seed_groups_get_the_paired_bootstrap_over_test_pairs():
    from cselab.workbench.results import bootstrap_average_spearman_difference, bootstrap_spearman_difference

    rng = np.random.default_rng(0)
    gold = {"A": rng.uniform(0, 5, 60), "B": rng.uniform(0, 5, 40)}
    scores = {label: {t: (g + rng.normal(0, noise, len(g)), g) for t, g in gold.items()}
              for label, noise in (("simcse-s1", 1.0), ("simcse-s2", 1.0), ("mixcse-s1", 1.0), ("mixcse-s2", 1.0),
                                   ("clusterns-s1", 0.5))}
    frame = paired_frame().assign(run=["simcse-s1", "simcse-s2", "simcse-s3", "mixcse-s1", "mixcse-s2", "mixcse-s3",
                                       "clusterns-s1"], avg=0.0)
    boot = single_seed_bootstrap(frame, scores, ["A", "avg"], baseline="SimCSE", n_resamples=200, seed=3)
    assert boot[["group", "task", "run", "baseline_run"]].values.tolist() == [
        ["ClusterNS", "A", "clusterns-s1", "simcse-s1"], ["ClusterNS", "avg", "clusterns-s1", "simcse-s1"]]
    one = bootstrap_spearman_difference(scores["clusterns-s1"]["A"][0], scores["simcse-s1"]["A"][0], gold["A"], 200, 3)
    both = bootstrap_average_spearman_difference(
        {t: (scores["clusterns-s1"][t][0], scores["simcse-s1"][t][0], gold[t]) for t in gold}, 200, 3)
    assert boot.iloc[0][["diff", "ci_low", "ci_high"]].tolist() == pytest.approx([one["diff"], one["ci_low"],
                                                                                   one["ci_high"]])
    assert boot.iloc[1][["diff", "ci_low", "ci_high"]].tolist() == pytest.approx([both["diff"], both["ci_low"],
                                                                                   both["ci_high"]])
    assert boot.iloc[0]["diff"] > 0 and boot.iloc[0]["n_pairs"] == 60 and "test-set" in boot.iloc[0]["interval"]
    table = per_task_comparison(frame, ["A", "avg"], baseline="SimCSE", bootstrap=boot)
    assert table.loc["ClusterNS", "A"] == f"{one['diff']:+.2f} [{one['ci_low']:.2f}, {one['ci_high']:.2f}]"
    assert table.loc["ClusterNS", "paired on"] == "1 seed; 95% interval over test pairs"
    panels = difference_panels(paired_tests(frame, ["A"], baseline="SimCSE"), boot, names={"A": "task A"})
    cluster = panels["task A"].set_index("group").loc["ClusterNS"]
    assert cluster["interval"] == "bootstrap over test pairs" and cluster["diff_ci_low"] == pytest.approx(one["ci_low"])
    assert panels["task A"].set_index("group").loc["MixCSE", "interval"] == "t over seeds"
    # one test set (the demo's STS-B): its average is its own bootstrap, drawn once and given to both rows
    only_a = {label: {"A": by_task["A"]} for label, by_task in scores.items()}
    single = single_seed_bootstrap(frame, only_a, ["A", "avg"], baseline="SimCSE", n_resamples=200, seed=3)
    alone = bootstrap_average_spearman_difference({"A": (scores["clusterns-s1"]["A"][0], scores["simcse-s1"]["A"][0],
                                                         gold["A"])}, 200, 3)
    assert single["task"].tolist() == ["A", "avg"]
    assert single.iloc[1][["diff", "ci_low", "ci_high"]].tolist() == [alone["diff"], alone["ci_low"], alone["ci_high"]]
    assert single.iloc[0][["diff", "ci_low", "ci_high"]].tolist() == pytest.approx([one["diff"], one["ci_low"],
                                                                                     one["ci_high"]])
    other = {**scores, "simcse-s1": {**scores["simcse-s1"], "A": (scores["simcse-s1"]["A"][0], gold["A"] + 1)}}
    with pytest.raises(ValueError, match="different A test pairs"):
        single_seed_bootstrap(frame, other, ["A"], baseline="SimCSE")


def test_grouped_table_mean_std_and_runs():
    table = grouped_table(paired_frame(), ["A", "B"], rename={"A": "task A"})
    assert list(table.columns) == ["runs", "task A", "B"]
    assert table.loc["MixCSE"].tolist() == [3, "73.00 ± 2.00", "60.50 ± 0.00"]
    assert table.loc["ClusterNS"].tolist() == [1, "69.50", "61.00"]
    two_keys = grouped_table(paired_frame().assign(k=[1, 1, 2, 1, 1, 1, 1]), ["A"], by=["group", "k"])
    assert two_keys.to_dict("list") == {"group": ["SimCSE", "SimCSE", "MixCSE", "ClusterNS"], "k": [1, 2, 1, 1],
                                        "runs": [2, 1, 3, 1], "A": ["70.50 ± 0.71", "72.00", "73.00 ± 2.00", "69.50"]}


def test_sweep_frame_rows_of_the_runs_that_set_the_key(tmp_path):
    runs = {f"cl-k{k}-s{s}": write_run(tmp_path / f"{k}-{s}", {"method": ["clusterns"], "seed": s,
                                                                "clusterns": {"num_clusters": k}}, [],
                                        {"best_stsb_dev": 80.0 + k / 10 + s, "best_step": 10})
            for k in (64, 16) for s in (1, 2)}
    runs["simcse-s1"] = write_run(tmp_path / "simcse", {"method": ["simcse"], "seed": 1}, [],
                                  {"best_stsb_dev": 79.0, "best_step": 10})
    scores = pd.DataFrame({"run": list(runs), "avg": [70.0, 71.0, 72.0, 73.0, 60.0]})
    frame = sweep_frame(runs, "clusterns.num_clusters", scores)
    assert frame["run"].tolist() == ["cl-k16-s1", "cl-k16-s2", "cl-k64-s1", "cl-k64-s2"]   # SimCSE has no K
    assert frame["clusterns.num_clusters"].tolist() == [16, 16, 64, 64]
    assert frame["group"].unique().tolist() == ["ClusterNS"] and frame["seed"].tolist() == [1, 2, 1, 2]
    assert frame["best_stsb_dev"].tolist() == pytest.approx([82.6, 83.6, 87.4, 88.4])
    assert frame["avg"].tolist() == [72.0, 73.0, 70.0, 71.0]
    with pytest.raises(ValueError, match="no run sets 'batch_size'"):
        sweep_frame({"simcse-s1": runs["simcse-s1"]}, "batch_size")


def test_sts_results_final_table_or_subset(tmp_path):
    runs = make_runs(tmp_path / "runs")        # results.json holds a 7-task table
    full = sts_results({"simcse-s1": runs["simcse-s1"]})["simcse-s1"]
    assert full["source"] == "final table" and len(full["scores"]) == 7
    assert full["avg"] == pytest.approx(73.01)   # 70 + mean(0..6) + seed/100
    subset = sts_results({"simcse-s1": runs["simcse-s1"]}, ["STS12", "SICKRelatedness"])["simcse-s1"]
    assert subset == {"scores": {"STS12": 70.01, "SICKRelatedness": 76.01}, "avg": pytest.approx(73.01),
                      "source": "final table"}
    assert describe_sts_average(None) == "STS avg. (7 tasks)"
    assert describe_sts_average(["STSBenchmark"]) == "STS-B"
    assert describe_sts_average(["STS12", "SICKRelatedness"]) == "avg. of STS12, SICK-R"


def test_sts_results_evaluate_when_the_run_has_no_table(tiny_runs, data_dir):
    from cselab.model.evaluate.cache import evaluate_run

    result = sts_results({"simcse-s1": tiny_runs["simcse-s1"]}, ["STS16"], data_dir)["simcse-s1"]
    assert result["source"] == "evaluated"
    assert result["scores"] == pytest.approx(evaluate_run(tiny_runs["simcse-s1"], "sts", tasks=["STS16"],
                                                                 data_dir=data_dir)["scores"])
    assert result["avg"] == pytest.approx(result["scores"]["STS16"])


def test_clustering_frames():
    def metric(mean):
        return {"mean": mean, "std": 0.0, "runs": [mean]}

    results = {"r1": {"details": {"DBpedia": {"acc": metric(0.5), "nmi": metric(0.6), "ami": metric(0.25)},
                                  "Tweet": {"acc": metric(0.7), "nmi": metric(0.8), "ami": metric(0.35)}}}}
    assert clustering_metric_frame(results, "ami").to_dict("list") == {"run": ["r1"], "DBpedia": [25.0],
                                                                      "Tweet": [35.0]}
    detail = clustering_detail_frame(results)
    assert list(detail.columns) == ["run", "DBpedia acc", "DBpedia NMI", "DBpedia AMI", "Tweet acc", "Tweet NMI",
                                    "Tweet AMI"]
    assert detail.iloc[0, 1:].tolist() == pytest.approx([50.0, 60.0, 25.0, 70.0, 80.0, 35.0])
    with pytest.raises(ValueError, match="metric must be"):
        clustering_metric_frame(results, "f1")
    with pytest.raises(ValueError, match="r2: not a clustering result"):
        clustering_metric_frame({"r2": {"scores": {}}})


# ------------------------------------------------------------------- models, snapshots, probes
def test_base_encoder_is_the_step_0_snapshot(tiny_runs):
    from cselab.model.encoder import SentenceEncoder
    from cselab.model.rundir import RunDir

    run = tiny_runs["apincse-s1"]            # layer-attention pooler: its weights come from the snapshot
    sentences = ["A man plays a guitar.", "Stocks fell sharply."]
    expected = SentenceEncoder.from_pretrained(RunDir(run).snapshots()[0]).encode(sentences)
    assert np.allclose(base_encoder(run).encode(sentences), expected)
    trained = SentenceEncoder.from_pretrained(run / "best").encode(sentences)
    assert not np.allclose(trained, expected)


def test_snapshot_series_and_mixcse_scores(tiny_runs, tmp_path):
    from cselab.workbench.analysis.mixcse import mixcse_score_series, mixcse_scores
    from cselab.model.encoder import SentenceEncoder
    from cselab.model.rundir import RunDir

    runs = {k: tiny_runs[k] for k in ("simcse-s1", "mixcse-s1")}
    sizes = snapshot_series(runs, lambda encoder, config: {"layers": encoder.num_layers, "seed": config["seed"]})
    assert sizes.to_dict("list") == {"run": ["simcse-s1"] * 3 + ["mixcse-s1"] * 3, "step": [0, 3, 6] * 2,
                                     "layers": [2] * 6, "seed": [1] * 6}
    assert snapshot_series(runs, lambda e, c: {}, steps=[6])["step"].tolist() == [6, 6]
    sentences = [f"sentence number {i} about topic {i % 3}" for i in range(10)]
    scores = mixcse_score_series(runs, sentences, batch_size=4, steps=[3])
    assert scores["step"].tolist() == [3, 3]
    direct = mixcse_scores(SentenceEncoder.from_pretrained(RunDir(runs["mixcse-s1"]).snapshots()[3]), sentences,
                           0.2, 0.05, batch_size=4)
    assert scores.iloc[1][["positive", "random_negative", "mixed_negative"]].tolist() == pytest.approx(
        [direct["positive"], direct["random_negative"], direct["mixed_negative"]])
    bare = make_run(tmp_path / "bare", ["simcse"])
    with pytest.raises(FileNotFoundError, match="kept no model snapshots"):
        snapshot_series({"bare": bare}, lambda e, c: {})


def test_step_0_probe_is_the_starting_model_and_older_runs_get_it_measured(tiny_runs, data_dir, tmp_path):
    import json
    import shutil

    from cselab.model.data import load_stsb
    from cselab.model.rundir import read_metrics
    from cselab.model.train.probes import probe_record, stsb_probe_set

    run = tiny_runs["simcse-s1"]
    expected = probe_record(base_encoder(run), stsb_probe_set(load_stsb(data_dir)["dev"], 32), 0)
    recorded = read_metrics({"simcse-s1": run}, "probe")
    assert recorded["step"].tolist() == [0, 3, 6]                 # the trainer probes before its first step
    first = recorded.iloc[0]
    for key in ("alignment", "uniformity", "mean_cos", "largest_angle"):
        assert first[key] == pytest.approx(expected[key], rel=1e-5)
    assert start_probe_records({"simcse-s1": run}, data_dir).empty   # nothing left to measure

    # a run made before the trainer probed at step 0: its starting model is measured here
    old = tmp_path / "old-run"
    shutil.copytree(run, old)
    lines = (old / "metrics.jsonl").read_text().splitlines()
    kept = [line for line in lines if not (json.loads(line)["kind"] == "probe" and json.loads(line)["step"] == 0)]
    (old / "metrics.jsonl").write_text("\n".join(kept) + "\n")
    frame = start_probe_records({"old": old}, data_dir)
    assert frame["run"].tolist() == ["old"] and frame["step"].tolist() == [0]
    for key in ("alignment", "uniformity", "mean_cos", "largest_angle"):
        assert frame[key].iloc[0] == pytest.approx(expected[key])
    assert frame["layer_cls_sim"].iloc[0] == pytest.approx(expected["layer_cls_sim"])


# ------------------------------------------------------------------- a study's runs
def study_file(tmp_path, tiny_model) -> str:
    path = tmp_path / "mini.yaml"
    path.write_text(f"""name: mini
profiles:
  cpu: {{model: {tiny_model}, corpus: wiki1m-head, max_steps: 2, batch_size: 8}}
runs:
  - label: simcse
    set: {{method: simcse}}
  - label: mixcse
    set: {{method: mixcse}}
    seeds: [1, 2]
""")
    return str(path)


def test_load_runs_none_finds_the_finished_runs_of_the_study(tmp_path, tiny_model):
    from cselab.workbench.studies.spec import load_study

    study = study_file(tmp_path, tiny_model)
    runs_dir = tmp_path / "runs"
    with pytest.raises(FileNotFoundError) as error:
        workbench.load_runs(None, study=study, runs_dir=runs_dir)
    message = str(error.value)
    assert f"run `cselab reproduce {study} --profile cpu --runs-dir {runs_dir}` first" in message
    assert "(missing: simcse (new), mixcse-s1 (new), mixcse-s2 (new))" in message and "\n" not in message
    spec = load_study(study, "cpu", runs_dir, notebooks=False)
    dirs = {run.label: run.run_dir for run in spec.runs}
    assert [d.parent for d in dirs.values()] == [runs_dir] * 3 and len(set(dirs.values())) == 3
    make_run(dirs["mixcse-s2"], ["mixcse"], seed=2)               # finished (results.json)
    make_run(dirs["simcse"], ["simcse"])
    (dirs["simcse"] / "results.json").unlink()                    # partial
    with pytest.warns(UserWarning, match=r"2 of 3 runs are not finished .*simcse \(partial\), mixcse-s1 \(new\)"):
        assert workbench.load_runs(None, study=study, runs_dir=runs_dir) == {"mixcse-s2": dirs["mixcse-s2"]}
    make_run(dirs["mixcse-s1"], ["mixcse"], seed=1)
    (dirs["simcse"] / "results.json").write_text("{}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(workbench.load_runs(None, study=study, runs_dir=runs_dir)) == ["simcse", "mixcse-s1", "mixcse-s2"]


def test_the_default_is_the_cpu_demo_study(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"study 'cpu-demo' \(profile cpu\).*missing: simcse \(new\), "
                                                r".*apincse-no_in.*`cselab reproduce cpu-demo --profile cpu --runs-dir "):
        workbench.load_runs(None, runs_dir=tmp_path / "runs")


# ------------------------------------------------------------------- clustering samples
def labelled_set(n_per_class=(5, 3, 8)) -> ClusteringData:
    labels = np.repeat(np.arange(1, len(n_per_class) + 1), n_per_class)
    texts = tuple(f"text {i}" for i in range(len(labels)))
    return ClusteringData("toy", texts, labels, {1: "Artist", 2: "Company", 3: "Plant"})


def test_subsample_is_seeded_uniform_and_keeps_order():
    data = labelled_set()
    sample = data.subsample(6, seed=3)
    index = np.sort(np.random.default_rng(3).choice(16, size=6, replace=False))
    assert sample.texts == tuple(f"text {i}" for i in index)
    assert sample.labels.tolist() == data.labels[index].tolist() and sample.label_names == data.label_names
    assert sample.name == "toy[6 of 16, seed 3]"
    assert data.subsample(6, seed=3).texts == sample.texts and data.subsample(6, seed=4).texts != sample.texts
    assert data.subsample(16) is data and data.subsample(100) is data
    for bad in (1, 2.5, True, None):
        with pytest.raises(ValueError, match="max_texts must be an integer >= 2"):
            data.subsample(bad)


def test_sample_per_class_is_balanced_and_named():
    data = labelled_set()
    sample = data.sample_per_class(4, seed=0)
    assert np.bincount(sample.labels).tolist() == [0, 4, 3, 4]   # class 2 has only 3 texts
    assert sample.labels.tolist() == sorted(sample.labels.tolist())
    assert sample.label_words()[:5] == ["Artist"] * 4 + ["Company"]
    chosen = data.sample_per_class(2, seed=0, classes=["Plant", 1])
    assert chosen.labels.tolist() == [1, 1, 3, 3]
    assert all(int(t.split()[1]) >= 8 for t in chosen.texts[2:])    # Plant texts are 8..15
    with pytest.raises(ValueError, match=r"unknown class\(es\) \['Fish'\]; classes: \['Artist', 'Company', 'Plant'\]"):
        data.sample_per_class(2, classes=["Fish"])
    assert ClusteringData("ids", ("a", "b"), np.array([4, 5])).label_words() == [4, 5]


def test_evaluate_clustering_caps_each_set(data_dir):
    full = load_dbpedia("test", data_dir)
    result = evaluate_clustering(HashedBagOfWords(), ["DBpedia"], data_dir, seeds=(0,), max_texts=60, sample_seed=1)
    details = result["details"]["DBpedia"]
    assert details["n"] == 60 and result["max_texts"] == 60 and result["sample_seed"] == 1
    sample = full.subsample(60, 1)
    assert details["n_clusters"] == sample.n_clusters
    from cselab.model.evaluate.clustering import evaluate_clustering_data

    direct = evaluate_clustering_data(HashedBagOfWords(), sample, seeds=(0,))
    assert details["ami"]["runs"] == direct["ami"]["runs"]


def test_geometry_on_a_sample_of_pairs(data_dir):
    from cselab.model.data import load_stsb
    from cselab.model.evaluate.geometry import alignment, evaluate_alignment_uniformity, uniformity

    model = HashedBagOfWords(dim=64)
    result = evaluate_alignment_uniformity(model, "dev", data_dir, max_pairs=300, sample_seed=2)
    dev = load_stsb(data_dir)["dev"]
    keep = np.sort(np.random.default_rng(2).choice(len(dev.scores), size=300, replace=False))
    positive = [i for i in keep if dev.scores[i] > 4]
    sentences = sorted({dev.sentences1[i] for i in keep} | {dev.sentences2[i] for i in keep})
    assert result["positive_pairs"] == len(positive) and result["sentences"] == len(sentences)
    assert result["max_pairs"] == 300
    assert result["alignment"] == pytest.approx(alignment(model.encode([dev.sentences1[i] for i in positive]),
                                                          model.encode([dev.sentences2[i] for i in positive])))
    assert result["uniformity"] == pytest.approx(uniformity(model.encode(sentences)))
    full = evaluate_alignment_uniformity(model, "dev", data_dir, max_pairs=100_000)   # more than the split has
    assert full["sentences"] == len(set(dev.sentences1) | set(dev.sentences2))
    with pytest.raises(ValueError, match="max_pairs must be an integer >= 2"):
        evaluate_alignment_uniformity(model, "dev", data_dir, max_pairs=1)


# ------------------------------------------------------------------- figures
def test_metric_grid_one_panel_per_key_own_axis(logged, tmp_path):
    fig = plot_metric_grid(logged, ["loss", "loss/clusterns.bml", "sim/clusterns.false_neg_rate"], ncols=2)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["total loss", "ClusterNS BML (× λ)",
                                                 "share of anchors with\na false negative"]
    assert [len(ax.lines) for ax in panels] == [2, 1, 1]                 # only the runs that logged the key
    assert panels[1].lines[0].get_ydata().tolist() == [0.1]
    assert panels[0].lines[1].get_color() == panels[0].lines[1].get_color() != panels[0].lines[0].get_color()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]
    assert not panels[0].get_shared_y_axes().joined(panels[0], panels[1])
    assert_drawn(fig)
    # the 2 × 2 grid's fourth cell holds the legend (no empty cell, nothing added under the panels)
    from cselab.workbench.plots.check import draw

    renderer = draw(fig)
    cell, box = fig.axes[3], fig.legends[0].get_window_extent(renderer)
    assert not cell.get_visible() and cell.bbox.contains(*box.get_points().mean(axis=0))
    with pytest.raises(ValueError, match=r"no values for \['sim/nothing'\]"):
        plot_metric_grid(logged, ["sim/nothing"])
    assert key_words("sim/pos_cos") == "positive pairs" and key_words("loss/x.y") == "loss: x.y"
    assert key_words("mean_cos") == "anisotropy (mean cosine)" and key_words("odd") == "odd"
    _same_bytes_twice(lambda: plot_metric_grid(logged, ["loss", "sim/pos_cos"]), tmp_path / "grid")


def test_profile_grid_and_legend_outside(tmp_path):
    panels = {"simcse-s1": {"step 0": [0.2, 0.5, 1.0], "step 30": [0.4, 0.7, 1.0]},
              "apincse-s1": {"step 30": [0.1, 0.9, 1.0]}}
    fig = plot_profile_grid(panels)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["simcse-s1", "apincse-s1"]
    assert axes[1].lines[0].get_ydata().tolist() == [0.1, 0.9, 1.0]
    assert axes[1].lines[0].get_color() == axes[0].lines[1].get_color()   # "step 30" keeps its colour
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["step 0", "step 30"]
    assert_drawn(fig)
    _same_bytes_twice(lambda: plot_profile_grid(panels), tmp_path / "profiles")
    from cselab.workbench.plots import plot_layer_profile

    moved = legend_outside(plot_layer_profile({"a": [0.1, 1.0], "b": [0.2, 1.0]}))
    assert moved.axes[0].get_legend() is None
    assert [t.get_text() for t in moved.legends[0].get_texts()] == ["a", "b"]
    assert moved.get_figwidth() == pytest.approx(3.3 + 0.5 + 0.065 * 1)    # widened by the legend: 1-char labels
    from cselab.workbench.plots import plot_similarity_dynamics

    two_panels = legend_outside(plot_similarity_dynamics(make_runs(tmp_path / "runs"), ("pos_cos", "neg_cos")))
    assert [ax.get_legend() for ax in two_panels.axes] == [None, None]
    # once, not per panel: a figure legend, an entry per method (seeds grouped; cselab.workbench.plots.style)
    assert [" ".join(t.get_text().split()) for t in two_panels.legends[0].get_texts()] == [
        "SimCSE (mean, 2 seeds)", "MixCSE (mean, 2 seeds) (= SimCSE in 'positive pairs')"]
    with pytest.raises(ValueError, match="no panels"):
        plot_profile_grid({})


def test_paired_differences_of_single_seeds_speak_of_the_test_pairs_only():
    """Every row n = 1 (the cpu-demo): the note says what the bootstrap bar is, and nothing of
    t-intervals or p-values, which no row has."""
    bootstrap = pd.DataFrame({"group": ["MixCSE", "APINCSE"], "diff": [-0.1, 1.8], "diff_ci_low": [-0.3, 1.2],
                              "diff_ci_high": [0.1, 2.4], "p": [float("nan")] * 2, "paired_n": [1, 1],
                              "interval": ["bootstrap over test pairs"] * 2})
    fig = plot_paired_differences({"STS-B": bootstrap}, baseline="SimCSE")
    note = " ".join(figure_note(fig).split())
    assert note.startswith("n 1 (every row): one seed each, no test; dot: the difference of the two runs")
    assert "t-interval" not in note and "p-value" not in note and "t-test" not in note
    # the interval in numbers beside each row: a bar shorter than its dot still reads
    assert [t.get_text() for t in fig.axes[0].texts] == ["n 1, [\u22120.30, +0.10]", "n 1, [+1.20, +2.40]"]
    bars = [c for c in fig.axes[0].collections if not isinstance(c, PathCollection)]
    assert bars and all(c.get_zorder() > 3 for c in bars)   # drawn over the dots, not hidden under them
    dots = [to_hex(c.get_facecolor()[0]).upper() for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    assert dots == ["#D55E00", "#E69F00"]   # each row in its method's colour
    assert check_figure(fig) == []


def test_paired_differences_show_interval_and_p(tmp_path):
    comparisons = {"task A": compare_to_baseline(paired_frame(), "A", "group", "SimCSE")}
    fig = plot_paired_differences(comparisons, baseline="SimCSE")
    ax = fig.axes[0]
    rows = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert rows == {"MixCSE": 1, "ClusterNS": 0}                 # first group on top; no row for the baseline
    interval = ax.collections[0].get_segments()[0][:, 0]   # MixCSE: 2 ± t(0.975, 2) · 1/√3 = 2 ± 2.484
    assert interval.tolist() == pytest.approx([2 - 2.4841, 2 + 2.4841], abs=1e-3)
    assert [t.get_text() for t in ax.texts] == ["Holm p 0.074, n 3", "n 1: no interval"]   # a family of one: Holm p = p
    assert ax.get_xlabel() == "difference from SimCSE"
    assert_drawn(fig)
    _same_bytes_twice(lambda: plot_paired_differences(comparisons, baseline="SimCSE"), tmp_path / "paired")
    with pytest.raises(ValueError, match="missing column"):
        plot_paired_differences({"x": pd.DataFrame({"group": ["a"]})})


def test_paired_differences_name_their_metric_and_unit_on_an_axis_of_three_ticks_or_more():
    """The compare notebook's sts_vs_baseline and ablation read "difference from SimCSE" alone: the
    axis names the score (task, split, unit) and never has only two ticks."""
    from cselab.workbench.analysis.compare import sts_score_words

    assert sts_score_words(["STSBenchmark"]) == "STS-B test, Spearman ×100"
    assert sts_score_words(["SICKRelatedness"]) == "SICK-R test, Spearman ×100"
    assert sts_score_words(["STS16"]) == "STS16, Spearman ×100"                 # every pair of a year: no split
    assert sts_score_words(None) == "STS avg. (7 tasks), Spearman ×100"
    bootstrap = pd.DataFrame({"group": ["MixCSE", "APINCSE"], "diff": [0.08, 1.87], "diff_ci_low": [-0.02, 1.30],
                              "diff_ci_high": [0.17, 2.43], "p": [float("nan")] * 2, "paired_n": [1, 1],
                              "interval": ["bootstrap over test pairs"] * 2})
    fig = plot_paired_differences({"STS-B, test": bootstrap}, baseline="SimCSE",
                                  metric=sts_score_words(["STSBenchmark"]))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "difference from SimCSE\n(STS-B test, Spearman ×100)"
    low, high = ax.get_xlim()
    assert len([t for t in ax.get_xticks() if low <= t <= high]) >= 3
    assert check_figure(fig) == []


def test_fourteen_classes_get_fourteen_colours():
    colours = distinct_colors(14)
    assert len({to_rgb(c) for c in colours}) == 14
    # the categorical palette (cselab.workbench.plots.palettes.CATEGORICAL_COLOURS: farthest-first, the most distinct first)
    assert distinct_colors(3) == ["#0072B2", "#446600", "#DD0000"] and len(set(distinct_colors(30))) == 30
    frame = pd.DataFrame({"x": np.arange(28.0), "y": np.arange(28.0),
                          "label": [f"class {i:02d}" for i in range(14)] * 2})
    fig = plot_umap_panels({"after": frame}, max_legend=20)
    drawn = {tuple(np.round(c.get_facecolor()[0][:3], 4)) for c in fig.axes[0].collections}
    assert len(drawn) == 14


def test_umap_maps_fit_a_page_with_the_legend_in_a_free_cell():
    frame = pd.DataFrame({"x": np.arange(28.0), "y": np.arange(28.0) % 5,
                          "label": ["EducationalInstitution", "MeanOfTransportation", "Album", "Artist"] * 7})
    frames = {"untuned all-MiniLM-L6-v2, layer-attention pooler": frame, "simcse": frame, "mixcse": frame,
              "apincse-no_ap": frame, "apincse-pooler": frame}
    fig = plot_umap_panels(frames)
    assert fig.get_figwidth() <= 7.2 + 1e-9                                 # a page, three maps a row
    maps = [ax for ax in fig.axes if ax.get_visible()]
    assert len(maps) == 5 and len(fig.axes) == 6                            # the sixth cell holds the legend
    assert [ax.get_title() for ax in maps] == [
        "untuned all-MiniLM-L6-v2,\nlayer-attention pooler", "SimCSE", "MixCSE", "APINCSE-AP", "APINCSE pooler only"]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["Album", "Artist", "Educational institution",
                                                          "Mean of transportation"]   # class names in words
    assert check_figure(fig) == []


def _same_bytes_twice(build, path):
    first = save_figure(build(), path.with_name(path.name + "-1"))
    second = save_figure(build(), path.with_name(path.name + "-2"))
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name
