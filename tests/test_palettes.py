"""One meaning per colour: methods, training statistics, steps and categories each have a palette of
their own; the statistic palette never reuses (or comes near) a method colour, a statistic keeps its
colour in every figure, steps are a sequential ramp, and categorical colours are pairwise
distinguishable (CIEDE2000, checked against Sharma, Wu & Dalal's reference pairs)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from cselab.workbench.plots import categorical_colours, plot_profile_grid, plot_similarity_dynamics, statistic_colour, step_colours
from cselab.workbench.plots.palettes import (CATEGORICAL_COLOURS, METHOD_PALETTE, NON_METHOD_COLORS, OTHER_COLORS,
                                   STATISTIC_RESERVE, ciede2000, delta_e, lab, statistic_kind)
from cselab.workbench.method_views import statistic_colours
from cselab.workbench.plots.style import method_color, method_colors

DISTINCT = 15.0       # CIEDE2000: colours of different meanings are at least this far apart
CATEGORICAL = 20.0    # categories a reader must tell apart at a glance (tab20's first 14 come within 12.1)

METHOD_COLOURS = [*METHOD_PALETTE, *OTHER_COLORS]   # slots, and the colours of methods without a slot
STATISTICS = [*statistic_colours().values(), *STATISTIC_RESERVE]


@pytest.mark.parametrize("pair, expected", [
    (((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)), 2.0425),
    (((50.0, 0.0, 0.0), (50.0, -1.0, 2.0)), 2.3669),
    (((50.0, 2.5, 0.0), (73.0, 25.0, -18.0)), 27.1492),
    (((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387)), 1.2644),
    (((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514)), 0.9082),
])
def test_ciede2000_matches_the_reference_pairs(pair, expected):
    assert ciede2000(*pair) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(*pair[::-1]) == pytest.approx(expected, abs=1e-4)


def test_lab_of_white_and_red():
    assert lab("#ffffff") == pytest.approx([100.0, 0.0, 0.0], abs=1e-3)
    assert lab("#ff0000") == pytest.approx([53.2408, 80.0925, 67.2032], abs=1e-3)


def test_the_statistic_palette_and_the_method_palette_are_disjoint():
    assert not set(map(str.lower, STATISTICS)) & set(map(str.lower, [*METHOD_COLOURS, *method_colors().values()]))
    for stat, method in itertools.product(STATISTICS, [*METHOD_COLOURS, *NON_METHOD_COLORS.values()]):
        assert delta_e(stat, method) >= DISTINCT, (stat, method)
    for a, b in itertools.combinations(STATISTICS, 2):
        assert delta_e(a, b) >= DISTINCT, (a, b)


def test_a_statistic_keeps_its_colour_whatever_names_it():
    hard = statistic_colours()["hard negative"]
    assert statistic_colour("clusterns.hard_neg_cos") == statistic_colour("sim/clusterns.hard_neg_cos") == \
        statistic_colour("hard_neg_cos") == statistic_colour("hard negative") == hard
    # MixCSE's random negatives are the batch's other sentences: in-batch negatives
    assert statistic_colour("random_negative") == statistic_colour("neg_cos") == statistic_colours()["in-batch negative"]
    assert statistic_colour("positive") == statistic_colour("pos_cos")
    assert statistic_colour("mixcse.mixed_cos") == statistic_colour("mixed_negative")
    assert statistic_colour("gs_infonce.noise_cos") == statistic_colours()["noise negative"]
    # the interlayer negative is APINCSE's own, not the batch's
    assert statistic_kind("interlayer_negative.neg_cos") == "interlayer negative"
    unknown = statistic_colour("my_method.odd_cos")
    assert unknown in STATISTIC_RESERVE and unknown == statistic_colour("my_method.odd_cos")


def test_every_cosine_the_methods_log_has_a_kind():
    from cselab.model.methods import stat_labels

    cosines = [key for key in stat_labels() if key.endswith("_cos")]
    assert cosines and [key for key in cosines if statistic_kind(key) is None] == []


def test_clusterns_figures_3_and_4_draw_the_hard_negative_in_one_colour(tmp_path):
    """ClusterNS Fig. 3 and Fig. 4 list different statistics: the hard negative was green in one and
    orange in the other (a colour by position in the list)."""
    steps = np.arange(0, 40, 5)
    frame = pd.DataFrame({"run": "clusterns", "step": steps, "pos_cos": 0.9 - 0.001 * steps,
                          "neg_cos": 0.3 - 0.002 * steps, "clusterns.hard_neg_cos": 0.6 - 0.003 * steps,
                          "clusterns.nearest_centroid_cos": 0.7 - 0.001 * steps})
    figure3 = plot_similarity_dynamics(frame, ("pos_cos", "neg_cos", "clusterns.hard_neg_cos"), panels="run")
    figure4 = plot_similarity_dynamics(frame, ("clusterns.hard_neg_cos", "clusterns.nearest_centroid_cos"),
                                       panels="run")
    colours = [{line.get_label(): line.get_color() for line in fig.axes[0].lines} for fig in (figure3, figure4)]
    assert colours[0]["hard negative (2nd-nearest centroid)"] == colours[1]["hard negative (2nd-nearest centroid)"] == statistic_colours()["hard negative"]
    assert colours[0]["positive pairs"] == statistic_colours()["positive"]
    assert not set(colours[0].values()) & set(METHOD_COLOURS)


def test_steps_are_a_sequential_ramp_apart_from_every_method_and_statistic():
    for n in (1, 2, 3, 5, 9):
        ramp = step_colours(n)
        assert len(ramp) == n
        lightness = [lab(c)[0] for c in ramp]
        assert lightness == sorted(lightness, reverse=True)                 # light (early) to dark (late)
        assert all(abs(lab(c)[1]) < 1 and abs(lab(c)[2]) < 1 for c in ramp)   # greys: no hue of a method
        for step in ramp:
            for other in [*METHOD_COLOURS, *STATISTICS]:
                assert delta_e(step, other) >= DISTINCT, (step, other)
    assert step_colours(0) == []


def test_the_profile_grid_draws_steps_in_the_step_ramp_not_in_method_colours():
    fig = plot_profile_grid({run: {"step 0": [0.2, 0.5, 1.0], "step 8": [0.3, 0.6, 1.0], "step 16": [0.4, 0.7, 1.0]}
                             for run in ("simcse-s1", "mixcse-s1")})
    colours = {line.get_label(): line.get_color() for line in fig.axes[0].lines}
    assert list(colours.values()) == step_colours(3)
    assert not set(colours.values()) & set(method_color(m) for m in ("simcse", "mixcse"))


def test_categorical_colours_are_pairwise_distinguishable():
    colours = categorical_colours(14)                                       # DBpedia's 14 classes
    assert colours == list(CATEGORICAL_COLOURS) and len(set(colours)) == 14
    closest = min(delta_e(a, b) for a, b in itertools.combinations(colours, 2))
    assert closest >= CATEGORICAL
    # what the threshold rejects: tab20's paired light and dark hues
    from matplotlib import colormaps

    tab20 = colormaps["tab20"].colors[:14]
    assert min(delta_e(a, b) for a, b in itertools.combinations(tab20, 2)) < CATEGORICAL
    assert categorical_colours(5) == list(CATEGORICAL_COLOURS[:5])          # fewer: the most distinct first
    assert len(set(categorical_colours(20))) == 20


def test_the_pooler_only_control_has_its_own_colour_and_is_dashed():
    """APINCSE's pooler alone trains with SimCSE's loss: in SimCSE's blue it read as a second SimCSE,
    in APINCSE's orange as the method it controls for. Its own colour, whatever it is called."""
    from cselab.workbench.plots.style import series_styles

    control = NON_METHOD_COLORS["pooler_only"]
    assert control not in (method_color("simcse"), method_color("apincse")) and control not in OTHER_COLORS
    for name in ("apincse-pooler", "APINCSE pooler only", "APINCSE-bs64", "APINCSE-bs128"):
        assert method_color(name) == control, name
    styles = series_styles(["SimCSE", "APINCSE", "APINCSE-AP", "APINCSE pooler only"])
    assert styles["APINCSE pooler only"]["color"] == control
    assert styles["APINCSE pooler only"]["linestyle"] != "-"            # dashed: what it lies on shows through
    assert styles["SimCSE"]["color"] == method_color("simcse")          # SimCSE keeps its own
    assert method_color("simcse-bs128") == method_color("simcse")       # a SimCSE run at another batch size is SimCSE
