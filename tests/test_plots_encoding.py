"""One encoding per method across every figure: colour and marker come from one place (the method's
colour slot), a variant of a method takes a shade of its method's colour and keeps its marker, and a
record sweep draws each point in its own variant's method; a line joins seed means only over one
set of seeds, and where seed counts differ each point says its n."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex

from cselab.model.methods import color_slots
from cselab.workbench.labels import display_name, method_key
from cselab.workbench.plots import check_figure
from cselab.workbench.plots.claims import plot_seed_points
from cselab.workbench.plots.palettes import METHOD_MARKERS, METHOD_PALETTE, NON_METHOD_MARKERS, shade
from cselab.workbench.plots.style import method_color, method_marker, method_style, point_markers, series_styles


def test_every_method_has_one_colour_and_one_marker_whatever_names_it():
    seen_colours, seen_markers = {}, {}
    for key, slot in color_slots().items():
        spellings = [key, display_name(key), f"{key}-s1"]
        assert {method_color(s) for s in spellings} == {METHOD_PALETTE[slot]}, spellings
        assert {method_marker(s) for s in spellings} == {METHOD_MARKERS[slot]}, spellings
        seen_colours[key], seen_markers[key] = METHOD_PALETTE[slot], METHOD_MARKERS[slot]
    # no two methods share a colour or a marker
    assert len(set(seen_colours.values())) == len(seen_colours)
    assert len(set(seen_markers.values())) == len(seen_markers)
    # the families' variants the issue names: APINCSE is never in APINCSE-IN's colour
    assert method_color("APINCSE") != method_color("APINCSE-IN") == method_color("apincse-no_in")
    assert method_color("apincse-k8") == method_color("apincse-layer-interlayer=2") == method_color("APINCSE")
    assert method_color("simcse") != method_color("gs_infonce")
    assert method_marker("APINCSE pooler only") == NON_METHOD_MARKERS["pooler_only"]
    assert method_marker("untuned all-MiniLM-L6-v2") == NON_METHOD_MARKERS["bert"]
    assert method_marker("σ = 0.2") is None                     # no method: the figure chooses


def test_a_marker_does_not_drift_with_a_methods_place_in_the_figure():
    """ClusterNS was ◆, ▽ or ■ and MixCSE ■ or × by their place in each figure's list."""
    for names in (["SimCSE", "ClusterNS", "MixCSE"], ["MixCSE", "ClusterNS"], ["ClusterNS"],
                  ["untuned all-MiniLM-L6-v2", "SimCSE", "GS-InfoNCE", "MixCSE", "ClusterNS"]):
        markers = point_markers(names)
        for name in names:
            if method_key(name):
                assert markers[name] == method_marker(name), (names, name)
    assert point_markers(["ClusterNS"])["ClusterNS"] == "D" and point_markers(["MixCSE"])["MixCSE"] == "s"
    # series that are no method take shapes no method of the figure has
    markers = point_markers(["SimCSE", "ClusterNS", "ω = 90°", "ω = 120°"])
    assert markers["ω = 90°"] not in {"o", "D"} and markers["ω = 120°"] not in {"o", "D", markers["ω = 90°"]}
    assert point_markers(["positive pairs"]) == {"positive pairs": "o"}


def test_variants_of_one_method_take_shades_of_its_colour_and_its_marker():
    names = ["σ = 0.2", "σ = 0.4", "σ = 0.6"]
    styles = series_styles(names, {n: "clusterns" for n in names})
    purple = method_color("clusterns")                         # #CC79A7
    assert [s["color"] for s in styles.values()] == [purple, shade(purple, 1), shade(purple, 2)]
    # the shades by hand: 45 % towards white, then 35 % towards black
    assert shade("#CC79A7", 1) == to_hex([(204 + 0.45 * 51) / 255, (121 + 0.45 * 134) / 255, (167 + 0.45 * 88) / 255])
    assert shade("#CC79A7", 2) == to_hex([0.65 * 204 / 255, 0.65 * 121 / 255, 0.65 * 167 / 255])
    assert [s["linestyle"] for s in styles.values()] == ["-", "--", ":"]
    assert {s.get("marker", "D") for s in styles.values()} == {"D"}
    # a shade is never another method's colour
    for colour in (shade(c, k) for c, k in itertools.product(METHOD_PALETTE, range(1, 5))):
        assert colour not in METHOD_PALETTE
    # two methods keep their own colours (no shade): SimCSE and SimCSE both ways share SimCSE's hue
    styles = series_styles(["SimCSE", "SimCSE, both directions", "MixCSE"])
    assert styles["SimCSE"]["color"] == method_color("simcse") and styles["MixCSE"]["color"] == method_color("mixcse")
    assert styles["SimCSE, both directions"]["color"] == shade(method_color("simcse"), 1)
    assert method_style("gs_infonce", 1) == {"color": shade(method_color("gs_infonce"), 1), "marker": "^"}


def _sweep(seeds: dict[float, list[int]], variants: dict[float, str]) -> pd.DataFrame:
    rows = []
    for x, ss in seeds.items():
        for s in ss:
            rows.append({"x": x, "avg": 75.0 + 0.1 * x + 0.01 * s, "variant": variants[x], "seed": s})
    return pd.DataFrame(rows)


def _means(ax):
    """The markers of the means: one point each (the seeds' dots are several)."""
    return [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == 1]


def _lines(ax):
    return [line for line in ax.lines if len(line.get_xdata()) > 1]


def test_a_sweep_joins_means_only_over_the_same_seeds_and_says_n_per_point():
    """table5_interlayer: M = 1 and 5 over seeds 1-6, M = 2-4 over seeds 1-3; a line through those
    means draws which seeds were averaged as a trend. Points, and each tick its n."""
    variants = {1.0: "apincse-layer1", 2.0: "apincse-layer-interlayer=2", 3.0: "apincse-layer-interlayer=3",
                4.0: "apincse-layer-interlayer=4", 5.0: "apincse"}
    fig = plot_seed_points(_sweep({1.0: [1, 2, 3, 4, 5, 6], 2.0: [1, 2, 3], 3.0: [1, 2, 3], 4.0: [1, 2, 3],
                                   5.0: [1, 2, 3, 4, 5, 6]}, variants), "x", method="augmented_positive")
    ax = fig.axes[0]
    assert _lines(ax) == []
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1\n6", "2\n3", "3\n3", "4\n3", "5\n6"]
    note = fig._cselab_note.get_text().replace("\n", " ")
    assert "the number under each setting: its seeds" in note and "no line" in note
    # every point in APINCSE's colour (the variants say APINCSE, whatever the study file's hint)
    means = _means(ax)
    assert {to_hex(c.get_facecolor()[0]) for c in means} == {method_color("apincse").lower()}
    assert check_figure(fig) == []
    # the same seeds at every setting: a line through the means, one n in the note, none under the ticks
    fig = plot_seed_points(_sweep({x: [1, 2, 3] for x in variants}, variants), "x")
    ax = fig.axes[0]
    (line,) = _lines(ax)
    # means by hand: 75 + 0.1 x + 0.01 × mean(1, 2, 3)
    assert np.allclose(line.get_ydata(), [75.12, 75.22, 75.32, 75.42, 75.52])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4", "5"]
    assert "(3 seeds a point)" in fig._cselab_note.get_text().replace("\n", " ")
    # the same number of seeds but other seeds: no line either
    fig = plot_seed_points(_sweep({1.0: [1, 2, 3], 2.0: [4, 5, 6], 3.0: [1, 2, 3], 4.0: [1, 2, 3], 5.0: [1, 2, 3]},
                                  variants), "x")
    assert _lines(fig.axes[0]) == []


def test_simcse_at_m_0_of_a_gs_infonce_sweep_is_drawn_as_simcse():
    variants = {0.0: "simcse", 1.0: "gs_infonce-m1", 3.0: "gs_infonce", 8.0: "gs_infonce-m8"}
    fig = plot_seed_points(_sweep({0.0: [1, 2, 3, 4, 5], 1.0: [1, 2, 3], 3.0: [1, 2, 3], 8.0: [1, 2, 3]}, variants),
                           "x", method="gs_infonce")
    ax = fig.axes[0]
    means = {float(c.get_offsets()[0][0]): c for c in _means(ax)}
    assert to_hex(means[0.0].get_facecolor()[0]) == method_color("simcse").lower()
    assert {to_hex(means[x].get_facecolor()[0]) for x in (1.0, 3.0, 8.0)} == {method_color("gs_infonce").lower()}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["SimCSE", "GS-InfoNCE"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0\n5", "1\n3", "3\n3", "8\n3"]


def test_two_series_of_one_method_are_its_colour_and_a_shade_with_n_per_series():
    """table3_sigma: with and without BML are both ClusterNS (teal and purple there meant σ elsewhere)."""
    rows = []
    for hue, label, seeds in (("with BML", "clusterns", [1, 2, 3, 4]), ("without BML", "clusterns-no_fn", [1, 2, 3])):
        for x in (0.2, 0.4, 0.6):
            rows += [{"x": x, "avg": 76.0 + s / 10, "bml": hue, "variant": label, "seed": s} for s in seeds]
    fig = plot_seed_points(pd.DataFrame(rows), "x", hue="bml")
    ax = fig.axes[0]
    legend = ax.get_legend() or fig.legends[0]   # inside the panel, or beside it
    handles = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles))
    purple = method_color("clusterns").lower()
    assert to_hex(handles["with BML"].get_facecolor()[0]) == purple
    # the second series: the shade as its edge, open (two near-identical pinks read apart by the fill)
    assert to_hex(handles["without BML"].get_edgecolor()[0]) == shade(purple, 1)
    assert to_hex(handles["without BML"].get_facecolor()[0]) == "#ffffff"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.2\n4 · 3", "0.4\n4 · 3", "0.6\n4 · 3"]


@pytest.mark.parametrize("study", ["paper-apincse", "paper-clusterns", "paper-gs-infonce", "paper-mixcse"])
def test_a_record_sweeps_method_is_the_method_of_its_variants(study):
    """paper-apincse's sweeps said ``method: augmented_positive`` (APINCSE-IN's colour) over APINCSE's runs."""
    from cselab.workbench.studies.spec import load_study

    spec = load_study(study, "cpu", notebooks=False)
    sweeps = [f.spec for f in spec.claims.figures if f.kind == "sweep" and f.spec.get("method")]
    for sweep in sweeps:
        keys = pd.Series([method_key(v) for v in sweep["points"].values()])
        assert sweep["method"] == keys.mode().iloc[0], sweep["name"]


def test_the_log2_axis_keeps_a_tick_at_the_value_the_figure_is_about():
    """spherical_cap: d = 768 (BERT-base) lost its tick to 1024, half an octave above it."""
    from cselab.workbench.plots import new_figure
    from cselab.workbench.plots.style import log2_ticks

    dims = [16, 64, 256, 768, 1024]
    for keep, ticks in (((), [16, 64, 256, 1024]), ((768,), [16, 64, 256, 768, 1024])):
        fig, (ax,) = new_figure()
        ax.plot(dims, [0.1, 0.05, 0.02, 0.01, 0.008], marker="o")
        log2_ticks(ax, dims, keep=keep)
        assert list(ax.get_xticks()) == ticks
    # the axis's end beside the kept 768 keeps its tick, its label a line lower (the two never overlap)
    fig.canvas.draw()
    labels = ax.get_xticklabels()
    assert [t.get_text() for t in labels] == ["16", "64", "256", "768", "1024"]
    renderer = fig._get_renderer()
    assert labels[-1].get_window_extent(renderer).y1 < labels[-2].get_window_extent(renderer).y0
    assert check_figure(fig) == []


def test_seed_means_keep_each_methods_marker_and_draw_no_glyph_for_an_interval_not_drawn():
    """paper_mixcse largest_angle: MixCSE as × (seaborn's second marker) and a '|' glyph beside
    'one seed: no interval'; then a blank row for it (issue 54, round 4): a legend row is for
    something drawn, so with one seed the words are the legend's title and every row has a glyph."""
    from cselab.workbench.plots import plot_seed_means

    frame = pd.DataFrame([{"variant": v, "step": s, "seed": 1, "angle": 74 + s / 2 + (0.3 if v == "simcse" else 0)}
                          for v in ("simcse", "mixcse") for s in (0, 4, 8, 12, 16)])
    fig = plot_seed_means(frame, x="step", y="angle", hue="variant")
    legend = fig.axes[0].get_legend() or fig.legends[0]
    glyphs = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles))
    assert glyphs["MixCSE"].get_marker() == method_marker("mixcse") == "s"
    assert glyphs["SimCSE"].get_marker() == "o"
    assert list(glyphs) == ["SimCSE", "MixCSE"]                     # no row for the interval not drawn
    assert legend.get_title().get_text() == "one seed (n = 1): no interval"
    assert all(h.get_marker() not in ("None", "none", None, "") for h in legend.legend_handles)
    assert not [line for line in fig.axes[0].lines if line.get_gid() == "interval" and len(line.get_xdata())]


def test_record_curves_name_lines_that_end_on_each_other_and_keep_method_markers():
    """clustering_start: σ = 0.4 and 0.6 at a share of 1.0 from step 10, all three from step 20: the
    lines below read as missing unless the figure says so."""
    from cselab.workbench.plots.claims import plot_seed_curves

    def starts(first: dict[int, int]) -> pd.DataFrame:   # seed -> the step it starts clustering at
        return pd.DataFrame([{"seed": s, "step": step, "value": float(step >= at)}
                             for s, at in first.items() for step in (1, 10, 20, 30, 40)])

    fig = plot_seed_curves({"σ = 0.2": starts({1: 20, 2: 20, 3: 20}), "σ = 0.4": starts({1: 10, 2: 10, 3: 10}),
                            "σ = 0.6": starts({1: 1, 2: 10, 3: 10})}, "share of seeds clustering", share=True)
    note = " ".join(fig._cselab_note.get_text().split())
    assert note.endswith("Lines on each other (the same value at every step to the end): σ = 0.4 and σ = 0.6 "
                         "from step 10 and all 3 from step 20.")
    fig = plot_seed_curves({"SimCSE": starts({1: 1, 2: 20}), "MixCSE": starts({1: 30, 2: 40})}, "share", share=True)
    assert "Lines on each other" not in fig._cselab_note.get_text()
    assert {line.get_label(): line.get_marker() for line in fig.axes[0].lines} == {"SimCSE": "o", "MixCSE": "s"}


def test_record_curves_over_different_seed_counts_say_each_lines_n():
    """largest_angle: SimCSE over 13 seeds, MixCSE without the stop-gradient over 5; "n = 5–13" under the
    figure did not say which line rests on which."""
    from cselab.workbench.plots.claims import plot_seed_curves

    def curve(seeds: int, shift: float = 0.0) -> pd.DataFrame:
        return pd.DataFrame([{"seed": s, "step": step, "value": 80.0 + shift + step / 10 + s / 100}
                             for s in range(1, seeds + 1) for step in (0, 10, 20)])

    fig = plot_seed_curves({"SimCSE": curve(13), "MixCSE w/o stop-gradient": curve(5, 2.0)}, "largest angle (°)")
    assert [line.get_label() for line in fig.axes[0].lines] == ["SimCSE (n 13)", "MixCSE w/o stop-gradient (n 5)"]
    assert "each line's in the legend" in " ".join(fig._cselab_note.get_text().split())
    fig = plot_seed_curves({"SimCSE": curve(3), "MixCSE": curve(3, 2.0)}, "largest angle (°)")
    assert [line.get_label() for line in fig.axes[0].lines] == ["SimCSE", "MixCSE"]
    assert "n = 3 seeds" in fig._cselab_note.get_text()


def test_metric_grid_axes_carry_no_corner_text_and_a_share_spans_0_to_1():
    """method_statistics: "1e−7" over ClusterNS's BML panel; the false-negative share on 0.81–0.88
    there but 0–1 in Fig. 7."""
    from cselab.workbench.plots.panels import plot_metric_grid

    steps = np.arange(0, 64, 4)
    frame = pd.DataFrame({"run": "clusterns-s1", "step": steps,
                          "sim/clusterns.false_neg_rate": 0.81 + 0.004 * (steps % 5),
                          "loss/bml": 3e-7 * (1 + np.sin(steps)),
                          "sim/clusterns.nonempty_clusters": 40.0 + steps % 3})
    fig = plot_metric_grid(frame, ["sim/clusterns.false_neg_rate", "loss/bml", "sim/clusterns.nonempty_clusters"])
    share, bml, clusters = fig.axes[:3]
    assert share.get_ylim() == (0.0, 1.0)
    assert bml.get_title().endswith("(× 10⁻⁷)")
    assert fig._suptitle is None   # the last panel's title was once the figure's too (a shadowed name)
    fig.canvas.draw()
    assert [ax.yaxis.get_offset_text().get_text() for ax in (share, bml, clusters)] == ["", "", ""]
    # the scaled tick labels: 3e-7 reads 3 under "× 10⁻⁷"
    assert bml.yaxis.get_major_formatter()(3e-7, 0) == "3"
    assert check_figure(fig) == []


def test_one_variants_cosines_share_one_panel_in_their_statistics_colours():
    """noise_similarity: three panels 7.85 in tall, no 'mean cosine', no method named, the noise
    negatives' ±0.002 drawn as a zigzag on an axis of its own. One axis, the variant in the title."""
    from cselab.workbench.paper_tables.record_report import _figure, committed_record, study_frame
    from cselab.workbench.method_views import statistic_colours
    from cselab.workbench.studies.record import read_record
    from cselab.workbench.studies.spec import load_study

    spec = load_study("paper-gs-infonce", "cpu", notebooks=False)
    frame, records = study_frame(spec, read_record(committed_record("paper-gs-infonce", REPO)))
    (figure,) = [f for f in spec.claims.figures if f.name == "noise_similarity"]
    fig = _figure(spec, figure.spec, records, frame)
    (ax,) = fig.axes
    assert fig._suptitle.get_text() == "GS-InfoNCE (M = 3×)" and ax.get_ylabel() == "mean cosine to the anchors"
    colours = {line.get_label(): line.get_color() for line in ax.lines}
    assert colours == {"positive": statistic_colours()["positive"], "in-batch negative": statistic_colours()["in-batch negative"],
                       "noise negative": statistic_colours()["noise negative"]}
    assert fig.get_figheight() < 4
    assert check_figure(fig) == []


def test_stacked_record_curves_share_one_step_range():
    """centroid_movement: the movement from step 10 on, the cosine from step 1: two x ranges."""
    from cselab.workbench.plots.claims import plot_seed_curves

    def curve(steps):
        return pd.DataFrame([{"seed": s, "step": t, "value": 0.1 * t + s} for s in (1, 2, 3) for t in steps])

    fig = plot_seed_curves({}, "", panels={"movement": {"σ = 0.2": curve([10, 20, 30, 40])},
                                           "cosine": {"σ = 0.2": curve([1, 10, 20, 30, 40])}})
    top, bottom = fig.axes[:2]
    assert top.get_xlim() == bottom.get_xlim() and list(top.get_xticks()) == list(bottom.get_xticks()) == [1, 10, 20, 30, 40]


def test_a_statistic_has_one_colour_and_one_shape_in_the_records_figures_and_the_demos():
    """figure3_similarity and figure4_clusters coloured their statistics by palette position (in-batch
    negatives purple in one, yellow in the other), and the demo's shapes were whichever was free. A
    statistic named in words takes its key's colour and shape, the same as under its key."""
    from cselab.workbench.paper_tables.record_report import _figure, committed_record, study_frame
    from cselab.workbench.plots.palettes import STATISTIC_MARKERS, statistic_colour, statistic_marker
    from cselab.workbench.studies.record import read_record
    from cselab.workbench.studies.spec import load_study

    kinds = ["sim/pos_cos", "sim/neg_cos", "sim/clusterns.hard_neg_cos", "sim/mixcse.mixed_cos"]
    assert len({statistic_marker(k) for k in kinds}) == len(kinds) and statistic_marker("no such statistic") is None
    assert len(set(STATISTIC_MARKERS)) == len(STATISTIC_MARKERS)
    words = {"in-batch negatives": "sim/neg_cos", "hard negatives": "sim/clusterns.hard_neg_cos"}
    assert point_markers(list(words), statistics=words) == {w: statistic_marker(k) for w, k in words.items()}
    assert point_markers(["sim/neg_cos"]) == {"sim/neg_cos": statistic_marker("sim/neg_cos")}
    spec = load_study("paper-clusterns", "cpu", notebooks=False)
    frame, records = study_frame(spec, read_record(committed_record("paper-clusterns", REPO)))
    drawn = {}
    for name in ("figure3_similarity", "figure4_clusters"):
        (figure,) = [f for f in spec.claims.figures if f.name == name]
        fig = _figure(spec, figure.spec, records, frame)
        assert fig._suptitle.get_text() == "ClusterNS"
        drawn[name] = {line.get_label(): (to_hex(line.get_color()), line.get_marker()) for line in fig.axes[0].lines}
    neg = (to_hex(statistic_colour("sim/neg_cos")), statistic_marker("sim/neg_cos"))
    assert drawn["figure3_similarity"]["in-batch negatives"] == drawn["figure4_clusters"]["in-batch negatives"] == neg
    hard = (to_hex(statistic_colour("sim/clusterns.hard_neg_cos")), statistic_marker("sim/clusterns.hard_neg_cos"))
    assert drawn["figure3_similarity"]["hard negatives"] == drawn["figure4_clusters"]["sample–hard negative"] == hard


def test_a_methods_settings_are_shades_of_its_colour_the_method_itself_in_the_colour():
    """centroid_movement: ClusterNS at σ 0.2 / 0.4 / 0.6 were teal, purple and light blue, so that σ = 0.4,
    which is ClusterNS, was purple beside the pink of every other ClusterNS figure."""
    from cselab.workbench.plots.claims import plot_seed_curves

    def curve(shift):
        return pd.DataFrame([{"seed": s, "step": t, "value": t + shift + s} for s in (1, 2, 3) for t in (0, 10, 20, 30)])

    names = {"σ = 0.2": "clusterns", "σ = 0.4": "clusterns", "σ = 0.6": "clusterns"}
    fig = plot_seed_curves({n: curve(i) for i, n in enumerate(names)}, "cos", methods=names, leading=["σ = 0.4"])
    colours = {line.get_label(): to_hex(line.get_color()) for line in fig.axes[0].lines}
    base = to_hex(method_color("clusterns"))
    assert colours["σ = 0.4"] == base
    assert {colours["σ = 0.2"], colours["σ = 0.6"]} == {to_hex(shade(base, 1)), to_hex(shade(base, 2))}
    assert {line.get_marker() for line in fig.axes[0].lines} == {method_marker("clusterns")}


def test_a_record_sweep_draws_the_seeds_every_setting_ran_and_says_what_trained_them():
    """table4_topk: k 8 and 32 over seeds 1–5 (legacy runs) beside k 16's 19 pooled seeds, under a note
    pointing to a test that does not exist. Each point is now the same seeds, and the note says which
    and how many code identities and CPU kinds trained them."""
    from cselab.workbench.paper_tables.record_report import _on_shared_seeds

    data = pd.DataFrame({"x": [8.0] * 3 + [16.0] * 5, "series": "", "variant": ["k8"] * 3 + ["k16"] * 5,
                         "seed": [1, 2, 3, 1, 2, 3, 7, 8], "avg": [75.0, 75.1, 75.2, 75.3, 75.4, 75.5, 76.0, 76.1]})
    frame = pd.DataFrame({"variant": ["k8"] * 3 + ["k16"] * 5, "seed": [1, 2, 3, 1, 2, 3, 7, 8],
                          "code": ["a", "a", "b", "a", "a", "b", "c", "c"], "cpu": ["amx"] * 3 + ["amx"] * 3 + ["bf16"] * 2})
    kept, words = _on_shared_seeds(data, frame, ["x", "series"])
    assert sorted(kept["seed"].unique()) == [1, 2, 3] and len(kept) == 6
    assert words.startswith("seeds 1–3, the seeds every setting ran; their runs are of 2 code identities and 1 CPU kind,")
    same = frame.assign(code="a", cpu="amx")
    assert _on_shared_seeds(data, same, ["x", "series"])[1].endswith("the claims table tests the paired differences")
    apart = data.assign(seed=[1, 2, 3, 4, 5, 6, 7, 8])
    kept, words = _on_shared_seeds(apart, frame.assign(seed=[1, 2, 3, 4, 5, 6, 7, 8]), ["x", "series"])
    assert len(kept) == 8 and words.startswith("the seeds differ between settings")


def test_points_that_overlap_are_ringed_and_the_note_says_their_size_is_no_measurement():
    """alignment_uniformity: GS-InfoNCE's triangle drawn at 4× the area around SimCSE's point, unexplained,
    read as an encoding."""
    from cselab.workbench.plots import new_figure
    from cselab.workbench.plots.core import figure_note
    from cselab.workbench.plots.point_labels import label_points

    fig, (ax,) = new_figure()
    xs, ys = [0.5, 0.5, 0.52, 0.52], [0.5, 0.5, 0.52, 0.52]   # crowded: no label finds a free place
    name = "a model whose name is far too long to be written beside its point in this panel"
    for i, (x, y) in enumerate(zip(xs, ys)):
        ax.scatter([x], [y], s=30, marker=["o", "^", "s", "D"][i], label=f"{name} {i}")
    ax.set_xlim(0.45, 0.57), ax.set_ylim(0.45, 0.57)
    label_points(ax, xs, ys, [f"{name} {i}" for i in range(4)], marked=True)
    sizes = [c.get_sizes()[0] for c in ax.collections if len(c.get_offsets()) == 1]
    assert sizes[:2] == [30, 120] and all(not len(c.get_facecolor()) or c.get_facecolor()[0][3] == 0
                                          for c in ax.collections[:4])
    assert "a marker's size is not a measurement" in " ".join(figure_note(fig).split())
