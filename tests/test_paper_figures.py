"""The rules the paper notebooks draw their figures by: no sweep figure under three values (one
line naming the study instead), ClusterNS Fig. 5 one labelled curve per σ, coincident lines made
visible."""
from __future__ import annotations

import json

import numpy as np
import pytest

from synthetic_runs import make_run

from cselab.workbench import paper_tables as pt
from cselab.workbench.analysis.clusterns import threshold_curves
from cselab.workbench.plots import new_figure, plot_similarity_dynamics
from cselab.workbench.plots import check_figure
from cselab.workbench.plots.style import place_legend, separate_coincident


# ------------------------------------------------------------------- fewer values → a message, no figure
def test_one_value_prints_one_line_naming_the_study(capsys):
    assert pt.enough_values([0.2, 0.2], "λ sweep", "paper-mixcse") is False      # two seeds of one λ
    assert capsys.readouterr().out == \
        "λ sweep: one value here (0.2), a figure needs 3; the paper-mixcse study draws it\n"


def test_two_values_are_not_a_trend(capsys):
    assert pt.enough_values([0.0, 3.0, 3.0], "Table 3 (M sweep)", "paper-gs-infonce") is False
    assert capsys.readouterr().out == \
        "Table 3 (M sweep): 2 values here (0, 3), a figure needs 3; the paper-gs-infonce study draws it\n"


def test_enough_values_draw_silently(capsys):
    assert pt.enough_values([128, 256, 512], "figure8_batch_size", "paper-clusterns") is True
    assert pt.enough_values([0.2, 0.4], "Figure 5 (σ)", "paper-clusterns", minimum=pt.COMPARISON_MIN_VALUES)
    assert capsys.readouterr().out == ""


def test_no_value_says_so(capsys):
    assert pt.enough_values([], "Figure 5 (σ)", "paper-clusterns", minimum=2) is False
    assert capsys.readouterr().out == "Figure 5 (σ): no value here, a figure needs 2; the paper-clusterns study draws it\n"


def test_minimum_must_be_positive():
    with pytest.raises(ValueError, match="minimum must be >= 1"):
        pt.enough_values([1.0], "x", "y", minimum=0)


# ------------------------------------------------------------------- ClusterNS Fig. 5
def clusterns_run(root, name: str, sigma: float, false_negatives: str = "bml", seed: int = 1, offset: float = 0.0):
    path = make_run(root / name, ["clusterns"], seed=seed, offset=offset)
    config = json.loads((path / "config.json").read_text())
    config["config"]["clusterns"] = {"start_threshold": sigma, "false_negatives": false_negatives}
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_figure5_has_one_labelled_curve_per_sigma(tmp_path):
    runs = {"clusterns-sigma-0.6": clusterns_run(tmp_path, "a", 0.6, offset=0.2),
            "clusterns-s1": clusterns_run(tmp_path, "b", 0.4),
            "clusterns-s2": clusterns_run(tmp_path, "c", 0.4, seed=2),          # a second seed of σ = 0.4
            "clusterns-sigma-0.2": clusterns_run(tmp_path, "d", 0.2, offset=0.1),
            "clusterns-sigma-0.2-nobml": clusterns_run(tmp_path, "e", 0.2, "none")}   # Table 3's other row
    curves = threshold_curves(runs)
    assert list(curves) == ["σ = 0.2", "σ = 0.4", "σ = 0.6"]
    assert curves["σ = 0.4"] == runs["clusterns-s1"] and curves["σ = 0.2"] == runs["clusterns-sigma-0.2"]
    fig = plot_similarity_dynamics(curves, ("clusterns.hard_neg_cos",))
    (ax,) = fig.axes
    # the synthetic runs share one hard-negative curve, so the figure marks the later ones as lying on
    # the first ("σ = 0.4 (= σ = 0.2)", drawn dashed): still one labelled curve per σ
    def sigma(label):
        return label.split(" (=")[0]
    assert [sigma(line.get_label()) for line in ax.get_lines()] == ["σ = 0.2", "σ = 0.4", "σ = 0.6"]
    assert [sigma(t.get_text()) for t in ax.get_legend().get_texts()] == ["σ = 0.2", "σ = 0.4", "σ = 0.6"]
    # each curve is its own run's hard-negative similarity (make_run: 0.6 - 0.2·exp(-step/20), no offset)
    assert ax.get_lines()[1].get_ydata()[0] == pytest.approx(0.6 - 0.2 * np.exp(-5 / 20))


def test_figure5_with_one_sigma_is_left_to_the_study(tmp_path, capsys):
    curves = threshold_curves({"clusterns-s1": clusterns_run(tmp_path, "a", 0.5)})
    assert list(curves) == ["σ = 0.5"]
    sigmas = [float(name.split("= ")[1]) for name in curves]
    assert not pt.enough_values(sigmas, "Figure 5 (σ)", "paper-clusterns", minimum=pt.COMPARISON_MIN_VALUES)
    assert "one value here (0.5)" in capsys.readouterr().out


# ------------------------------------------------------------------- coincident lines
def three_lines(gap: float):
    fig, (ax,) = new_figure()
    steps = np.arange(10)
    ax.plot(steps, 0.7 - 0.02 * steps, label="mixed negatives")
    ax.plot(steps, 0.7 - 0.02 * steps + gap, label="mixed negatives (reverse)")
    ax.plot(steps, 0.3 - 0.01 * steps, label="in-batch negatives")
    return fig, ax


def test_a_line_on_another_gets_dashes_markers_and_says_so():
    fig, ax = three_lines(gap=0.001)       # 0.001 of a 0.5 span: well under a line's width as drawn
    first, second, third = ax.get_lines()
    assert separate_coincident([ax]) == [("mixed negatives (reverse)", "mixed negatives")]
    assert first.get_linestyle() == "-" and first.get_marker() in ("None", None, "")
    assert second.get_linestyle() == "--" and second.get_marker() == "o"
    # thinner than the line it lies on, so that one shows on both sides of it (MixCSE's "mixed
    # negatives" were hidden exactly under "(reverse)")
    assert second.get_linewidth() == first.get_linewidth() / 2 and second.get_markersize() == 3.5
    assert second.get_label() == "mixed negatives (reverse) (= mixed negatives)"
    assert third.get_linestyle() == "-"
    place_legend(ax)
    assert check_figure(fig) == []


def test_close_in_data_but_not_as_drawn_is_coincident_too():
    # 0.4 % of the span: more than 1e-3 of the data, yet under a line's width on a 2.5-inch panel
    fig, ax = three_lines(gap=0.002)
    assert [pair[0] for pair in separate_coincident([ax])] == ["mixed negatives (reverse)"]


def test_lines_apart_are_left_alone():
    fig, ax = three_lines(gap=0.05)        # 10 % of the span: clearly two lines
    assert separate_coincident([ax]) == []
    assert [ln.get_linestyle() for ln in ax.get_lines()] == ["-", "-", "-"]
