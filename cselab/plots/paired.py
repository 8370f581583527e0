"""The comparison of methods against a baseline over seeds, as a figure.

=========================  ======================================================================
function                   what it shows
=========================  ======================================================================
plot_paired_differences    each method's mean per-seed difference from the baseline with its 95 %
                           t-interval and the paired t-test's Holm-adjusted p, one panel per metric (the
                           ``compare`` notebook; none of the four papers gave intervals)
=========================  ======================================================================
"""
from __future__ import annotations

import math
import textwrap
from typing import Mapping

import pandas as pd
from matplotlib.figure import Figure

from .core import add_note, new_figure, styled
from .style import series_styles

TITLE_WIDTH = 28


def _p_note(row: pd.Series) -> str:
    """The p written beside a row: the Holm-adjusted p when the frame has it (the one a reader may
    act on), else the raw p; without a test, n (and "test pairs" when the interval is the paired
    bootstrap over the test pairs of a single seed)."""
    n = int(row["paired_n"])
    adjusted = row.get("p_holm", math.nan)
    if not pd.isna(adjusted):
        return f"Holm p {adjusted:.3f}, n {n}"
    if not math.isnan(row["p"]):
        return f"p {row['p']:.3f}, n {n}"
    if _is_bootstrap(row):
        return f"n {n}, test pairs"
    return f"n {n}: no interval"


def _is_bootstrap(row: pd.Series) -> bool:
    return row.get("interval") == "bootstrap over test pairs"


@styled
def plot_paired_differences(comparisons: Mapping[str, pd.DataFrame], group: str = "group",
                            baseline: str | None = None, xlabel: str | None = None, ncols: int = 4,
                            title: str | None = None) -> Figure:
    """One panel per metric (``{metric words: compare_to_baseline(...) frame}``), one row per group
    other than the baseline: the mean difference (dot) with its 95 % interval (bar: the t-interval over
    seeds, or for a single shared seed the paired bootstrap over test pairs of
    :func:`cselab.analysis.compare.difference_panels`) and, at the right, the Holm-adjusted p of the
    paired t-test when the frame has ``p_holm`` (else the raw p; ``n 1`` when only one seed is shared:
    no test).
    A vertical line marks no difference; the x-axis reads "difference from <baseline>". Panels
    wrap after ``ncols``."""
    if not comparisons:
        raise ValueError("plot_paired_differences: no comparison to draw")
    tables = {}
    for name, table in comparisons.items():
        missing = [c for c in (group, "diff", "diff_ci_low", "diff_ci_high", "p", "paired_n") if c not in table]
        if missing:
            raise ValueError(f"plot_paired_differences: {name}: missing column(s) {missing} "
                             "(pass cselab.results.compare_to_baseline frames)")
        tables[name] = table[table["diff"].notna()].reset_index(drop=True)
    if not any(((t["paired_n"] >= 2) | t["diff_ci_low"].notna()).any() for t in tables.values()):
        raise ValueError("plot_paired_differences: every group shares one seed with the baseline (n = 1): no "
                         "interval or test to draw (for one seed, a paired bootstrap over the test pairs says "
                         "how uncertain a difference is)")
    rows = max(len(t) for t in tables.values())
    groups = list(dict.fromkeys(str(g) for t in tables.values() for g in t[group]))
    styles = series_styles(groups)   # each row in its method's colour
    # 1.2 in besides the rows: the title, the x label and ticks leave a single-row panel room to be read
    fig, axes = new_figure(len(tables), panel_size=(3.0, 1.2 + 0.32 * max(rows, 1)), ncols=ncols, sharey=True)
    for ax, (name, table) in zip(axes, tables.items()):
        positions = list(range(len(table)))[::-1]             # first group on top
        for y, (_, r) in zip(positions, table.iterrows()):
            has_ci = not (math.isnan(r["diff_ci_low"]) or math.isnan(r["diff_ci_high"]))
            row_color = styles[str(r[group])]["color"]
            if has_ci:   # an interval and a point: no line through measurements
                ax.hlines(y, r["diff_ci_low"], r["diff_ci_high"], color=row_color, linewidth=2, alpha=0.6)
            ax.scatter([r["diff"]], [y], marker="o" if has_ci else "x", color=row_color, s=16, zorder=3)
            note = _p_note(r)
            ax.annotate(note, (1.0, y), xycoords=("axes fraction", "data"), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=7)
        ax.axvline(0.0, color="grey", linestyle=":", linewidth=1)
        # every interval whole, with room at both ends (an interval that ends at the frame reads as cut)
        ends = [0.0, *table["diff"], *table["diff_ci_low"].dropna(), *table["diff_ci_high"].dropna()]
        pad = 0.08 * ((max(ends) - min(ends)) or 1.0)
        ax.set_xlim(min(ends) - pad, max(ends) + pad)
        ax.set_yticks(positions, [str(g) for g in table[group]])
        ax.set_ylim(-0.6, max(len(table), 1) - 0.4)
        ax.set_title(textwrap.fill(str(name), TITLE_WIDTH))
        ax.set_xlabel(xlabel or f"difference from {baseline or 'the baseline'}")
        ax.grid(axis="y", visible=False)
    # what the bars are, under the panels (the per-row n is written beside each row)
    rows_drawn = [r for t in tables.values() for _, r in t.iterrows()]
    parts = []
    if any(r["paired_n"] >= 2 for r in rows_drawn):
        parts.append("dot: mean paired difference over the seeds both share (n); bar: its 95 % t-interval; "
                     "p: paired t-test")
    if any(_is_bootstrap(r) for r in rows_drawn):
        parts.append(("n 1" if parts else "n 1 (every row)") + ": one seed each, no test; dot: the difference "
                     "of the two runs, bar: its 95 % paired bootstrap interval over the test pairs (test-set "
                     "uncertainty, not seed variance)")
    add_note(fig, "; ".join(parts))   # under the panels, in a strip of its own
    if title:
        fig.suptitle(title)
    return fig
