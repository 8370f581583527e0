"""cselab's matplotlib rc settings: the sizes every figure is drawn and checked with.

A module of its own so that the figure checker (check.py) draws a figure in the same style as
save_figure (core.py) without the two importing each other."""
from __future__ import annotations

import matplotlib

# Applied while drawing and while saving: fonts and sizes fixed here, not by the user's matplotlibrc.
STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.5,
    "pdf.fonttype": 42,          # TrueType: text stays editable in the PDF
    "path.simplify": True,
}


def style():
    """Context manager with cselab's figure style."""
    return matplotlib.rc_context(STYLE)


# What a printed page holds: the text width of a two-column paper's page (ACL, IEEE: 7.0–7.2 in).
# A figure is drawn at the size it is printed, so no figure is wider, and no text in it is smaller
# than MIN_TEXT_PT (the checker says so: cselab.workbench.plots.check).
PAGE_WIDTH = 7.2
MIN_TEXT_PT = 6.0
