"""A figure as it is drawn: the renderer's boxes of its texts, its data series in display
coordinates, and the names problems give them. What the rules (:mod:`.rules`) read, and what the
plotting code asks of a drawn figure when it lays one out (:func:`draw`, :func:`text_box`,
:func:`covering_line`, :func:`mark_intervals`, ...).

**Reference artists** are no data series: a line that is not drawn in data coordinates on both axes
(``axhline``, ``axvline``, ``axline``: their transforms span the axes) is one by construction; a
line drawn in data coordinates is one when its ``gid`` is in :data:`REFERENCE_GIDS` —
``gid="reference"`` for a reference drawn through two points (the diagonal y = x, a baseline
segment), ``gid="interval"`` for an interval drawn as a segment or polyline (seaborn's error bars;
:func:`mark_intervals` tags them).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ..rc import style

SHOWN_CHARS = 40      # texts are quoted in problems up to this length
COINCIDE_PX = 0.75    # two lines whose vertices all lie this close are drawn on top of each other
REFERENCE_GID = "reference"   # a reference line drawn in data coordinates (y = x, a baseline segment)
INTERVAL_GID = "interval"     # an interval drawn as a line (a segment, seaborn's error bars)
REFERENCE_GIDS = (REFERENCE_GID, INTERVAL_GID)
CHUNK = 64   # points of a path measured at once: most pairs of lines part within the first few


def px(fig: Figure, pixels: float) -> float:
    """A tolerance given in pixels at 100 dpi, at the figure's dpi."""
    return pixels * fig.dpi / 100


# ------------------------------------------------------------------ the drawn figure
@dataclass
class DrawnFigure:
    """What every rule reads: the figure drawn once (:func:`read_figure`) — its renderer, every
    visible text with its box (:class:`TextItem`), its data panels (colour bars aside), its
    legends with their owners, and matplotlib's warnings while laying it out."""

    figure: Figure
    renderer: object
    texts: list[TextItem]
    axes: list[Axes]
    legends: list[tuple[Legend, Axes | Figure]]
    layout_warnings: list[str] = field(default_factory=list)

    def px(self, pixels: float) -> float:
        """A tolerance given in pixels at 100 dpi, at the figure's dpi."""
        return px(self.figure, pixels)


def read_figure(fig: Figure) -> DrawnFigure:
    """Draw ``fig`` (:func:`draw`) and read what the rules need from it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        renderer = draw(fig)
    return DrawnFigure(fig, renderer, list(figure_texts(fig, renderer)), data_axes(fig), figure_legends(fig),
                       [str(w.message) for w in caught])


# ------------------------------------------------------------------ drawing and naming
def draw(fig: Figure):
    """Draw ``fig`` on an Agg canvas (a pyplot-free Figure has none that renders) and return the
    renderer, so that constrained layout has placed everything as it will be saved."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    with style():
        canvas.draw()
    return canvas.get_renderer()


def is_colorbar(ax: Axes) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def data_axes(fig: Figure) -> list[Axes]:
    return [ax for ax in fig.axes if ax.get_visible() and not is_colorbar(ax)]


def axes_name(ax: Axes) -> str:
    """How a problem names a panel: its title, else its y label, else its position."""
    fig = ax.get_figure()
    if is_colorbar(ax):
        label = ax.get_ylabel() or ax.get_xlabel()
        return f"colour bar {quote(label)}" if label else "the colour bar"
    title = " ".join(t.get_text() for t in (ax._left_title, ax.title, ax._right_title) if t.get_text())
    if title:
        return f"panel {quote(title)}"
    if ax.get_ylabel():
        return f"panel with y label {quote(ax.get_ylabel())}"
    number = [a for a in fig.axes if not is_colorbar(a)].index(ax) + 1 if ax in fig.axes else 0
    return f"panel {number}"


def quote(text: str) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…")


def artist_label(artist) -> str | None:
    label = artist.get_label() if hasattr(artist, "get_label") else None
    return label if label and not str(label).startswith("_") else None


# ------------------------------------------------------------------ texts
class TextItem:
    """A visible text of the figure: the Text, words naming it in a problem, its box as drawn, and
    its group (the tick labels of one axis share one)."""

    def __init__(self, text: Text, what: str, box: Bbox, group: str):
        # group: tick labels of one axis share it, so that their collisions make one problem
        self.text, self.what, self.box, self.group = text, what, box, group


def text_box(text: Text, renderer) -> Bbox | None:
    if not text.get_visible() or not text.get_text().strip():
        return None
    # Text's own method: an Annotation's would include its arrow
    box = Text.get_window_extent(text, renderer)
    return box if box.width > 0 and box.height > 0 else None


def figure_texts(fig: Figure, renderer) -> Iterator[TextItem]:
    def item(text, what, group):
        box = text_box(text, renderer)
        if box is not None:
            yield TextItem(text, what, box, group)

    for text, what in ((fig._suptitle, "the figure title"), (fig._supxlabel, "the figure x label"),
                       (fig._supylabel, "the figure y label")):
        if text is not None:
            yield from item(text, what, None)
    named = {id(t) for t in (fig._suptitle, fig._supxlabel, fig._supylabel) if t is not None}
    for text in fig.texts:
        if id(text) not in named:   # the figure's titles are in fig.texts too
            yield from item(text, f"figure text {quote(text.get_text())}", None)
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
            for tick in drawn_ticks(axis):
                for label in (tick.label1, tick.label2):
                    yield from item(label, f"{letter} tick label {quote(label.get_text())} of {name}",
                                    f"{letter} tick labels of {name}")
        for text in ax.texts:
            yield from item(text, f"text {quote(text.get_text())} in {name}", None)
    for legend, owner in figure_legends(fig):
        where = f"the legend of {axes_name(owner)}" if isinstance(owner, Axes) else "the figure legend"
        yield from item(legend.get_title(), f"the title of {where}", None)
        for text in legend.get_texts():
            yield from item(text, f"legend entry {quote(text.get_text())} of {where}", None)


def drawn_ticks(axis):
    """The ticks the axis draws (inside its view interval), not the spare ones matplotlib keeps."""
    try:
        return axis._update_ticks()
    except AttributeError:   # a future matplotlib without it: every major tick
        return axis.get_major_ticks()


def boxes_overlap(a: Bbox, b: Bbox, tolerance: float) -> bool:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width > tolerance and height > tolerance


# ------------------------------------------------------------------ legends and data series
def figure_legends(fig: Figure) -> list[tuple[Legend, Axes | Figure]]:
    found = [(ax.get_legend(), ax) for ax in fig.axes if ax.get_visible() and ax.get_legend() is not None]
    found += [(legend, fig) for legend in fig.legends]
    return [(legend, owner) for legend, owner in found if legend.get_visible()]


def data_series(ax: Axes) -> Iterator[tuple[str, object, np.ndarray | None, list]]:
    """(label, artist, vertices in display coordinates, extra paths) of each data artist of ``ax``:
    lines, scatter offsets, error bars, bars, bands."""
    for line in ax.lines:
        if line.get_visible():
            xy = line.get_transform().transform(np.column_stack([line.get_xdata(orig=False),
                                                                 line.get_ydata(orig=False)]).astype(float))
            yield artist_label(line) or "", line, xy, []
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        offsets = coll.get_offsets()
        if isinstance(coll, LineCollection) or isinstance(coll, PolyCollection):
            trans = coll.get_transform()
            paths = [trans.transform_path(p) for p in coll.get_paths()]
            yield artist_label(coll) or "", coll, None, paths
        elif offsets is not None and len(offsets):
            yield artist_label(coll) or "", coll, coll.get_offset_transform().transform(np.asarray(offsets, float)), []
    for patch in ax.patches:
        if patch.get_visible():
            yield artist_label(patch) or "", patch, None, [patch.get_transform().transform_path(patch.get_path())]


def segments_hit(xy: np.ndarray, box: Bbox) -> bool:
    """Whether a polyline (display coordinates) has a vertex in ``box`` or a segment crossing it."""
    xy = xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy
    if not len(xy):
        return False
    if box.count_contains(xy):
        return True
    return any(segment_crosses(p, q, box) for p, q in zip(xy[:-1], xy[1:]))


def segment_crosses(p, q, box: Bbox) -> bool:
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


def path_hits(path, artist, box: Bbox) -> bool:
    filled = isinstance(artist, (Patch, PolyCollection))
    if filled:
        return path.intersects_bbox(box, filled=True)
    return any(segments_hit(np.asarray(poly), box) for poly in path.to_polygons(closed_only=False))


def display_xy(line: Line2D) -> np.ndarray:
    xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
    return line.get_transform().transform(xy)


def covering_line(line: Line2D, ax: Axes) -> Line2D | None:
    """Another line of ``ax`` drawn above ``line`` whose stroke holds every part of ``line`` (its
    vertices and the segments between them, as drawn), at least as wide, solid (or the same dashes),
    opaque and with the same or no markers: ``line`` cannot be seen, whatever the two colours."""
    xy = finite(display_xy(line))
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
        wide = other.get_linewidth() >= line.get_linewidth() or not drawn_as_line(line)
        marker_hidden = not has_markers(line) or (
            other.get_marker() == line.get_marker() and other.get_markersize() >= line.get_markersize())
        if not (same_dashes and wide and marker_hidden):
            continue
        # the part of the wider stroke that reaches past the narrower one, plus the drawing's slack
        reach = px(fig, COINCIDE_PX) + max(0.0, other.get_linewidth() - line.get_linewidth()) * fig.dpi / 72 / 2
        cover = finite(display_xy(other))
        if within(xy, cover, reach) if drawn_as_line(line) else all_marked(xy, cover, px(fig, COINCIDE_PX)):
            return other
    return None


def finite(xy: np.ndarray) -> np.ndarray:
    return xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy


def within(path: np.ndarray, cover: np.ndarray, reach: float) -> bool:
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


# ------------------------------------------------------------------ reference artists, series and markers
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
        if lines is not None or (drawn_as_line(line) and not has_markers(line)
                                 and np.isnan(np.asarray(line.get_xdata(), float)).any()):
            line.set_gid(INTERVAL_GID)


def drawn_as_line(line: Line2D) -> bool:
    return line.get_linestyle() not in ("None", "none", " ", "") and line.get_linewidth() > 0


def has_markers(line: Line2D) -> bool:
    return line.get_marker() not in (None, "None", "none", "", " ") and line.get_markersize() > 0


def series_label(line: Line2D, ax: Axes) -> str | None:
    """A line's label, or that of the error-bar container it is the data line of."""
    own = artist_label(line)
    if own:
        return own
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer) and container.lines[0] is line:
            return artist_label(container)
    return None


def named_lines(ax: Axes) -> Iterator[tuple[Line2D, str | None]]:
    """The data lines of ``ax`` (visible, not references) with their series labels."""
    for line in ax.lines:
        if line.get_visible() and not is_reference(line):
            yield line, series_label(line, ax)


def marker_positions(ax: Axes) -> np.ndarray:
    """Display positions of every marker drawn in ``ax``: lines' markers and scatter points."""
    found = [np.empty((0, 2))]
    for line in ax.lines:
        if line.get_visible() and has_markers(line):
            found.append(finite(display_xy(line)))
    for coll in ax.collections:
        if coll.get_visible() and not isinstance(coll, (LineCollection, PolyCollection)):
            offsets = coll.get_offsets()
            if offsets is not None and len(offsets):
                found.append(finite(coll.get_offset_transform().transform(np.asarray(offsets, float))))
    return np.concatenate(found)


def all_marked(xy: np.ndarray, markers: np.ndarray, tolerance: float) -> bool:
    if not len(markers):
        return False
    distances = np.sqrt(((xy[:, None, :] - markers[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return bool((distances <= tolerance).all())
