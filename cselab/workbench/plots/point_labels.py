"""Names beside points: each label where it overlaps no other and stays in its panel, else every point
named in a legend by its own marker (:func:`label_points`)."""
from __future__ import annotations

from .style import MARKERS, legend_beside, place_legend

# Offsets (points) tried in turn for a point label: above right first, then around the point; then
# the same directions farther out, with a leader line back to the point.
_LABEL_DIRECTIONS = [(1, 1, "left", "bottom"), (1, -1, "left", "top"), (-1, 1, "right", "bottom"),
                     (-1, -1, "right", "top"), (0, 1.7, "center", "bottom"), (0, -1.7, "center", "top"),
                     (1.5, 0, "left", "center"), (-1.5, 0, "right", "center")]
_LABEL_RADII = (4, 12, 22)


def label_points(ax, xs, ys, texts, marked: bool = False) -> None:
    """Name each point with a text placed at the first offset around it where it overlaps no label
    placed before and stays inside the panel, nearest first (a far one gets a leader line). Where
    some label finds no free place — points that crowd, which depends on the numbers and so on the
    machine's precision — every point is named in a legend instead, each with its own marker: the
    figure stays readable whatever its numbers are."""
    from .check import draw

    fig = ax.get_figure()
    renderer = draw(fig)
    placed, notes = [], []
    for x, y, text in zip(xs, ys, texts):
        found = None
        for radius in _LABEL_RADII:
            for dx, dy, ha, va in _LABEL_DIRECTIONS:
                leader = {"arrowprops": {"arrowstyle": "-", "lw": 0.5, "color": "0.5"}} if radius > 4 else {}
                note = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx * radius, dy * radius),
                                   fontsize=7, ha=ha, va=va, **leader)
                box = note.get_window_extent(renderer)
                if not any(box.overlaps(other) for other in placed) and ax.bbox.contains(box.x0, box.y0) and \
                        ax.bbox.contains(box.x1, box.y1):
                    found = (note, box)
                    break
                note.remove()
            if found:
                break
        if found is None:
            for note in notes:
                note.remove()
            if marked:   # each point has its own colour and marker already: a legend names them
                from matplotlib.collections import PathCollection
                from matplotlib.legend_handler import HandlerPathCollection

                ringed = _ring_overlapping(ax, renderer)
                handles, labels = ax.get_legend_handles_labels()   # every entry at the points' common size
                legend_beside(fig, handles, labels, handler_map={PathCollection: HandlerPathCollection(sizes=[34])})
                if ringed:   # a bigger marker must not read as an encoding
                    from .core import add_note

                    add_note(fig, "Open markers: points that overlap on the page ring one another, each later one "
                                  "twice as wide; a marker's size is not a measurement.")
            else:
                _legend_points(ax, xs, ys, texts)
            return
        notes.append(found[0])
        placed.append(found[1])


def _ring_overlapping(ax, renderer) -> bool:
    """Where point markers overlap on the page (two models measured alike), a filled marker would
    hide the one under it: every marker of the panel is then drawn open, its edge in its colour,
    and each overlapping marker after the first of its cluster twice as wide as the one before, so
    that it rings it (a legend drawn after keeps one size for all). Returns whether any did."""
    import numpy as np

    points = [c for c in ax.collections if len(c.get_offsets()) == 1]
    if len(points) < 2:
        return False
    centres = np.array([ax.transData.transform(c.get_offsets()[0]) for c in points])
    radius = np.sqrt(max(c.get_sizes()[0] for c in points)) / 2 * renderer.points_to_pixels(1.0)
    near = np.linalg.norm(centres[:, None] - centres[None], axis=-1) < 2 * radius
    np.fill_diagonal(near, False)
    if not near.any():
        return False
    for i, c in enumerate(points):
        face = c.get_facecolor()
        colour = face[0] if len(face) and face[0][3] > 0 else c.get_edgecolor()[0]   # a hollow one keeps its edge
        c.set_facecolor("none")
        c.set_edgecolor(colour)
        c.set_linewidth(1.1)
        k = int(near[i, :i].sum())   # the k-th of its cluster in drawing order: 4^k times the area, 2^k the width
        c.set_sizes([c.get_sizes()[0] * 4 ** k])
    return True


def _legend_points(ax, xs, ys, texts) -> None:
    """Each point ringed by its own marker, named in the legend (the fallback of :func:`label_points`)."""
    for i, (x, y, text) in enumerate(zip(xs, ys, texts)):
        ax.scatter([x], [y], marker=MARKERS[i % len(MARKERS)], s=70, facecolors="none", edgecolors="0.2",
                   linewidths=0.8, zorder=4, label=text)
    place_legend(ax, min_entries=1)
