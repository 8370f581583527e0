"""Lines that lie on top of each other, made visible.

Two series can coincide for a real reason — MixCSE's mixed negatives for view-1 and view-2 anchors
are nearly symmetric, two ablations of APINCSE give the same per-layer profile — and then the
line drawn last hides the other, so a legend entry names a line nobody can see.
:func:`mark_coincident` finds, in each panel, every line that stays within a few typographic points
of an earlier line over all its points (measured where it is drawn, in display coordinates) and
gives it dashes and its own marker, so the line beneath shows through the gaps. Call it before
:func:`~cselab.plots.legend_outside` (which copies the lines' styles into the figure's legend); a
legend inside a panel is rebuilt with the new styles.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

# A line is ~1.5 pt wide: two lines closer than this everywhere read as one.
COINCIDENT_POINTS = 3.0
DASHES = ("--", ":", "-.")
MARKERS = ("s", "^", "D", "v", "P")


def _display_points(ax, line: Line2D) -> np.ndarray:
    xy = np.column_stack([np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)])
    return ax.transData.transform(xy) * 72.0 / ax.figure.dpi   # typographic points


def coincident_pairs(ax, tolerance: float = COINCIDENT_POINTS) -> list[tuple[Line2D, Line2D]]:
    """(earlier, later) pairs of labelled lines of ``ax`` with the same x values whose y values
    differ by less than ``tolerance`` points everywhere on the drawn axes."""
    ax.get_ylim()   # settles the autoscaled limits, so transData is the drawn one
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_") and len(ln.get_xdata()) > 0]
    points = [_display_points(ax, ln) for ln in lines]
    pairs = []
    for j in range(len(lines)):
        for i in range(j):
            a, b = points[i], points[j]
            if a.shape == b.shape and np.allclose(a[:, 0], b[:, 0]) and np.nanmax(np.abs(a[:, 1] - b[:, 1])) < tolerance:
                pairs.append((lines[i], lines[j]))
    return pairs


def mark_coincident(fig: Figure, tolerance: float = COINCIDENT_POINTS) -> Figure:
    """Give every line hidden under or over an earlier one (:func:`coincident_pairs`) its own
    dashes and marker, keeping its colour; returns ``fig``."""
    for ax in fig.axes:
        later = list(dict.fromkeys(b for _, b in coincident_pairs(ax, tolerance)))
        for k, line in enumerate(later):
            line.set_linestyle(DASHES[k % len(DASHES)])
            line.set_marker(MARKERS[k % len(MARKERS)])
            line.set_markersize(3.5)
            line.set_markerfacecolor("none")
        legend = ax.get_legend()
        if later and legend is not None:
            ax.legend(*ax.get_legend_handles_labels(), loc=legend._loc, frameon=legend.get_frame_on())
    return fig
