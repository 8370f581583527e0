"""A figure checker: the defects a reader sees in a figure, found from its drawn layout.

:func:`check_figure` draws the figure once (Agg, cselab's style, the same layout ``save_figure``
writes) and reads the renderer's bounding boxes and the data in display coordinates. It returns one
sentence per problem, naming the panel (its title) and the artist (its label), and ``[]`` for a
sound figure:

* texts on texts: titles, axis and tick labels, annotations and point labels, legend entries,
  colour-bar labels, figure titles whose boxes overlap;
* text outside the canvas (cut off in the PNG);
* a legend box over data: line vertices or segments, markers, bars, error bars, bands;
* a labelled series wholly covered by another line drawn above it, of any colour, unless one of
  the two labels says they are equal ("X (= Y)");
* a panel whose data all sit at one x value (a "sweep" or "curve" of one point);
* error bars of zero length (an interval from one value);

and what a reviewer reads into the data:

* a line through fewer than :data:`MIN_LINE_POINTS` (3) points: two measurements joined make no
  curve (draw them as points);
* a line through fewer than :data:`MARKED_BELOW` (6) points without markers: the reader must see
  where the measurements are (a marker at each vertex, its own or a scatter's);
* a figure wider than a printed page (:data:`cselab.plots.rc.PAGE_WIDTH`, 7.2 in, at the size it
  is saved: ``save_figure`` writes the figure's own size), and text smaller than
  :data:`cselab.plots.rc.MIN_TEXT_PT` (6 pt) at that size;
* a label "X (= Y)" (or "(= Y in 'panel')", "(= Y in 3 panels)") where the series is not Y's: some
  value differs from Y's by more than :data:`EQUAL_RELATIVE` (1 %) of the larger of the two series'
  own spans — a tolerance from the data, not from how close the lines happen to be drawn;
* bars from zero whose heights, in a group (the bars at one category, or the bars of a single
  series), differ by less than :data:`BAR_MIN_SPREAD` (5 %) of the tallest: they look equal; draw the
  differences from the baseline with their intervals, or points on a zoomed axis.

**Reference artists** are no data series: a line that is not drawn in data coordinates on both axes
(``axhline``, ``axvline``, ``axline``: their transforms span the axes) is one by construction; a
line drawn in data coordinates is one when its ``gid`` is in :data:`REFERENCE_GIDS` —
``gid="reference"`` for a reference drawn through two points (the diagonal y = x, a baseline
segment), ``gid="interval"`` for an interval drawn as a segment or polyline (seaborn's error bars;
:func:`mark_intervals` tags them). The point-count, marker, coverage and one-x rules skip them.
A line of two points along an axis (both x or both y equal: a box plot's whisker, cap or median, a
threshold drawn with ``plot``) is not read as two measurements joined either, nor a closed outline
(first point = last: a box plot's box).

Works on figures built without pyplot (:func:`cselab.plots.core.new_figure`).
"""
from __future__ import annotations

import itertools
import re
import warnings
from typing import Iterator

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection, LineCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from .rc import MIN_TEXT_PT, PAGE_WIDTH, style

OVERLAP_PX = 1.0      # texts whose boxes overlap by more than this (both ways, at 100 dpi) collide
CANVAS_PX = 1.0       # a text further than this outside the canvas is cut off
COINCIDE_PX = 0.75    # two lines whose vertices all lie this close are drawn on top of each other
MIN_PANEL_IN = 0.6    # a panel narrower or lower than this (inches) is squeezed by its neighbours
ZERO_RELATIVE = 1e-9  # an error bar shorter than this (relative to its values) has length zero
SHOWN_CHARS = 40      # texts are quoted in problems up to this length
MIN_LINE_POINTS = 3   # a line through fewer points is no curve
MARKED_BELOW = 6      # a line through fewer points than this shows a marker at each one
MARKER_PX = 1.5       # a vertex with a marker (of any artist) this close is marked
PAGE_SLACK = 0.05     # inches a figure may exceed PAGE_WIDTH by (rounding of computed widths)
EQUAL_RELATIVE = 0.01  # "(= X)": every value within this share of the larger series span of X's
BAR_MIN_SPREAD = 0.05  # bars from zero whose heights differ by less than this share of the tallest look equal
REFERENCE_GID = "reference"   # a reference line drawn in data coordinates (y = x, a baseline segment)
INTERVAL_GID = "interval"     # an interval drawn as a line (a segment, seaborn's error bars)
REFERENCE_GIDS = (REFERENCE_GID, INTERVAL_GID)


def check_figure(fig: Figure, dpi: float = 200) -> list[str]:
    """Problems a reader would see in ``fig``, one readable sentence each; ``[]`` when it is sound.

    Drawn at ``dpi`` (that of :func:`cselab.plots.save_figure`'s PNG: the layout, text extents and
    ticks differ a little from one resolution to another), the figure's own dpi restored after."""
    own = fig.dpi
    fig.set_dpi(dpi)
    try:
        # in cselab's style throughout: the ticks an axis draws depend on the rc tick-label size
        # when they are asked for, not only while drawing
        with style():
            return _check(fig)
    finally:
        fig.set_dpi(own)


def _px(fig: Figure, pixels: float) -> float:
    """A tolerance given in pixels at 100 dpi, at the figure's dpi."""
    return pixels * fig.dpi / 100


def _check(fig: Figure) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        renderer = _draw(fig)
    # matplotlib's own complaints while laying the figure out (e.g. constrained layout gave up)
    problems: list[str] = [f"the layout failed: {w.message}" for w in caught if "layout" in str(w.message)]
    texts = list(_texts(fig, renderer))
    problems += _too_wide(fig, texts)
    problems += _small_texts(texts)
    problems += _overlapping_texts(texts, _px(fig, OVERLAP_PX))
    problems += _texts_off_canvas(fig, texts)
    for legend, owner in _legends(fig):
        problems += _legend_over_data(legend, owner, fig, renderer)
    axes = _data_axes(fig)
    for ax in axes:
        problems += _squeezed(ax)
        problems += _one_x_value(ax)
        problems += _zero_length_intervals(ax)
        problems += _sparse_lines(ax)
        problems += _covered_series(ax)
        problems += _flat_bars(ax)
    problems += _false_equalities(axes)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ drawing and naming
def _draw(fig: Figure):
    """Draw ``fig`` on an Agg canvas (a pyplot-free Figure has none that renders) and return the
    renderer, so that constrained layout has placed everything as it will be saved."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    with style():
        canvas.draw()
    return canvas.get_renderer()


def _is_colorbar(ax: Axes) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _data_axes(fig: Figure) -> list[Axes]:
    return [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax)]


def axes_name(ax: Axes) -> str:
    """How a problem names a panel: its title, else its y label, else its position."""
    fig = ax.get_figure()
    if _is_colorbar(ax):
        label = ax.get_ylabel() or ax.get_xlabel()
        return f"colour bar {_quote(label)}" if label else "the colour bar"
    title = " ".join(t.get_text() for t in (ax._left_title, ax.title, ax._right_title) if t.get_text())
    if title:
        return f"panel {_quote(title)}"
    if ax.get_ylabel():
        return f"panel with y label {_quote(ax.get_ylabel())}"
    number = [a for a in fig.axes if not _is_colorbar(a)].index(ax) + 1 if ax in fig.axes else 0
    return f"panel {number}"


def _quote(text: str) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…")


def _label(artist) -> str | None:
    label = artist.get_label() if hasattr(artist, "get_label") else None
    return label if label and not str(label).startswith("_") else None


# ------------------------------------------------------------------ texts
class _Item:
    def __init__(self, text: Text, what: str, box: Bbox, group: str):
        # group: tick labels of one axis share it, so that their collisions make one problem
        self.text, self.what, self.box, self.group = text, what, box, group


def _text_box(text: Text, renderer) -> Bbox | None:
    if not text.get_visible() or not text.get_text().strip():
        return None
    # Text's own method: an Annotation's would include its arrow
    box = Text.get_window_extent(text, renderer)
    return box if box.width > 0 and box.height > 0 else None


def _texts(fig: Figure, renderer) -> Iterator[_Item]:
    def item(text, what, group):
        box = _text_box(text, renderer)
        if box is not None:
            yield _Item(text, what, box, group)

    for text, what in ((fig._suptitle, "the figure title"), (fig._supxlabel, "the figure x label"),
                       (fig._supylabel, "the figure y label")):
        if text is not None:
            yield from item(text, what, None)
    named = {id(t) for t in (fig._suptitle, fig._supxlabel, fig._supylabel) if t is not None}
    for text in fig.texts:
        if id(text) not in named:   # the figure's titles are in fig.texts too
            yield from item(text, f"figure text {_quote(text.get_text())}", None)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        name = axes_name(ax)
        for title in (ax._left_title, ax.title, ax._right_title):
            yield from item(title, f"the title of {name}", None)
        for axis, letter in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if not axis.get_visible():
                continue
            yield from item(axis.label, f"the {letter} label of {name}", None)
            yield from item(axis.offsetText, f"the {letter} offset text of {name}", None)
            for tick in _drawn_ticks(axis):
                for label in (tick.label1, tick.label2):
                    yield from item(label, f"{letter} tick label {_quote(label.get_text())} of {name}",
                                    f"{letter} tick labels of {name}")
        for text in ax.texts:
            yield from item(text, f"text {_quote(text.get_text())} in {name}", None)
    for legend, owner in _legends(fig):
        where = f"the legend of {axes_name(owner)}" if isinstance(owner, Axes) else "the figure legend"
        yield from item(legend.get_title(), f"the title of {where}", None)
        for text in legend.get_texts():
            yield from item(text, f"legend entry {_quote(text.get_text())} of {where}", None)


def _drawn_ticks(axis):
    """The ticks the axis draws (inside its view interval), not the spare ones matplotlib keeps."""
    try:
        return axis._update_ticks()
    except AttributeError:   # a future matplotlib without it: every major tick
        return axis.get_major_ticks()


def _overlap(a: Bbox, b: Bbox, tolerance: float) -> bool:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width > tolerance and height > tolerance


def _overlapping_texts(items: list[_Item], tolerance: float) -> list[str]:
    problems = []
    crowded: dict[str, list[str]] = {}   # colliding tick labels of one axis: one problem naming them
    for a, b in itertools.combinations(items, 2):
        if not _overlap(a.box, b.box, tolerance):
            continue
        if a.group is not None and a.group == b.group:
            names = crowded.setdefault(a.group, [])
            names += [n for n in (a.text.get_text(), b.text.get_text()) if n not in names]
        else:
            problems.append(f"text overlaps text: {a.what} and {b.what}")
    for group, names in crowded.items():
        shown = ", ".join(_quote(n) for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        problems.append(f"text overlaps text: the {group} collide ({shown}); fewer ticks, shorter labels or rotate them")
    return problems


def _texts_off_canvas(fig: Figure, items: list[_Item]) -> list[str]:
    canvas = fig.bbox
    margin = _px(fig, CANVAS_PX)
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
def _legends(fig: Figure) -> list[tuple[Legend, Axes | Figure]]:
    found = [(ax.get_legend(), ax) for ax in fig.axes if ax.get_visible() and ax.get_legend() is not None]
    found += [(legend, fig) for legend in fig.legends]
    return [(legend, owner) for legend, owner in found if legend.get_visible()]


def _series(ax: Axes) -> Iterator[tuple[str, object, np.ndarray | None, list]]:
    """(label, artist, vertices in display coordinates, extra paths) of each data artist of ``ax``:
    lines, scatter offsets, error bars, bars, bands."""
    for line in ax.lines:
        if line.get_visible():
            xy = line.get_transform().transform(np.column_stack([line.get_xdata(orig=False),
                                                                 line.get_ydata(orig=False)]).astype(float))
            yield _label(line) or "", line, xy, []
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        offsets = coll.get_offsets()
        if isinstance(coll, LineCollection) or isinstance(coll, PolyCollection):
            trans = coll.get_transform()
            paths = [trans.transform_path(p) for p in coll.get_paths()]
            yield _label(coll) or "", coll, None, paths
        elif offsets is not None and len(offsets):
            yield _label(coll) or "", coll, coll.get_offset_transform().transform(np.asarray(offsets, float)), []
    for patch in ax.patches:
        if patch.get_visible():
            yield _label(patch) or "", patch, None, [patch.get_transform().transform_path(patch.get_path())]


def _segments_hit(xy: np.ndarray, box: Bbox) -> bool:
    """Whether a polyline (display coordinates) has a vertex in ``box`` or a segment crossing it."""
    xy = xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy
    if not len(xy):
        return False
    if box.count_contains(xy):
        return True
    return any(_segment_crosses(p, q, box) for p, q in zip(xy[:-1], xy[1:]))


def _segment_crosses(p, q, box: Bbox) -> bool:
    """Liang–Barsky: does the segment p→q pass through ``box``?"""
    t0, t1 = 0.0, 1.0
    d = q - p
    for edge_p, edge_q in ((-d[0], p[0] - box.x0), (d[0], box.x1 - p[0]), (-d[1], p[1] - box.y0), (d[1], box.y1 - p[1])):
        if edge_p == 0:
            if edge_q < 0:
                return False
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _legend_over_data(legend: Legend, owner, fig: Figure, renderer) -> list[str]:
    box = legend.get_window_extent(renderer)
    edge = _px(fig, 1)
    box = Bbox.from_extents(box.x0 + edge, box.y0 + edge, box.x1 - edge, box.y1 - edge)   # a touching edge is fine
    where = f"the legend of {axes_name(owner)}" if isinstance(owner, Axes) else "the figure legend"
    problems = []
    for ax in _data_axes(fig):
        clip = ax.bbox
        if not (box.overlaps(clip)):
            continue
        inside = Bbox.intersection(box, clip)
        if inside is None or inside.width <= 0 or inside.height <= 0:
            continue
        covered = []
        for label, artist, xy, paths in _series(ax):
            hit = xy is not None and _segments_hit(xy, inside)
            hit = hit or any(_path_hits(path, artist, inside) for path in paths)
            if hit:
                covered.append(label or type(artist).__name__)
        if covered:
            names = ", ".join(_quote(c) for c in dict.fromkeys(covered))
            problems.append(f"{where} covers data of {axes_name(ax)}: {names}")
    return problems


def _path_hits(path, artist, box: Bbox) -> bool:
    filled = isinstance(artist, (Patch, PolyCollection))
    if filled:
        return path.intersects_bbox(box, filled=True)
    return any(_segments_hit(np.asarray(poly), box) for poly in path.to_polygons(closed_only=False))


def _display_xy(line: Line2D) -> np.ndarray:
    xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
    return line.get_transform().transform(xy)


def _covering_line(line: Line2D, ax: Axes) -> Line2D | None:
    """Another line of ``ax`` drawn above ``line`` whose stroke holds every part of ``line`` (its
    vertices and the segments between them, as drawn), at least as wide, solid (or the same dashes),
    opaque and with the same or no markers: ``line`` cannot be seen, whatever the two colours."""
    xy = _finite(_display_xy(line))
    if not len(xy):
        return None
    fig = ax.get_figure()
    order = {id(a): i for i, a in enumerate(ax.get_children())}
    for other in ax.lines:
        if other is line or not other.get_visible() or is_reference(other):
            continue
        above = (other.get_zorder(), order.get(id(other), 0)) > (line.get_zorder(), order.get(id(line), 0))
        if not above or other.get_alpha() not in (None, 1, 1.0):
            continue
        same_dashes = other.get_linestyle() in ("-", "solid") or other.get_linestyle() == line.get_linestyle()
        wide = other.get_linewidth() >= line.get_linewidth() or not _drawn_as_line(line)
        marker_hidden = not _has_markers(line) or (
            other.get_marker() == line.get_marker() and other.get_markersize() >= line.get_markersize())
        if not (same_dashes and wide and marker_hidden):
            continue
        # the part of the wider stroke that reaches past the narrower one, plus the drawing's slack
        reach = _px(fig, COINCIDE_PX) + max(0.0, other.get_linewidth() - line.get_linewidth()) * fig.dpi / 72 / 2
        cover = _finite(_display_xy(other))
        if _within(xy, cover, reach) if _drawn_as_line(line) else _all_marked(xy, cover, _px(fig, COINCIDE_PX)):
            return other
    return None


def _finite(xy: np.ndarray) -> np.ndarray:
    return xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy


CHUNK = 64   # points of a path measured at once: most pairs of lines part within the first few


def _within(path: np.ndarray, cover: np.ndarray, reach: float) -> bool:
    """Whether every point of the polyline ``path`` (its vertices and the middle and quarters of each
    segment) lies within ``reach`` of the polyline ``cover`` (display coordinates)."""
    if not len(cover):
        return False
    if len(path) == len(cover) and np.allclose(path, cover, atol=reach, rtol=0):
        return True
    low, high = cover.min(axis=0) - reach, cover.max(axis=0) + reach
    if (path < low).any() or (path > high).any():
        return False
    samples = [path]
    if len(path) > 1:
        a, b = path[:-1], path[1:]
        samples += [a + (b - a) * t for t in (0.25, 0.5, 0.75)]
    points = np.concatenate(samples)
    starts = cover[:-1] if len(cover) > 1 else cover
    ends = cover[1:] if len(cover) > 1 else cover
    d = ends - starts
    length2 = np.maximum((d ** 2).sum(axis=1), 1e-12)
    for i in range(0, len(points), CHUNK):
        p = points[i:i + CHUNK, None, :]
        t = np.clip(((p - starts) * d).sum(axis=2) / length2, 0.0, 1.0)
        nearest = starts + t[..., None] * d
        if (np.sqrt(((p - nearest) ** 2).sum(axis=2)).min(axis=1) > reach).any():
            return False
    return True


def _covered_series(ax: Axes) -> list[str]:
    """Labelled series of ``ax`` that lie wholly under another line (any colour), unless one of the
    two labels says they are equal."""
    problems = []
    for line, label in _named_lines(ax):
        if label is None:
            continue
        cover = _covering_line(line, ax)
        if cover is None:
            continue
        cover_label = _series_label(cover, ax)
        if _claims_equal(label, cover_label) or _claims_equal(cover_label, label):
            continue
        problems.append(f"the series {_quote(label)} of {axes_name(ax)} lies under "
                        f"{_quote(cover_label or 'another line')} and cannot be seen (whatever the colours); "
                        "give it its own dashes and markers, or label it '(= …)' where the two are equal")
    return problems


def _squeezed(ax: Axes) -> list[str]:
    fig = ax.get_figure()
    width, height = ax.bbox.width / fig.dpi, ax.bbox.height / fig.dpi
    if width < MIN_PANEL_IN or height < MIN_PANEL_IN:
        return [f"{axes_name(ax)} is squeezed to {width:.2f} × {height:.2f} in by what is around it "
                "(legend, colour bar, labels): give the figure room or move them"]
    return []


# ------------------------------------------------------------------ degenerate data
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


def _one_x_value(ax: Axes) -> list[str]:
    x = _data_x(ax)
    if len(x) and np.allclose(x, x[0]):
        return [f"{axes_name(ax)} draws all its data at one x value ({x[0]:g}): a sweep or curve of one point "
                "shows no trend; it needs at least 2 x values"]
    return []


def _zero_length_intervals(ax: Axes) -> list[str]:
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
            name = _label(container) or (_label(container.lines[0]) if container.lines[0] is not None else None)
            problems.append(f"{axes_name(ax)}: {len(zero)} of the {len(lengths)} error bars "
                            f"{'of ' + _quote(name) + ' ' if name else ''}have zero length "
                            "(an interval from one value; draw intervals only with n ≥ 2)")
    return problems


# ------------------------------------------------------------------ reference artists, series
def is_reference(line: Line2D) -> bool:
    """Whether ``line`` is a reference and no data series: not drawn in data coordinates on both axes
    (``axhline``, ``axvline``, ``axline``), or tagged ``gid="reference"`` / ``gid="interval"``."""
    if line.get_gid() in REFERENCE_GIDS:
        return True
    ax = line.axes
    return ax is None or line.get_transform() is not ax.transData


def mark_intervals(ax: Axes, lines=None) -> None:
    """Tag ``lines`` (default: every line of ``ax`` drawn without markers through NaN-separated
    pieces, as seaborn draws its error bars) as intervals, ``gid="interval"``: the checker does not
    read them as curves."""
    for line in (ax.lines if lines is None else lines):
        if lines is not None or (_drawn_as_line(line) and not _has_markers(line)
                                 and np.isnan(np.asarray(line.get_xdata(), float)).any()):
            line.set_gid(INTERVAL_GID)


def _drawn_as_line(line: Line2D) -> bool:
    return line.get_linestyle() not in ("None", "none", " ", "") and line.get_linewidth() > 0


def _has_markers(line: Line2D) -> bool:
    return line.get_marker() not in (None, "None", "none", "", " ") and line.get_markersize() > 0


def _series_label(line: Line2D, ax: Axes) -> str | None:
    """A line's label, or that of the error-bar container it is the data line of."""
    own = _label(line)
    if own:
        return own
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer) and container.lines[0] is line:
            return _label(container)
    return None


def _named_lines(ax: Axes) -> Iterator[tuple[Line2D, str | None]]:
    """The data lines of ``ax`` (visible, not references) with their series labels."""
    for line in ax.lines:
        if line.get_visible() and not is_reference(line):
            yield line, _series_label(line, ax)


def _names(items: list[tuple[str | None, int]], what: str = "line") -> str:
    """'SimCSE' (2 points), 'MixCSE' (1 point) and 3 unlabelled lines (2 points)."""
    def points(n):
        return f"{n} point" + ("s" if n != 1 else "")

    named = [f"{_quote(label)} ({points(n)})" for label, n in items if label]
    anonymous = sorted({n for label, n in items if not label})
    count = sum(1 for label, _ in items if not label)
    if count:
        spread = points(anonymous[0]) if len(anonymous) == 1 else f"{anonymous[0]}–{anonymous[-1]} points"
        named.append(f"{count} unlabelled {what}{'s' if count > 1 else ''} ({spread})")
    if len(named) > 6:
        named = named[:5] + [f"{len(named) - 5} more"]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


# ------------------------------------------------------------------ what the data support
def _sparse_lines(ax: Axes) -> list[str]:
    """Lines through fewer than MIN_LINE_POINTS points; lines through fewer than MARKED_BELOW
    without a marker at each point."""
    too_few, unmarked = [], []
    markers = None
    for line, label in _named_lines(ax):
        if not _drawn_as_line(line):
            continue   # markers only: points, not a line
        xy = _finite(np.column_stack([np.asarray(line.get_xdata(orig=False), float),
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
        elif n < MARKED_BELOW and not _has_markers(line):
            markers = _marker_positions(ax) if markers is None else markers
            if not _all_marked(_finite(_display_xy(line)), markers, _px(ax.get_figure(), MARKER_PX)):
                unmarked.append((label, n))
    problems = []
    if too_few:
        problems.append(f"{axes_name(ax)}: {_names(too_few)} drawn as a line through fewer than "
                        f"{MIN_LINE_POINTS} points: two measurements make no curve (draw the points without "
                        "a line, or measure more often)")
    if unmarked:
        problems.append(f"{axes_name(ax)}: {_names(unmarked)} joined by a line without markers: with fewer "
                        f"than {MARKED_BELOW} measurements show each one (a marker at every point)")
    return problems


def _marker_positions(ax: Axes) -> np.ndarray:
    """Display positions of every marker drawn in ``ax``: lines' markers and scatter points."""
    found = [np.empty((0, 2))]
    for line in ax.lines:
        if line.get_visible() and _has_markers(line):
            found.append(_finite(_display_xy(line)))
    for coll in ax.collections:
        if coll.get_visible() and not isinstance(coll, (LineCollection, PolyCollection)):
            offsets = coll.get_offsets()
            if offsets is not None and len(offsets):
                found.append(_finite(coll.get_offset_transform().transform(np.asarray(offsets, float))))
    return np.concatenate(found)


def _all_marked(xy: np.ndarray, markers: np.ndarray, tolerance: float) -> bool:
    if not len(markers):
        return False
    distances = np.sqrt(((xy[:, None, :] - markers[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return bool((distances <= tolerance).all())


def _too_wide(fig: Figure, items: list[_Item]) -> list[str]:
    width = fig.get_figwidth()
    if width <= PAGE_WIDTH + PAGE_SLACK:
        return []
    sizes = [float(it.text.get_fontsize()) for it in items]
    smallest = min(sizes) if sizes else _rc_font_size()
    return [f"the figure is {width:.1f} in wide, wider than a printed page ({PAGE_WIDTH:g} in): printed at page "
            f"width its {smallest:g}-pt text would be {smallest * PAGE_WIDTH / width:.1f} pt; put fewer or "
            "narrower panels in a row"]


def _rc_font_size() -> float:
    from .rc import STYLE

    return float(STYLE["font.size"])


def _small_texts(items: list[_Item]) -> list[str]:
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


# "X (= Y)", "X (= Y in 'panel')", "X (= Y in 3 panels)": the claim that X's series is Y's
_IN_PANEL = re.compile(r"^(?P<other>.*?)\s+in\s+(?:'(?P<panel>[^']*)'|\"(?P<panel2>[^\"]*)\"|(?P<count>\d+)\s+panels)$")
_SEEDS = re.compile(r"\s*\(mean, \d+ seeds\)$")


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
    match = _IN_PANEL.match(claim)
    if match:
        where = match["panel"] if match["panel"] is not None else match["panel2"]
        return own, match["other"].strip(), (int(match["count"]) if match["count"] else where)
    return own, claim, None


def _base(label: str | None) -> str:
    """A label without its equality claim and its "(mean, n seeds)"."""
    if not label:
        return ""
    claim = equality_claim(label)
    text = claim[0] if claim else " ".join(str(label).split())
    return _SEEDS.sub("", text)


def _claims_equal(label: str | None, other: str | None) -> bool:
    claim = equality_claim(label)
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


def _false_equalities(axes: list[Axes]) -> list[str]:
    """Labels "X (= Y …)" whose series differs from Y's where the label says they are equal."""
    problems = []
    checked = set()
    for ax in axes:
        for line, label in _named_lines(ax):
            claim = equality_claim(label)
            if claim is None or label in checked:
                continue
            checked.add(label)
            _, other, where = claim
            pairs = []   # (axes, this label's line, the other's line) in every panel holding both
            for panel in axes:
                mine = [ln for ln, lab in _named_lines(panel) if lab == label]
                theirs = [ln for ln, lab in _named_lines(panel) if lab != label and _base(lab) == _base(other)]
                if mine and theirs:
                    pairs.append((panel, mine[0], theirs[0]))
            if isinstance(where, str):
                named = " ".join(where.split())
                pairs = [p for p in pairs if named in _panel_names(p[0])]
            if not pairs:
                problems.append(f"the label {_quote(label)} says it equals {_quote(other)}, which no panel "
                                f"{'named ' + _quote(where) + ' ' if isinstance(where, str) else ''}draws beside it")
                continue
            results = [(panel, *equal_series(mine, theirs)) for panel, mine, theirs in pairs]
            equal = [r for r in results if r[1]]
            if isinstance(where, int):
                if len(equal) < where:
                    problems.append(f"the label {_quote(label)} says it equals {_quote(other)} in {where} panels; "
                                    f"the two series agree in {len(equal)} (within {EQUAL_RELATIVE:.0%} of their span)")
                continue
            for panel, same, difference, tolerance in results:
                if not same:
                    shown = "different x values" if difference == float("inf") else \
                        f"values up to {difference:.3g} apart, more than {tolerance:.2g} ({EQUAL_RELATIVE:.0%} of their span)"
                    problems.append(f"{axes_name(panel)}: the label {_quote(label)} says it equals {_quote(other)}, "
                                    f"but the two series differ ({shown}); drop the '(= …)' or show the difference")
    return problems


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
        series.append((heights, lows + widths / 2, horizontal, _label(container)))
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


def _flat_bars(ax: Axes) -> list[str]:
    flat = []
    for name, heights in _bar_groups(ax):
        heights = heights[np.isfinite(heights)]
        if len(heights) < 2:
            continue
        top = float(np.abs(heights).max())
        if top > 0 and float(np.ptp(heights)) < BAR_MIN_SPREAD * top:
            flat.append(f"{_quote(name)} {heights.min():.3g}–{heights.max():.3g}")
    if not flat:
        return []
    shown = ", ".join(flat[:4]) + (f" and {len(flat) - 4} more" if len(flat) > 4 else "")
    return [f"{axes_name(ax)}: bars from zero that differ by less than {BAR_MIN_SPREAD:.0%} of their height look "
            f"equal ({shown}); draw the differences from the baseline with their intervals, or points on a "
            "zoomed axis"]


def legend_covers_data(legend: Legend, owner: Axes | Figure) -> bool:
    """Whether ``legend`` (of the axes or figure ``owner``), as the figure is drawn now, lies over
    data: what :func:`cselab.plots.style.place_legend` asks before leaving a legend inside."""
    fig = owner if isinstance(owner, Figure) else owner.get_figure()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # a trial legend too big for the panel upsets the layout: it is refused
        renderer = _draw(fig)
    box = legend.get_window_extent(renderer)
    if isinstance(owner, Axes) and (box.width > owner.bbox.width or box.height > owner.bbox.height):
        return True
    return bool(_legend_over_data(legend, owner, fig, renderer))
