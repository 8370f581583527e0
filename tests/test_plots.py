"""Every plotting function on synthetic run directories / frames: it draws what it is given, and
saving the same figure twice (rebuilt from scratch) writes identical PNG and PDF bytes without
dates or software versions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from synthetic_runs import make_run, make_runs

from cselab.model.rundir import read_metrics, read_results
from cselab.workbench.plots.core import figure_note
from cselab.workbench.plots import (plot_ablation_bars, plot_alignment_uniformity, plot_cap_geometry, plot_grad_norm,
                          plot_lambda_bound, plot_largest_angle, plot_layer_profile, plot_similarity_dynamics,
                          plot_sweep, plot_top4_curve, plot_training_curves, plot_umap_panels, save_figure,
                          check_figure)


@pytest.fixture
def runs(tmp_path):
    return make_runs(tmp_path / "runs")


def _sweep_frame() -> pd.DataFrame:
    return pd.DataFrame({"batch_size": [32, 32, 64, 64, 128, 128] * 2, "seed": [1, 2] * 6,
                         "method": ["simcse"] * 6 + ["clusterns"] * 6,
                         "sts_avg": [75.1, 75.5, 76.0, 76.4, 75.8, 75.2, 76.3, 76.9, 77.5, 77.1, 77.0, 76.6]})


BUILDERS = {
    "similarity_dynamics": lambda r: plot_similarity_dynamics(r, ("pos_cos", "neg_cos", "mixcse.mixed_cos")),
    "similarity_per_temperature": lambda r: plot_similarity_dynamics(
        {k: r[k] for k in ("mixcse-s1",)}, ("pos_cos", "neg_cos", "mixcse.mixed_cos"), per_temperature=True,
        panels="run"),
    "mixcse_scores_frame": lambda r: plot_similarity_dynamics(
        pd.DataFrame({"step": [0, 100, 200], "positive": [18.0, 17.5, 17.9], "random_negative": [8.0, 4.0, 3.0],
                      "mixed_negative": [12.0, 10.0, 9.5]}), ("positive", "random_negative", "mixed_negative"),
        panels="run", ylabel="cos / τ"),
    "training_curves": lambda r: plot_training_curves(r, ("stsb_dev",), kind="eval"),
    "largest_angle": lambda r: plot_largest_angle(r),
    "grad_norm": lambda r: plot_grad_norm(r),
    "alignment_uniformity_points": lambda r: plot_alignment_uniformity(
        pd.DataFrame({"run": ["SimCSE", "ClusterNS", "BERT"], "alignment": [0.25, 0.22, 0.05],
                      "uniformity": [-2.3, -2.5, -1.1], "sts_avg": [76.3, 77.6, 56.7]}), label="run",
        color_by="sts_avg"),
    "alignment_uniformity_trajectory": lambda r: plot_alignment_uniformity(
        read_metrics(r, "probe"), trajectory="run", color_by="step"),
    "layer_profile_runs": lambda r: plot_layer_profile(r),
    "layer_profile_dict": lambda r: plot_layer_profile({"BERT": [0.1, 0.3, 0.5, 1.0], "SimCSE": [0.2, 0.5, 0.8, 1.0]}),
    "sweep": lambda r: plot_sweep(_sweep_frame(), "batch_size", "sts_avg", hue="method", logx=True),
    "ablation_bars": lambda r: plot_ablation_bars(
        read_results(r).rename(columns=lambda c: c.removeprefix("sts/")), tasks=["STS12", "STSBenchmark", "avg"],
        variant="method"),
    "top4_curve": lambda r: plot_top4_curve({"SimCSE": pd.DataFrame(
        {"batch_size": [16, 64, 256], "top_k_mean": [0.6, 0.7, 0.8], "std": [0.05, 0.04, 0.02], "k": 4})}),
    "cap_geometry": lambda r: plot_cap_geometry(pd.DataFrame(
        {"d": [16, 256, 16, 256], "omega_deg": [60, 60, 180, 180], "mean_cos": [0.6, 0.55, 0.0, 0.0],
         "var_cos": [0.02, 0.003, 0.06, 0.004]})),
    "lambda_bound": lambda r: plot_lambda_bound(pd.DataFrame({"lambda": [0.1, 0.5, 0.9],
                                                              "closer_share": [0.0, 0.1, 0.7]})),
    "umap_panels": lambda r: plot_umap_panels({
        name: pd.DataFrame({"x": np.linspace(0, 1, 9) * (i + 1), "y": np.cos(np.arange(9) + i), "label": list("abc") * 3})
        for i, name in enumerate(("before", "after"))}),
}


def assert_drawn(fig: Figure) -> None:
    """Every data panel shows data (lines, points or bars) and says what it shows (a title or axis
    labels); colour bars are not data panels."""
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
    assert panels
    for ax in panels:
        artists = len(ax.lines) + len(ax.collections) + len(ax.patches)
        assert artists > 0, f"empty panel {ax.get_title()!r}"
        assert ax.get_title() or ax.get_ylabel(), "a panel that does not say what it shows"


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_each_figure_saves_identical_bytes_twice(kind, runs, tmp_path):
    files = []
    for attempt in range(2):
        fig = BUILDERS[kind](runs)
        assert isinstance(fig, Figure)
        assert_drawn(fig)
        files.append(save_figure(fig, tmp_path / f"try{attempt}" / kind))
    for first, second in zip(*files):
        assert first.read_bytes() == second.read_bytes(), first.name
    png, pdf = (f.read_bytes() for f in files[0])
    assert png.startswith(b"\x89PNG") and b"Software" not in png and b"matplotlib" not in png.lower()
    assert pdf.startswith(b"%PDF") and b"CreationDate" not in pdf and b"Producer" not in pdf


def legend_texts(fig) -> list[str]:
    """The entries of the figure's legends and of its panels' legends (wrapped lines joined)."""
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]


def test_similarity_dynamics_draws_the_logged_values(runs):
    fig = plot_similarity_dynamics(runs, ("pos_cos", "neg_cos"))
    axes = [ax for ax in fig.axes if ax.get_visible()]
    # two methods × two seeds: per panel a faint line per seed and a mean line per method
    assert len(axes) == 2 and [len(ax.lines) for ax in axes] == [6, 6]
    train = read_metrics(runs["simcse-s1"], "train")
    line = axes[1].lines[0]
    assert np.allclose(line.get_xdata(), train["step"]) and np.allclose(line.get_ydata(), train["sim/neg_cos"])
    assert line.get_alpha() == pytest.approx(0.3)
    mean = [ln for ln in axes[1].lines if ln.get_label().startswith("MixCSE (mean, 2 seeds)")][0]
    both = read_metrics({k: runs[k] for k in ("mixcse-s1", "mixcse-s2")}, "train").groupby("step")["sim/neg_cos"]
    assert np.allclose(mean.get_ydata(), both.mean())
    scaled = plot_similarity_dynamics({"m": runs["mixcse-s1"]}, ("mixcse.mixed_cos",), per_temperature=True)
    mixed = read_metrics(runs["mixcse-s1"], "train")["sim/mixcse.mixed_cos"]
    assert np.allclose(scaled.axes[0].lines[0].get_ydata(), mixed / 0.05)   # cos / τ, τ from config.json


def test_sweep_averages_seeds_and_ablation_bars_group(runs):
    fig = plot_sweep(_sweep_frame(), "batch_size", "sts_avg", hue="method")
    means = fig.axes[0].lines[0].get_ydata()
    assert np.allclose(means, [75.3, 76.2, 75.5])
    scores = pd.DataFrame({"variant": ["full", "-AP"], "STS12": [70.0, 68.0], "STS-B": [80.0, 79.0]})
    bars = plot_ablation_bars(scores, kind="bars")
    heights = [p.get_height() for p in bars.axes[0].patches]
    assert heights == [70.0, 80.0, 68.0, 79.0]
    # bars from zero 2 points apart at 70 look equal: by default the scores are points on a zoomed axis
    points = plot_ablation_bars(scores)
    ax = points.axes[0]
    assert not ax.patches and [list(line.get_ydata()) for line in ax.lines] == [[70.0, 80.0], [68.0, 79.0]]
    assert ax.get_ylabel() == "score (axis not from 0)" and ax.get_ylim()[0] > 60


def test_layer_profile_uses_the_last_probe(runs):
    fig = plot_layer_profile({"mixcse-s1": runs["mixcse-s1"]})
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), [0.3, 0.6])   # the last layer, 1 by definition, not drawn
    assert "2: not drawn" in fig.axes[0].get_xlabel()
    fig = plot_layer_profile({"mixcse-s1": runs["mixcse-s1"]}, last_layer=True)
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), [0.3, 0.6, 1.0])


def test_missing_statistics_are_named(tmp_path, runs):
    with pytest.raises(ValueError, match=r"no values for \['clusterns.bogus'\]; available: .*sim/pos_cos"):
        plot_similarity_dynamics(runs, ("clusterns.bogus",))
    bare = make_run(tmp_path / "bare", ["simcse"], steps=4)    # no probe records (steps < 10)
    with pytest.raises(ValueError, match="plot_largest_angle \\(enable probes"):
        plot_largest_angle(bare)
    with pytest.raises(ValueError, match="per_temperature needs run directories"):
        plot_similarity_dynamics(pd.DataFrame({"step": [1], "positive": [1.0]}), ("positive",), per_temperature=True)
    with pytest.raises(ValueError, match="formats must be a non-empty subset"):
        save_figure(plot_lambda_bound(pd.DataFrame({"lambda": [0.1, 0.5], "closer_share": [0.0, 0.1]})), tmp_path / "x",
                    formats=["svg"])
    with pytest.raises(ValueError, match=r"plot_cap_geometry: missing column\(s\) \['var_cos'\]"):
        plot_cap_geometry(pd.DataFrame({"d": [1], "omega_deg": [1], "mean_cos": [0.0]}))


# ------------------------------------------------------------------ what is drawn, in words
def _texts(fig) -> list[str]:
    """Every title, axis label, colour-bar label and legend entry of ``fig``."""
    out = [fig._suptitle.get_text()] if fig._suptitle is not None else []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend() is not None:
            out += [t.get_text() for t in ax.get_legend().get_texts()]
            out.append(ax.get_legend().get_title().get_text())
    return [t for t in out if t]


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_no_raw_keys_in_any_label(kind, runs):
    for text in _texts(BUILDERS[kind](runs)):
        if not text.startswith("$"):   # mathtext (ℓ_align) is meant
            assert "_" not in text and not text.startswith(("loss/", "sim/", "sts/")), text


def test_single_run_curve_one_column_wide_title_once_no_legend(runs):
    fig = plot_training_curves({"simcse": runs["simcse-s1"]}, ("loss",), title="training loss (InfoNCE)")
    (ax,) = fig.axes
    assert fig._suptitle is None and ax.get_title() == "training loss (InfoNCE)"   # not twice
    assert ax.get_ylabel() == "training loss" and ax.get_xlabel() == "training step"
    assert ax.get_legend() is None and len(ax.lines) == 1                            # one series: no legend
    train = read_metrics(runs["simcse-s1"], "train")
    assert np.allclose(ax.lines[0].get_xdata(), train["step"]) and np.allclose(ax.lines[0].get_ydata(), train["loss"])
    assert tuple(fig.get_size_inches()) == pytest.approx((3.3, 2.5))                  # one column of a paper
    dev = plot_training_curves({"simcse": runs["simcse-s1"]}, ("stsb_dev",), kind="eval").axes[0]
    assert dev.get_ylabel() == "STS-B dev (Spearman ×100)" and dev.get_title() == ""
    assert plot_training_curves(runs["simcse-s1"], ("loss/info_nce",)).axes[0].get_ylabel() == "InfoNCE loss"


def test_several_panels_keep_their_titles_under_a_different_figure_title(runs):
    fig = plot_similarity_dynamics(runs, ("pos_cos", "neg_cos"), title="similarity during training")
    assert fig._suptitle.get_text() == "similarity during training"
    assert [ax.get_title() for ax in fig.axes] == ["positive pairs", "in-batch negatives"]
    # 4 runs of 2 methods: one legend for the figure, an entry per method; MixCSE's positive-pair curve
    # lies on SimCSE's (the synthetic runs share it), so the legend says so
    assert legend_texts(fig) == ["SimCSE (mean, 2 seeds)", "MixCSE (mean, 2 seeds) (= SimCSE in 'positive pairs')"]
    one_run = plot_similarity_dynamics({"SimCSE": runs["simcse-s1"]}, ("pos_cos", "neg_cos"), panels="run")
    (ax,) = one_run.axes
    assert ax.get_title() == "SimCSE" and one_run._suptitle is None
    assert legend_texts(one_run) == ["positive pairs", "in-batch negatives"]
    stacked = plot_similarity_dynamics(runs, ("pos_cos", "neg_cos"), ncols=1)
    width, height = stacked.get_size_inches()
    assert width == pytest.approx(3.3) and height > 5.0         # one column wide; the legend goes below
    assert check_figure(stacked) == []
    assert [ax.get_ylabel() for ax in stacked.axes] == ["mean cosine", "mean cosine"]


def test_single_series_figures_have_no_legend(runs):
    assert plot_layer_profile({"BERT": [0.1, 0.5, 1.0]}).axes[0].get_legend() is None
    assert plot_layer_profile({"BERT": [0.1, 0.5, 1.0], "SimCSE": [0.3, 0.6, 1.0]}).axes[0].get_legend() is not None
    one_variant = plot_ablation_bars(pd.DataFrame({"variant": ["full"], "STS12": [70.0], "STS-B": [80.0]}))
    assert one_variant.axes[0].get_legend() is None and len(one_variant.axes[0].patches) == 2
    sweep = plot_sweep(_sweep_frame(), "batch_size", "sts_avg")            # no hue: one series
    assert legend_texts(sweep) == [] and sweep.axes[0].get_legend() is None   # no hue: one series, no legend
    assert " ".join(figure_note(sweep).split()) == "Each point: the mean over seeds; bars: its 95 % t-interval over seeds (n = 4)."
    assert sweep.get_figwidth() < 4   # not widened by a one-entry legend beside the panel
    from matplotlib.colors import to_hex

    from cselab.workbench.plots import method_color
    lambda_sweep = plot_sweep(_sweep_frame(), "batch_size", "sts_avg", method="mixcse")   # its method's colour
    assert to_hex(lambda_sweep.axes[0].lines[0].get_color()).upper() == method_color("mixcse").upper() == "#D55E00"
    assert (sweep.axes[0].get_xlabel(), sweep.axes[0].get_ylabel()) == ("batch size", "STS average (Spearman ×100)")
    by_method = plot_sweep(_sweep_frame(), "batch_size", "sts_avg", hue="method", xlabel="B")
    assert legend_texts(by_method) == ["SimCSE", "ClusterNS", "95 % t-interval over seeds (n = 2)"]
    assert by_method.axes[0].get_xlabel() == "B"
    one_curve = plot_lambda_bound(pd.DataFrame({"lambda": [0.1, 0.9], "closer_share": [0.0, 0.5]}))
    assert one_curve.axes[0].get_legend() is None
    points = pd.DataFrame({"alignment": [0.2, 0.22, 0.25, 0.3], "uniformity": [-2.0, -2.1, -2.2, -2.4],
                           "sts_avg": [70.0, 71.0, 72.5, 74.0], "run": ["A", "B", "C", "D"]})
    colorbar = plot_alignment_uniformity(points, color_by="sts_avg").axes[1]
    assert colorbar.get_ylabel() == "STS average (Spearman ×100)"


def test_readable_labels():
    from cselab.workbench.labels import readable

    assert readable("stsb_dev") == "STS-B dev (Spearman ×100)"
    assert readable("loss/clusterns.bml") == "bidirectional margin loss"
    assert readable("loss/my_method.extra_term") == "my method extra term loss"
    assert readable("clusterns.num_clusters") == "number of clusters K"
    assert readable("sts/STS12") == "STS12 (Spearman ×100)"
    assert readable("probe_seconds") == "probe seconds"
