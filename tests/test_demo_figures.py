"""What the cpu-demo's analysis figures were missing: intervals over K-means starts, a separation
number on each map, log axes and named coincidences, small multiples, statistics in panels by what
they are about, untuned points in shapes no method has, split layer profiles, whole sentence labels,
and the equality claims that name their panels."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection
from scipy import stats
from synthetic_runs import write_run

from cselab.workbench.analysis.compare import clustering_start_frame
from cselab.workbench.analysis.logged import method_statistic_words, shared_beginnings
from cselab.workbench.analysis.umap import knn_accuracy
from cselab.workbench.plots import (check_figure, plot_alignment_uniformity, plot_grad_norm, plot_layer_profile,
                                    plot_score_points, plot_similarity_dynamics, plot_statistic_families,
                                    statistic_family_note)
from cselab.workbench.plots.check import equality_claim
from cselab.workbench.plots.comparisons import draw_label_maps
from cselab.workbench.plots.core import figure_note, new_figure
from cselab.workbench.plots.alignment_uniformity import UNTUNED_MARKERS
from cselab.workbench.plots.statistic_families import statistic_families
from cselab.workbench.plots.rc import PAGE_WIDTH
from cselab.workbench.plots.similarity import plot_similarity_heatmap, row_label
from cselab.workbench.plots.style import dashed_controls_note, separate_coincident


# ------------------------------------------------------------------ clustering: K-means starts
def _clustering_result(ami_runs, acc_runs, seeds=(0, 1, 2)):
    return {"details": {"DBpedia": {"ami": {"runs": ami_runs}, "acc": {"runs": [0.5] * len(seeds)}},
                        "Tweet": {"acc": {"runs": acc_runs}, "ami": {"runs": [0.1] * len(seeds)}}},
            "seeds": list(seeds)}


def test_clustering_start_frame_has_a_row_per_start():
    results = {"simcse": _clustering_result([0.30, 0.32, 0.34], [0.60, 0.61, 0.62]),
               "mixcse": _clustering_result([0.40, 0.20, 0.30], [0.50, 0.50, 0.50])}
    frame = clustering_start_frame(results, {"DBpedia": "ami", "Tweet": "acc"})
    assert list(frame.columns) == ["run", "kmeans_seed", "DBpedia", "Tweet"]
    assert frame["run"].tolist() == ["simcse"] * 3 + ["mixcse"] * 3 and frame["kmeans_seed"].tolist() == [0, 1, 2] * 2
    assert frame["DBpedia"].tolist() == pytest.approx([30, 32, 34, 40, 20, 30])   # ×100, each start alone
    with pytest.raises(ValueError, match=r"no clustering result for \['AgNews'\]"):
        clustering_start_frame(results, {"AgNews": "acc"})


def test_score_points_over_kmeans_starts_draw_their_t_interval_and_say_over_what():
    rows = [{"group": "SimCSE", "DBpedia": v} for v in (40.0, 42.0, 44.0)] + \
           [{"group": "MixCSE", "DBpedia": v} for v in (30.0, 50.0, 40.0)]
    refs = pd.DataFrame([{"group": "untuned all-MiniLM-L6-v2", "DBpedia": v} for v in (35.0, 36.0, 37.0)])
    fig = plot_score_points(pd.DataFrame(rows), ["DBpedia"], variant="group", references=refs,
                            over="K-means starts")
    ax = fig.axes[0]
    half = stats.t.ppf(0.975, 2) * 2.0 / np.sqrt(3)   # sd 2 of (40, 42, 44), n 3: 4.97
    spans = {round(float(seg[:, 0].mean()), 3): tuple(seg[:, 0]) for c in ax.containers
             for seg in c.lines[2][0].get_segments()}
    assert spans[42.0] == pytest.approx((42 - half, 42 + half), abs=1e-3)
    assert len(ax.containers) == 3   # SimCSE, MixCSE and the untuned backbone's starts: each a bar
    dots = max(c.get_zorder() for c in ax.collections if isinstance(c, PathCollection))
    assert all(c.lines[2][0].get_zorder() > dots for c in ax.containers)   # drawn over the dots, never hidden
    note = " ".join(figure_note(fig).split())
    assert "the mean over a row's K-means starts; bar: its 95 % t-interval over them (n = 3)" in note
    assert check_figure(fig) == []


# ------------------------------------------------------------------ maps: a separation number
def test_knn_accuracy_by_hand():
    x = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    assert knn_accuracy(x, ["a", "a", "b", "b"], k=1) == 1.0   # each text's nearest shares its class
    assert knn_accuracy(x, ["a", "b", "a", "b"], k=1) == 0.0   # each text's nearest is of the other class
    rng = np.random.default_rng(0)
    blobs = np.concatenate([rng.normal([5, 0, 0], 0.1, (20, 3)), rng.normal([0, 5, 0], 0.1, (20, 3))])
    assert knn_accuracy(blobs, ["a"] * 20 + ["b"] * 20) == 1.0
    with pytest.raises(ValueError, match=r"k must be in \[1, 3\]"):
        knn_accuracy(x, ["a", "a", "b", "b"], k=4)


def test_maps_carry_their_number_and_each_class_a_shape():
    frame = pd.DataFrame({"x": range(6), "y": [0, 1, 0, 1, 0, 1], "label": ["A", "B", "C"] * 2})
    frame.attrs.update(knn_accuracy=0.6234, knn_k=5)
    fig = draw_label_maps({"SimCSE": frame}, ["SimCSE"])
    assert fig.axes[0].get_title() == "SimCSE\n5-NN accuracy 0.62"
    points = [c for c in fig.axes[0].collections if isinstance(c, PathCollection)]
    assert len({tuple(np.round(c.get_paths()[0].vertices.ravel()[:6], 3)) for c in points}) == 3   # three shapes


# ------------------------------------------------------------------ gradient norms
def _runs(tmp_path, values: dict[str, list[float]], key: str = "grad/z1_norm", method: str = "simcse",
          extra: dict | None = None, config: dict | None = None):
    runs = {}
    for label, series in values.items():
        records = [{"kind": "train", "step": step, key: v, "grad/z2_norm": v, "sim/pos_cos": 0.9 - 0.01 * step,
                    "sim/neg_cos": 0.5 - 0.02 * step, **(extra or {})}
                   for step, v in zip((1, 2, 4, 6, 8), series)]
        runs[label] = write_run(tmp_path / label, {"method": method, "seed": 42, "temperature": 0.05, "batch_size": 32,
                                                   **(config or {})}, records)
    return runs


def test_gradient_norms_get_a_log_axis_where_they_span_ten_times(tmp_path):
    wide = _runs(tmp_path / "a", {"simcse": [0.05, 0.04, 0.03, 0.02, 0.01], "mixcse": [0.004, 0.003, 0.002, 0.001, 0.001]})
    fig = plot_grad_norm(wide)
    assert [ax.get_yscale() for ax in fig.axes] == ["log", "log"] and "log scale" in fig.axes[0].get_ylabel()
    narrow = _runs(tmp_path / "b", {"simcse": [0.05, 0.04, 0.03, 0.03, 0.03], "mixcse": [0.04, 0.03, 0.03, 0.03, 0.03]})
    assert [ax.get_yscale() for ax in plot_grad_norm(narrow).axes] == ["linear", "linear"]


def test_shared_beginnings_names_runs_whose_lines_lie_on_each_other():
    frame = pd.DataFrame([{"run": run, "step": step, "g": v} for run, series in {
        "simcse": [1.0, 0.8, 0.6, 0.5], "clusterns": [1.0, 0.8, 0.7, 0.3], "gs": [1.004, 0.801, 0.5, 0.5],
        "mixcse": [3.0, 2.0, 1.0, 1.0]}.items() for step, v in zip((1, 2, 4, 6), series)])
    # clusterns agrees with simcse up to step 2 (0.7 against 0.6 at step 4), gs within 1 % up to step 2
    assert shared_beginnings(frame, "g") == [(["simcse", "clusterns", "gs"], 2.0)]
    assert shared_beginnings(frame[frame["run"] != "gs"], "g", rel=0.2) == [(["simcse", "clusterns"], 4.0)]


def test_the_dashed_control_is_explained():
    assert dashed_controls_note(["SimCSE", "APINCSE"]) == ""
    assert dashed_controls_note(["SimCSE", "APINCSE pooler only"]).startswith(
        "Dashed: APINCSE pooler only, the ablation's control")


# ------------------------------------------------------------------ similarity, small multiples
def test_all_runs_as_small_multiples_fit_a_page(tmp_path):
    runs = _runs(tmp_path, {f"run{i}": [0.01] * 5 for i in range(8)})
    fig = plot_similarity_dynamics(runs, ["pos_cos", "neg_cos"], panels="run", ncols=4)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 8 and fig.get_figwidth() <= PAGE_WIDTH + 1e-6
    assert len({round(ax.get_position().x0, 3) for ax in visible}) == 4   # four a row
    assert all(len(ax.get_lines()) == 2 for ax in visible)
    assert check_figure(fig) == []


# ------------------------------------------------------------------ a run's statistics by family
def test_statistics_in_panels_by_what_they_are_about_with_the_start_threshold(tmp_path):
    extra = {"sim/clusterns.hard_neg_cos": 0.5, "sim/clusterns.inter_centroid_cos": 0.8,
             "sim/clusterns.false_neg_cos": 0.4, "sim/clusterns.batch_cos": 0.45}
    runs = _runs(tmp_path, {"clusterns": [0.01] * 5}, method="clusterns", extra=extra,
                 config={"clusterns": {"start_threshold": 0.5, "num_clusters": 16}})
    stats_ = ["pos_cos", "neg_cos", "clusterns.hard_neg_cos", "clusterns.inter_centroid_cos", "clusterns.false_neg_cos",
              "clusterns.batch_cos"]
    families = statistic_families(stats_)
    assert families == {"pairs the loss contrasts": ["pos_cos", "neg_cos", "clusterns.hard_neg_cos"],
                        "clusters": ["clusterns.inter_centroid_cos", "clusterns.false_neg_cos"],
                        "all pairs of the batch": ["clusterns.batch_cos"]}
    fig = plot_statistic_families(runs, stats_)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [" ".join(ax.get_title().split()) for ax in axes] == list(families)
    assert [len([ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]) for ax in axes] == [3, 2, 1]
    threshold = [ln for ln in axes[2].get_lines() if ln.get_linestyle() == ":"]
    assert len(threshold) == 1 and threshold[0].get_ydata()[0] == 0.5
    assert "σ = 0.5" in statistic_family_note(runs, stats_)
    assert check_figure(fig) == []


def test_method_statistics_say_out_of_how_many_and_leave_the_fill_ramp_out(tmp_path):
    extra = {"sim/clusterns.nonempty_clusters": 12}
    runs = _runs(tmp_path, {"clusterns": [0.01] * 5}, method="clusterns", extra=extra,
                 config={"clusterns": {"num_clusters": 16}})
    queue = write_run(tmp_path / "apincse", {"method": ["augmented_positive"], "seed": 42},
                      [{"kind": "train", "step": s, "sim/augmented_positive.queue_fill": f,
                        "sim/augmented_positive.self_weight": 0.13} for s, f in ((1, 0.25), (2, 0.5), (4, 1.0), (6, 1.0))])
    titles, notes = method_statistic_words({**runs, "apincse": queue},
                                           ["clusterns.nonempty_clusters", "augmented_positive.queue_fill",
                                            "augmented_positive.self_weight"])
    assert titles["clusterns.nonempty_clusters"] == "non-empty clusters (of\u00a0K\u00a0=\u00a016)"   # wraps whole
    assert "augmented_positive.queue_fill" not in titles
    assert notes == ["Neighbour queue fill: not drawn (a ramp to 1 set by the queue's size and the batch size); "
                     "full from step 4 in APINCSE."]


# ------------------------------------------------------------------ alignment–uniformity points
def test_untuned_points_are_hollow_in_shapes_no_method_has():
    points = pd.DataFrame({"run": ["simcse", "mixcse", "gs_infonce", "clusterns", "untuned all-MiniLM-L6-v2, [CLS]",
                                   "untuned all-MiniLM-L6-v2, layer-attention pooler"],
                           "alignment": [0.2, 0.25, 0.3, 0.35, 0.5, 0.55], "uniformity": [-2.0, -2.2, -1.8, -2.4, -1.0, -1.2]})
    fig = plot_alignment_uniformity(points, label="run")
    ax = fig.axes[0]
    shapes = {}
    for c in ax.collections:
        if isinstance(c, PathCollection) and len(c.get_offsets()) == 1:
            shapes[c.get_label()] = (tuple(np.round(c.get_paths()[0].vertices.ravel(), 3)), c.get_facecolor())
    untuned = {k: v for k, v in shapes.items() if k.startswith("untuned")}
    trained = {k: v for k, v in shapes.items() if not k.startswith("untuned")}
    assert len(untuned) == 2 and len(trained) == 4
    assert not {v[0] for v in untuned.values()} & {v[0] for v in trained.values()}   # no shared shape
    assert all(len(face) == 0 or face[0][3] == 0 for _, face in untuned.values())   # hollow
    # ClusterNS keeps its own ◆ beside an untuned backbone (it became a square: "D" was the first
    # untuned shape), as every method keeps the marker of the one-place encoding
    from cselab.workbench.plots.palettes import METHOD_MARKERS, NON_METHOD_MARKERS
    from cselab.workbench.plots.style import method_marker

    def shape_of(marker: str) -> tuple:
        _, (reference,) = new_figure()
        drawn = reference.scatter([0], [0], marker=marker)
        return tuple(np.round(drawn.get_paths()[0].vertices.ravel(), 3))

    for name in ("SimCSE", "MixCSE", "GS-InfoNCE", "ClusterNS"):
        assert shapes[name][0] == shape_of(method_marker(name)), name
    assert method_marker("ClusterNS") == "D"
    assert not set(UNTUNED_MARKERS) & (set(METHOD_MARKERS) | set(NON_METHOD_MARKERS.values()))


# ------------------------------------------------------------------ layer profiles
def test_profiles_far_from_the_untuned_one_get_their_own_panel_at_one_scale():
    profiles = {"untuned all-MiniLM-L6-v2": [0.62, 0.65, 0.66, 1.0],
                "simcse": [0.53, 0.56, 0.57, 1.0], "mixcse": [0.535, 0.561, 0.572, 1.0]}
    fig = plot_layer_profile(profiles)
    left, right = [ax for ax in fig.axes if ax.get_visible()][:2]
    assert [ln.get_label() for ln in left.get_lines()] == ["untuned all-MiniLM-L6-v2"]
    assert np.diff(left.get_ylim()) == pytest.approx(np.diff(right.get_ylim()))   # one scale
    assert right.get_ylim()[1] < 0.6 < left.get_ylim()[0]   # no empty gap in either
    together = plot_layer_profile({"simcse": [0.53, 0.56, 1.0], "mixcse": [0.54, 0.57, 1.0]})
    assert len([ax for ax in together.axes if ax.get_visible()]) == 1


def test_layer_profiles_of_best_checkpoints_say_the_step_of_each(tmp_path):
    """geometry's layer_cls_similarity put the best/ models of runs side by side whose best/ came from
    steps 8, 12 and 16 without saying so: the words name each run's step, grouped."""
    from cselab.workbench.analysis.logged import best_checkpoint_words

    def run(label: str, best: int, steps: int = 16, method: str = "simcse"):
        return write_run(tmp_path / label, {"method": method, "seed": 42}, [],
                         results={"steps": steps, "best_step": best, "select_by": "stsb_dev"})

    runs = {"simcse": run("simcse", 16), "mixcse": run("mixcse", 16, method="mixcse"),
            "apincse": run("apincse", 8), "apincse-no_in": run("apincse-no_in", 8), "clusterns": run("clusterns", 12)}
    assert best_checkpoint_words(runs) == ("best/ (each run's best STS-B dev) from different steps: step 16 of 16 "
                                           "(SimCSE, MixCSE), step 8 (APINCSE, APINCSE-IN), step 12 (ClusterNS)")
    assert best_checkpoint_words({k: runs[k] for k in ("simcse", "mixcse")}) == "best/ of every run: step 16 of 16"


def test_a_figure_of_one_run_per_variant_warns_on_its_face():
    """paper_apincse's Fig. 3 on the demo drew one seed, APINCSE above SimCSE at every layer, while the
    record's 5–6 seeds put it below: the figure says it is one seed above its panels, not in a note."""
    from cselab.workbench.paper_tables import one_run_warning
    from cselab.workbench.plots import add_warning
    from cselab.workbench.plots.core import figure_warning

    one = {"SimCSE": {"simcse": "a"}, "APINCSE": {"apincse": "b"}, "ClusterNS": {"c1": "c", "c2": "d"}}
    words = one_run_warning(one, ["APINCSE", "SimCSE"])
    assert words == ("One seed: each trained line is one run. Another seed may order them otherwise; the reading "
                     "over seeds is the record's (docs/cpu-papers.md).")
    several = {"SimCSE": {f"s{i}": "x" for i in range(5)}, "APINCSE": {f"a{i}": "x" for i in range(6)}}
    assert "each trained line is the first of its 5–6 seeds' runs." in one_run_warning(several)
    fig = plot_layer_profile({"untuned all-MiniLM-L6-v2": [0.62, 0.65, 0.66, 1.0],
                              "simcse": [0.53, 0.56, 0.57, 1.0], "apincse": [0.54, 0.57, 0.58, 1.0]})
    add_warning(fig, words)
    assert figure_warning(fig) == words
    assert " ".join(fig.get_suptitle().split()) == words and fig._suptitle.get_fontweight() == "bold"
    assert check_figure(fig) == []


# ------------------------------------------------------------------ heat-map labels
def test_row_labels_are_whole_sentences_where_the_rows_hold_them():
    assert row_label(2, "Someone plays a musical instrument.", 32, 3) == "2. Someone plays a musical\ninstrument."
    assert row_label(1, "word " * 40, 20, 2).count("\n") == 1 and row_label(1, "word " * 40, 20, 2).endswith("…")
    sentences = ["A man is playing a guitar.", "Someone plays a musical instrument.", "A woman is slicing an onion.",
                 "The stock market fell sharply today."]
    cosines = np.array([[1.0, 0.81, 0.12, 0.03], [0.81, 1.0, 0.18, 0.07], [0.12, 0.18, 1.0, 0.05],
                        [0.03, 0.07, 0.05, 1.0]])                     # a colour scale over more than 3 values
    fig = plot_similarity_heatmap(cosines, sentences, title="SimCSE, best")
    labels = [" ".join(t.get_text().split()) for t in fig.axes[0].get_yticklabels()]
    assert labels == [f"{i + 1}. {s}" for i, s in enumerate(sentences)]
    assert check_figure(fig) == []


# ------------------------------------------------------------------ equality claims name their panels
def test_an_equality_in_some_panels_names_them_and_the_checker_reads_the_names():
    fig, axes = new_figure(3, panel_size=(2.4, 2.0))
    x = np.arange(5)
    for ax, title, shift in zip(axes, ("angle", "anisotropy", "uniformity"), (0.0, 0.0, 0.5)):
        ax.plot(x, x ** 1.5, label="SimCSE")
        ax.plot(x, x ** 1.5 + shift, label="GS-InfoNCE")
        ax.set_title(title)
    separate_coincident(axes)
    label = [ln.get_label() for ln in axes[0].get_lines()][1]
    assert label == "GS-InfoNCE (= SimCSE in 'angle' and 'anisotropy')"
    assert equality_claim(label) == ("GS-InfoNCE", "SimCSE", ("angle", "anisotropy"))
    assert not [p for p in check_figure(fig) if "says it equals" in p]
    for ax in axes:   # planted: the claim names a panel where the two differ
        ax.get_lines()[1].set_label("GS-InfoNCE (= SimCSE in 'angle' and 'uniformity')")
    assert [p for p in check_figure(fig) if "says it equals" in p and "differ" in p]


# ------------------------------------------------------------------ snapshot maps fitted together
def test_aligned_umap_snapshot_maps_keep_every_point_in_place():
    """Two snapshots of the same 110 texts whose embeddings barely moved: maps fitted together and
    aligned put every point where it was (a Procrustes disparity near 0); the second map is no
    mirrored or rearranged layout of the first."""
    from scipy.spatial import procrustes

    from cselab.workbench.neighbours import project_snapshots

    rng = np.random.default_rng(3)
    centres = rng.normal(size=(5, 16)) * 4
    first = np.concatenate([c + rng.normal(size=(22, 16)) for c in centres])
    second = first + 0.05 * rng.normal(size=first.shape)
    coords, used = project_snapshots({"step 0": first, "step 4": second}, method="umap", align="aligned_umap")
    assert used == "umap" and coords["step 0"].shape == (110, 2)
    assert procrustes(coords["step 4"], coords["step 0"])[2] < 0.05
    # aligned onto the last map already: no further rotation brings them closer than they stand
    gap = np.linalg.norm(coords["step 0"] - coords["step 4"], axis=1).mean()
    assert gap < 0.25 * coords["step 4"].std(axis=0).mean()
