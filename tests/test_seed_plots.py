"""Means over seeds and differences from the baseline, drawn by seaborn in cselab's style: the
whiskers are the 95 % t-intervals scipy gives for the same numbers (not seaborn's bootstrap), the
legend states n, methods keep their colours, and the figures pass the checker."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cselab.workbench.plots import (baseline_differences, check_figure, method_color, plot_baseline_differences,
                          plot_seed_means, t_errorbar)
from cselab.workbench.plots.check import INTERVAL_GID
from cselab.workbench.plots.core import figure_note
from cselab.workbench.results import paired_test

# three seeds of three methods on two tasks (Spearman × 100), written out so that every interval
# below is computed by hand from these numbers
SCORES = pd.DataFrame({
    "method": ["simcse"] * 3 + ["mixcse"] * 3 + ["clusterns"] * 3,
    "seed": [1, 2, 3] * 3,
    "STS12": [68.0, 69.5, 70.1, 69.0, 71.0, 71.3, 68.2, 69.0, 70.9],
    "STSBenchmark": [76.0, 77.2, 76.5, 77.5, 78.9, 77.7, 75.0, 77.0, 76.4],
})


def t_interval(values) -> tuple[float, float]:
    values = np.asarray(values, float)
    return stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))


def legend_texts(fig) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]


def drawn_intervals(ax) -> list[tuple[float, float]]:
    """(low, high) of every whisker seaborn drew (the lines tagged as intervals)."""
    out = []
    for line in ax.lines:
        if line.get_gid() == INTERVAL_GID:
            y = np.asarray(line.get_ydata(), float)
            y = y[np.isfinite(y)]
            if len(y):
                out.append((float(y.min()), float(y.max())))
    return sorted(out)


def test_t_errorbar_of_identical_seeds_draws_no_bar():
    """Every seed at the untrained backbone's step 0 gives the same angle: a zero-length bar that the
    figure checker rightly flags; no interval is drawn instead."""
    low, high = t_errorbar(pd.Series([74.8, 74.8, 74.8, 74.8, 74.8]))
    assert math.isnan(low) and math.isnan(high)


def test_t_errorbar_is_scipys_t_interval():
    values = [70.0, 71.0, 72.5]
    low, high = t_errorbar(pd.Series(values))
    assert (low, high) == pytest.approx(t_interval(values), abs=1e-9)
    # by hand: mean 71.1667, sd 1.2583, t(0.975, 2) = 4.3027 → half-width 3.1257
    assert high - low == pytest.approx(2 * 4.302653 * np.std(values, ddof=1) / np.sqrt(3), rel=1e-6)
    assert all(np.isnan(v) for v in t_errorbar([70.0]))                      # one seed: no interval


def test_seed_means_draw_the_t_interval_per_method_and_task_and_state_n():
    long = SCORES.melt(id_vars=["method", "seed"], var_name="task", value_name="score")
    fig = plot_seed_means(long, x="task", y="score", hue="method", ylabel="Spearman × 100")
    ax = fig.axes[0]
    expected = sorted(t_interval(part["score"]) for _, part in long.groupby(["method", "task"]))
    np.testing.assert_allclose(drawn_intervals(ax), expected, atol=1e-9)
    texts = legend_texts(fig)
    assert texts == ["SimCSE", "MixCSE", "ClusterNS", "95 % t-interval over seeds (n = 3)"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["STS12", "STS-B"]      # the papers' task names
    points = [line for line in ax.lines if line.get_gid() != INTERVAL_GID and len(line.get_xdata())]
    assert [line.get_color() for line in points] == [method_color(m) for m in ("simcse", "mixcse", "clusterns")]
    assert check_figure(fig) == []


def test_seed_means_along_a_numeric_setting_and_with_one_seed():
    sweep = pd.DataFrame({"batch_size": [32, 64, 128] * 3, "seed": np.repeat([1, 2, 3], 3),
                          "sts_avg": [75.1, 76.0, 75.8, 75.5, 76.4, 75.2, 74.9, 76.1, 75.6]})
    fig = plot_seed_means(sweep, x="batch_size", y="sts_avg")
    ax = fig.axes[0]
    (bars,) = ax.containers[0].lines[2]                                       # lineplot's error bars
    drawn = sorted((float(s[:, 1].min()), float(s[:, 1].max())) for s in bars.get_segments())
    np.testing.assert_allclose(drawn, sorted(t_interval(p["sts_avg"]) for _, p in sweep.groupby("batch_size")),
                               atol=1e-9)
    assert ax.get_xlabel() == "batch size" and ax.get_ylabel() == "STS average (Spearman ×100)"
    assert check_figure(fig) == []
    one = plot_seed_means(sweep[sweep["seed"] == 1], x="batch_size", y="sts_avg")
    # one seed, one series: no legend (nothing to name), the words under the panel, no blank legend row
    assert legend_texts(one) == [] and "One seed (n = 1): no interval." in figure_note(one)
    with pytest.raises(ValueError, match="one row per seed"):
        plot_seed_means(pd.concat([sweep, sweep]), x="batch_size", y="sts_avg")


def test_baseline_differences_are_paired_per_seed():
    pairs, summary = baseline_differences(SCORES, ["STS12", "STSBenchmark"], baseline="simcse")
    assert list(summary["method"]) == ["mixcse", "mixcse", "clusterns", "clusterns"]
    base = SCORES[SCORES["method"] == "simcse"].set_index("seed")
    for _, row in summary.iterrows():
        scores = SCORES[SCORES["method"] == row["method"]].set_index("seed")[row["task"]]
        diffs = scores - base[row["task"]]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(t_interval(diffs), abs=1e-9)
        test = paired_test(scores.to_numpy(), base[row["task"]].to_numpy())   # the paired t-test's own interval
        assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx(
            (test["mean_diff"], test["ci_low"], test["ci_high"]), abs=1e-9)
    # by hand, MixCSE on STS12: differences 1.0, 1.5, 1.2 → mean 1.2333, half-width 4.3027 · 0.2517 / √3
    mixcse = summary[(summary["method"] == "mixcse") & (summary["task"] == "STS12")].iloc[0]
    assert mixcse["mean"] == pytest.approx(1.23333, abs=1e-5)
    assert mixcse["ci_high"] - mixcse["mean"] == pytest.approx(4.302653 * np.std([1.0, 1.5, 1.2], ddof=1) / np.sqrt(3),
                                                               rel=1e-6)
    assert len(pairs) == 12 and set(pairs.columns) == {"method", "task", "seed", "difference"}


def test_the_difference_figure_draws_the_paired_intervals_in_method_colours():
    fig = plot_baseline_differences(SCORES, ["STS12", "STSBenchmark"], baseline="simcse")
    ax = fig.axes[0]
    _, summary = baseline_differences(SCORES, ["STS12", "STSBenchmark"], baseline="simcse")
    np.testing.assert_allclose(drawn_intervals(ax), sorted(zip(summary["ci_low"], summary["ci_high"])), atol=1e-9)
    texts = legend_texts(fig)
    assert texts == ["MixCSE", "ClusterNS", "95 % paired t-interval over seeds (n = 3)"]
    assert ax.get_ylabel() == "difference from SimCSE"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["STS12", "STS-B"]
    points = [line for line in ax.lines if line.get_gid() != INTERVAL_GID and len(line.get_xdata()) == 2
              and line.get_transform() is ax.transData]
    assert [line.get_color() for line in points] == [method_color("mixcse"), method_color("clusterns")]
    (zero,) = [line for line in ax.lines if line.get_transform() is not ax.transData]   # the line of no difference
    assert list(zero.get_ydata()) == [0.0, 0.0]
    assert check_figure(fig) == []


def test_the_difference_figure_refuses_single_seeds():
    with pytest.raises(ValueError, match=r"every method shares one seed with 'simcse' \(n = 1\)"):
        plot_baseline_differences(SCORES[SCORES["seed"] == 1], ["STS12"], baseline="simcse")
    with pytest.raises(ValueError, match="no method == 'esimcse' rows"):
        plot_baseline_differences(SCORES, ["STS12"], baseline="esimcse")


def test_a_share_of_seeds_gets_a_wilson_interval_inside_0_1():
    """clustering_start's band was a t-interval of 0/1 values and ran up to 1.6; a share takes statsmodels'
    Wilson interval, which stays within [0, 1]."""
    from statsmodels.stats.proportion import proportion_confint

    from cselab.workbench.plots.claims import _interval

    mean, low, high, n = _interval([1, 1, 1, 0], share=True)
    assert (mean, n) == (0.75, 4)
    assert (low, high) == pytest.approx(proportion_confint(3, 4, alpha=0.05, method="wilson"))
    assert 0 <= low and high <= 1
    t_mean, t_low, t_high, _ = _interval([1, 1, 1, 0])
    assert t_high > 1   # the t-interval the share replaces runs past 1
