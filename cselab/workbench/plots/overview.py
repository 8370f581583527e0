"""Every paper claim in one figure (docs/cpu-papers.md opens with it): a row per claim, grouped by
paper, Δ in the paper's direction divided by the claim's target, so that every metric shares one axis
(0: no effect; 1: the target, as the paper says), its 95 % interval, the verdict as colour and word and
n per row. A claim without a test has no point: its row says why in one word."""
from __future__ import annotations

import math
import os
import textwrap
from collections import Counter

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .core import PAGE_WIDTH, TooFewPoints, styled
from .palettes import VERDICT_COLOURS   # one colour per verdict group, as every claims figure draws it
LIMIT = 3.0   # Δ / target beyond ±3 is drawn at the edge with an arrow


LABEL_CHARS = 50   # a row's label at most this long (the figure is a page wide)
TAIL_CHARS = 24    # the distinguishing end kept when two claims' shortened labels would read alike


def row_labels(claims: list[str], width: int = LABEL_CHARS) -> dict[str, str]:
    """Each claim's row label, at most ``width`` characters. Shortening keeps a claim's start, and two
    claims that differ only at the end (the same batch claim at 80 steps and on the same data) read
    alike: those keep their own end after the shared start, "… both 80 steps" against "… on the same data"."""
    short = {c: textwrap.shorten(c, width, placeholder="…") for c in claims}
    read = {c: label.rstrip("…").rstrip(" ,;:") for c, label in short.items()}   # what a reader tells apart
    for words in [w for w, n in Counter(read.values()).items() if n > 1]:
        alike = [c for c in short if read[c] == words]
        common = len(os.path.commonprefix(alike))
        tails = {c: textwrap.shorten(c[common:].lstrip(" ,;:"), TAIL_CHARS, placeholder="…") for c in alike}
        head = textwrap.shorten(alike[0][:common], max(width - max(map(len, tails.values())) - 2, 10),
                                placeholder="").rstrip(" ,;:")
        short.update({c: f"{head}… {tail}" for c, tail in tails.items()})
    return short


@styled
def plot_claims_overview(rows: pd.DataFrame) -> Figure:
    """``rows``: :func:`cselab.workbench.paper_tables.overview.overview_rows`."""
    if rows.empty:
        raise TooFewPoints("plot_claims_overview: no claims")
    papers = list(dict.fromkeys(rows["paper"]))
    n_lines = len(rows) + len(papers)
    height = 1.6 + 0.19 * n_lines            # inches: the rows, the legend above, the axis and note below
    fig = Figure(figsize=(PAGE_WIDTH, height))
    bottom, top = 1.05 / height, 0.45 / height
    ax = fig.add_axes((0.46, bottom, 0.25, 1 - bottom - top))
    y, ticks, labels = 0, [], []
    names = row_labels(list(rows["claim"].astype(str)))
    for paper in papers:
        ax.text(-0.02, y, paper, transform=ax.get_yaxis_transform(), ha="right", va="center", fontweight="bold")
        y += 1
        for _, r in rows[rows["paper"] == paper].iterrows():
            colour = VERDICT_COLOURS[r["class"]]
            claim = names[str(r["claim"])]
            ticks.append(y), labels.append(claim)
            ratio = r["test"] == "paired_variance"
            tested = r["n"] >= 2 and math.isfinite(r["delta"]) and math.isfinite(r["target"]) and not ratio
            if tested:
                x, low, high = (np.clip(v / r["target"], -LIMIT, LIMIT) for v in (r["delta"], r["low"], r["high"]))
                ax.plot([low, high], [y, y], color=colour, linewidth=1.4, solid_capstyle="butt")
                ax.plot([x], [y], marker="o", markersize=4.5, color=colour, linestyle="none")
                for edge, value in ((-LIMIT, r["low"] / r["target"]), (LIMIT, r["high"] / r["target"])):
                    if abs(value) > LIMIT:   # the interval runs past the axis: an arrow says so
                        ax.annotate("", xy=(edge, y), xytext=(edge - np.sign(edge) * 0.35, y),
                                    arrowprops={"arrowstyle": "->", "color": colour, "linewidth": 1.0})
            word = r["class"] if r["class"] != "powered null" else "not detected"
            right = f"{word}, n {r['n']}" if r["n"] else word
            if r["n"] >= 2 and not ratio and not math.isfinite(r["target"]):
                right += " (no target)"   # a metric without a target in its units has no place on this axis
            if ratio and r["n"] >= 2:
                right += f", ratio {r['delta']:.2f}"
            ax.text(1.03, y, right, transform=ax.get_yaxis_transform(), ha="left", va="center", color=colour)
            y += 1
    ax.set_yticks(ticks, labels)
    ax.set_ylim(y - 0.5, -0.5)
    ax.set_xlim(-LIMIT - 0.2, LIMIT + 0.2)
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.axvline(1, color="0.3", linewidth=0.8, linestyle=":")
    ax.set_xlabel("Δ / target (paper's direction)")
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="y", visible=False)
    # the legend's words are the rows': a powered null reads "not detected" beside its row
    handles = [Line2D([], [], color=c, marker="o", linewidth=1.4, label="not detected (powered)" if k == "powered null" else k)
               for k, c in VERDICT_COLOURS.items() if k != "not testable" and k in set(rows["class"])]
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.text(0.5, 0.01, textwrap.fill(
        "Point: the mean paired Δ over n seeds divided by the claim's target in its own units (dotted: Δ = "
        "target); bar: its 95 % t-interval (not Holm-adjusted: the verdict is); arrow: the interval runs past ±3 targets. Grey: no test (no pair "
        "of one computation, too few seeds) or not testable at this scale; an sd-ratio claim has no point.", 120),
        ha="center", va="bottom", fontsize="small", color="0.3")
    return fig
