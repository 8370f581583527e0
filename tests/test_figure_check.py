"""The figure checker: each defect planted in a small figure is found, and its problem names the
panel and the artist; well-made figures give no problem."""
from __future__ import annotations

import re

import numpy as np
import pytest

from cselab.workbench.plots import check_figure, new_figure, save_figure

X = np.arange(10)


def _one(problems: list[str], *words: str) -> str:
    """The single problem of ``problems`` that contains every one of ``words``."""
    found = [p for p in problems if all(w in p for w in words)]
    assert len(found) == 1, problems
    return found[0]


def clean_figure():
    fig, (ax,) = new_figure()
    ax.plot(X, X / 10, label="rising")
    ax.plot(X, 1 - X / 20, label="falling")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("two curves")
    ax.set_xlabel("training step")
    ax.set_ylabel("mean cosine")
    return fig


def test_a_well_made_figure_passes():
    assert check_figure(clean_figure()) == []
    fig, axes = new_figure(2)
    for i, ax in enumerate(axes):
        ax.errorbar([1, 2, 4], [0.2, 0.5, 0.4], yerr=[0.05, 0.1, 0.02], fmt="o", label="with intervals")
        ax.bar([6, 7], [0.3, 0.6], label="bars")
        ax.set_title(f"panel {i}")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
    assert check_figure(fig) == []


def test_overlapping_tick_labels_are_found_once_per_axis():
    fig, (ax,) = new_figure()
    ax.plot(X, X)
    ax.set_xticks(X, [f"a long tick label {i}" for i in X])
    ax.set_title("crowded ticks")
    problem = _one(check_figure(fig), "x tick labels of panel 'crowded ticks' collide")
    assert "'a long tick label 0'" in problem and "'a long tick label 1'" in problem


def test_point_labels_on_each_other_are_found():
    fig, (ax,) = new_figure()
    ax.scatter([0.0, 0.01, 1.0], [0.0, 0.01, 1.0])
    ax.annotate("SimCSE unsupervised", (0.0, 0.0))
    ax.annotate("MixCSE unsupervised", (0.01, 0.01))
    ax.set_title("points")
    problem = _one(check_figure(fig), "text overlaps text")
    assert "'SimCSE unsupervised' in panel 'points'" in problem and "'MixCSE unsupervised'" in problem


def test_a_title_on_a_neighbouring_title_is_found():
    fig, axes = new_figure(2, panel_size=(1.5, 1.5))
    for ax, name in zip(axes, ("a title too long for its panel", "the neighbour's title")):
        ax.plot(X, X)
        ax.set_title(name)
    problem = _one(check_figure(fig), "text overlaps text", "the title of panel")
    assert "'a title too long for its panel'" in problem and "the neighbour's title" in problem


def test_legend_entries_on_colour_bar_labels_are_found():
    fig, (ax,) = new_figure()
    points = ax.scatter(X, X, c=X)
    fig.colorbar(points, ax=ax, label="STS average")
    legend = ax.legend([points], ["a legend entry laid over the colour bar"], loc="center left",
                       bbox_to_anchor=(1.0, 0.5))
    legend.set_in_layout(False)   # the layout leaves it where it is: over the colour bar
    ax.set_title("coloured")
    problems = check_figure(fig)
    assert any("legend entry 'a legend entry laid over the colour bar'" in p and "colour bar 'STS average'" in p
               for p in problems), problems


def test_a_layout_that_collapses_or_squeezes_a_panel_is_found():
    fig, (ax,) = new_figure()
    ax.plot(X, X)
    ax.set_title("squeezed")
    ax.set_ylabel("a y label\nof\nmany\nlines\nthat\ntake\nthe\nwhole\nheight\nof\nit")
    ax.legend(["a legend laid beside the panel, so long it leaves no room"], loc="center left",
              bbox_to_anchor=(1.0, 0.5))
    problems = check_figure(fig)
    assert any("squeezed" in p for p in problems), problems


def test_text_leaving_the_canvas_is_found():
    fig = clean_figure()
    fig.text(0.9, 0.5, "a note that runs off the right edge")
    problem = _one(check_figure(fig), "text leaves the canvas")
    assert "(right edge)" in problem and "'a note that runs off the right edge'" in problem


def test_a_legend_on_lines_is_found_and_named():
    fig, (ax,) = new_figure()
    ax.plot(X, X, label="SimCSE")
    ax.plot(X, 9 - X, label="MixCSE")
    ax.legend(loc="center")
    ax.set_title("crossing")
    problem = _one(check_figure(fig), "covers data")
    assert problem == "the legend of panel 'crossing' covers data of panel 'crossing': 'SimCSE', 'MixCSE'"


def test_a_legend_on_a_segment_between_vertices_is_found():
    """Two vertices far apart: the line crosses the legend with no vertex inside it."""
    fig, (ax,) = new_figure()
    ax.plot([0, 10], [5, 5], label="flat")
    ax.plot([0, 10], [0, 10], label="rising")
    ax.set_ylim(0, 10)
    ax.legend(loc="center")
    ax.set_title("segments")
    assert "'flat'" in _one(check_figure(fig), "covers data")


@pytest.mark.parametrize("kind", ["bars", "error bars", "markers", "band"])
def test_a_legend_on_bars_error_bars_markers_or_bands_is_found(kind):
    fig, (ax,) = new_figure()
    ax.plot([0, 1], [9, 9], label="a line at the top")
    if kind == "bars":
        ax.bar([4, 5], [5.5, 5.5], width=0.9, label="bars")
    elif kind == "error bars":
        ax.errorbar([4.5], [5], yerr=[1.0], fmt="none", label="error bars")
    elif kind == "markers":
        ax.scatter([4.5], [5], label="markers")
    else:
        ax.fill_between([3, 6], [4.5, 4.5], [5.5, 5.5], label="band")
    ax.set_xlim(0, 9)
    ax.set_ylim(0, 10)
    ax.legend(loc="center")
    ax.set_title(kind)
    assert f"covers data of panel '{kind}'" in _one(check_figure(fig), "covers data")


def test_a_figure_legend_over_a_panel_is_found():
    fig, axes = new_figure(2)
    for ax in axes:
        ax.plot(X, X, label="SimCSE")
        ax.plot(X, 9 - X, label="MixCSE")
    axes[0].set_title("left")
    axes[1].set_title("right")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="center", bbox_to_anchor=(0.3, 0.55))
    problems = check_figure(fig)
    assert "the figure legend covers data of panel 'left': 'SimCSE', 'MixCSE'" in problems


def test_a_series_under_another_is_found_and_a_distinct_style_named_equal_passes():
    fig, (ax,) = new_figure()
    ax.plot(X, X ** 0.5, label="mixed negatives")
    ax.plot(X, X ** 0.5, label="mixed negatives (reverse)")
    ax.legend(loc="lower right", frameon=False)
    ax.set_title("similarity")
    problem = _one(check_figure(fig), "cannot be seen")
    assert "'mixed negatives' of panel 'similarity' lies under 'mixed negatives (reverse)'" in problem
    ax.lines[1].set_linestyle("--")
    ax.lines[1].set_marker("o")                                             # visible now, but unnamed
    assert _one(check_figure(fig), "drawn along").startswith("the series 'mixed negatives (reverse)' of panel "
                                                            "'similarity' is drawn along 'mixed negatives'")
    ax.lines[0].set_label("forward")                                        # short: the legend fits inside
    ax.lines[1].set_label("reverse (= forward)")
    ax.legend(loc="lower right", frameon=False)
    assert check_figure(fig) == []


def test_a_sweep_of_one_point_is_found():
    fig, (ax,) = new_figure()
    ax.errorbar([0.2], [75.3], marker="o")
    ax.set_title("λ sweep")
    problem = _one(check_figure(fig), "one x value")
    assert problem.startswith("panel 'λ sweep' draws all its data at one x value (0.2)")
    fig, (ax,) = new_figure()
    ax.plot([0.1, 0.2], [75.3, 75.9], "o")   # two values: points (two joined would make no curve)
    ax.axvline(0.2, color="grey")    # a reference line spans the axes: it is not data at one x
    assert check_figure(fig) == []


def test_zero_length_error_bars_are_found():
    fig, (ax,) = new_figure()
    ax.errorbar([1, 2, 3], [5.0, 6.0, 5.5], yerr=[0.0, 0.4, 0.0], marker="o", label="SimCSE")
    ax.set_title("scores")
    problem = _one(check_figure(fig), "zero length")
    assert problem.startswith("panel 'scores': 2 of the 3 error bars of 'SimCSE' have zero length")
    fig, (ax,) = new_figure()
    ax.bar([0, 1], [70.0, 72.0], yerr=[0.0, 0.0])
    ax.set_ylabel("score")
    assert "panel with y label 'score': 2 of the 2 error bars" in _one(check_figure(fig), "zero length")


def test_the_checker_draws_a_pyplot_free_figure_and_leaves_it_savable(tmp_path):
    from cselab.workbench.plots import save_figure

    fig = clean_figure()
    assert check_figure(fig) == check_figure(fig) == []   # twice: the same answer
    (png, ) = save_figure(fig, tmp_path / "clean", formats=["png"])
    assert png.read_bytes().startswith(b"\x89PNG")


# ------------------------------------------------------------------ saving, notebooks, study index
def legend_on_lines():
    fig, (ax,) = new_figure()
    ax.plot(X, X, label="SimCSE")
    ax.plot(X, 9 - X, label="MixCSE")
    ax.legend(loc="center")
    ax.set_title("crossing")
    return fig


def test_save_figure_logs_and_records_the_problems_and_clears_them_when_fixed(tmp_path, caplog):
    import json

    from cselab.workbench.plots.core import problems_path

    with caplog.at_level("WARNING", logger="cselab.workbench.plots"):
        written = save_figure(legend_on_lines(), tmp_path / "figs" / "crossing")
    assert [p.name for p in written] == ["crossing.png", "crossing.pdf"]          # the figure files, as before
    record = tmp_path / "figs" / "crossing.problems.json"
    assert problems_path(tmp_path / "figs" / "crossing.png") == record
    expected = "the legend of panel 'crossing' covers data of panel 'crossing': 'SimCSE', 'MixCSE'"
    assert json.loads(record.read_text()) == {"figure": "crossing", "problems": [expected]}
    assert [r.getMessage() for r in caplog.records] == [f"figure crossing: {expected}"]
    save_figure(clean_figure(), tmp_path / "figs" / "crossing")                  # fixed: the record goes
    assert not record.exists()
    save_figure(legend_on_lines(), tmp_path / "figs" / "unchecked", check=False)
    assert not (tmp_path / "figs" / "unchecked.problems.json").exists()


def test_workbench_show_runs_the_checker(tmp_path, caplog):
    from cselab import workbench

    with caplog.at_level("WARNING", logger="cselab.workbench.plots"):
        workbench.show(legend_on_lines(), tmp_path / "crossing")
    assert (tmp_path / "crossing.problems.json").is_file() and "covers data" in caplog.text


def test_the_study_index_lists_problems_beside_their_figure(tmp_path):
    from types import SimpleNamespace

    from cselab.workbench.plots.core import PROBLEMS_SUFFIX
    from cselab.workbench.studies.report import FIGURE_PROBLEMS_SUFFIX, StudyReport, index_markdown

    assert FIGURE_PROBLEMS_SUFFIX == PROBLEMS_SUFFIX
    figures = tmp_path / "report" / "figures"
    save_figure(legend_on_lines(), figures / "dynamics" / "crossing", formats=["png"])
    save_figure(clean_figure(), figures / "dynamics" / "clean", formats=["png"])
    study = SimpleNamespace(name="demo", description="", profile="cpu", path=tmp_path / "demo.yaml", smoke=False)
    report = StudyReport(study=study, launcher="local", jobs=1, plan=[], report_dir=tmp_path / "report",
                         figures_dir=figures)
    section = index_markdown(report).split("## Figures")[1].split("## Tables")[0]
    assert section.strip().splitlines() == [
        "![dynamics/clean.png](figures/dynamics/clean.png)",
        "![dynamics/crossing.png](figures/dynamics/crossing.png)",
        "",
        "**Figure check: 1 problem(s) in `crossing.png`:**",
        "",
        "- the legend of panel 'crossing' covers data of panel 'crossing': 'SimCSE', 'MixCSE'",
    ]


# ------------------------------------------------------------------ what a reviewer reads into the data
def titled(title="panel", n_panels=1, **kwargs):
    fig, axes = new_figure(n_panels, **kwargs)
    for ax in axes:
        ax.set_title(title if n_panels == 1 else f"{title} {axes.index(ax) + 1}")
    return fig, axes


def test_a_line_through_two_points_is_found_and_points_or_references_pass():
    fig, (ax,) = titled("STS-B dev")
    ax.plot([8, 16], [71.0, 74.0], marker="o", label="SimCSE")            # two evaluations joined
    ax.plot([8, 16], [73.0, 75.5], marker="s")                            # and an unlabelled one
    problem = _one(check_figure(fig), "fewer than 4 points")
    assert problem.startswith("panel 'STS-B dev': 'SimCSE' (2 points) and 1 unlabelled line (2 points) drawn as a "
                              "line through fewer than 4 points")
    fig, (ax,) = titled("STS-B dev")
    ax.plot([8, 16], [71.5, 74.5], "o", label="SimCSE")                   # two measurements: points alone
    ax.plot([0, 8, 12, 16], [70.0, 71.0, 72.5, 74.0], marker="o", label="MixCSE")   # four joined: a curve
    ax.axhline(72.0, color="grey", linestyle=":")                         # reference lines span the axes
    ax.axvline(8, color="grey", linestyle=":")
    ax.axline((0, 70), slope=0.25, color="grey")
    ax.plot([0, 16], [70.0, 76.0], color="grey", gid="reference")         # a reference in data coordinates
    ax.plot([2, 5], [71.0, 73.0], color="black", gid="interval")          # an interval drawn as a segment
    ax.plot([10, 14], [75.0, 75.0], color="grey")                          # a threshold along the x axis
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []
    fig, (ax,) = titled("spread over seeds")
    ax.boxplot([[70.1, 71.0, 72.3, 70.8], [71.5, 72.0, 73.1, 72.4]])      # whiskers, caps, medians: segments
    assert check_figure(fig) == []


def test_a_line_through_few_points_needs_its_markers():
    steps = [0, 5, 10, 15, 20]
    fig, (ax,) = titled("largest angle")
    ax.plot(steps, [90, 95, 99, 101, 102], label="SimCSE")
    problem = _one(check_figure(fig), "without markers")
    assert problem.startswith("panel 'largest angle': 'SimCSE' (5 points) joined by a line without markers")
    ax.lines[0].set_marker("o")                                            # its own markers
    assert check_figure(fig) == []
    fig, (ax,) = titled("largest angle")
    ax.plot(steps, [90, 95, 99, 101, 102], label="SimCSE")
    ax.scatter(steps, [90, 95, 99, 101, 102], c=steps, zorder=3)          # or a scatter at each measurement
    assert check_figure(fig) == []
    fig, (ax,) = titled("loss")
    ax.plot(range(6), [3.0, 2.5, 2.2, 2.0, 1.9, 1.85], label="SimCSE")    # six points: a line may stand alone
    ax.plot(range(9), np.linspace(0.1, 0.5, 9), "o", label="points")       # markers only: no line at all
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []


def test_a_line_joining_three_points_is_found_and_points_with_intervals_pass():
    """Three probes joined (steps 0, 40, 80) imply how fast the value moves between them, which
    nobody measured: the sound figure draws the three measurements as points with their intervals."""
    fig, (ax,) = titled("largest angle")
    ax.plot([0, 40, 80], [90.0, 95.5, 96.0], marker="o", label="MixCSE")
    problem = _one(check_figure(fig), "fewer than 4 points")
    assert problem.startswith("panel 'largest angle': 'MixCSE' (3 points) drawn as a line through fewer than 4 "
                              "points: so few measurements joined imply a trend nobody measured")
    fig, (ax,) = titled("largest angle")
    ax.errorbar([0, 40, 80], [90.0, 95.5, 96.0], yerr=[0.4, 0.6, 0.5], fmt="o", label="MixCSE (mean, 3 seeds)")
    ax.legend(loc="lower right", frameon=False)
    assert check_figure(fig) == []


def test_a_colour_bar_over_fewer_than_four_values_is_found_and_four_pass():
    fig, (ax,) = titled("alignment and uniformity")
    points = ax.scatter([0.20, 0.21], [-2.10, -2.16], c=[40, 80])          # two points: the bar spans their two values
    fig.colorbar(points, ax=ax, label="training step")
    problem = _one(check_figure(fig), "colour bar")
    assert problem.startswith("colour bar 'training step' spans 2 distinct values (40, 80), fewer than 4")
    fig, (ax,) = titled("alignment and uniformity")                          # a bar made from a bare mappable
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    norm = Normalize(0, 80)
    ax.scatter([0.20, 0.21, 0.25], [-2.10, -2.16, -2.3], c=[0, 40, 80], norm=norm)
    fig.colorbar(ScalarMappable(norm=norm), ax=ax, label="training step")
    assert "spans 3 distinct values (0, 40, 80)" in _one(check_figure(fig), "colour bar")
    fig, (ax,) = titled("alignment and uniformity")
    points = ax.scatter([0.20, 0.21, 0.25, 0.3], [-2.10, -2.16, -2.3, -2.4], c=[0, 20, 40, 80])
    fig.colorbar(points, ax=ax, label="training step")
    assert check_figure(fig) == []


def test_x_ticks_off_the_logged_steps_are_found_and_ticks_on_them_pass():
    steps = [5, 15, 25, 35, 45, 55]                    # logged every 10 steps from step 5, a line without markers
    fig, (ax,) = titled("similarity")
    ax.plot(steps, [0.9, 0.8, 0.75, 0.7, 0.68, 0.67], label="positives")
    ax.set_xticks([10, 20, 30, 40, 50])                # every tick between two measurements
    problem = _one(check_figure(fig), "x ticks")
    assert problem.startswith("panel 'similarity': the data are measured at x = 5, 15, 25, 35, 45, 55 (every 10) "
                              "but 5 of the 5 x ticks over them fall between measurements (10, 20, 30, 40, 50) "
                              "and the line shows no marker at them")
    ax.set_xticks(steps)                               # on the measurements
    assert check_figure(fig) == []
    ax.set_xticks([10, 20, 30, 40, 50])                # round ticks again, and a marker at each measurement
    ax.lines[0].set_marker("o")
    assert check_figure(fig) == []


def test_plotting_code_ticks_a_marked_sparse_line_at_its_measured_steps():
    """The checker accepts any ticks over marked points, but a figure the workbench draws puts them on
    the measured steps: probes every 4 steps are ticked 0, 4, 8, 12, 16, not matplotlib's 0, 2.5, 5, ..."""
    from cselab.workbench.plots.core import new_figure, styled

    @styled
    def draw(steps):
        fig, (ax,) = new_figure(1)
        ax.plot(steps, np.linspace(74.0, 82.0, len(steps)), marker="o", label="SimCSE")
        return fig

    fig = draw([0, 4, 8, 12, 16])
    assert [float(t) for t in fig.axes[0].get_xticks()] == [0.0, 4.0, 8.0, 12.0, 16.0]
    assert check_figure(fig) == []
    fig = draw(list(range(0, 81, 10)))                 # nine probes: matplotlib's own ticks are on them
    assert [float(t) for t in fig.axes[0].get_xticks() if 0 <= t <= 80] == [0.0, 20.0, 40.0, 60.0, 80.0]
    fig = draw(list(range(0, 33, 4)))                  # nine probes every 4: every other one (at most 6)
    assert [float(t) for t in fig.axes[0].get_xticks()] == [0.0, 8.0, 16.0, 24.0, 32.0]

    @styled
    def wide(steps):   # the demo's probe_geometry: a 2.2 in panel where matplotlib ticks every 2 steps
        fig, (ax,) = new_figure(1, panel_size=(4.0, 2.0))
        ax.plot(steps, np.linspace(74.0, 82.0, len(steps)), marker="o", label="SimCSE")
        return fig

    fig = wide([0, 4, 8, 12, 16])                      # 0, 2, ..., 16: five of nine on the probes, now all
    assert [float(t) for t in fig.axes[0].get_xticks()] == [0.0, 4.0, 8.0, 12.0, 16.0]


def test_round_ticks_over_marked_evaluations_or_a_dense_curve_pass():
    """Ticks at round numbers over a regular grid of steps are what papers print: four evaluations
    every 8 steps drawn with markers, or a full-width curve logged every 8 steps, show which steps
    were measured whatever the ticks (matplotlib's own: 0, 20, 40, ... or 0, 25, 50, ...)."""
    fig, (ax,) = titled("STS-B dev")
    ax.plot([8, 16, 24, 32], [70.1, 74.0, 75.2, 75.6], marker="o", label="SimCSE")
    assert [t for t in ax.get_xticks() if 8 <= t <= 32 and t % 8] != []   # ticks off the grid of 8
    assert check_figure(fig) == []
    fig, (ax,) = titled("loss")
    steps = np.arange(0, 129, 8)                       # 17 values: a curve, not vertices to count
    ax.plot(steps, 3 - np.log1p(steps) / 3, label="SimCSE")
    assert [t for t in ax.get_xticks() if 0 < t < 128 and t % 8] != []
    assert check_figure(fig) == []
    fig, (ax,) = titled("similarity")                  # points only: 0, 20, 40, 60, 80 over 0..80 by 40
    ax.plot([0, 40, 80], [0.9, 0.8, 0.7], "o", label="positives")
    assert check_figure(fig) == []
    fig, (ax,) = titled("similarity")                  # a line whose measurements a scatter marks
    ax.plot([5, 15, 25, 35, 45, 55], [0.9, 0.8, 0.75, 0.7, 0.68, 0.67], label="positives")
    ax.scatter([5, 15, 25, 35, 45, 55], [0.9, 0.8, 0.75, 0.7, 0.68, 0.67], zorder=3)
    ax.set_xticks([10, 20, 30, 40, 50])
    assert check_figure(fig) == []


def test_a_figure_wider_than_a_page_is_found_at_its_saved_size():
    fig, axes = titled("UMAP", n_panels=3, panel_size=(3.0, 3.0))        # new_figure wraps them: 2 a row
    assert fig.get_figwidth() <= 7.2
    fig.set_figwidth(9.3)                                                   # as a caller may widen it
    problem = _one(check_figure(fig), "wider than a printed page")
    assert problem == ("the figure is 9.3 in wide, wider than a printed page (7.2 in): printed at page width its "
                       "8-pt text would be 6.2 pt; put fewer or narrower panels in a row")
    assert problem in check_figure(fig, dpi=100)                           # inches, whatever the resolution
    fig.set_figwidth(7.2)
    assert check_figure(fig) == []


def test_text_smaller_than_six_points_is_found():
    fig, (ax,) = titled("scores")
    ax.plot(X, X / 10, marker="o", label="a")
    ax.annotate("n = 3 seeds", (2, 0.5), fontsize=5)
    ax.tick_params(axis="y", labelsize=5.5)
    problems = check_figure(fig)
    assert "text smaller than 6 pt at the saved size: text 'n = 3 seeds' in panel 'scores' is 5 pt" in problems
    assert "text smaller than 6 pt at the saved size: the y tick labels of panel 'scores' are 5.5 pt" in problems
    assert len([p for p in problems if "smaller than 6 pt" in p]) == 2      # the tick labels: one problem
    ax.texts[0].set_fontsize(6)
    ax.tick_params(axis="y", labelsize=6)
    assert check_figure(fig) == []


def test_an_equality_the_data_do_not_support_is_found():
    """MixCSE's InfoNCE (≈ 3) sets the scale; two loss parts near 0 differ by a fifth of their own
    span, which at this scale is less than a line's width: "(= …)" claims what the data deny."""
    steps = np.arange(10)
    fig, (ax,) = titled("InfoNCE")
    ax.plot(steps, 3 - 0.1 * steps, marker="o", label="MixCSE")
    ax.plot(steps, 0.01 * np.exp(-steps / 3), marker="o", label="APINCSE")
    ax.plot(steps, 0.01 * np.exp(-steps / 3) + 0.002, linestyle="--", marker="s",
            label="ClusterNS (= APINCSE in 'InfoNCE')")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    problem = _one(check_figure(fig), "says it equals")
    assert problem.startswith("panel 'InfoNCE': the label \"ClusterNS (= APINCSE in 'InfoNCE')\" says it equals "
                              "'APINCSE', but the two series differ (values up to 0.002 apart, more than")
    # what the library does with such a pair: its own dashes and markers, and "(≈ …)", not "(= …)"
    from cselab.workbench.plots.style import separate_coincident

    ax.lines[2].set_label("ClusterNS")
    ax.lines[2].set_linestyle("-")
    ax.lines[2].set_marker("o")
    assert separate_coincident([ax]) == [("ClusterNS", "APINCSE")]
    assert ax.lines[2].get_label() == "ClusterNS (≈ APINCSE)" and ax.lines[2].get_linestyle() == "--"
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []


def test_an_equality_within_the_tolerance_and_named_panels_pass():
    steps = np.arange(10)
    fig, axes = new_figure(2)
    for ax, title in zip(axes, ("positive pairs", "in-batch negatives")):
        ax.set_title(title)
        ax.plot(steps, 0.9 - 0.01 * steps, marker="o", label="SimCSE")
    # equal to SimCSE within 1 % of its span (0.09) in the first panel, 0.05 apart in the second
    axes[0].plot(steps, 0.9 - 0.01 * steps + 0.0005, linestyle="--", marker="s", label="MixCSE (= SimCSE in 'positive pairs')")
    axes[1].plot(steps, 0.85 - 0.01 * steps, linestyle="--", marker="s", label="MixCSE (= SimCSE in 'positive pairs')")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
    assert check_figure(fig) == []
    for line in (axes[0].lines[1], axes[1].lines[1]):
        line.set_label("MixCSE (= SimCSE)")                                 # "in every panel": the second differs
    problem = _one(check_figure(fig), "says it equals")
    assert problem.startswith("panel 'in-batch negatives': the label 'MixCSE (= SimCSE)' says it equals 'SimCSE'")
    for line in (axes[0].lines[1], axes[1].lines[1]):
        line.set_label("MixCSE (= SimCSE in 2 panels)")
    assert "the two series agree in 1" in _one(check_figure(fig), "says it equals")
    for line in (axes[0].lines[1], axes[1].lines[1]):
        line.set_label("MixCSE (= BERT)")                                   # a series no panel draws
    assert "which no panel draws beside it" in _one(check_figure(fig), "says it equals")


@pytest.mark.parametrize("horizontal", [False, True])
def test_bars_from_zero_that_look_equal_are_found(horizontal):
    fig, (ax,) = titled("ablation")
    draw = ax.barh if horizontal else ax.bar
    draw([0, 1, 2], [75.2, 76.1, 76.9], label="APINCSE")                    # one series: 2 % apart
    if horizontal:
        ax.set_yticks([0, 1, 2], ["full", "-AP", "-IN"])
    else:
        ax.set_xticks([0, 1, 2], ["full", "-AP", "-IN"])
    problem = _one(check_figure(fig), "look equal")
    assert problem.startswith("panel 'ablation': bars from zero that differ by less than 5% of their height look "
                              "equal ('APINCSE' 75.2–76.9)")
    fig, (ax,) = titled("ablation")
    draw([0, 1, 2], [40.0, 60.0, 76.9])                                     # bars that differ: sound
    assert check_figure(fig) == []


def test_grouped_bars_are_compared_per_category_and_histograms_and_points_pass():
    fig, (ax,) = titled("per task")
    positions = np.arange(3)
    ax.bar(positions - 0.2, [70.0, 80.0, 60.0], 0.4, label="SimCSE")
    ax.bar(positions + 0.2, [70.5, 65.0, 75.0], 0.4, label="MixCSE")       # STS12: 70.0 against 70.5
    ax.set_xticks(positions, ["STS12", "STS-B", "SICK-R"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    problem = _one(check_figure(fig), "look equal")
    assert "('STS12' 70–70.5)" in problem and "STS-B" not in problem
    fig, (ax,) = titled("lengths")
    ax.hist(np.repeat(np.arange(10), 100) + 0.5, bins=10)                  # a flat histogram compares no bars
    assert check_figure(fig) == []
    fig, (ax,) = titled("ablation")
    ax.errorbar([0, 1, 2], [75.2, 76.1, 76.9], yerr=[0.4, 0.3, 0.5], fmt="o")   # points on a zoomed axis
    ax.set_xticks([0, 1, 2], ["full", "-AP", "-IN"])
    assert check_figure(fig) == []


def test_a_series_covered_by_another_of_any_colour_is_found_unless_labelled_equal():
    steps = np.arange(10)
    fig, (ax,) = titled("loss parts")
    ax.plot(steps, 2 - 0.1 * steps, color="#0072B2", label="SimCSE")
    ax.plot(steps, 2 - 0.1 * steps, color="#D55E00", linewidth=2.5, label="MixCSE")   # wider, another colour
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    problem = _one(check_figure(fig), "cannot be seen")
    assert problem.startswith("the series 'SimCSE' of panel 'loss parts' lies under 'MixCSE' and cannot be seen")
    ax.lines[1].set_label("MixCSE (= SimCSE)")                              # said: the reader knows
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []
    # covered by a line through more points along the same path (another x grid): found too
    fig, (ax,) = titled("loss parts")
    ax.plot([0, 9], [2.0, 1.1], marker="", label="linear part", linewidth=1)
    ax.plot(np.linspace(0, 9, 30), 2 - 0.1 * np.linspace(0, 9, 30), linewidth=2, label="total")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert "'linear part' of panel 'loss parts' lies under 'total'" in " ".join(check_figure(fig))


def test_a_series_drawn_along_another_must_name_the_coincidence():
    """APINCSE's ℓ_N under APINCSE-AP: dashed, with markers, visible, but nothing says the line below
    is there. Named '(≈ …)' (close, not equal) or '(= …)' (equal) it passes; a line apart passes."""
    steps = np.arange(0, 40, 2)
    fig, (ax,) = titled("loss parts")
    ax.plot(steps, 3 - 0.02 * steps, color="#E69F00", label="APINCSE-AP")
    ax.plot(steps, 3 - 0.02 * steps + 0.001, color="#882255", linestyle="--", marker="s", markersize=3,
            linewidth=0.75, label="APINCSE")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    problem = _one(check_figure(fig), "drawn along")
    assert problem == ("the series 'APINCSE' of panel 'loss parts' is drawn along 'APINCSE-AP' all its length and its "
                       "label does not say so: write 'APINCSE (≈ APINCSE-AP)', or '(= …)' where the two are equal")
    assert "cannot be seen" not in " ".join(check_figure(fig))             # visible: not the covered rule's case
    ax.lines[1].set_label("APINCSE (≈ APINCSE-AP)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []
    fig, (ax,) = titled("loss parts")                                       # half a unit apart: two lines
    ax.plot(steps, 3 - 0.02 * steps, color="#E69F00", label="APINCSE-AP")
    ax.plot(steps, 3.5 - 0.02 * steps, color="#882255", linestyle="--", label="APINCSE")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []


def test_separate_coincident_names_close_series_with_approx_and_equal_ones_with_equals():
    from cselab.workbench.plots.style import separate_coincident

    steps = np.arange(0, 40, 4)
    fig, (ax,) = titled("mixed negatives")
    ax.plot(steps, 0.5 - 0.005 * steps, label="forward")
    ax.plot(steps, 0.5 - 0.005 * steps + 0.0005, label="reverse")          # 0.0005 on a span of 0.18: 0.3 %
    ax.plot(steps, 0.9 - 0.01 * steps, label="apart")
    assert separate_coincident([ax]) == [("reverse", "forward")]
    assert [line.get_label() for line in ax.lines] == ["forward", "reverse (= forward)", "apart"]
    fig, (ax,) = titled("mixed negatives")
    ax.plot(steps, 0.5 - 0.005 * steps, label="forward")
    ax.plot(steps, 0.5 - 0.005 * steps + 0.004, label="reverse")           # 0.004 on 0.18: 2 %, drawn on it all the same
    ax.set_ylim(-10, 10)
    separate_coincident([ax])
    assert ax.lines[1].get_label() == "reverse (≈ forward)"
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    assert check_figure(fig) == []


def test_a_coincidence_names_the_other_series_without_its_seed_count():
    """largest_angle read "SimCSE, both directions (n 11) (= SimCSE (n 13))": the other's n is in its own
    label, so the claim names the series alone, and the checker still finds that series by its name."""
    from cselab.workbench.plots.check import equality_claim
    from cselab.workbench.plots.style import separate_coincident

    steps = np.arange(0, 40, 4)
    fig, (ax,) = titled("largest angle")
    ax.plot(steps, 0.5 - 0.005 * steps, label="SimCSE (n 13)")
    ax.plot(steps, 0.5 - 0.005 * steps + 0.0005, label="SimCSE, both directions (n 11)")
    separate_coincident([ax])
    assert ax.lines[1].get_label() == "SimCSE, both directions (n 11) (= SimCSE)"
    assert equality_claim(ax.lines[1].get_label()) == ("SimCSE, both directions (n 11)", "SimCSE", None)
    ax.set_ylim(0.0, 0.8)
    ax.legend(loc="upper right", fontsize=6, frameon=False)
    assert check_figure(fig) == []
    ax.lines[1].set_ydata(0.5 - 0.005 * steps + 0.05)   # planted: now far from SimCSE, still claimed equal
    assert any("says it equals 'SimCSE'" in p for p in check_figure(fig))


def test_separate_coincident_names_marked_lines_half_a_marker_apart():
    """layer_cls_similarity: APINCSE's ▼ line 1-3 pt under APINCSE-IN's + line (different markers, so
    not hidden by the checker's test) read as one line; a line 20 pt away is left alone."""
    from cselab.workbench.plots.style import separate_coincident

    layers = np.arange(6)
    fig, (ax,) = titled("layer profile")
    ax.plot(layers, 0.53 + 0.01 * layers, marker="v", markersize=6, label="APINCSE")
    ax.plot(layers, 0.53 + 0.01 * layers + 0.0005, marker="P", markersize=6, label="APINCSE-IN")
    ax.plot(layers, 0.50 + 0.01 * layers, marker="o", markersize=6, label="SimCSE")
    ax.set_ylim(0.45, 0.60)    # 0.0005 here: about 1 pt as drawn; 0.03: about 40 pt
    assert separate_coincident([ax]) == [("APINCSE-IN", "APINCSE")]
    assert [line.get_label() for line in ax.lines] == ["APINCSE", "APINCSE-IN (= APINCSE)", "SimCSE"]
    fig, (ax,) = titled("layer profile")
    ax.plot(layers, 0.53 + 0.01 * layers, marker="v", markersize=6, label="APINCSE")
    ax.plot(layers, 0.53 + 0.01 * layers + 0.0015, marker="P", markersize=6, label="APINCSE-IN")
    ax.set_ylim(0.45, 0.60)    # 0.0015: about 2.5 pt, within half a 6 pt marker; 4 % of the data's span
    separate_coincident([ax])
    assert ax.lines[1].get_label() == "APINCSE-IN (≈ APINCSE)"


def test_save_figure_records_the_new_rules(tmp_path):
    import json

    fig, (ax,) = titled("STS-B dev")
    ax.plot([8, 16], [71.0, 74.0], label="SimCSE")
    fig.set_figwidth(8.0)
    save_figure(fig, tmp_path / "dev", formats=["png"])
    problems = json.loads((tmp_path / "dev.problems.json").read_text())["problems"]
    assert [p.split(":")[0] for p in problems] == ["the figure is 8.0 in wide, wider than a printed page (7.2 in)",
                                                   "panel 'STS-B dev'"]


# ------------------------------------------------------------------ the checker's public surface
def test_the_docs_table_names_every_rule_in_order():
    from conftest import REPO

    from cselab.workbench.plots.check import RULES

    text = (REPO / "docs" / "figures.md").read_text(encoding="utf-8")
    table = text[text.index("| rule | finds | threshold |"):text.index("**Adding a rule**")]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == [rule.name for rule in RULES]
    assert all(rule.finds for rule in RULES)   # each says what it finds (its docstring)


def test_a_rule_added_with_its_decorator_runs_and_names_its_panel():
    """What adding a rule is: one decorated function (here points coloured by fewer than 4 values)."""
    from cselab.workbench.plots.check import RULES, axes_name, panel_rule

    @panel_rule
    def few_point_colours(ax, drawn):
        """Points coloured by fewer than 4 distinct values (test rule)."""
        values = [np.unique(c.get_array()) for c in ax.collections if c.get_array() is not None]
        return [f"{axes_name(ax)}: coloured by {len(v)} values" for v in values if len(v) < 4]

    try:
        fig, (ax, other) = new_figure(2, panel_size=(2.4, 1.9))
        ax.set_title("three")
        ax.scatter([1, 2, 3], [1, 2, 3], c=[0, 1, 2])
        other.set_title("five")
        other.scatter([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], c=[0, 1, 2, 3, 4])
        assert check_figure(fig) == ["panel 'three': coloured by 3 values"]
        with pytest.raises(ValueError, match="registered twice"):
            panel_rule(few_point_colours)
    finally:
        RULES[:] = [rule for rule in RULES if rule.name != "few_point_colours"]
    assert check_figure(fig) == []


def test_nothing_outside_the_checker_imports_its_internals():
    """Plotting code, notebooks, benchmarks and tests use the package's public names only (``__all__``)."""
    import ast
    from importlib.util import resolve_name

    from conftest import REPO

    import cselab.workbench.plots.check as check

    package = REPO / "cselab" / "workbench" / "plots" / "check"
    outside = []
    for folder in ("cselab", "notebooks", "benchmarks", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if package in path.parents:
                continue   # the checker itself
            here = ".".join(path.relative_to(REPO).parent.parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    name = resolve_name("." * node.level + (node.module or ""), here) if node.level else node.module
                    if name == "cselab.workbench.plots.check":
                        outside += [f"{path.name}: {a.name}" for a in node.names if a.name not in check.__all__]
                    elif name and name.startswith("cselab.workbench.plots.check."):
                        outside.append(f"{path.name}: {name}")
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "check" \
                        and node.attr.startswith("_") and not node.attr.startswith("__"):
                    outside.append(f"{path.name}: check.{node.attr}")
    assert outside == []
