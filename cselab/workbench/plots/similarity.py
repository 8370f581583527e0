"""Figures of the ``explorer`` notebook (:mod:`cselab.workbench.neighbours`): a sentence-similarity heat-map and
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

from .core import new_figure, styled
from ..labels import display_name
from .rc import PAGE_WIDTH

MIN_ANNOTATED_CELL = 0.3   # inches: a cell narrower than this has no room for its written value


def _short(sentence: str, width: int) -> str:
    return textwrap.shorten(sentence, width=width, placeholder="…")


def row_label(number: int, sentence: str, width: int, lines: int) -> str:
    """A heat-map row's label: the numbered sentence wrapped into lines of ``width`` characters, in
    full when it fits ``lines`` lines (a cut sentence hides what was compared), else shortened to
    fill them."""
    text = f"{number}. {' '.join(sentence.split())}"
    wrapped = textwrap.wrap(text, width)
    if len(wrapped) <= lines:
        return "\n".join(wrapped)
    return "\n".join(textwrap.wrap(_short(text, width * lines), width)[:lines])


COLOUR_BAR_WIDTH = 1.3   # inches: the colour bar, its ticks and label, and the tick marks' pad
COLUMN_NUMBERS_HEIGHT, TITLE_HEIGHT = 0.4, 0.35   # inches below and above the square
ROW_LINE_HEIGHT = 0.16   # inches per line of a row label (8-pt ticks and their leading)


def _row_labels_width(rows: Sequence[str]) -> float:
    """Inches the widest line of the row labels takes in the current style's tick font, measured
    as drawn (a count of characters overestimated short words and left white space left of the
    labels)."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(size=rcParams["ytick.labelsize"])
    widths = [TextToPath().get_text_width_height_descent(line, font, ismath=False)[0]
              for r in rows for line in r.split("\n")]
    return max(widths) / 72   # points to inches


@styled
def plot_similarity_heatmap(matrix: np.ndarray, sentences: Sequence[str], title: str | None = None,
                            label_width: int = 32, annotate: bool = True) -> Figure:
    """The n × n cosine matrix of ``sentences`` (:func:`cselab.workbench.neighbours.similarity_matrix`) as a
    heat-map: rows and columns are the sentences (numbered; on the rows wrapped into lines of
    ``label_width`` characters, whole where a row's height holds them), each cell written out when
    ``annotate``."""
    matrix = np.asarray(matrix, dtype=float)
    n = len(sentences)
    if matrix.shape != (n, n):
        raise ValueError(f"plot_similarity_heatmap: a {matrix.shape} matrix for {n} sentences")
    side = max(2.4, 0.42 * n + 1.2)
    lines = max(1, int(side / n / ROW_LINE_HEIGHT))   # the lines a row's height holds
    rows = [row_label(i + 1, s, label_width, lines) for i, s in enumerate(sentences)]
    # square cells: the width is the square, the longest row label as drawn and the colour bar, no
    # more (a wider figure is white space beside the square), and no wider than a page (the square
    # gives way)
    labels_width = _row_labels_width(rows) + COLOUR_BAR_WIDTH
    side = min(side, PAGE_WIDTH - labels_width)
    # the height adds the title's and the column numbers' room, so the square keeps its side
    frame = COLUMN_NUMBERS_HEIGHT + (TITLE_HEIGHT if title else 0.0)
    fig, (ax,) = new_figure(panel_size=(side + labels_width, side + frame))
    image = ax.imshow(matrix, cmap="viridis", vmin=min(0.0, float(matrix.min())), vmax=1.0)
    ax.set_xticks(range(n), [str(i + 1) for i in range(n)])
    ax.set_yticks(range(n), rows)
    ax.grid(False)
    if annotate and n <= 12 and (side - 0.8) / n >= MIN_ANNOTATED_CELL:
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="black" if matrix[i, j] > 0.6 else "white")
    fig.colorbar(image, ax=ax, label="cosine similarity", shrink=0.8)
    if title:
        ax.set_title(title)
    return fig


@styled
def plot_projection_grid(frames: Mapping[str, pd.DataFrame], ncols: int = 3, max_legend: int = 20,
                         title: str | None = None, panel_size: float = 3.0) -> Figure:
    """One map per frame (columns x, y, label; :func:`cselab.workbench.neighbours.snapshot_projections`) in a
    grid of ``ncols`` columns at most a page wide (maps at most ``panel_size`` inches square), a
    label's colour the same in every map, the classes' legend in the grid's next cell or under it
    (:func:`cselab.workbench.plots.comparisons.draw_label_maps`)."""
    from .comparisons import draw_label_maps

    if not frames:
        raise ValueError("plot_projection_grid: no frames")
    for name, frame in frames.items():
        missing = [c for c in ("x", "y", "label") if c not in frame]
        if missing:
            raise ValueError(f"plot_projection_grid: frame {name!r} lacks column(s) {missing}")
    fig = draw_label_maps(frames, [str(name) for name in frames], ncols=ncols, max_legend=max_legend,
                          max_panel=panel_size)
    if title:
        fig.suptitle(display_name(title))   # a run label as its method's name
    return fig
