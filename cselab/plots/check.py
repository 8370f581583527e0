"""A figure checker: the defects a reader sees in a figure, found from its drawn layout.

:func:`check_figure` draws the figure once (Agg, cselab's style, the same layout ``save_figure``
writes) and reads the renderer's bounding boxes and the data in display coordinates. It returns one
sentence per problem, naming the panel (its title) and the artist (its label), and ``[]`` for a
sound figure:

* texts on texts: titles, axis and tick labels, annotations and point labels, legend entries,
  colour-bar labels, figure titles whose boxes overlap;
* text outside the canvas (cut off in the PNG);
* a legend box over data: line vertices or segments, markers, bars, error bars, bands;
* a legend entry whose series lies exactly under another one drawn in the same style (it has no
  visible line of its own);
* a panel whose data all sit at one x value (a "sweep" or "curve" of one point);
* error bars of zero length (an interval from one value).

Works on figures built without pyplot (:func:`cselab.plots.core.new_figure`).
"""
from __future__ import annotations

import itertools
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

from .rc import style

OVERLAP_PX = 1.0      # texts whose boxes overlap by more than this (both ways, at 100 dpi) collide
CANVAS_PX = 1.0       # a text further than this outside the canvas is cut off
COINCIDE_PX = 0.75    # two lines whose vertices all lie this close are drawn on top of each other
MIN_PANEL_IN = 0.6    # a panel narrower or lower than this (inches) is squeezed by its neighbours
ZERO_RELATIVE = 1e-9  # an error bar shorter than this (relative to its values) has length zero
SHOWN_CHARS = 40      # texts are quoted in problems up to this length


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
    problems += _overlapping_texts(texts, _px(fig, OVERLAP_PX))
    problems += _texts_off_canvas(fig, texts)
    for legend, owner in _legends(fig):
        problems += _legend_over_data(legend, owner, fig, renderer)
        problems += _hidden_entries(legend, owner, fig)
    for ax in _data_axes(fig):
        problems += _squeezed(ax)
        problems += _one_x_value(ax)
        problems += _zero_length_intervals(ax)
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


def _originals(label: str, axes: list[Axes]) -> list[tuple[Axes, object]]:
    found = []
    for ax in axes:
        for artist in [*ax.lines, *ax.collections, *ax.containers, *ax.patches]:
            if _label(artist) == label:
                found.append((ax, artist))
    return found


def _line_of(artist) -> Line2D | None:
    if isinstance(artist, Line2D):
        return artist
    if isinstance(artist, ErrorbarContainer):
        return artist.lines[0]
    return None


def _hidden_entries(legend: Legend, owner, fig: Figure) -> list[str]:
    axes = [owner] if isinstance(owner, Axes) else _data_axes(fig)
    where = f"the legend of {axes_name(owner)}" if isinstance(owner, Axes) else "the figure legend"
    problems = []
    for text in legend.get_texts():
        label = text.get_text()
        for ax, artist in _originals(label, axes):
            line = _line_of(artist)
            if line is None or line.get_xdata() is None or len(line.get_xdata()) == 0:
                continue
            cover = _covering_line(line, ax)
            if cover is not None:
                problems.append(f"{where}: the series {_quote(label)} of {axes_name(ax)} lies under "
                                f"{_quote(_label(cover) or 'another line')} (same data, same style) and cannot be seen; "
                                "give it its own marker or dashes")
    return problems


def _display_xy(line: Line2D) -> np.ndarray:
    xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
    return line.get_transform().transform(xy)


def _covering_line(line: Line2D, ax: Axes) -> Line2D | None:
    """Another line of ``ax`` drawn above ``line`` over every one of its vertices, at least as wide,
    solid (or the same dashes) and with the same or no markers: ``line`` cannot be seen."""
    xy = _display_xy(line)
    order = {id(a): i for i, a in enumerate(ax.get_children())}
    for other in ax.lines:
        if other is line or not other.get_visible():
            continue
        above = (other.get_zorder(), order.get(id(other), 0)) > (line.get_zorder(), order.get(id(line), 0))
        if not above or other.get_alpha() not in (None, 1, 1.0):
            continue
        oxy = _display_xy(other)
        if oxy.shape != xy.shape or not np.allclose(xy, oxy, atol=_px(ax.get_figure(), COINCIDE_PX), equal_nan=True):
            continue
        same_dashes = other.get_linestyle() in ("-", "solid") or other.get_linestyle() == line.get_linestyle()
        wide = other.get_linewidth() >= line.get_linewidth() or line.get_linestyle() in ("None", "none", " ", "")
        marker_hidden = line.get_marker() in (None, "None", "none", "", " ") or (
            other.get_marker() == line.get_marker() and other.get_markersize() >= line.get_markersize())
        if same_dashes and wide and marker_hidden:
            return other
    return None


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
        if line.get_visible() and line.get_transform() is ax.transData:
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
