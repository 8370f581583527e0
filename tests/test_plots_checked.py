"""Every public plot function, drawn from synthetic runs and frames in the cases studies produce —
one seed and several, one sweep value and several, long labels, many runs — passes the figure
checker (``check_figure(fig) == []``): no text on text, no legend on data, no hidden series, no
one-point sweep, no zero-length interval. Degenerate input is refused with one clear line."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from synthetic_runs import make_many_runs, make_run, make_runs

from cselab.workbench.plots import (add_note, check_figure, legend_outside, method_color, plot_ablation_bars,
                          plot_alignment_trajectories, plot_alignment_uniformity, plot_score_points,
                          plot_cap_geometry, plot_grad_norm, plot_lambda_bound, plot_largest_angle,
                          plot_layer_profile, plot_metric_grid, plot_paired_differences, plot_profile_grid,
                          plot_similarity_dynamics, plot_sweep, plot_top4_curve, plot_training_curves,
                          plot_umap_panels, save_figure)
from cselab.workbench.plots.core import PAGE_WIDTH, TooFewPoints, figure_note
from cselab.workbench.plots.similarity import plot_projection_grid, plot_similarity_heatmap
from cselab.model.rundir import read_metrics, read_results
from cselab.workbench.results import compare_to_baseline

LONG = "ClusterNS with a long descriptive name, batch 128"


@pytest.fixture(scope="module")
def run_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return {
        "one run": {"SimCSE": make_run(root / "one" / "simcse", ["simcse"])},
        "two methods × two seeds": make_runs(root / "four"),
        "15 runs": make_many_runs(root / "many"),
        "long labels": make_many_runs(root / "long", seeds=1, long_labels=True),
    }



def _cosines(n: int) -> np.ndarray:
    """The cosine similarities of ``n`` random unit vectors: a heatmap's many values (not 2)."""
    vectors = np.random.default_rng(0).normal(size=(n, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors @ vectors.T

CURVES = {
    "similarity_dynamics": lambda r: plot_similarity_dynamics(r, ("pos_cos", "neg_cos", "mixcse.mixed_cos")),
    "similarity_one_panel": lambda r: plot_similarity_dynamics(r, ("neg_cos",)),
    "similarity_per_run": lambda r: plot_similarity_dynamics(dict(list(r.items())[:1]),
                                                             ("pos_cos", "neg_cos", "mixcse.mixed_cos"),
                                                             per_temperature=True, panels="run"),
    "training_curves": lambda r: plot_training_curves(r, ("stsb_dev",), kind="eval"),
    "largest_angle": lambda r: plot_largest_angle(r),
    "grad_norm": lambda r: plot_grad_norm(r),
    "metric_grid": lambda r: plot_metric_grid(r, ["loss", "loss/info_nce", "sim/pos_cos", "grad/z1_norm"]),
    "probe_grid": lambda r: plot_metric_grid(read_metrics(r, "probe"), ["mean_cos", "largest_angle"], ncols=2),
    "trajectory": lambda r: legend_outside(plot_alignment_uniformity(read_metrics(r, "probe"), trajectory="run",
                                                                     color_by="step")),
    "layer_profile_runs": lambda r: plot_layer_profile(r),
    "trajectories_per_start": lambda r: plot_alignment_trajectories(read_metrics(r, "probe")),
    "score_points_from_runs": lambda r: plot_score_points(
        read_results(r, config_keys=("method",)).rename(columns=lambda c: c.removeprefix("sts/")),
        tasks=["STS12", "STSBenchmark", "avg"], variant="method"),
    "ablation_from_runs": lambda r: plot_ablation_bars(
        read_results(r, config_keys=("method",)).rename(columns=lambda c: c.removeprefix("sts/")), tasks=["STS12", "STS13", "STSBenchmark", "SICKRelatedness",
                                                              "avg"], variant="method"),
}


@pytest.mark.parametrize("case", ["one run", "two methods × two seeds", "15 runs", "long labels"])
@pytest.mark.parametrize("kind", list(CURVES))
def test_every_curve_figure_is_sound(kind, case, run_sets, tmp_path):
    if kind == "score_points_from_runs" and case == "one run":   # one model's points compare with nothing
        with pytest.raises(TooFewPoints, match="one row"):
            CURVES[kind](run_sets[case])
        return
    fig = CURVES[kind](run_sets[case])
    assert check_figure(fig) == []
    if case == "15 runs" and kind in ("similarity_dynamics", "metric_grid", "ablation_from_runs"):
        save_figure(fig, tmp_path / kind, formats=["png"])   # looked at by eye while writing these tests


@pytest.mark.parametrize("case", ["two methods × two seeds", "15 runs", "long labels"])
def test_no_figure_is_wider_than_a_page_and_its_note_overlaps_nothing(case, run_sets):
    """Three panels of 3.3 in would be 9.9 in: they are narrowed to the page (7.2 in), the legend
    that would widen it goes under them, and a note under all of it takes a strip of its own."""
    fig = plot_similarity_dynamics(run_sets[case], ("pos_cos", "neg_cos", "mixcse.mixed_cos"))
    assert fig.get_figwidth() <= PAGE_WIDTH + 1e-9
    height = fig.get_figheight()
    add_note(fig, "Each point: the mean cosine over one training batch (B = 32 sentences) at that step; each line the "
                  "mean of its seeds. " * 2)
    add_note(fig, "A second note goes under the first.")
    assert figure_note(fig).endswith("A second note goes under the first.") and fig.get_figheight() > height
    assert check_figure(fig) == []


def legend_texts(fig) -> list[str]:
    """The entries of the figure's legends and its panels' legends, wrapped lines joined."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]


def test_many_runs_are_grouped_one_entry_and_one_colour_per_method(run_sets):
    fig = plot_similarity_dynamics(run_sets["15 runs"], ("neg_cos",))
    (legend,) = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legend_texts(fig) == [
        "SimCSE (mean, 3 seeds)", "MixCSE (mean, 3 seeds)", "GS-InfoNCE (mean, 3 seeds)", "ClusterNS (mean, 3 seeds)", "APINCSE (mean, 3 seeds)"]
    assert legend.get_title().get_text() == "faint: each seed"
    ax = fig.axes[0]
    faint = [line for line in ax.lines if line.get_alpha() is not None and line.get_alpha() < 1]
    assert len(faint) == 15 and len(ax.lines) == 20                      # 15 seeds + 5 means
    means = [line for line in ax.lines if line.get_label() == "MixCSE (mean, 3 seeds)"]
    assert means[0].get_color() == method_color("mixcse") == "#D55E00"
    seeds = read_metrics(run_sets["15 runs"], "train")
    expected = seeds[seeds["run"].str.startswith("mixcse-")].groupby("step")["sim/neg_cos"].mean()
    assert np.allclose(means[0].get_ydata(), expected)
    # one colour per method in every figure: the trajectories of the same runs
    paths = plot_alignment_uniformity(read_metrics(run_sets["15 runs"], "probe"), trajectory="run")
    (mixcse,) = [line for line in paths.axes[0].lines if line.get_label() == "MixCSE (3 seeds)"]
    assert mixcse.get_color() == "#D55E00"
    assert legend_texts(paths)[:2] == ["SimCSE (3 seeds)", "MixCSE (3 seeds)"]     # a legend entry per method


def test_method_keys_become_display_names(run_sets):
    fig = CURVES["ablation_from_runs"](run_sets["15 runs"])
    assert legend_texts(fig) == ["SimCSE", "MixCSE", "GS-InfoNCE", "ClusterNS", "APINCSE",
                                 "95 % t-interval over seeds (n = 3)"]
    # the methods' scores are 0.5 apart at about 71: bars from zero would look equal, so they are points
    (points,) = [line for line in fig.axes[0].lines if line.get_label() == "APINCSE"]   # its colour in every figure
    assert points.get_color() == "#E69F00" and not fig.axes[0].patches


def test_coincident_series_get_their_own_style_and_say_so(run_sets):
    fig = plot_similarity_dynamics(run_sets["two methods × two seeds"], ("pos_cos", "neg_cos"))
    # the synthetic methods share their positive-pair curve: MixCSE's lies on SimCSE's in that panel
    assert legend_texts(fig) == ["SimCSE (mean, 2 seeds)", "MixCSE (mean, 2 seeds) (= SimCSE in 'positive pairs')"]
    hidden = [line for line in fig.axes[0].lines if line.get_label().startswith("MixCSE")]
    assert hidden[0].get_linestyle() == "--" and hidden[0].get_marker() == "s"   # dots: every short line's
    profile = plot_layer_profile({"BERT": [0.1, 0.5, 1.0], "SimCSE": [0.1, 0.5, 1.0], "MixCSE": [0.2, 0.6, 1.0]})
    assert legend_texts(profile) == ["BERT", "SimCSE (= BERT)", "MixCSE"]
    assert check_figure(profile) == []


def test_integer_quantities_get_integer_ticks(run_sets):
    fig = plot_training_curves(run_sets["one run"], ("loss",))
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks)      # steps: never 17.5
    sweep = plot_sweep(_sweep(["simcse"], [32, 64, 128, 256], 2), "batch_size", "sts_avg")
    ax = sweep.axes[0]
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [32, 64, 128, 256]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["32", "64", "128", "256"]
    clusters = plot_sweep(_sweep(["clusterns"], [16, 32, 48], 1), "clusterns.num_clusters", "sts_avg").axes[0]
    assert clusters.get_xscale() == "linear" and list(clusters.get_xticks()) == [16, 32, 48]


def _sweep(methods, values, seeds) -> pd.DataFrame:
    rows = [{"method": m, "seed": s, "batch_size": v, "clusterns.num_clusters": v, "mixcse.mix_lambda": v,
             "sts_avg": 70 + i + 0.4 * j + 0.3 * s}
            for i, m in enumerate(methods) for j, v in enumerate(values) for s in range(1, seeds + 1)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seeds", [1, 3])
@pytest.mark.parametrize("methods", [["simcse"], ["simcse", "clusterns"], ["simcse", "mixcse", "gs_infonce",
                                                                          "clusterns", "apincse", LONG]])
def test_sweeps_are_sound_with_one_seed_or_several(methods, seeds):
    frame = _sweep(methods, [32, 64, 128], seeds)
    fig = plot_sweep(frame, "batch_size", "sts_avg", hue="method")
    assert check_figure(fig) == []
    texts = legend_texts(fig)
    if seeds == 1:
        assert not fig.axes[0].containers                                 # no whiskers from one seed
        assert not any("interval" in t for t in texts)
    else:   # several curves: in the legend; one: in the note under the panel
        assert "95 % t-interval over seeds (n = 3)" in (texts if len(methods) > 1 else " ".join(figure_note(fig).split()))
        # the whisker is the t-interval: t(0.975, 2) · std / √3 of the three seeds 70.3, 70.6, 70.9
        (bars,) = fig.axes[0].containers[0].lines[2]
        low, high = bars.get_segments()[0][:, 1]
        assert (high - low) / 2 == pytest.approx(4.302653 * 0.3 / np.sqrt(3), rel=1e-5)
    if len(methods) > 1:
        assert "SimCSE" in texts and "ClusterNS" in texts                 # display names, not keys


def test_a_sweep_of_one_value_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^plot_sweep of 'sts_avg' against 'mixcse.mix_lambda': the sweep of "
                                         r"'mixcse.mix_lambda' has 1 value \(0.2\); a sweep or trend needs at least 2"):
        plot_sweep(_sweep(["mixcse"], [0.2], 3), "mixcse.mix_lambda", "sts_avg", hue="method")
    with pytest.raises(ValueError, match="plot_top4_curve .*batch size has 1 value"):
        plot_top4_curve(pd.DataFrame({"batch_size": [64], "top_k_mean": [0.7]}))
    with pytest.raises(ValueError, match="plot_lambda_bound .*λ has 1 value"):
        plot_lambda_bound(pd.DataFrame({"lambda": [0.5], "closer_share": [0.1]}))
    with pytest.raises(ValueError, match="plot_cap_geometry: the dimension d has 1 value"):
        plot_cap_geometry(pd.DataFrame({"d": [16], "omega_deg": [60], "mean_cos": [0.5], "var_cos": [0.1]}))


def test_close_log2_values_share_no_tick():
    # BERT's 768 beside 1024 (the dimensions of MixCSE's spherical cap): two labels a third of an octave apart
    # would collide; d = 768, the width the paper's argument is about, keeps its own, and the axis's end
    # its tick with the label a line lower (the checker finds no overlap)
    d = [16, 64, 256, 768, 1024]
    table = pd.DataFrame({"d": d * 2, "omega_deg": [30] * 5 + [60] * 5,
                          "mean_cos": [0.8, 0.76, 0.75, 0.75, 0.75, 0.33, 0.27, 0.26, 0.25, 0.25],
                          "var_cos": [4e-3, 1e-3, 2.5e-4, 8e-5, 6e-5, 3e-2, 9e-3, 2e-3, 7e-4, 5e-4]})
    fig = plot_cap_geometry(table)
    assert check_figure(fig) == []
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["16", "64", "256", "768", "1024"]
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == 5          # every point is still drawn
    table["d"] = table["d"].replace(768, 512)                        # without 768: the axis's end keeps its tick
    assert [t.get_text() for t in plot_cap_geometry(table).axes[0].get_xticklabels()] == ["16", "64", "256", "512",
                                                                                          "1024"]


def test_a_curve_of_one_recorded_step_is_refused(tmp_path):
    one = make_run(tmp_path / "one-step", ["simcse"], steps=5)            # a single train record, at step 5
    with pytest.raises(ValueError, match=r"plot_training_curves: .* at 1 step\(s\) \(5\); a curve over training "
                                         "needs at least 2"):
        plot_training_curves({"SimCSE": one}, ("loss",))


def _scores(variants, seeds, tasks) -> pd.DataFrame:
    rows = [{"variant": v, "seed": s, **{t: 60 + 2 * i + j + 0.5 * s for j, t in enumerate(tasks)}}
            for i, v in enumerate(variants) for s in range(1, seeds + 1)]
    return pd.DataFrame(rows).drop(columns="seed")


TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]


@pytest.mark.parametrize("seeds", [1, 2])
@pytest.mark.parametrize("variants", [["APINCSE"], ["APINCSE", "w/o l_P", "w/o l_N"],
                                      ["simcse", "mixcse", "gs_infonce", "clusterns", "augmented_positive",
                                       "interlayer_negative"]])
def test_ablation_bars_start_at_zero_and_whiskers_need_two_seeds(variants, seeds):
    fig = plot_ablation_bars(_scores(variants, seeds, TASKS), TASKS)
    ax = fig.axes[0]
    assert check_figure(fig) == []
    assert ax.get_ylim()[0] == 0                                          # bars from zero, never truncated
    assert [t.get_text() for t in ax.get_xticklabels()] == ["STS12", "STS13", "STS14", "STS15", "STS16", "STS-B",
                                                            "SICK-R", "Avg."]
    texts = legend_texts(fig)
    assert bool(ax.containers[len(variants):]) == (seeds > 1)             # whiskers only with 2 seeds
    assert ("95 % t-interval over seeds (n = 2)" in texts) == (seeds > 1)
    assert "interlayer_negative" not in texts and "interlayer negative" not in " ".join(texts) or \
        "APINCSE-AP" in texts
    with pytest.raises(ValueError, match="bars start at 0"):
        plot_ablation_bars(_scores(variants, seeds, TASKS), TASKS, ylim=(50, 90))


def test_point_labels_do_not_overlap():
    names = [f"{m} unsupervised, seed {s}" for m in ("SimCSE", "MixCSE", "ClusterNS") for s in (1, 2)]
    points = pd.DataFrame({"model": names, "alignment": [0.25, 0.251, 0.252, 0.24, 0.241, 0.26],
                           "uniformity": [-2.3, -2.31, -2.29, -2.5, -2.49, -1.2],
                           "sts_avg": [76.3, 76.1, 76.8, 77.6, 77.2, 70.0]})
    for color_by in (None, "sts_avg"):
        assert check_figure(plot_alignment_uniformity(points, label="model", color_by=color_by)) == []


def test_seeds_of_a_model_share_a_shape_and_a_colour_bar_needs_four_values():
    """ClusterNS Fig. 6 with every seed and the untuned backbone: a shape per model named in a legend
    ("SimCSE (3 runs)"), colour the STS average over its 7 values; over 3 values colour carries
    nothing, so each point keeps its method's colour and its label gives the value."""
    points = pd.DataFrame({"model": ["untuned all-MiniLM-L6-v2"] + ["simcse"] * 3 + ["clusterns"] * 3,
                           "alignment": [0.30, 0.166, 0.163, 0.168, 0.159, 0.160, 0.158],
                           "uniformity": [-1.9, -2.61, -2.60, -2.62, -2.55, -2.56, -2.54],
                           "STS Avg": [70.1, 76.1, 76.0, 76.3, 76.4, 76.2, 76.5]})
    fig = plot_alignment_uniformity(points, label="model", color_by="STS Avg")
    assert check_figure(fig) == []
    assert legend_texts(fig) == ["untuned all-MiniLM-L6-v2", "SimCSE (3 runs)", "ClusterNS (3 runs)"]
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "STS Avg"        # the colour bar
    three = plot_alignment_uniformity(points.iloc[[0, 1, 4]], label="model", color_by="STS Avg")
    assert check_figure(three) == [] and len(three.axes) == 1                   # no colour bar over 3 values
    assert sorted(t.get_text() for t in three.axes[0].texts) == ["ClusterNS: 76.4", "SimCSE: 76.1",
                                                                 "untuned all-MiniLM-L6-v2: 70.1"]
    colours = {c.get_label(): tuple((c.get_facecolor() if len(c.get_facecolor()) else c.get_edgecolor())[0][:3])
               for c in three.axes[0].collections}                              # the untuned point is hollow
    assert len(set(colours.values())) == 3                                      # SimCSE and ClusterNS apart
    plain = plot_alignment_uniformity(points, label="model")                    # no colour: methods' colours
    assert check_figure(plain) == [] and legend_texts(plain) == legend_texts(fig)


def test_point_labels_that_cannot_all_be_placed_become_a_legend():
    """Points whose positions move in the third decimal (bf16 against fp32) must not make labels
    collide: six models on one spot beside a seventh far away, with long names, leave no free place
    for every name, so every point is named in a legend by its own marker instead; a sound spread
    keeps its labels at the points."""
    names = [f"model {i}, trained with a rather long run name" for i in range(7)]
    crowded = pd.DataFrame({"model": names, "alignment": [0.25 + 1e-4 * i for i in range(6)] + [0.6],
                            "uniformity": [-2.3 - 1e-4 * i for i in range(6)] + [-1.2]})
    fig = plot_alignment_uniformity(crowded, label="model")
    assert check_figure(fig) == []
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == [] and legend_texts(fig) == names
    for shift in (0.0, 1e-3, 2e-3):   # the same spread, moved a little: labels stay, nothing collides
        spread = pd.DataFrame({"model": names[:3], "alignment": [0.2 + shift, 0.3, 0.4],
                               "uniformity": [-2.5, -2.0 + shift, -1.5]})
        fig = plot_alignment_uniformity(spread, label="model")
        assert check_figure(fig) == [] and sorted(t.get_text() for t in fig.axes[0].texts) == sorted(names[:3])


def test_tick_labels_of_numbers_near_zero_are_thinned_until_they_fit():
    """The tiny model's ℓ_uniform is about −1e-4: at matplotlib's default number of ticks the labels
    (−0.00011, −0.00010, …) overlapped in a 3.3-inch panel, and whether they did depended on the
    third decimal of the numbers (bf16 against fp32). The plot thins them until they fit."""
    points = pd.DataFrame({"model": ["apincse-s1", "simcse-s2", "simcse-s1", "mixcse-s1"],
                           "alignment": [2.47e-5, 2.21e-5, 1.97e-5, 1.96e-5],
                           "uniformity": [-1.14e-4, -0.77e-4, -0.71e-4, -0.725e-4], "STS16": [33.0, 24.0, 28.0, 30.0]})
    for scale in (1.0, 1.003, 0.997):
        fig = plot_alignment_uniformity(points.assign(uniformity=points["uniformity"] * scale), label="model",
                                        color_by="STS16")
        assert check_figure(fig) == []
        assert len([t for t in fig.axes[0].get_xticklabels() if t.get_text()]) >= 2


def test_other_figure_kinds_are_sound():
    top4 = {"SimCSE": pd.DataFrame({"batch_size": [16, 64, 256, 1024], "top_k_mean": [0.6, 0.7, 0.8, 0.85],
                                    "std": [0.05, 0.04, 0.02, 0.01], "k": 4, "n_batches": 8}),
            "BERT": pd.DataFrame({"batch_size": [16, 64, 256, 1024], "top_k_mean": [0.8, 0.85, 0.9, 0.92],
                                  "std": [0.03, 0.02, 0.01, 0.01], "k": 4, "n_batches": 8})}
    figures = {
        "top4 one model": plot_top4_curve(top4["SimCSE"]),
        "top4 two models": plot_top4_curve(top4),
        # ω = 120° and 180° both have mean 0: they coincide and must stay visible
        "cap": plot_cap_geometry(pd.DataFrame({"d": [16, 64, 256] * 3, "omega_deg": [60] * 3 + [120] * 3 + [180] * 3,
                                               "mean_cos": [0.6, 0.55, 0.52] + [0.0] * 6,
                                               "var_cos": [0.02, 0.005, 0.001, 0.05, 0.012, 0.003, 0.06, 0.015,
                                                           0.004]})),
        "lambda bound": plot_lambda_bound({"SimCSE": pd.DataFrame({"lambda": [0.1, 0.5, 0.9],
                                                                   "closer_share": [0.0, 0.1, 0.7]}),
                                           "MixCSE": pd.DataFrame({"lambda": [0.1, 0.5, 0.9],
                                                                   "closer_share": [0.0, 0.2, 0.8]})}),
        "umap": plot_umap_panels({name: pd.DataFrame({"x": np.random.default_rng(i).normal(size=42),
                                                      "y": np.random.default_rng(i + 9).normal(size=42),
                                                      "label": [f"class {c}" for c in range(14)] * 3})
                                  for i, name in enumerate(("before: all-minilm-l6 (cls)", LONG))}, max_legend=20),
        "profile grid": plot_profile_grid({f"{m}-s1": {"step 0": [0.2, 0.5, 1.0], "step 30": [0.4, 0.7, 1.0]}
                                           for m in ("simcse", "mixcse", "apincse", "clusterns")}),
        "heatmap": plot_similarity_heatmap(_cosines(5), [f"sentence number {i} about a long topic" for i in range(5)]),
        "projection grid": plot_projection_grid({f"step {s}": pd.DataFrame({"x": np.arange(6.0) + s, "y": np.arange(6.0),
                                                                            "label": list("ab") * 3})
                                                 for s in (0, 10, 20, 30)}, ncols=2),
    }
    for name, fig in figures.items():
        assert check_figure(fig) == [], name
    assert legend_texts(figures["cap"]) == ["ω = 60°", "ω = 120°", "ω = 180° (= ω = 120° in 'mean of cos θ')"]
    # the whiskers' entry says over how many batches inside its words ("(n = 8)" at its end wrapped alone)
    assert legend_texts(figures["top4 two models"])[-1] == "± 1 std over 8 random batches"


def test_paired_differences_need_two_seeds_and_say_what_the_bars_are():
    frame = pd.DataFrame({"group": ["SimCSE"] * 3 + ["MixCSE"] * 3 + ["ClusterNS"], "seed": [1, 2, 3, 1, 2, 3, 1],
                          "A": [70.0, 71.0, 72.0, 71.0, 73.0, 75.0, 69.5]})
    fig = plot_paired_differences({"STS avg.": compare_to_baseline(frame, "A", "group", "SimCSE")}, baseline="SimCSE")
    assert check_figure(fig) == []
    assert " ".join(figure_note(fig).split()) == (
        "dot: mean paired difference over the seeds both share (n); bar: its 95 % t-interval; p: paired t-test")
    assert [t.get_text() for t in fig.axes[0].texts] == ["Holm p 0.074, n 3", "n 1: no interval"]   # a family of one: Holm p = p
    single = frame[frame["seed"] == 1]
    with pytest.raises(ValueError, match=r"plot_paired_differences: every group shares one seed .* \(n = 1\)"):
        plot_paired_differences({"STS avg.": compare_to_baseline(single, "A", "group", "SimCSE")})


def test_paired_differences_of_eight_panels_fit_a_page_with_p_as_filled_or_hollow_dots():
    """cpu-compare's figure: the STS average and 7 tasks, six methods, 3 seeds. With the p written
    beside each row it was 6.0 x 12.8 in; here four panels a row fit a page, and a filled dot is a
    Holm-adjusted p below 0.05, a hollow one is not (the note says so, and over how many seeds)."""
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_hex

    from cselab.workbench.comparisons import difference_panels
    from cselab.workbench.results import paired_tests

    methods = ["MixCSE", "GS-InfoNCE", "ClusterNS", "APINCSE", "ESimCSE", "SimCSE++"]
    tasks = ["Avg.", "STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R"]
    # MixCSE +1.0 at every seed (p of the paired t-test 0 before rounding: detected); the others
    # differ by +1, -1, +0.5 over the seeds (mean +0.17, p 0.76: not detected)
    rows = [{"group": "SimCSE", "seed": s, **{t: 70.0 + s for t in tasks}} for s in (1, 2, 3)]
    rows += [{"group": "MixCSE", "seed": s, **{t: 70.0 + s + 1.0 + 0.01 * s for t in tasks}} for s in (1, 2, 3)]
    rows += [{"group": m, "seed": s, **{t: 70.0 + s + d for t in tasks}}
             for m in methods[1:] for s, d in zip((1, 2, 3), (1.0, -1.0, 0.5))]
    frame = pd.DataFrame(rows)
    panels = difference_panels(paired_tests(frame, tasks, baseline="SimCSE"))   # Holm over each method's 8
    assert panels["Avg."]["p_holm"].iloc[0] < 0.05 < panels["Avg."]["p_holm"].iloc[1]
    fig = plot_paired_differences(panels, baseline="SimCSE")
    assert check_figure(fig) == []
    assert fig.get_figwidth() <= PAGE_WIDTH + 1e-9 and fig.get_figheight() <= 9.0
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 8 and len({round(ax.get_position().y0, 3) for ax in visible}) == 2
    assert all(len(ax.texts) == 0 for ax in visible)   # no words beside the rows
    dots = [c for c in visible[0].collections if isinstance(c, PathCollection)]
    faces = [to_hex(d.get_facecolor()[0]).upper() for d in dots]
    assert faces[0] == "#D55E00" and faces[1:] == ["#FFFFFF"] * 5   # MixCSE filled in its colour; the rest hollow
    assert " ".join(figure_note(fig).split()) == (
        "dot: mean paired difference Δ over the seeds both share (n = 3 seeds in every row); bar: its 95 % "
        "t-interval; filled dot: Holm-adjusted p of the paired t-test < 0.05 (Holm over each row's 8 scores), "
        "hollow: not detected")
    by_task = difference_panels(paired_tests(frame, tasks, baseline="SimCSE", family="task"))
    assert "(Holm over each panel's 6 rows)" in " ".join(figure_note(plot_paired_differences(by_task)).split())


def test_score_points_of_the_papers_eight_columns_wrap_into_rows_within_a_page():
    """APINCSE Fig. 2 has 7 STS tasks and their average: eight panels in one row were 0.6 in each
    and their x labels collided (the checker said so); they wrap into two rows of four."""
    tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]
    rows = [{"variant": v, **{t: 75 + 0.1 * i + 0.05 * s for i, t in enumerate(tasks)}}
            for v in ("APINCSE", "APINCSE-AP", "APINCSE-IN", "APINCSE-bs64") for s in range(3)]
    fig = plot_score_points(pd.DataFrame(rows), tasks=tasks, variant="variant", xlabel="Spearman ×100")
    assert check_figure(fig) == []
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 8 and len({round(ax.get_position().y0, 3) for ax in visible}) == 2
    assert fig.get_figwidth() <= 7.2 + 1e-9


def test_score_points_whose_seeds_agree_exactly_say_so_instead_of_a_zero_length_bar():
    """Found with the suite run as a CPU without native bf16 runs it: two seeds of a tiny model
    scored the same Tweet accuracy, and their zero-width t-interval was drawn as a zero-length bar,
    which the checker reads as an interval from one value. Such a row gets no bar and the note
    names it; rows whose seeds differ keep theirs."""
    rows = [{"variant": "SimCSE", "DBpedia": 40.0 + s, "Tweet": 55.0} for s in range(2)] + \
           [{"variant": "MixCSE", "DBpedia": 41.0, "Tweet": 56.0 + s} for s in range(2)]
    fig = plot_score_points(pd.DataFrame(rows), tasks=["DBpedia", "Tweet"], variant="variant")
    assert check_figure(fig) == []
    bars = [len(ax.containers) for ax in fig.axes if ax.get_visible()]
    assert bars == [1, 1]   # DBpedia: SimCSE's bar (MixCSE's seeds agree), Tweet: MixCSE's
    note = " ".join(figure_note(fig).split())
    assert "No bar where every one of a row's seeds scored the same (a zero-width interval): MixCSE on DBpedia, SimCSE on Tweet." \
        in note


def test_trajectories_a_hair_apart_are_told_apart():
    """Two runs whose (ℓ_uniform, ℓ_align) paths differ in the third decimal lie on each other as
    drawn: the later one gets its own dashes and markers (found on a CPU without native bf16, where
    the geometry notebook's fp32 probes of SimCSE and MixCSE came out that close)."""
    from cselab.workbench.plots import plot_alignment_trajectories

    steps = [0, 2, 4, 6]
    u = [-1.0, -1.4, -1.7, -2.0]
    a = [0.10, 0.14, 0.17, 0.20]
    probes = pd.DataFrame({"run": ["simcse-s1"] * 4 + ["mixcse-s1"] * 4, "step": steps * 2,
                           "uniformity": u + [x + 1e-3 for x in u], "alignment": a + [y - 1e-4 for y in a]})
    fig = plot_alignment_trajectories(probes)
    assert check_figure(fig) == []
    (mixcse,) = [line for line in fig.axes[0].lines if "mixcse" in line.get_label().lower()]
    assert mixcse.get_linestyle() not in ("-", "solid")


def test_points_on_one_spot_are_drawn_open_and_ringed_so_none_is_hidden():
    """Two models measured alike (APINCSE and APINCSE-AP in the demo, 0.0007 apart) put one filled
    marker on the other: in the legend mode every marker is open and the second of a cluster twice
    as wide, ringing the first; markers apart from every other keep their size."""
    names = [f"model {i}, trained with a rather long run name" for i in range(7)]
    crowded = pd.DataFrame({"model": names, "alignment": [0.25 + 1e-4 * i for i in range(6)] + [0.6],
                            "uniformity": [-2.3 - 1e-4 * i for i in range(6)] + [-1.2]})
    fig = plot_alignment_uniformity(crowded, label="model")
    points = [c for c in fig.axes[0].collections if len(c.get_offsets()) == 1]
    assert len(points) == 7
    assert all(c.get_facecolor().size == 0 or c.get_facecolor()[0][3] == 0 for c in points)   # open
    sizes = [float(c.get_sizes()[0]) for c in points]
    assert sizes[1] == 4 * sizes[0] and sizes[2] == 16 * sizes[0] and sizes[6] == sizes[0]
    legend = fig.legends[0]
    assert {float(h.get_sizes()[0]) for h in legend.legend_handles} == {34.0}   # one size in the legend
    apart = pd.DataFrame({"model": names[:3], "alignment": [0.2, 0.3, 0.4], "uniformity": [-2.5, -2.0, -1.5]})
    kept = [c for c in plot_alignment_uniformity(apart, label="model").axes[0].collections]
    assert all(c.get_facecolor()[0][3] == 1 for c in kept)   # labelled beside: filled, as before
