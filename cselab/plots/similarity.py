"""Figures of the ``explorer`` notebook (:mod:`cselab.neighbours`): a sentence-similarity heat-map and
a grid of 2-D maps, one per training snapshot.

=========================  =====================================================================
function                   shows
=========================  =====================================================================
plot_similarity_heatmap    cosine similarity of every pair of a few sentences under one model
plot_projection_grid       UMAP / PCA maps of one labelled sample, a panel per snapshot, aligned
=========================  =====================================================================
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .core import LEGEND_CHAR_WIDTH, color, new_figure, styled
from .labels import display_name


def _label_colors(n: int) -> list:
    """cselab's palette for up to 10 labels; tab20 beyond (DBpedia has 14 classes)."""
    if n <= 10:
        return [color(i) for i in range(n)]
    from matplotlib import colormaps

    return [colormaps["tab20"](i % 20) for i in range(n)]


def _short(sentence: str, width: int) -> str:
    return textwrap.shorten(sentence, width=width, placeholder="…")


@styled
def plot_similarity_heatmap(matrix: np.ndarray, sentences: Sequence[str], title: str | None = None,
                            label_width: int = 32, annotate: bool = True) -> Figure:
    """The n × n cosine matrix of ``sentences`` (:func:`cselab.neighbours.similarity_matrix`) as a
    heat-map: rows and columns are the sentences (numbered, shortened on the rows), each cell
    written out when ``annotate``."""
    matrix = np.asarray(matrix, dtype=float)
    n = len(sentences)
    if matrix.shape != (n, n):
        raise ValueError(f"plot_similarity_heatmap: a {matrix.shape} matrix for {n} sentences")
    side = max(2.4, 0.42 * n + 1.2)
    # square cells: the width is the square, the sentences (~0.075 in a character at 8 pt) and the colour bar
    fig, (ax,) = new_figure(panel_size=(side + 0.075 * label_width + 1.3, side))
    image = ax.imshow(matrix, cmap="viridis", vmin=min(0.0, float(matrix.min())), vmax=1.0)
    ax.set_xticks(range(n), [str(i + 1) for i in range(n)])
    ax.set_yticks(range(n), [f"{i + 1}. {_short(s, label_width)}" for i, s in enumerate(sentences)])
    ax.grid(False)
    if annotate and n <= 12:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="black" if matrix[i, j] > 0.6 else "white")
    fig.colorbar(image, ax=ax, label="cosine similarity", shrink=0.8)
    if title:
        ax.set_title(title)
    return fig


@styled
def plot_projection_grid(frames: Mapping[str, pd.DataFrame], ncols: int = 3, max_legend: int = 14,
                         title: str | None = None, panel_size: float = 2.6) -> Figure:
    """One scatter panel per frame (columns x, y, label; :func:`cselab.neighbours.snapshot_projections`)
    in a grid of ``ncols`` columns of ``panel_size``-inch square panels, a label's colour the same in
    every panel, one legend beside them, as wide as its longest label."""
    if not frames:
        raise ValueError("plot_projection_grid: no frames")
    for name, frame in frames.items():
        missing = [c for c in ("x", "y", "label") if c not in frame]
        if missing:
            raise ValueError(f"plot_projection_grid: frame {name!r} lacks column(s) {missing}")
    labels = sorted({lab for f in frames.values() for lab in f["label"]}, key=str)
    colors = _label_colors(len(labels))
    fig, axes = new_figure(len(frames), panel_size=(panel_size, panel_size), ncols=ncols)
    for ax, (name, frame) in zip(axes, frames.items()):
        for i, lab in enumerate(labels):
            part = frame[frame["label"] == lab]
            # markers grow with the panel (area ∝ its area): 5 pt² on a 2.6-inch panel
            ax.scatter(part["x"], part["y"], s=5 * (panel_size / 2.6) ** 2, color=colors[i], label=str(lab),
                       linewidths=0)
        method = str(frame.attrs.get("method", "")).upper()   # UMAP or PCA
        ax.set_title(f"{name} ({method})" if method else str(name))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    if len(labels) <= max_legend:
        handles, names = axes[0].get_legend_handles_labels()
        rows = -(-len(frames) // min(ncols, len(frames)))
        per_column = max(1, int(9 * rows * panel_size / 2.6))   # about 9 entries fit beside a 2.6-inch row
        columns = -(-len(labels) // per_column)
        # room for the legend: a column is a marker and the longest label (8-pt text)
        column_width = 0.5 + LEGEND_CHAR_WIDTH * max(len(str(lab)) for lab in labels)
        fig.set_size_inches(fig.get_figwidth() + column_width * columns, fig.get_figheight())
        fig.legend(handles, names, frameon=False, markerscale=2, loc="outside right center", ncols=columns)
    if title:
        fig.suptitle(display_name(title))   # a run label as its method's name
    return fig
