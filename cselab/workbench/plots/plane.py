"""Two probe statistics against each other, over seeds: the alignment–uniformity plane.

Wang & Isola (2020) measure a sentence encoder by the alignment of its positive pairs and the
uniformity of all its embeddings; ClusterNS (Fig. 6) and MixCSE place each model as one point in that
plane ("lower values are better" on both axes). Here each variant is the mean over its seeds of the
statistics at one probe step, with 95 % t-intervals along both axes and each seed as a small dot, so
the reader sees how far apart the seeds are before comparing variants. The untuned backbone (step 0 of
every run, the same for every seed) is a hollow point without bars.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..results import mean_ci
from .core import COLUMN_WIDTH, TooFewPoints, add_note, new_figure, styled
from .style import place_legend, point_markers, series_styles

ALIKE = 1e-3   # seeds closer than this on both axes are drawn as one point


@styled
def plot_seed_plane(points: Mapping[str, Sequence[tuple[float, float]]], xlabel: str, ylabel: str,
                    title: str | None = None, hollow: Sequence[str] = (), labels: Mapping[str, str] | None = None,
                    note: str = "") -> Figure:
    """``{name: [(x, y) of each seed]}``: the mean over seeds with its 95 % t-interval on both axes
    and the seeds themselves. ``hollow``: the names drawn hollow (an untuned backbone);
    ``labels``: a legend label per name (default: the name and n)."""
    points = {name: np.asarray(p, dtype=float).reshape(-1, 2) for name, p in points.items() if len(p)}
    if not points:
        raise TooFewPoints("plot_seed_plane: no probe values to draw")
    fig, (ax,) = new_figure(panel_size=(COLUMN_WIDTH + 0.4, 2.8))
    styles = series_styles(list(points))
    markers = point_markers(list(points))   # each method's own marker (ClusterNS's ◆), as in every figure
    counts, alike = set(), []
    for name, xy in points.items():
        style = styles[name]
        x, y = mean_ci(xy[:, 0]), mean_ci(xy[:, 1])
        counts.add(x["n"])
        label = (labels or {}).get(name, f"{name} (n {x['n']})")
        open_marker = name in hollow
        if np.ptp(xy[:, 0]) < ALIKE and np.ptp(xy[:, 1]) < ALIKE:
            # every seed the same point (the untuned backbone; CPU kinds differ in the 4th decimal): no
            # interval to draw, a zero-length bar would claim one
            alike.append(name)
        elif x["n"] > 1:
            ax.errorbar([x["mean"]], [y["mean"]], xerr=[[x["mean"] - x["ci_low"]], [x["ci_high"] - x["mean"]]],
                        yerr=[[y["mean"] - y["ci_low"]], [y["ci_high"] - y["mean"]]], fmt="none",
                        ecolor=style["color"], elinewidth=1.0, capsize=2, zorder=2)
            ax.scatter(xy[:, 0], xy[:, 1], s=6, color=style["color"], alpha=0.35, linewidths=0, zorder=1)
        ax.plot([x["mean"]], [y["mean"]], linestyle="none", marker=style.get("marker") or markers[name], markersize=6,
                color=style["color"], markerfacecolor="none" if open_marker else style["color"], label=label,
                zorder=3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.margins(0.12)
    if title:
        fig.suptitle(title)
    place_legend(ax, min_entries=2)
    n = sorted(counts)
    seeds = f"{n[0]} seeds" if len(n) == 1 else f"{n[0]}–{n[-1]} seeds (n per label)"
    same = f" {', '.join(alike)}: the same point for every seed (within {ALIKE:g})." if alike else ""
    add_note(fig, f"Marker: the mean over {seeds}; bars: 95 % t-intervals on each axis; dots: the seeds."
                  f"{same}{(' ' + note) if note else ''}")
    return fig
