"""The comparison of methods against a baseline over seeds, as a figure.

=========================  ======================================================================
function                   what it shows
=========================  ======================================================================
plot_paired_differences    each method's mean per-seed difference from the baseline with its 95 %
                           t-interval and the paired t-test's Holm-adjusted p (written beside each row,
                           or for many panels a filled dot where it is below α), one panel per metric
                           (the ``compare`` notebook; none of the four papers gave intervals)
=========================  ======================================================================
"""
from __future__ import annotations

import math
import textwrap
from typing import Mapping

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..results import ALPHA, holm_family_scope
from .core import add_note, new_figure, styled
from .style import series_styles

TITLE_WIDTH = 28
# Above this many panels the p is a filled or hollow dot instead of words beside each row: with the
# words, 8 panels (the STS average and 7 tasks) needed 3.0-in panels two a row, 12.8 in tall.
MOST_PANELS_WITH_P_WORDS = 2


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
    if _is_bootstrap(row):   # the interval in numbers too: a short one hides under its dot
        return f"n {n}, [{row['diff_ci_low']:+.2f}, {row['diff_ci_high']:+.2f}]".replace("-", "\u2212")
    return f"n {n}: no interval"


def _p(row: pd.Series) -> float:
    """The p a reader may act on: Holm-adjusted when the frame has it, else the raw p."""
    adjusted = row.get("p_holm", math.nan)
    return float(row["p"] if pd.isna(adjusted) else adjusted)


def _family_words(rows: list[pd.Series]) -> str:
    """The Holm family of :func:`cselab.workbench.results.paired_tests`' ``family`` column in a figure's words
    (" over each row's 8 scores", " over each panel's 6 rows"), or "" when the rows disagree."""
    scope = holm_family_scope(r.get("family", "") for r in rows)
    if scope is None:
        return ""
    kind, size = scope
    return f" (Holm over each row's {size} scores)" if kind == "group" else f" (Holm over each panel's {size} rows)"


def _is_bootstrap(row: pd.Series) -> bool:
    return row.get("interval") == "bootstrap over test pairs"


@styled
def plot_paired_differences(comparisons: Mapping[str, pd.DataFrame], group: str = "group",
                            baseline: str | None = None, xlabel: str | None = None, ncols: int = 4,
                            title: str | None = None, p_beside: bool | None = None,
                            metric: str | None = None) -> Figure:
    """One panel per metric (``{metric words: compare_to_baseline(...) frame}``), one row per group
    other than the baseline: the mean difference (dot) with its 95 % interval (bar: the t-interval over
    seeds, or for a single shared seed the paired bootstrap over test pairs of
    :func:`cselab.workbench.comparisons.difference_panels`) and, at the right, the Holm-adjusted p of the
    paired t-test when the frame has ``p_holm`` (else the raw p; ``n 1`` when only one seed is shared:
    no test). ``p_beside=False`` (the default above two panels) writes no words beside the rows: a
    filled dot is an adjusted p below α, a hollow one is not, and the note says over how many seeds;
    the p values themselves are in the table the frames came from.
    A vertical line marks no difference; the x-axis reads "difference from <baseline>" and, with
    ``metric`` (what the differences are differences of, with its unit: "STS-B test, Spearman ×100"),
    names it on a second line. Panels wrap after ``ncols``."""
    if not comparisons:
        raise ValueError("plot_paired_differences: no comparison to draw")
    tables = {}
    for name, table in comparisons.items():
        missing = [c for c in (group, "diff", "diff_ci_low", "diff_ci_high", "p", "paired_n") if c not in table]
        if missing:
            raise ValueError(f"plot_paired_differences: {name}: missing column(s) {missing} "
                             "(pass cselab.workbench.results.compare_to_baseline frames)")
        tables[name] = table[table["diff"].notna()].reset_index(drop=True)
    if not any(((t["paired_n"] >= 2) | t["diff_ci_low"].notna()).any() for t in tables.values()):
        raise ValueError("plot_paired_differences: every group shares one seed with the baseline (n = 1): no "
                         "interval or test to draw (for one seed, a paired bootstrap over the test pairs says "
                         "how uncertain a difference is)")
    rows = max(len(t) for t in tables.values())
    groups = list(dict.fromkeys(str(g) for t in tables.values() for g in t[group]))
    styles = series_styles(groups)   # each row in its method's colour
    if p_beside is None:
        p_beside = len(tables) <= MOST_PANELS_WITH_P_WORDS
    # 1.2 in besides the rows: the title, the x label and ticks leave a single-row panel room to be read;
    # without the words beside the rows, four 1.7-in panels fit a page's width
    size = (3.0, 1.2 + 0.32 * max(rows, 1)) if p_beside else (1.7, 1.0 + 0.26 * max(rows, 1))
    fig, axes = new_figure(len(tables), panel_size=size, ncols=ncols, sharey=True)
    # four "difference from SimCSE" side by side nearly touch: the short form under narrow panels
    x_words = xlabel or (f"difference from {baseline or 'the baseline'}" if p_beside
                         else f"Δ from {baseline or 'baseline'}")
    if metric and not xlabel:   # the axis names its metric and unit, not only "difference"
        x_words = f"{x_words}\n({textwrap.fill(metric, TITLE_WIDTH + 6) if p_beside else metric})"
    for ax, (name, table) in zip(axes, tables.items()):
        positions = list(range(len(table)))[::-1]             # first group on top
        for y, (_, r) in zip(positions, table.iterrows()):
            has_ci = not (math.isnan(r["diff_ci_low"]) or math.isnan(r["diff_ci_high"]))
            row_color = styles[str(r[group])]["color"]
            if has_ci:   # an interval and a point: no line through measurements; drawn over the dot with
                # end ticks, so that an interval shorter than the dot still shows its two ends
                ax.errorbar([r["diff"]], [y], xerr=[[r["diff"] - r["diff_ci_low"]], [r["diff_ci_high"] - r["diff"]]],
                            fmt="none", ecolor=row_color, elinewidth=1.4, capsize=3.5, capthick=1.2, zorder=4)
            if not has_ci:
                ax.scatter([r["diff"]], [y], marker="x", color=row_color, s=16, zorder=3)
            elif p_beside or math.isnan(_p(r)):
                ax.scatter([r["diff"]], [y], marker="o", color=row_color, s=16, zorder=3)
            else:   # filled: detected at α after adjustment; hollow: not
                detected = _p(r) < ALPHA
                ax.scatter([r["diff"]], [y], marker="o", s=22, zorder=3, linewidths=1.2, edgecolors=row_color,
                           facecolors=row_color if detected else "white")
            if p_beside:
                ax.annotate(_p_note(r), (1.0, y), xycoords=("axes fraction", "data"), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
        ax.axvline(0.0, color="grey", linestyle=":", linewidth=1)
        # every interval whole, with room at both ends (an interval that ends at the frame reads as cut)
        ends = [0.0, *table["diff"], *table["diff_ci_low"].dropna(), *table["diff_ci_high"].dropna()]
        pad = 0.08 * ((max(ends) - min(ends)) or 1.0)
        ax.set_xlim(min(ends) - pad, max(ends) + pad)
        # at least four ticks: "0", "1.5" and "3" leave the reader to count the scale between them
        # (fit_tick_labels thins them again where their labels would collide)
        ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", min_n_ticks=4))
        ax.set_yticks(positions, [str(g) for g in table[group]])
        ax.set_ylim(-0.6, max(len(table), 1) - 0.4)
        ax.set_title(textwrap.fill(str(name), TITLE_WIDTH))
        ax.set_xlabel(x_words)
        ax.grid(axis="y", visible=False)
    # what the bars are, under the panels (the per-row n is written beside each row)
    rows_drawn = [r for t in tables.values() for _, r in t.iterrows()]
    parts = []
    tested = [r for r in rows_drawn if r["paired_n"] >= 2]
    if tested and p_beside:
        parts.append("dot: mean paired difference over the seeds both share (n); bar: its 95 % t-interval; "
                     "p: paired t-test")
    elif tested:
        ns = sorted({int(r["paired_n"]) for r in tested})
        seeds = f"n = {ns[0]} seeds in every row" if len(ns) == 1 else f"n = {ns[0]}–{ns[-1]} seeds by row"
        adjusted = "Holm-adjusted " if any(not pd.isna(r.get("p_holm", math.nan)) for r in tested) else ""
        parts.append(f"dot: mean paired difference Δ over the seeds both share ({seeds}); bar: its 95 % "
                     f"t-interval; filled dot: {adjusted}p of the paired t-test < {ALPHA:g}"
                     f"{_family_words(tested) if adjusted else ''}, hollow: not detected")
    if any(_is_bootstrap(r) for r in rows_drawn):
        parts.append(("n 1" if parts else "n 1 (every row)") + ": one seed each, no test; dot: the difference "
                     "of the two runs, bar (ends ticked, drawn over the dot; in brackets at the right): its 95 % "
                     "paired bootstrap interval over the test pairs (test-set uncertainty, not seed variance)")
    add_note(fig, "; ".join(parts))   # under the panels, in a strip of its own
    if title:
        fig.suptitle(title)
    return fig
