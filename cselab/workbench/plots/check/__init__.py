"""The figure checker: the defects a reader sees in a figure, found from its drawn layout.

:func:`check_figure` draws the figure once (Agg, cselab's style, the same layout ``save_figure``
writes), reads the renderer's bounding boxes and the data in display coordinates
(:mod:`.drawn`), and runs every rule of :mod:`.rules` on it. It returns one sentence per problem,
naming the panel (its title) and the artist (its label), and ``[]`` for a sound figure. Works on
figures built without pyplot (:func:`cselab.workbench.plots.core.new_figure`).

**What it checks** (:data:`RULES`, in this order; the thresholds are constants of :mod:`.rules`):

* ``layout_failed`` — matplotlib's own complaints while laying the figure out;
* ``too_wide`` — a figure wider than a printed page (:data:`cselab.workbench.plots.rc.PAGE_WIDTH`, 7.2 in,
  at the size it is saved: ``save_figure`` writes the figure's own size);
* ``small_texts`` — text smaller than :data:`cselab.workbench.plots.rc.MIN_TEXT_PT` (6 pt) at that size;
* ``overlapping_texts`` — texts on texts: titles, axis and tick labels, annotations and point
  labels, legend entries, colour-bar labels, figure titles whose boxes overlap;
* ``texts_off_canvas`` — text outside the canvas (cut off in the PNG);
* ``legends_over_data`` — a legend box over data: line vertices or segments, markers, bars, error
  bars, bands;
* ``few_colour_values`` — a colour bar over fewer than :data:`~.rules.MIN_COLOUR_VALUES` (4) distinct
  values (colour carries nothing there);
* per data panel: ``squeezed`` (narrower or lower than :data:`~.rules.MIN_PANEL_IN`),
  ``one_x_value`` (all its data at one x value: a "sweep" of one point), ``zero_length_intervals``
  (error bars from one value), ``sparse_lines`` (a line through fewer than
  :data:`~.rules.MIN_LINE_POINTS` (4) points — so few measurements joined imply a trend nobody
  measured: points with intervals — or through fewer than :data:`~.rules.MARKED_BELOW` (6) without a
  marker at each), ``ticks_off_grid`` (where a line without markers joins a few regularly spaced x
  values — the logged steps — most major x ticks over it fall on them; marked points and dense
  curves take any ticks), ``covered_series`` (a
  labelled series wholly under another line, whatever the colours, unless a label says "X (= Y)"
  or "X (≈ Y)"), ``unnamed_coincidences`` (a labelled line drawn along another all its length,
  restyled so that it shows, whose label does not say "(= Y)" or "(≈ Y)"),
  ``flat_bars`` (bars from zero whose heights in a group differ by less than
  :data:`~.rules.BAR_MIN_SPREAD`, 5 %, of the tallest: they look equal);
* ``false_equalities`` — a label "X (= Y)" (or "(= Y in 'panel')", "(= Y in 3 panels)") where the
  series is not Y's: some value differs from Y's by more than :data:`~.rules.EQUAL_RELATIVE` (1 %)
  of the larger of the two series' own spans — a tolerance from the data, not from the drawing.

Reference artists (``axhline``, a diagonal tagged ``gid="reference"``, intervals tagged
``gid="interval"`` by :func:`mark_intervals`) are no data series: the point-count, marker,
coverage and one-x rules skip them (:mod:`.drawn`).

**How a rule is added**: one function in :mod:`.rules` decorated with
:func:`~.rules.figure_rule` (``rule(drawn) -> list[str]``) or :func:`~.rules.panel_rule`
(``rule(ax, drawn) -> list[str]``), its threshold a named constant there, and a test in
``tests/test_figure_check.py`` that plants the defect beside a sound counterpart. Nothing else
changes: :func:`check_figure`, ``save_figure``'s records and the study index read :data:`RULES`.

What plotting code may use while it lays a figure out is exported here too (it never reaches for
the checker's internals): :func:`draw`, :func:`text_box`, :func:`drawn_ticks`,
:func:`boxes_overlap`, :func:`covering_line`, :func:`equal_series`, :func:`legend_covers_data`,
:func:`flat_bar_groups`, :func:`mark_intervals`, :func:`ticks_off_grid_of`, :data:`MIN_LINE_POINTS`.
"""
from __future__ import annotations

from matplotlib.figure import Figure

from ..rc import style
from .drawn import (INTERVAL_GID, REFERENCE_GID, REFERENCE_GIDS, DrawnFigure, TextItem, axes_name, boxes_overlap,
                    covering_line, draw, drawn_ticks, is_reference, mark_intervals, read_figure, text_box)
from .rules import (BAR_MIN_SPREAD, EQUAL_RELATIVE, MARKED_BELOW, MIN_COLOUR_VALUES, MIN_LINE_POINTS, RULES, SEED_COUNT, Rule,
                    equal_series,
                    equality_claim, figure_rule, flat_bar_groups, legend_covers_data, panel_rule, run_rules,
                    ticks_off_grid_of)

__all__ = ["BAR_MIN_SPREAD", "EQUAL_RELATIVE", "INTERVAL_GID", "MARKED_BELOW", "MIN_COLOUR_VALUES", "MIN_LINE_POINTS", "REFERENCE_GID",
           "REFERENCE_GIDS", "RULES", "SEED_COUNT", "DrawnFigure", "Rule", "TextItem", "axes_name", "boxes_overlap", "check_figure",
           "covering_line", "draw", "drawn_ticks", "equal_series", "equality_claim", "figure_rule", "flat_bar_groups",
           "is_reference", "legend_covers_data", "mark_intervals", "panel_rule", "read_figure", "text_box",
           "ticks_off_grid_of"]


def check_figure(fig: Figure, dpi: float = 200) -> list[str]:
    """Problems a reader would see in ``fig``, one readable sentence each; ``[]`` when it is sound.

    Drawn at ``dpi`` (that of :func:`cselab.workbench.plots.save_figure`'s PNG: the layout, text extents and
    ticks differ a little from one resolution to another), the figure's own dpi restored after."""
    own = fig.dpi
    fig.set_dpi(dpi)
    try:
        # in cselab's style throughout: the ticks an axis draws depend on the rc tick-label size
        # when they are asked for, not only while drawing
        with style():
            return run_rules(read_figure(fig))
    finally:
        fig.set_dpi(own)
