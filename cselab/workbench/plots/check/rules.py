"""The figure checker's rules: each reads a drawn figure (:class:`~.drawn.DrawnFigure`) and returns
one sentence per problem it finds, naming the panel (its title) and the artist (its label).

**Adding a rule** is one function here and one test:

1. a function decorated with :func:`figure_rule` (``rule(drawn) -> list[str]``, once per figure)
   or :func:`panel_rule` (``rule(ax, drawn) -> list[str]``, once per data panel, colour bars
   aside), its threshold a named constant at the top of this module, its docstring saying what it
   finds (the first line is how :data:`RULES` describes it in the docs);
2. a test in ``tests/test_figure_check.py`` that plants the defect beside a sound counterpart and
   sees it found and named (and ``tests/test_plots_checked.py`` still finding nothing in cselab's
   own figures).

Rules run in the order they are defined here (problems are listed in that order, each once); a
panel rule sees every data panel in turn. What a rule may read of the figure — texts and their
boxes, data series in display coordinates, markers, reference artists — is in :mod:`.drawn`.
"""
from __future__ import annotations

import itertools
import re
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.transforms import Bbox

from ..rc import MIN_TEXT_PT, PAGE_WIDTH
from .drawn import (DrawnFigure, all_marked, artist_label, axes_name, boxes_overlap, covering_line, data_axes,
                    data_series, display_xy, draw, drawn_as_line, drawn_ticks, finite, has_markers, is_colorbar,
                    is_reference,
                    marker_positions, named_lines, path_hits, px, quote, segments_hit, series_label, within)
from .drawn import COINCIDE_PX

OVERLAP_PX = 1.0      # texts whose boxes overlap by more than this (both ways, at 100 dpi) collide
CANVAS_PX = 1.0       # a text further than this outside the canvas is cut off
MIN_PANEL_IN = 0.6    # a panel narrower or lower than this (inches) is squeezed by its neighbours
ZERO_RELATIVE = 1e-9  # an error bar shorter than this (relative to its values) has length zero
MIN_LINE_POINTS = 4   # a line through fewer points implies a trend nobody measured: points with intervals
MARKED_BELOW = 6      # a line through fewer points than this shows a marker at each one
MARKER_PX = 1.5       # a vertex with a marker (of any artist) this close is marked
PAGE_SLACK = 0.05     # inches a figure may exceed PAGE_WIDTH by (rounding of computed widths)
EQUAL_RELATIVE = 0.01  # "(= X)": every value within this share of the larger series span of X's
BAR_MIN_SPREAD = 0.05  # bars from zero whose heights differ by less than this share of the tallest look equal
MIN_COLOUR_VALUES = 4  # a colour bar over fewer distinct values carries nothing a legend would not
# A line without markers through a regular grid of at most this many x values (the logged steps) is
# read vertex by vertex, so its ticks must fall on them; above it is a curve, and round-number ticks
# over it are what papers print. A line with a marker at each value shows its steps whatever the ticks.
GRID_MAX_POINTS = 10
GRID_TICK_SHARE = 0.5  # more than this share of the major ticks over a sparse grid's span fall on it


# ------------------------------------------------------------------ the rules' registry
@dataclass(frozen=True)
class Rule:
    """One rule: its name (the function's), whether it runs once per figure or once per data panel,
    the function, and what it finds (its docstring's first line)."""

    name: str
    scope: str                  # "figure" or "panel"
    check: Callable[..., list[str]]

    @property
    def finds(self) -> str:
        return (self.check.__doc__ or "").strip().split("\n")[0]


RULES: list[Rule] = []


def _register(scope: str, function: Callable[..., list[str]]) -> Callable[..., list[str]]:
    if any(r.name == function.__name__ for r in RULES):
        raise ValueError(f"figure rule {function.__name__!r} is registered twice")
    RULES.append(Rule(function.__name__, scope, function))
    return function


def figure_rule(function: Callable[[DrawnFigure], list[str]]) -> Callable[[DrawnFigure], list[str]]:
    """Register ``function(drawn) -> problems`` as a rule run once per figure."""
    return _register("figure", function)


def panel_rule(function: Callable[[Axes, DrawnFigure], list[str]]) -> Callable[[Axes, DrawnFigure], list[str]]:
    """Register ``function(ax, drawn) -> problems`` as a rule run once per data panel."""
    return _register("panel", function)


def run_rules(drawn: DrawnFigure, rules: list[Rule] | None = None) -> list[str]:
    """Every rule's problems, in the rules' order (a run of consecutive panel rules goes through the
    panels once, each panel's problems together), each problem once."""
    rules = RULES if rules is None else rules
    problems: list[str] = []
    i = 0
    while i < len(rules):
        if rules[i].scope == "figure":
            problems += rules[i].check(drawn)
            i += 1
            continue
        j = i
        while j < len(rules) and rules[j].scope == "panel":
            j += 1
        for ax in drawn.axes:
            for rule in rules[i:j]:
                problems += rule.check(ax, drawn)
        i = j
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ the figure as a whole
@figure_rule
def layout_failed(drawn: DrawnFigure) -> list[str]:
    """matplotlib's own complaints while laying the figure out (constrained layout gave up)."""
    return [f"the layout failed: {message}" for message in drawn.layout_warnings if "layout" in message]


@figure_rule
def too_wide(drawn: DrawnFigure) -> list[str]:
    """A figure wider than a printed page (``PAGE_WIDTH``, 7.2 in, at the size it is saved)."""
    fig, items = drawn.figure, drawn.texts
    width = fig.get_figwidth()
    if width <= PAGE_WIDTH + PAGE_SLACK:
        return []
    sizes = [float(it.text.get_fontsize()) for it in items]
    smallest = min(sizes) if sizes else _rc_font_size()
    return [f"the figure is {width:.1f} in wide, wider than a printed page ({PAGE_WIDTH:g} in): printed at page "
            f"width its {smallest:g}-pt text would be {smallest * PAGE_WIDTH / width:.1f} pt; put fewer or "
            "narrower panels in a row"]


def _rc_font_size() -> float:
    from ..rc import STYLE

    return float(STYLE["font.size"])


@figure_rule
def small_texts(drawn: DrawnFigure) -> list[str]:
    """Text smaller than ``MIN_TEXT_PT`` (6 pt) at the saved size."""
    items = drawn.texts
    problems, groups = [], {}
    for it in items:
        size = float(it.text.get_fontsize())
        if size >= MIN_TEXT_PT - 1e-9:
            continue
        if it.group is not None:
            groups.setdefault(it.group, size)
            groups[it.group] = min(groups[it.group], size)
        else:
            problems.append(f"text smaller than {MIN_TEXT_PT:g} pt at the saved size: {it.what} is {size:g} pt")
    problems += [f"text smaller than {MIN_TEXT_PT:g} pt at the saved size: the {group} are {size:g} pt"
                 for group, size in groups.items()]
    return problems


@figure_rule
def overlapping_texts(drawn: DrawnFigure) -> list[str]:
    """Texts on texts: titles, axis and tick labels, annotations, legend entries, colour-bar labels."""
    items, tolerance = drawn.texts, drawn.px(OVERLAP_PX)
    problems = []
    crowded: dict[str, list[str]] = {}   # colliding tick labels of one axis: one problem naming them
    for a, b in itertools.combinations(items, 2):
        if not boxes_overlap(a.box, b.box, tolerance):
            continue
        if a.group is not None and a.group == b.group:
            names = crowded.setdefault(a.group, [])
            names += [n for n in (a.text.get_text(), b.text.get_text()) if n not in names]
        else:
            problems.append(f"text overlaps text: {a.what} and {b.what}")
    for group, names in crowded.items():
        shown = ", ".join(quote(n) for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        problems.append(f"text overlaps text: the {group} collide ({shown}); fewer ticks, shorter labels or rotate them")
    return problems


@figure_rule
def texts_off_canvas(drawn: DrawnFigure) -> list[str]:
    """Text outside the canvas (cut off in the PNG)."""
    fig, items = drawn.figure, drawn.texts
    canvas = fig.bbox
    margin = px(fig, CANVAS_PX)
    problems = []
    for it in items:
        b = it.box
        sides = [side for side, out in (("left", b.x0 < canvas.x0 - margin), ("right", b.x1 > canvas.x1 + margin),
                                        ("bottom", b.y0 < canvas.y0 - margin), ("top", b.y1 > canvas.y1 + margin))
                 if out]
        if sides:
            problems.append(f"text leaves the canvas ({', '.join(sides)} edge): {it.what}")
    return problems


# ------------------------------------------------------------------ legends
@figure_rule
def legends_over_data(drawn: DrawnFigure) -> list[str]:
    """A legend box over data: line vertices or segments, markers, bars, error bars, bands."""
    problems = []
    for legend, owner in drawn.legends:
        problems += legend_over_data(legend, owner, drawn.figure, drawn.renderer)
    return problems


def legend_over_data(legend: Legend, owner, fig: Figure, renderer) -> list[str]:
    """The problem of one legend (of ``owner``, an axes or the figure) that covers data, as drawn by ``renderer``."""
    box = legend.get_window_extent(renderer)
    edge = px(fig, 1)
    box = Bbox.from_extents(box.x0 + edge, box.y0 + edge, box.x1 - edge, box.y1 - edge)   # a touching edge is fine
    where = f"the legend of {axes_name(owner)}" if isinstance(owner, Axes) else "the figure legend"
    problems = []
    for ax in data_axes(fig):
        clip = ax.bbox
        if not (box.overlaps(clip)):
            continue
        inside = Bbox.intersection(box, clip)
        if inside is None or inside.width <= 0 or inside.height <= 0:
            continue
        covered = []
        for label, artist, xy, paths in data_series(ax):
            hit = xy is not None and segments_hit(xy, inside)
            hit = hit or any(path_hits(path, artist, inside) for path in paths)
            if hit:
                covered.append(label or type(artist).__name__)
        if covered:
            names = ", ".join(quote(c) for c in dict.fromkeys(covered))
            problems.append(f"{where} covers data of {axes_name(ax)}: {names}")
    return problems


def legend_covers_data(legend: Legend, owner: Axes | Figure) -> bool:
    """Whether ``legend`` (of the axes or figure ``owner``), as the figure is drawn now, lies over
    data: what :func:`cselab.workbench.plots.style.place_legend` asks before leaving a legend inside."""
    fig = owner if isinstance(owner, Figure) else owner.get_figure()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a trial legend too big for the panel upsets the layout: it is refused
        renderer = draw(fig)
    box = legend.get_window_extent(renderer)
    if isinstance(owner, Axes) and (box.width > owner.bbox.width or box.height > owner.bbox.height):
        return True
    return bool(legend_over_data(legend, owner, fig, renderer))


# ------------------------------------------------------------------ colour bars
def _colour_values(cax: Axes, fig: Figure) -> np.ndarray | None:
    """The distinct finite values a colour bar stands for: its mappable's data, else those of the
    artists drawn with the same norm (a colour bar made from a bare ScalarMappable); None when unknown."""
    bar = getattr(cax, "_colorbar", None)
    if bar is None:
        return None
    arrays = [bar.mappable.get_array()]
    if arrays[0] is None or not np.size(arrays[0]):
        arrays = [c.get_array() for ax in data_axes(fig) for c in ax.collections + ax.images
                  if c.norm is bar.mappable.norm and c.get_array() is not None]
    values = [np.asarray(np.ma.filled(np.ma.asarray(a, dtype=float), np.nan), float).ravel() for a in arrays
              if a is not None and np.size(a)]
    if not values:
        return None
    values = np.concatenate(values)
    return np.unique(values[np.isfinite(values)])


@figure_rule
def few_colour_values(drawn: DrawnFigure) -> list[str]:
    """A colour bar over fewer than ``MIN_COLOUR_VALUES`` (4) distinct values: colour carries nothing there."""
    problems = []
    for cax in drawn.figure.axes:
        if not cax.get_visible() or not is_colorbar(cax):
            continue
        values = _colour_values(cax, drawn.figure)
        if values is not None and len(values) < MIN_COLOUR_VALUES:
            shown = ", ".join(f"{v:.3g}" for v in values)
            problems.append(f"{axes_name(cax)} spans {len(values)} distinct value{'s' if len(values) != 1 else ''} "
                            f"({shown}), fewer than {MIN_COLOUR_VALUES}: a colour scale over so few carries "
                            "nothing; label the points or give each its own colour in a legend")
    return problems


# ------------------------------------------------------------------ each panel
@panel_rule
def squeezed(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """A panel narrower or lower than ``MIN_PANEL_IN`` (0.6 in): squeezed by what is around it."""
    fig = drawn.figure
    width, height = ax.bbox.width / fig.dpi, ax.bbox.height / fig.dpi
    if width < MIN_PANEL_IN or height < MIN_PANEL_IN:
        return [f"{axes_name(ax)} is squeezed to {width:.2f} × {height:.2f} in by what is around it "
                "(legend, colour bar, labels): give the figure room or move them"]
    return []


def _data_x(ax: Axes) -> np.ndarray:
    """x values (data coordinates) of the artists drawn in data coordinates on both axes (not
    axvline / axhline, which span the axes)."""
    xs = []
    for line in ax.lines:
        if line.get_visible() and not is_reference(line):
            xs.append(np.asarray(line.get_xdata(), dtype=float).ravel())
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, (LineCollection, PolyCollection)):
            if coll.get_transform() is ax.transData:
                xs += [np.asarray(p.vertices[:, 0], float) for p in coll.get_paths()]
        elif coll.get_offset_transform() is ax.transData and len(coll.get_offsets()):
            xs.append(np.asarray(coll.get_offsets(), float)[:, 0])
    for container in ax.containers:
        if isinstance(container, BarContainer):
            xs.append(np.array([p.get_x() + p.get_width() / 2 for p in container.patches], float))
    if not xs:
        return np.array([])
    x = np.concatenate(xs)
    return x[np.isfinite(x)]


@panel_rule
def one_x_value(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """A panel whose data all sit at one x value (a "sweep" or "curve" of one point)."""
    x = _data_x(ax)
    if len(x) and np.allclose(x, x[0]):
        return [f"{axes_name(ax)} draws all its data at one x value ({x[0]:g}): a sweep or curve of one point "
                "shows no trend; it needs at least 2 x values"]
    return []


@panel_rule
def zero_length_intervals(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """Error bars of zero length (an interval from one value)."""
    problems = []
    for container in ax.containers:
        if not isinstance(container, ErrorbarContainer):
            continue
        _, _, bars = container.lines
        lengths = []
        for coll in bars:
            if not coll.get_visible():
                continue
            for path in coll.get_paths():
                # in data units: an interval too short to see at this scale is still an interval
                v = np.asarray(path.vertices, float)
                if len(v) >= 2 and np.isfinite(v).all():
                    scale = max(1.0, float(np.abs(v).max()))
                    lengths.append(float(np.hypot(*(v[-1] - v[0]))) / scale)
        zero = [length for length in lengths if length < ZERO_RELATIVE]
        if zero:
            name = artist_label(container) or (artist_label(container.lines[0]) if container.lines[0] is not None else None)
            problems.append(f"{axes_name(ax)}: {len(zero)} of the {len(lengths)} error bars "
                            f"{'of ' + quote(name) + ' ' if name else ''}have zero length "
                            "(an interval from one value; draw intervals only with n ≥ 2)")
    return problems


def _names(items: list[tuple[str | None, int]], what: str = "line") -> str:
    """'SimCSE' (2 points), 'MixCSE' (1 point) and 3 unlabelled lines (2 points)."""
    def points(n):
        return f"{n} point" + ("s" if n != 1 else "")

    named = [f"{quote(label)} ({points(n)})" for label, n in items if label]
    anonymous = sorted({n for label, n in items if not label})
    count = sum(1 for label, _ in items if not label)
    if count:
        spread = points(anonymous[0]) if len(anonymous) == 1 else f"{anonymous[0]}–{anonymous[-1]} points"
        named.append(f"{count} unlabelled {what}{'s' if count > 1 else ''} ({spread})")
    if len(named) > 6:
        named = named[:5] + [f"{len(named) - 5} more"]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


@panel_rule
def sparse_lines(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """Lines through fewer than ``MIN_LINE_POINTS`` (4) points, or fewer than ``MARKED_BELOW`` (6) without a
    marker at each: two or three measurements joined imply a trend nobody measured between them (draw
    them as points with intervals), and a reader must see where few are.
    A segment along an axis (a whisker, a threshold) and a closed outline (a box) are exempt."""
    too_few, unmarked = [], []
    markers = None
    for line, label in named_lines(ax):
        if not drawn_as_line(line):
            continue   # markers only: points, not a line
        xy = finite(np.column_stack([np.asarray(line.get_xdata(orig=False), float),
                                      np.asarray(line.get_ydata(orig=False), float)]))
        points = np.unique(xy, axis=0) if len(xy) else xy
        n = len(points)
        if n == 0:
            continue   # draws nothing (a legend proxy)
        if n == 2 and (points[0, 0] == points[1, 0] or points[0, 1] == points[1, 1]):
            continue   # a segment along an axis: a box plot's whisker, cap or median, a threshold
        if len(xy) > 3 and (xy[0] == xy[-1]).all():
            continue   # a closed outline (a box plot's box): a shape, not measurements joined
        if n < MIN_LINE_POINTS:
            too_few.append((label, n))
        elif n < MARKED_BELOW and not has_markers(line):
            markers = marker_positions(ax) if markers is None else markers
            if not all_marked(finite(display_xy(line)), markers, px(ax.get_figure(), MARKER_PX)):
                unmarked.append((label, n))
    problems = []
    if too_few:
        problems.append(f"{axes_name(ax)}: {_names(too_few)} drawn as a line through fewer than "
                        f"{MIN_LINE_POINTS} points: so few measurements joined imply a trend nobody measured between "
                        "them (draw them as points with their intervals, or measure more often)")
    if unmarked:
        problems.append(f"{axes_name(ax)}: {_names(unmarked)} joined by a line without markers: with fewer "
                        f"than {MARKED_BELOW} measurements show each one (a marker at every point)")
    return problems


def _sparse_grids(ax: Axes, marked: bool = False) -> list[np.ndarray]:
    """The x values of each unmarked data line of ``ax`` that form a sparse regular grid: at least 3
    and at most ``GRID_MAX_POINTS`` distinct values, equally spaced (the logged steps of a sparse
    record), drawn as a line without a marker at each value. Only there could a reader take the
    ticks for the measured steps: markers show the measurements, and a denser line is a curve.
    ``marked``: lines with markers too (where plotting code puts its ticks: papers tick measured steps)."""
    grids: list[np.ndarray] = []
    markers = None
    for line, _ in named_lines(ax):
        if not drawn_as_line(line) or (has_markers(line) and not marked):
            continue   # points, or a line with its own markers: every measurement is seen
        x = np.unique(finite(np.asarray(line.get_xdata(orig=False), float).reshape(-1, 1)).ravel())
        if not 3 <= len(x) <= GRID_MAX_POINTS:
            continue
        gaps = np.diff(x)
        if not np.allclose(gaps, gaps[0], rtol=1e-6, atol=0) or any(np.array_equal(x, g) for g in grids):
            continue
        markers = marker_positions(ax) if markers is None and not marked else markers
        if not marked and all_marked(finite(display_xy(line)), markers, px(ax.get_figure(), MARKER_PX)):
            continue   # another artist (a scatter, error bars) marks each measurement
        grids.append(x)
    return grids


def _is_number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-").replace(",", "").strip() or "0")
    except ValueError:
        return False
    return True


def _on_grid(ticks: np.ndarray, grid: np.ndarray) -> np.ndarray:
    position = (ticks - grid[0]) / (grid[1] - grid[0])
    return np.abs(position - np.round(position)) < 1e-6


def ticks_off_grid_of(ax: Axes, marked: bool = False) -> tuple[float, np.ndarray, np.ndarray] | None:
    """Where ``ax``'s major x ticks miss the sparse regular grid of its data's x values (see
    :func:`ticks_off_grid`): (the share of ticks on it, the grid, the ticks over its span), or None
    when they fall on one of its grids or it has none (a log axis, a dense record); what plotting code
    asks before it puts the ticks on the measured steps (``marked=True``: over lines with markers too,
    which the checker accepts with any ticks but a paper ticks at its measured steps)."""
    if ax.get_xscale() != "linear" or not ax.xaxis.get_visible():
        return None
    drawn = [t for t in drawn_ticks(ax.xaxis) if t.label1.get_visible() or t.label2.get_visible()]
    if any(not _is_number(t.label1.get_text()) for t in drawn):
        return None   # categories (method names, tasks): points dodged about them are not measured steps
    grids = _sparse_grids(ax, marked)
    if not grids:
        return None
    ticks = np.array([t.get_loc() for t in drawn], float)
    worst = None
    for grid in grids:
        span = grid[-1] - grid[0]
        inside = ticks[(ticks >= grid[0] - 1e-9 * span) & (ticks <= grid[-1] + 1e-9 * span)]
        if len(inside) < 2:
            continue
        share = float(_on_grid(inside, grid).mean())
        # the checker: most ticks on the grid let a reader find the measurements; the plotting code asks
        # for every tick on it (0, 2, 4, ... over probes every 4 steps half-fits, and is not what a paper prints)
        if share > GRID_TICK_SHARE if not marked else share == 1.0:
            return None   # the ticks fit one of the panel's grids
        if worst is None or share < worst[0]:
            worst = (share, grid, inside)
    return worst


@panel_rule
def ticks_off_grid(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """x ticks off the grid of the logged steps: where a line without markers joins a few (3 to
    ``GRID_MAX_POINTS``) regularly spaced x values, most major ticks over its span (more than
    ``GRID_TICK_SHARE``, a half) fall on them; marked points and dense curves take any ticks."""
    found = ticks_off_grid_of(ax)
    if found is None:
        return []
    share, grid, inside = found
    shown = ", ".join(f"{v:g}" for v in grid[:6]) + (", …" if len(grid) > 6 else "")
    off = ", ".join(f"{t:g}" for t in inside[~_on_grid(inside, grid)][:6])
    return [f"{axes_name(ax)}: the data are measured at x = {shown} (every {grid[1] - grid[0]:g}) but "
            f"{int(round((1 - share) * len(inside)))} of the {len(inside)} x ticks over them fall between "
            f"measurements ({off}) and the line shows no marker at them; put the ticks on the measured values "
            f"(a multiple of {grid[1] - grid[0]:g}) or a marker at each measurement"]


@panel_rule
def covered_series(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """A labelled series wholly covered by another line drawn above it, of any colour, unless one of
    the two labels says they are equal ("X (= Y)")."""
    problems = []
    for line, label in named_lines(ax):
        if label is None:
            continue
        cover = covering_line(line, ax)
        if cover is None:
            continue
        cover_label = series_label(cover, ax)
        if _claims_equal(label, cover_label) or _claims_equal(cover_label, label):
            continue
        problems.append(f"the series {quote(label)} of {axes_name(ax)} lies under "
                        f"{quote(cover_label or 'another line')} and cannot be seen (whatever the colours); "
                        "give it its own dashes and markers, or label it '(= …)' where the two are equal")
    return problems


@panel_rule
def unnamed_coincidences(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """A labelled line drawn along another labelled line all its length (within ``COINCIDE_PX`` of its
    path, as drawn: on top of it) whose label does not name it, "X (= Y)" or "X (≈ Y)": dashes and markers keep it
    visible, but a reader takes the line below for missing unless the legend says where it is."""
    lines = [(line, label) for line, label in named_lines(ax) if label and drawn_as_line(line)]
    problems = []
    fig = ax.get_figure()
    for (first, first_label), (later, later_label) in itertools.combinations(lines, 2):
        if first_label == later_label or coincidence_claim(first_label) or coincidence_claim(later_label):
            continue   # either says what it lies on (one claim is enough: the reader finds both)
        if covering_line(first, ax) is later or covering_line(later, ax) is first:
            continue   # a line wholly hidden is covered_series' problem
        a, b = finite(display_xy(first)), finite(display_xy(later))
        # on the other's path within the drawing's slack: no stricter than what
        # cselab.workbench.plots.style.separate_coincident names, so that its figures pass
        reach = px(fig, COINCIDE_PX)
        for label, other_label, xy, along in ((later_label, first_label, b, a), (first_label, later_label, a, b)):
            if len(xy) > 1 and within(xy, along, reach):
                problems.append(f"the series {quote(label)} of {axes_name(ax)} is drawn along {quote(other_label)} "
                                f"all its length and its label does not say so: write '{_base(label)} (≈ "
                                f"{_base(other_label)})', or '(= …)' where the two are equal")
                break
    return problems


# ------------------------------------------------------------------ bars
def _bar_groups(ax: Axes) -> list[tuple[str, np.ndarray]]:
    """Bars drawn from zero, grouped as a reader compares them: the bars at one category when
    several series have a bar at each, else the bars of each series; histograms (bars edge to
    edge) are no comparison of bars."""
    series = []
    for container in ax.containers:
        if not isinstance(container, BarContainer) or not container.patches:
            continue
        horizontal = getattr(container, "orientation", None) == "horizontal"
        patches = [p for p in container.patches if p.get_visible()]
        if not patches:
            continue
        base = [p.get_x() if horizontal else p.get_y() for p in patches]
        if any(abs(b) > 1e-12 for b in base):
            continue   # stacked, or drawn from another baseline
        lows = np.array([p.get_y() if horizontal else p.get_x() for p in patches], float)
        widths = np.array([p.get_height() if horizontal else p.get_width() for p in patches], float)
        order = np.argsort(lows)
        if len(patches) > 1 and np.allclose(lows[order][1:], (lows + widths)[order][:-1], rtol=0,
                                            atol=1e-9 * max(1.0, float(np.abs(widths).max()))):
            continue   # a histogram
        heights = np.array([p.get_width() if horizontal else p.get_height() for p in patches], float)
        series.append((heights, lows + widths / 2, horizontal, artist_label(container)))
    if not series:
        return []
    horizontal = series[0][2]
    limits = ax.get_xlim() if horizontal else ax.get_ylim()
    if min(limits) > 0 or max(limits) < 0:
        return []   # zero is not on the axis: no bar is seen from zero
    if len(series) > 1 and len({len(s[0]) for s in series}) == 1:
        return [(_category(ax, float(np.mean([s[1][j] for s in series])), horizontal),
                 np.array([s[0][j] for s in series])) for j in range(len(series[0][0]))]
    return [(label or f"the bars of series {i + 1}", heights) for i, (heights, _, _, label) in enumerate(series)]


def _category(ax: Axes, position: float, horizontal: bool) -> str:
    axis = ax.yaxis if horizontal else ax.xaxis
    ticks = axis.get_majorticklocs()
    labels = [t.get_text() for t in (ax.get_yticklabels() if horizontal else ax.get_xticklabels())]
    if len(ticks) and len(labels) == len(ticks):
        i = int(np.argmin(np.abs(np.asarray(ticks, float) - position)))
        if labels[i]:
            return labels[i]
    return f"at {position:g}"


def flat_bar_groups(ax: Axes) -> list[str]:
    """The groups of bars from zero in ``ax`` (the bars at one category, or those of one series)
    whose heights differ by less than ``BAR_MIN_SPREAD`` of the tallest, each as
    ``'name' low–high``: what :func:`flat_bars` finds, for plotting code that draws points instead."""
    flat = []
    for name, heights in _bar_groups(ax):
        heights = heights[np.isfinite(heights)]
        if len(heights) < 2:
            continue
        top = float(np.abs(heights).max())
        if top > 0 and float(np.ptp(heights)) < BAR_MIN_SPREAD * top:
            flat.append(f"{quote(name)} {heights.min():.3g}–{heights.max():.3g}")
    return flat


@panel_rule
def flat_bars(ax: Axes, drawn: DrawnFigure) -> list[str]:
    """Bars from zero whose heights, in a group, differ by less than ``BAR_MIN_SPREAD`` (5 %) of the tallest."""
    flat = flat_bar_groups(ax)
    if not flat:
        return []
    shown = ", ".join(flat[:4]) + (f" and {len(flat) - 4} more" if len(flat) > 4 else "")
    return [f"{axes_name(ax)}: bars from zero that differ by less than {BAR_MIN_SPREAD:.0%} of their height look "
            f"equal ({shown}); draw the differences from the baseline with their intervals, or points on a "
            "zoomed axis"]


# ------------------------------------------------------------------ claims in labels
# "X (= Y)", "X (= Y in 'panel')", "X (= Y in 'a' and 'b')", "X (= Y in 3 panels)": the claim that
# X's series is Y's
_IN_PANEL = re.compile(r"^(?P<other>.*?)\s+in\s+(?:'(?P<panel>[^']*)'|\"(?P<panel2>[^\"]*)\"|(?P<count>\d+)\s+panels)$")
_IN_PANELS = re.compile(r"^(?P<other>.*?)\s+in\s+(?P<list>'[^']*'(?:(?:,\s*|\s+and\s+)'[^']*')+)$")
# a label's seed count, "(mean, 5 seeds)" or "(n 13)": not part of the series' name
SEED_COUNT = re.compile(r"\s*\((?:mean, \d+ seeds|n \d+)\)$")


def equality_claim(label: str | None) -> tuple[str, str, str | int | None] | None:
    """``(own name, the name it claims equality with, where)`` of a label ``X (= Y …)``, where is
    ``None`` (every panel with both), a panel's title, or a number of panels; ``None`` without a
    claim."""
    if not label:
        return None
    text = " ".join(str(label).split())
    start = text.rfind("(= ")
    if start < 0 or not text.endswith(")"):
        return None
    own, claim = text[:start].strip(), text[start + 3:-1].strip()
    several = _IN_PANELS.match(claim)
    if several:   # panels named one by one: a tuple of their titles
        return own, several["other"].strip(), tuple(re.findall(r"'([^']*)'", several["list"]))
    match = _IN_PANEL.match(claim)
    if match:
        where = match["panel"] if match["panel"] is not None else match["panel2"]
        return own, match["other"].strip(), (int(match["count"]) if match["count"] else where)
    return own, claim, None


_NEAR = re.compile(r"\s*\(≈ (?P<other>[^()]*(?:\([^()]*\)[^()]*)*)\)$")


def coincidence_claim(label: str | None) -> tuple[str, str] | None:
    """``(own name, the other's name)`` of a label that names a coincidence: ``X (= Y …)`` (equal in
    the data: :func:`equality_claim`) or ``X (≈ Y)`` (drawn on each other, close but not equal: no
    tolerance to check); ``None`` without either."""
    claim = equality_claim(label)
    if claim:
        return claim[0], claim[1]
    text = " ".join(str(label or "").split())
    match = _NEAR.search(text)
    if not match:
        return None
    other = match["other"].strip()
    where = _IN_PANELS.match(other) or _IN_PANEL.match(other)   # "(≈ Y in 'panel')": Y
    return text[:match.start()].strip(), (where["other"].strip() if where else other)


def _base(label: str | None) -> str:
    """A label without its equality or coincidence claim and its seed count ("(mean, n seeds)", "(n 13)")."""
    if not label:
        return ""
    claim = coincidence_claim(label)
    text = claim[0] if claim else " ".join(str(label).split())
    return SEED_COUNT.sub("", text)


def _claims_equal(label: str | None, other: str | None) -> bool:
    """Whether ``label`` names its coincidence with ``other``: "(= other)" or "(≈ other)"."""
    claim = coincidence_claim(label)
    return bool(claim and other and _base(claim[1]) == _base(other))


def equal_series(a: Line2D, b: Line2D) -> tuple[bool, float, float]:
    """Whether two lines draw the same series: the same x and every y within :data:`EQUAL_RELATIVE`
    of the larger of the two series' own spans (a tolerance from the data, not from the drawing);
    returns (equal, the largest difference, the tolerance)."""
    xa, ya = np.asarray(a.get_xdata(), float), np.asarray(a.get_ydata(), float)
    xb, yb = np.asarray(b.get_xdata(), float), np.asarray(b.get_ydata(), float)
    if xa.shape != xb.shape or ya.shape != yb.shape or not len(xa) or not np.allclose(xa, xb, equal_nan=True):
        return False, float("inf"), 0.0
    both = np.isfinite(ya) & np.isfinite(yb)
    if (np.isfinite(ya) != np.isfinite(yb)).any() or not both.any():
        return False, float("inf"), 0.0
    ya, yb = ya[both], yb[both]
    span = max(float(np.ptp(ya)), float(np.ptp(yb)))
    tolerance = max(EQUAL_RELATIVE * span, 1e-9 * max(1.0, float(np.abs(ya).max()), float(np.abs(yb).max())))
    difference = float(np.abs(ya - yb).max())
    return difference <= tolerance, difference, tolerance


def _panel_names(ax: Axes) -> set[str]:
    names = {" ".join(t.split()) for t in (ax.get_title(), ax.get_ylabel()) if t}
    return names | {axes_name(ax)}


@figure_rule
def false_equalities(drawn: DrawnFigure) -> list[str]:
    """A label "X (= Y)" (or "(= Y in 'panel')", "(= Y in 3 panels)") whose series differs from Y's by
    more than ``EQUAL_RELATIVE`` (1 %) of the larger series' own span where the label says they are equal."""
    axes = drawn.axes
    problems = []
    checked = set()
    for ax in axes:
        for line, label in named_lines(ax):
            claim = equality_claim(label)
            if claim is None or label in checked:
                continue
            checked.add(label)
            _, other, where = claim
            pairs = []   # (axes, this label's line, the other's line) in every panel holding both
            for panel in axes:
                mine = [ln for ln, lab in named_lines(panel) if lab == label]
                theirs = [ln for ln, lab in named_lines(panel) if lab != label and _base(lab) == _base(other)]
                if mine and theirs:
                    pairs.append((panel, mine[0], theirs[0]))
            if isinstance(where, (str, tuple)):
                named = {" ".join(w.split()) for w in ((where,) if isinstance(where, str) else where)}
                pairs = [p for p in pairs if named & _panel_names(p[0])]
            if not pairs:
                problems.append(f"the label {quote(label)} says it equals {quote(other)}, which no panel "
                                f"{'named ' + quote(where) + ' ' if isinstance(where, str) else ''}"
                                f"{'named ' + ' or '.join(map(quote, where)) + ' ' if isinstance(where, tuple) else ''}"
                                "draws beside it")
                continue
            results = [(panel, *equal_series(mine, theirs)) for panel, mine, theirs in pairs]
            equal = [r for r in results if r[1]]
            if isinstance(where, int):
                if len(equal) < where:
                    problems.append(f"the label {quote(label)} says it equals {quote(other)} in {where} panels; "
                                    f"the two series agree in {len(equal)} (within {EQUAL_RELATIVE:.0%} of their span)")
                continue
            for panel, same, difference, tolerance in results:
                if not same:
                    shown = "different x values" if difference == float("inf") else \
                        f"values up to {difference:.3g} apart, more than {tolerance:.2g} ({EQUAL_RELATIVE:.0%} of their span)"
                    problems.append(f"{axes_name(panel)}: the label {quote(label)} says it equals {quote(other)}, "
                                    f"but the two series differ ({shown}); drop the '(= …)' or show the difference")
    return problems
