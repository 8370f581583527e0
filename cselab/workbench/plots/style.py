"""One look for every figure: a colour per method, series that stay visible, runs grouped by
method, legends off the data, integer ticks for integer quantities.

* :func:`method_color` — a colour-blind-safe colour (Okabe & Ito, 2008; Tol's muted scheme for the
  rest) keyed by **method**, the same in every figure of a study, whatever else the figure shows
  (statistics, steps and categories have palettes of their own: :mod:`cselab.workbench.plots.palettes`);
  :func:`method_marker` — its marker, from the same slot; :func:`method_style` both;
* :func:`measured` — the look of a series drawn through few measurements: points alone below 3,
  a marker at each below 6 (what the figure checker asks);
* :func:`series_styles` — colours (and, where two series would share one, dashes and markers) for
  the named series of one figure;
* :func:`run_groups` — runs that differ only in their seed, drawn as one series (faint seed lines
  and their mean) with one legend entry;
* :func:`separate_coincident` — series drawn exactly on top of each other get their own dashes and
  markers, and their legend entry says which one they coincide with;
* :func:`place_legend` — a legend inside the panel where it covers no data, else beside it;
* :func:`integer_ticks`, :func:`log2_ticks` — steps, batch sizes, K, layers, top-k, queue sizes.
"""
from __future__ import annotations

import re
import textwrap
import zlib
from typing import Mapping, Sequence

import numpy as np
from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator, ScalarFormatter

from ...model.methods import color_slots
from ..labels import is_pooler_only, method_key
# The palettes (methods, statistics, steps, categories) live in palettes.py; METHOD_PALETTE is read
# here by method_color (and named cselab.workbench.plots.style.METHOD_PALETTE where a method declares its slot).
from .palettes import (METHOD_MARKERS, METHOD_PALETTE, NON_METHOD_COLORS, NON_METHOD_MARKERS, OTHER_COLORS, is_statistic,
                       shade, statistic_colour, statistic_marker)

DASHES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
SEED_ALPHA = 0.3          # each seed of a group, under the group's mean
MAX_INSIDE_LEGEND = 6     # more entries than this go beside the panel
LEGEND_WRAP = 34          # characters per legend label line (longer labels are wrapped)
LEGEND_ROW_HEIGHT = 0.2   # inches per line of an 8-pt legend

def method_colors() -> dict[str, str]:
    """Each registered method's colour, by the slot it declares (read on every call)."""
    return {**{name: METHOD_PALETTE[slot] for name, slot in color_slots().items()}, **NON_METHOD_COLORS}


def method_color(name: str | Sequence[str]) -> str:
    """The colour of a method (a method key, display name, run label or config ``method`` list),
    the same in every figure; methods outside the papers get a stable colour of their own."""
    if is_pooler_only(name):   # SimCSE's loss on another pooler: neither SimCSE nor the family
        return NON_METHOD_COLORS["pooler_only"]
    key = method_key(name)
    colors = method_colors()
    if key in colors:
        return colors[key]
    text = key or (name if isinstance(name, str) else "+".join(name))
    return OTHER_COLORS[zlib.crc32(text.encode()) % len(OTHER_COLORS)]


def method_marker(name: str | Sequence[str]) -> str | None:
    """The marker of a method (anything :func:`method_color` reads), the same in every figure: its
    colour slot's (:data:`~.palettes.METHOD_MARKERS`); the untrained backbone's and the pooler-only
    control's their own; ``None`` for a name that is no method (the figure chooses)."""
    if is_untuned(name):
        return NON_METHOD_MARKERS["bert"]
    if is_pooler_only(name):
        return NON_METHOD_MARKERS["pooler_only"]
    key = method_key(name)
    slots = color_slots()
    if key in slots:
        return METHOD_MARKERS[slots[key] % len(METHOD_MARKERS)]
    if key:   # a method without a slot: a marker by its colour's hash, stable across figures
        return METHOD_MARKERS[zlib.crc32(key.encode()) % len(METHOD_MARKERS)]
    return None


def method_style(name: str | Sequence[str], variant: int = 0) -> dict:
    """Colour and marker of a method (the one place both come from): ``variant`` > 0, the
    ``variant``-th other variant of the method in one figure (another σ, k, M: the same method), is
    a shade of the method's colour (:func:`~.palettes.shade`), never another method's colour."""
    return {"color": shade(method_color(name), variant), "marker": method_marker(name) or "o"}


UNTUNED_PREFIXES = ("untuned ", "before training")


def is_untuned(name) -> bool:
    """Whether a series is a backbone before training ("untuned all-MiniLM-L6-v2", "before training")."""
    return str(name).lower().startswith(UNTUNED_PREFIXES)


def series_styles(names: Sequence[str], methods: Mapping[str, str | None] | None = None,
                  statistics: Mapping[str, str] | None = None) -> dict[str, dict]:
    """Line styles for the series ``names`` of one figure: each method's colour (``methods`` gives
    each name's method, else it is read from the name) and, for the series that are no method
    beside them, colours no method uses; the palette in order when no series is a method. Several
    series of one method (its variants: SimCSE and SimCSE both ways, ClusterNS at three σ) take
    shades of its colour, dashes and its own marker (the variant's family decides the hue and the
    shape); other series that share a colour are told apart by dashes and markers. ``statistics``
    gives the statistic key of a series named in words ("positive pairs": ``sim/pos_cos``), whose
    colour is then the statistic's."""
    from .core import color

    statistics = statistics or {}

    methods = {n: (methods or {}).get(n) or method_key(n) for n in names}
    any_method = any(methods.values())
    others = iter(OTHER_COLORS * (1 + len(names) // len(OTHER_COLORS)))
    styles, used = {}, {}
    for i, name in enumerate(names):
        # a series that is no method (the untrained backbone, a statistic) beside methods takes a
        # colour no method uses, so it never reads as one of them; the untuned backbone is grey and
        # a statistic has its own colour (the same in every figure)
        method = None
        if is_untuned(name):
            c = NON_METHOD_COLORS["bert"]
        elif is_pooler_only(name):
            c = method_color(name)
        elif methods[name]:
            method = methods[name]
            c = method_color(method)
        elif is_statistic(statistics.get(name, name)):
            c = statistic_colour(statistics.get(name, name))
        else:
            c = next(others) if any_method else color(i)
        n = used.get(c, 0)
        used[c] = n + 1
        # a control (a family's pooler alone) is dashed: lines it lies on stay visible between its dashes
        dash = DASHES[(n + 1) % len(DASHES)] if is_pooler_only(name) else DASHES[n % len(DASHES)]
        styles[name] = {"color": shade(c, n) if method and n else c, "linestyle": dash}
        if n:   # squares, triangles...: a plain dot is what every short line shows (measured)
            # a method's variants keep its marker while their dashes tell them apart; past the
            # dashes (five runs of one method drawn one by one: seeds, not variants) shapes do
            own = method_marker(method) if method and n < len(DASHES) else None
            styles[name]["marker"] = own or MARKERS[n % len(MARKERS)]
            styles[name]["markersize"] = 3
    return styles


# A line through fewer measurements than this shows a marker at each, so that the reader sees where
# the measurements are (and that the line between them is an interpolation). The figure checker
# asks for markers below 6 points (cselab.workbench.plots.check.MARKED_BELOW); figures mark more generously.
MARK_POINTS_BELOW = 13
POINT_MARKERSIZE = 3


def measured(style: Mapping, n_points: int, marker: str = "o", markersize: float = POINT_MARKERSIZE) -> dict:
    """``style`` for a line through ``n_points`` measurements: fewer than 4 are points without a line
    (so few joined imply a trend nobody measured: the checker's MIN_LINE_POINTS), fewer than
    :data:`MARK_POINTS_BELOW` get a marker at each (the style's own, else ``marker``); more are left
    as they are."""
    from .check import MIN_LINE_POINTS

    style = dict(style)
    if n_points < MARK_POINTS_BELOW:
        if style.get("marker") in (None, "", "None", "none"):
            style["marker"] = marker
        style.setdefault("markersize", markersize)
    if n_points < MIN_LINE_POINTS:
        style["linestyle"] = "none"
    return style


def point_markers(names: Sequence[str], methods: Mapping[str, str | None] | None = None,
                  statistics: Mapping[str, str] | None = None) -> dict[str, str]:
    """A marker shape per series of one figure: a method's series its method's marker
    (:func:`method_marker`, ``methods`` giving each name's method where the name does not say it),
    whatever else the figure draws; the other series the shapes no method of the figure uses, in
    order (a dot for a single one). Where short lines of two methods coincide for a few steps, both
    shapes stay visible, and the series differ by more than colour. A statistic (its key, or its
    key in ``statistics``) has its own shape in every figure (:func:`~.palettes.statistic_marker`)."""
    methods, statistics = methods or {}, statistics or {}
    own = {name: method_marker(name) if is_untuned(name) or is_pooler_only(name)
           else method_marker(methods.get(name) or name) or statistic_marker(statistics.get(name, name))
           for name in names}
    if len(names) == 1 and own[names[0]] is None:
        return {names[0]: "o"}
    free = iter([m for m in MARKERS if m not in own.values()] * (1 + len(names)))
    return {name: own[name] or next(free) for name in names}


def group_label(name: str, n: int) -> str:
    return f"{name} (mean, {n} seeds)" if n > 1 else name


SEEDS_NOTE = "faint: each seed"   # the legend title of figures with grouped seeds


def dashed_controls_note(names: Sequence[str]) -> str:
    """The sentence a figure's note needs when it draws a family's pooler-only control (dashed in
    every figure: :func:`series_styles`), else ""."""
    controls = list(dict.fromkeys(str(n) for n in names if is_pooler_only(n)))
    if not controls:
        return ""
    return (f"Dashed: {', '.join(controls)}, the ablation's control (SimCSE's loss on the family's pooler, "
            "dashed in every figure); a line labelled \"(= X)\" or \"(≈ X)\" is dashed too: it lies on X.")


# ------------------------------------------------------------------ coincident series
def separate_coincident(axes: Sequence[Axes], names: Mapping[Axes, str] | None = None) -> list[tuple[str, str]]:
    """Give each labelled line that lies on an earlier one (same x, y within a line's width as drawn)
    its own dashes and markers — in every panel, so that a series keeps one look — and names the
    coincidence in its label: ``X (= Y)`` where the two series are equal in their data
    (:func:`cselab.workbench.plots.check.equal_series`: within 1 % of their span, not merely close at
    this scale; ``X (= Y in 'panel')`` when they are equal in some panels only), else ``X (≈ Y)``
    (the checker's ``unnamed_coincidences``); returns the (restyled, visible) pairs of labels."""
    from .check import SEED_COUNT, equal_series

    names = names or {}
    found: dict[str, tuple[str, list[Axes]]] = {}
    for ax in axes:
        lines = [line for line in ax.lines if line.get_label() and not line.get_label().startswith("_")]
        cover: dict = {}   # a line -> the line hiding it by the checker's test (searched once per line)
        for i, line in enumerate(lines):
            for earlier in lines[:i]:
                if earlier.get_label() in found:
                    continue
                same = _same_data(line, earlier) or _close_data(line, earlier)
                if not same and earlier not in cover:
                    cover[earlier] = _covering(earlier)
                if same or cover[earlier] is line:
                    found.setdefault(line.get_label(), (earlier.get_label(), []))[1].append(ax)
                    break
    for n, (hidden, (visible, where)) in enumerate(found.items()):
        both, equal = [], []
        for ax in axes:
            mine = [line for line in ax.lines if line.get_label() == hidden]
            theirs = [line for line in ax.lines if line.get_label() == visible]
            if mine and theirs:
                both.append(ax)
                if equal_series(mine[0], theirs[0])[0]:
                    equal.append(ax)
        if not equal:   # drawn on each other but not equal in the data: close, and said so
            claim = " (≈ {})"
        elif len(equal) == len(both):
            claim = " (= {})"
        elif len(equal) == 1:
            panel = names.get(equal[0]) or equal[0].get_title() or equal[0].get_ylabel() or "one panel"
            claim = f" (= {{}} in {_braces(repr(' '.join(panel.split())))})"
        elif len(equal) <= 3 and all("'" not in _panel_title(ax, names) for ax in equal):
            # which panels, by name: "in 2 panels" leaves the reader to find them
            panels = [f"'{_panel_title(ax, names)}'" for ax in equal]
            claim = f" (= {{}} in {_braces(', '.join(panels[:-1]))} and {_braces(panels[-1])})"
        else:
            claim = f" (= {{}} in {len(equal)} panels)"
        shown = SEED_COUNT.sub("", visible)   # the other's seed count is in its own label
        under = [line for ax in axes for line in ax.lines if line.get_label() == visible]
        below = {line.get_marker() for line in under}
        # its own shape (its method's: markers do not drift) where no other line has it, else a shape
        # no line of the panels has: one a later line shares would hide it again
        others = {line.get_marker() for ax in axes for line in ax.lines if line.get_label() != hidden}
        own = [line.get_marker() for ax in axes for line in ax.lines if line.get_label() == hidden]
        own = [m for m in own[:1] if m not in (None, "", "None", "none") and m not in below | others]
        marker = (own or [None])[0] or next((m for m in MARKERS[n % len(MARKERS):] + MARKERS if m not in below | others),
                                            next(m for m in MARKERS[n % len(MARKERS):] + MARKERS if m not in below))
        # and dashes no other line of that shape has (a solid one of the same shape hides any)
        same_shape = {line.get_linestyle() for ax in axes for line in ax.lines
                      if line.get_marker() == marker and line.get_label() != hidden}
        dashes = DASHES[1 + n % (len(DASHES) - 1):] + DASHES[1:]
        dash = next((d for d in dashes if d not in same_shape), dashes[0])
        # drawn on top, thinner than the line below and with smaller markers: the one below shows on
        # both sides of it (at the same width, its dashes covered the other's colour all along)
        width = min([line.get_linewidth() for line in under] or [rcParams["lines.linewidth"]])
        size = min([line.get_markersize() for line in under if line.get_marker() not in ("None", None, "")]
                   or [MARKER_ON_TOP / TOP_WIDTH])
        for ax in axes:
            for line in ax.lines:
                if line.get_label() == hidden:
                    if line.get_linestyle() not in ("None", "none", "", " "):   # points alone stay points
                        line.set_linestyle(dash)
                        line.set_linewidth(min(line.get_linewidth(), TOP_WIDTH * width))
                    line.set_marker(marker)
                    line.set_markersize(min(MARKER_ON_TOP, TOP_WIDTH * size))
                    line.set_label(hidden + claim.format(shown))
    return [(hidden, visible) for hidden, (visible, _) in found.items()]


def _braces(text: str) -> str:
    """``text`` inside a claim that is ``str.format``-ed later: a panel title's own braces
    (``$\\ell_{align}$``) kept as they are."""
    return text.replace("{", "{{").replace("}", "}}")


def _panel_title(ax: Axes, names: Mapping[Axes, str]) -> str:
    return " ".join((names.get(ax) or ax.get_title() or ax.get_ylabel() or "a panel").split())


# A line restyled on top of one it covers: this fraction of the covered line's width and marker size,
# markers at most this size (points).
TOP_WIDTH = 0.5
MARKER_ON_TOP = 3.5

# Lines whose vertices all lie closer than this (typographic points, as drawn) read as one line:
# a line is 1.5 pt wide. The figure checker's "hidden under" test is stricter, so a pair it would
# flag is always separated here.
COINCIDENT_PT = 1.0
# Lines whose every vertex lies within half a marker (or a line and a half without markers) of an
# earlier line's read as "which is which?": drawn apart and named "(≈ Y)" too (APINCSE under
# APINCSE-IN in a layer profile, 1-3 pt apart with different markers, was such a pair).
CLOSE_MARKER_SHARE = 0.5
CLOSE_LINE_WIDTHS = 1.5


def _covering(line):
    """The line whose stroke hides ``line`` by the figure checker's own test (it holds every part of
    ``line`` as drawn), or None: also paths whose vertices differ, e.g. two runs' trajectories, one
    lying along the other's segments."""
    from .check import covering_line

    ax = line.axes
    ax.get_xlim(), ax.get_ylim()   # settles autoscaled limits, so transData is the drawn one
    return covering_line(line, ax)


def _drawn_points(a, b) -> tuple[np.ndarray, np.ndarray] | None:
    """Both lines' vertices as drawn, in typographic points (the axes' limits settled first, so that
    transData is the drawn one), or None where they do not have the same number of vertices."""
    xa, ya = np.asarray(a.get_xdata(), float), np.asarray(a.get_ydata(), float)
    xb, yb = np.asarray(b.get_xdata(), float), np.asarray(b.get_ydata(), float)
    if xa.shape != xb.shape or ya.shape != yb.shape or not len(xa):
        return None
    ax = a.axes
    ax.get_xlim(), ax.get_ylim()
    to_pt = 72.0 / ax.figure.dpi
    return (ax.transData.transform(np.column_stack([xa, ya])) * to_pt,
            ax.transData.transform(np.column_stack([xb, yb])) * to_pt)


def _close_data(a, b) -> bool:
    """Every vertex of ``a`` within reach of ``b``'s at the same x, as drawn: half the larger marker,
    or :data:`CLOSE_LINE_WIDTHS` line widths where neither line has markers (typographic points)."""
    points = _drawn_points(a, b)
    if points is None or not np.allclose(np.asarray(a.get_xdata(), float), np.asarray(b.get_xdata(), float),
                                         equal_nan=True):
        return False
    marked = [line.get_markersize() for line in (a, b) if line.get_marker() not in (None, "", "None", "none")]
    reach = max(COINCIDENT_PT, CLOSE_MARKER_SHARE * max(marked) if marked else
                CLOSE_LINE_WIDTHS * max(a.get_linewidth(), b.get_linewidth()))
    return bool(np.allclose(*points, atol=reach, rtol=0, equal_nan=True))


def _same_data(a, b) -> bool:
    """Every vertex of ``a`` on ``b``'s as drawn (within :data:`COINCIDENT_PT`): as drawn, not as data,
    since a trajectory's x is a measurement too (ℓ_uniform), and two runs' paths that differ in the
    fourth decimal lie on each other all the same."""
    points = _drawn_points(a, b)
    return points is not None and bool(np.allclose(*points, atol=COINCIDENT_PT, rtol=0, equal_nan=True))


# ------------------------------------------------------------------ legends
def place_legend(ax: Axes, handles=None, labels=None, title: str | None = None, min_entries: int = 2) -> None:
    """A legend for ``ax`` (its labelled series, or ``handles``/``labels``) when it has at least
    ``min_entries``: inside the panel at the place that covers no data, else beside the panel
    (the figure is widened by the legend's width so that the panel keeps its own)."""
    from .check import legend_covers_data

    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    if len(handles) < min_entries:
        return
    kwargs = {"frameon": False, "title": title}
    if len(handles) <= MAX_INSIDE_LEGEND:
        for loc in ("best", "upper right", "upper left", "lower right", "lower left", "center right"):
            legend = ax.legend(handles, labels, loc=loc, **kwargs)
            if not legend_covers_data(legend, ax):
                return
            legend.remove()
    legend_beside(ax.get_figure(), handles, labels, title=title)


def legend_beside(fig: Figure, handles, labels, title: str | None = None, max_rows: int = 14, **kwargs) -> None:
    """One figure legend to the right of the panels: long labels wrapped, in as many columns as
    the figure's height needs (at most ``max_rows`` rows); the figure is widened by about the
    legend's width, so that the panels keep theirs. Where that would make the figure wider than a
    printed page (:data:`cselab.workbench.plots.rc.PAGE_WIDTH`), the legend goes under the panels instead, in
    as many columns as the width holds (:func:`legend_under`)."""
    from .core import LEGEND_CHAR_WIDTH
    from .rc import PAGE_WIDTH

    wrapped = [textwrap.fill(" ".join(str(label).split()), LEGEND_WRAP) for label in labels]
    lines = [label.count("\n") + 1 for label in wrapped]
    # columns: as many as the entries' lines need at the figure's height (a wrapped label takes
    # the height of its lines, not every entry that of the tallest)
    available = fig.get_figheight() - 0.3 - (0.2 if title else 0)
    per_column = max(max(lines), min(max_rows, int(available / LEGEND_ROW_HEIGHT)))
    ncols, used = 1, 0
    for n in lines:
        if used + n > per_column:
            ncols, used = ncols + 1, 0
        used += n
    longest = max([max(len(part) for part in label.split("\n")) for label in wrapped] +
                  [len(title or "") // ncols])
    extra = ncols * (0.5 + LEGEND_CHAR_WIDTH * longest)
    if fig.get_figwidth() + extra > PAGE_WIDTH:
        legend_under(fig, handles, labels, title=title, **kwargs)
        return
    fig.legend(handles, wrapped, loc="outside right center", frameon=False, ncols=ncols, title=title, **kwargs)
    fig.set_figwidth(fig.get_figwidth() + extra)


def legend_under(fig: Figure, handles, labels, title: str | None = None, **kwargs) -> None:
    """One figure legend under the panels in as many columns as the figure's width holds (labels
    wrapped); the figure grows by the legend's height, so that the panels keep theirs."""
    from .core import LEGEND_CHAR_WIDTH

    labels = [textwrap.fill(" ".join(str(label).split()), LEGEND_WRAP) for label in labels]
    longest = max(max(len(part) for part in label.split("\n")) for label in labels)
    ncols = max(1, min(len(labels), int(fig.get_figwidth() / (0.5 + LEGEND_CHAR_WIDTH * longest))))
    rows = -(-len(labels) // ncols)
    tallest = max(label.count("\n") + 1 for label in labels)
    fig.legend(handles, labels, loc="outside lower center", frameon=False, ncols=ncols, title=title, **kwargs)
    fig.set_figheight(fig.get_figheight() + 0.15 + LEGEND_ROW_HEIGHT * (rows * tallest + (1 if title else 0)))


def legend_below(fig: Figure, handles, labels, title: str | None = None, **kwargs) -> None:
    """One figure legend under the panels, in as many columns as the figure's width holds (one
    entry a row in a figure one column wide); the figure grows by the legend's height, so that the
    panels keep theirs."""
    from .core import LEGEND_CHAR_WIDTH

    width = fig.get_figwidth()
    longest = max(len(str(label)) for label in labels)
    ncols = max(1, min(len(labels), int(width // (0.45 + LEGEND_CHAR_WIDTH * longest))))
    if ncols == 1:
        labels = [textwrap.fill(str(label), int(width * 12)) for label in labels]
    rows = -(-len(labels) // ncols)
    tallest = max(str(label).count("\n") + 1 for label in labels)
    fig.legend(handles, labels, loc="outside lower center", frameon=False, ncols=ncols, title=title, **kwargs)
    lines = (sum(str(label).count("\n") + 1 for label in labels) if ncols == 1 else rows * tallest) + (1 if title else 0)
    fig.set_figheight(fig.get_figheight() + 0.1 + LEGEND_ROW_HEIGHT * lines)


# ------------------------------------------------------------------ ticks
def integer_ticks(axis) -> None:
    """Ticks at whole numbers only (steps, K, layers, top-k: never 17.5)."""
    axis.set_major_locator(MaxNLocator(integer=True))


MIN_TICK_OCTAVES = 0.5


def log2_ticks(ax: Axes, values: Sequence[float], axis: str = "x", keep: Sequence[float] = ()) -> None:
    """A log₂ axis with ticks at ``values`` written as whole numbers (batch sizes 32 64 128 …);
    a value less than half an octave above the last ticked one gets no tick of its own (768 and
    1024 would print on top of each other), its point is drawn all the same — except the largest,
    which takes the tick of the one below it: the axis's end is always ticked (1024, not 768),
    unless the one below is in ``keep`` (the value the figure is about: BERT-base's d = 768),
    whose tick stays and whose close neighbours give theirs up — but for the axis's end on an x axis,
    whose label then sits a line lower."""
    ticked: list[float] = []
    kept = {float(k) for k in keep}
    ordered = sorted({float(v) for v in values})
    for v in ordered:
        near = [k for k in kept if k != v and abs(np.log2(v / k)) < MIN_TICK_OCTAVES]
        if near and v not in kept:
            continue   # a kept value's tick wins over its close neighbour's
        if not ticked or np.log2(v / ticked[-1]) >= MIN_TICK_OCTAVES or v in kept:
            if ticked and v in kept and np.log2(v / ticked[-1]) < MIN_TICK_OCTAVES and ticked[-1] not in kept:
                ticked[-1] = v
            else:
                ticked.append(v)
        elif v == ordered[-1] and len(ticked) > 1 and ticked[-1] not in kept:
            ticked[-1] = v
    # the axis's end keeps a tick even beside a kept value (768 and 1024): on an x axis its label drops a
    # line, so that the two numbers never print on top of each other
    staggered = ordered[-1] if ordered and ordered[-1] not in ticked and axis == "x" else None
    values = ticked + ([staggered] if staggered is not None else [])
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target.set_major_locator(FixedLocator(values))
    formatter = ScalarFormatter()
    formatter.set_scientific(False)
    target.set_major_formatter(formatter)
    target.set_minor_locator(NullLocator())
    if staggered is not None:   # the last tick's label one line lower (matplotlib keeps a tick's pad while the count stays)
        last = target.get_major_ticks(len(values))[-1]
        last.set_pad(last.get_pad() + 1.2 * last.label1.get_fontsize())
