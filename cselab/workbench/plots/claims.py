"""Figures drawn from a study's record, over training seeds: every point is one seed's run.

=========================  ======================================================================
function                   what it shows
=========================  ======================================================================
plot_claims                each claim of a claims table (:func:`cselab.workbench.claims.claims_table`) as its
                           per-seed paired differences in the paper's direction (small dots; right = as
                           the paper says), their mean and 95 % t-interval, the verdict in words and the
                           paper's effect scaled to this backbone (◇, named where it sits on the mean):
                           the paired view of the test the verdict comes from, one panel per metric
plot_seed_points           a score per variant or swept setting: each seed's value (small dots), the
                           mean and its 95 % t-interval; a line joins the means only over ≥ 4 settings
plot_seed_curves           a logged statistic against the training step: the mean over seeds with its
                           95 % t-interval at each logged step, one line per variant
plot_layer_profile_seeds   each layer's [CLS] cosine to the last layer at the last probe, over seeds
=========================  ======================================================================
"""
from __future__ import annotations

import math
import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..results import mean_ci
from ..claims import DECIDED_IN, verdict_class
from .core import COLUMN_WIDTH, TooFewPoints, add_note, new_figure, styled
from .palettes import VERDICT_COLOUR_NAMES, VERDICT_COLOURS
from .style import place_legend, point_markers, separate_coincident, series_styles

FAMILY_TITLES = {"paper": "the paper's claims", "check": "the workbench's checks (not the paper's)"}
LINE_FROM = 4           # a line through fewer measured settings implies a trend nobody measured
JITTER = 0.12
METRIC_WORDS = {"avg": "Δ of the 7-task STS average (Spearman × 100)",
                "largest_angle_final": "Δ of the largest angle at the last probe (°)",
                "grad_norm_late": "Δ of ‖∂L/∂z‖ × 1000, late-training mean",
                "clustering/DBpedia": "Δ of DBpedia AMI × 100",
                "clustering/short_text_avg": "Δ of the short-text accuracy × 100 (8 sets)"}


ROW_IN = 0.3           # inches per claim row
ROW_LINE_IN = 0.13     # inches per line of a 7-pt row label
LABEL_WIDTH = 44       # characters per line of a row label (the left 38 % of the figure at 7 pt)


def claim_label(claim: str, n: int | None = None, width: int = LABEL_WIDTH) -> str:
    """A claim row's label wrapped at word boundaries to ``width`` characters a line, with "(n k)" kept
    whole: on the last line where it fits, else on a line of its own (it was broken as "(n" / "3)")."""
    lines = textwrap.wrap(str(claim), width) or [""]
    if n is not None:
        tail = f"(n {n})"
        if len(lines[-1]) + 1 + len(tail) <= width:
            lines[-1] = f"{lines[-1]} {tail}"
        else:
            lines.append(tail)
    return "\n".join(lines)


def verdict_colour_words(verdicts) -> str:
    """The colours of the verdict groups among ``verdicts``, in words for a note ("orange: underpowered")."""
    groups = list(dict.fromkeys(verdict_class(str(v)) for v in verdicts))
    return ", ".join(f"{VERDICT_COLOUR_NAMES[VERDICT_COLOURS[g]]}: {'not detected' if g == 'powered null' else g}"
                     for g in groups)


def _interval(values: Sequence[float], log: bool = False, share: bool = False) -> tuple[float, float, float, int]:
    """Mean and 95 % t-interval; with ``log`` both on the log scale and back (the geometric mean), as a
    positive quantity drawn on a log axis needs: a t-interval of the raw values reaches below zero. With
    ``share`` the values are 0/1 (a seed has started something or not): their share and its 95 % Wilson
    interval (statsmodels), which stays within [0, 1] where a t-interval of 0s and 1s runs past it."""
    finite = [v for v in values if math.isfinite(v) and (v > 0 or not log)]
    if share:
        from statsmodels.stats.proportion import proportion_confint

        hits, n = int(round(sum(finite))), len(finite)
        if not n:
            return math.nan, math.nan, math.nan, 0
        low, high = proportion_confint(hits, n, alpha=0.05, method="wilson")
        return hits / n, float(low), float(high), n
    stats = mean_ci(np.log(finite).tolist() if log else finite)
    mean, low, high = stats["mean"], stats["ci_low"], stats["ci_high"]
    if log:
        mean, low, high = (float(np.exp(x)) if math.isfinite(x) else x for x in (mean, low, high))
    return mean, low, high, stats["n"]


def _jitter(n: int) -> np.ndarray:
    return np.linspace(-JITTER, JITTER, n) if n > 1 else np.zeros(1)


@styled
def plot_claims(table: pd.DataFrame, differences: Mapping[str, Sequence[float]], title: str | None = None) -> Figure:
    """One row per tested claim (rows of ``table`` with a paired t-test or an optimum's; ``differences``:
    each claim's per-seed differences over the pairs its test kept, in the paper's direction: positive
    is what the paper says), grouped into one panel per metric. Every row reads the same way: right of
    0 is the paper's direction (the ablation rows too: the full method − the ablation). A row's verdict
    is written at its right; ◇ marks the paper's effect on this backbone where the paper gives a
    number, and "◇ = mean" says so where it sits on the mean and would hide it."""
    # a comparison two studies share has one verdict, its deciding study's, drawn there over its pairs: here its
    # dots (this study's pairs) would sit beside a verdict of other pairs, so the note names it instead
    elsewhere = table["verdict"].astype(str).str.startswith(DECIDED_IN)
    drawn = table["test"].isin(["paired_t", "optimum"]) & table["diff"].notna() & ~elsewhere
    rows, left_out = table[drawn], table[~drawn & ~elsewhere]
    if "paper_diff" in rows:   # a claims table: draw it in the paper's direction
        rows = rows.assign(diff=rows["paper_diff"], ci_low=rows["paper_ci_low"], ci_high=rows["paper_ci_high"])
    if rows.empty:
        raise TooFewPoints("plot_claims: no claim with a paired difference to draw")
    panels = list(dict.fromkeys(zip(rows["kind"], rows["metric"])))
    # n per row where the rows' seed counts differ (one n in the note where they do not)
    sizes = {c: len([d for d in differences.get(c, []) if math.isfinite(d)]) for c in rows["claim"]}
    per_row = len(set(sizes.values())) > 1
    row_labels = {c: claim_label(c, sizes[c] if per_row else None) for c in rows["claim"]}
    # a row is as tall as its label's lines need (7-pt lines 0.13 in apart), so that two wrapped labels never meet
    spans = {c: max(1.0, (label.count("\n") + 1) * ROW_LINE_IN / ROW_IN) for c, label in row_labels.items()}
    heights = [sum(spans[c] for c in rows[(rows["kind"] == k) & (rows["metric"] == m)]["claim"]) for k, m in panels]
    width = 6.8
    # inches: the panels, 0.3 above them, 0.6 under the last for its ticks and x label; the note's
    # strip is added under that by add_note, and the grid's margins set again from the final height
    fig = Figure(figsize=(width, 0.9 + sum(ROW_IN * h + 0.85 for h in heights)))
    grid = fig.add_gridspec(len(panels), 1, height_ratios=[h + 1.6 for h in heights], left=0.38, right=0.72,
                            top=1 - 0.3 / fig.get_figheight(), bottom=0.6 / fig.get_figheight(), hspace=0.75)
    counts, paper_marks = set(), False
    cut: list = []   # (axes, y, low, high, colour) of every interval, marked where the axis cuts it
    ranges: dict[str, list] = {}   # metric -> (axes, low, high) of each panel: one metric, one x scale
    for i, (kind, metric) in enumerate(panels):
        ax = fig.add_subplot(grid[i])
        part = rows[(rows["kind"] == kind) & (rows["metric"] == metric)].reset_index(drop=True)
        ax.set_title(FAMILY_TITLES.get(kind, kind), fontsize=8, loc="left")
        # first claim on top, each row centred in the span its label needs
        tops = np.cumsum([0.0] + [spans[c] for c in part["claim"]])
        total = tops[-1]
        positions = [total - (tops[j] + tops[j + 1]) / 2 - 0.5 for j in range(len(part))]   # rows of 1: n − 1 … 0
        ends = [0.0]   # 0, every seed's difference and every mean: what the axis always shows
        bars = []      # (low, high) of each interval: shown whole only where it stays near the data
        marks = []   # (x, y) of the paper's scaled effects, placed once the axis is known
        for y, (_, r) in zip(positions, part.iterrows()):
            colour = VERDICT_COLOURS[verdict_class(str(r["verdict"]))]   # the verdict's colour, as in the overview
            seeds = [d for d in differences.get(r["claim"], []) if math.isfinite(d)]
            counts.add(len(seeds))
            ax.scatter(np.asarray(seeds), y + _jitter(len(seeds)), s=7, color=colour, alpha=0.45, linewidths=0,
                       zorder=2)
            if math.isfinite(r["ci_low"]):
                ax.hlines(y, r["ci_low"], r["ci_high"], color=colour, linewidth=2, zorder=3)
                bars.append((r["ci_low"], r["ci_high"]))
                cut.append((ax, y, r["ci_low"], r["ci_high"], colour))
            ends.append(r["diff"])
            ax.scatter([r["diff"]], [y], s=22, color=colour, zorder=4, edgecolors="white", linewidths=0.6)
            scaled = r.get("scaled_effect", math.nan)
            if isinstance(scaled, float) and math.isfinite(scaled):
                marks.append((scaled, y, r["diff"]))   # the paper's direction: its effect is to the right
            ends += seeds
            ax.annotate(textwrap.shorten(_verdict_words(r["verdict"]), 34, placeholder="…"), (1.0, y),
                        xycoords=("axes fraction", "data"), xytext=(7, 0), textcoords="offset points",
                        va="center", fontsize=7, color=colour)   # 7 pt: clear of a cut bar's arrowhead
        ax.axvline(0.0, color="grey", linestyle=":", linewidth=1)
        low, high = min(ends), max(ends)
        span = (high - low) or 1.0
        # an interval reaching more than the data's span past it (two seeds' t-interval, 6.8 wide against
        # differences of tenths) is cut at the axis: drawn whole it squeezed every row into a point
        low = min([low] + [lo for lo, _ in bars if lo >= low - span])
        high = max([high] + [hi for _, hi in bars if hi <= high + span])
        span = (high - low) or 1.0
        for x, _, _ in marks:   # a paper effect near the data widens the axis to show it
            if low - span <= x <= high + span:
                low, high = min(low, x), max(high, x)
        paper_marks |= bool(marks)
        for x, y, mean in marks:
            if low <= x <= high:
                ax.scatter([x], [y], marker="D", s=18, facecolors="none", edgecolors="black", linewidths=0.8,
                           zorder=4)
                if abs(x - mean) <= 0.02 * ((high - low) or 1.0):   # drawn over the mean: say so
                    ax.annotate("◇ = mean", (x, y), xytext=(0, 6), textcoords="offset points", ha="center",
                                va="bottom", fontsize=6)
            else:   # far off (ClusterNS's 5.92 against differences of tenths): named at the edge, so
                    # that one number does not squeeze every seed's difference into a point
                right = x > high
                ax.annotate(f"◇ {x:+.2f} →" if right else f"← ◇ {x:+.2f}", (1.0 if right else 0.0, y),
                            xycoords=("axes fraction", "data"), xytext=(-2 if right else 2, 5),
                            textcoords="offset points", ha="right" if right else "left", va="bottom", fontsize=6)
        ranges.setdefault(metric, []).append((ax, low, high))
        ax.set_yticks(positions, [row_labels[c] for c in part["claim"]], fontsize=7)
        ax.set_ylim(-0.6, total - 0.4)
        # a check has no paper direction: its rows are variant − reference, as its claim names them
        reading = "variant − reference" if (part["direction"] == 0).all() else "right = as the paper says"
        ax.set_xlabel(f"{METRIC_WORDS.get(metric, f'Δ of {metric}')}; {reading}", fontsize=8)
        ax.grid(axis="y", visible=False)
    for panels_of_metric in ranges.values():   # the paper's claims and the checks of one metric on one scale
        low = min(lo for _, lo, _ in panels_of_metric)
        high = max(hi for _, _, hi in panels_of_metric)
        pad = 0.08 * ((high - low) or 1.0)
        for ax, _, _ in panels_of_metric:
            ax.set_xlim(low - pad, high + pad)
    cut_any = False
    for ax, y, lo, hi, colour in cut:   # an arrowhead at the edge and the interval's end written beside it
        left, right = ax.get_xlim()
        for end, edge, marker, side in ((lo, left, "<", "left"), (hi, right, ">", "right")):
            if (end < edge) if side == "left" else (end > edge):
                cut_any = True
                ax.plot([edge], [y], marker=marker, markersize=4, linestyle="none", color=colour, clip_on=False,
                        zorder=5)   # a mark, not a line
                ax.annotate(f"{end:+.2f}".replace("-", "−"), (edge, y), xytext=(2 if side == "left" else -2, -3),
                            textcoords="offset points", ha=side, va="top", fontsize=6, color=colour)
    n = sorted(counts)
    seeds = f"n = {n[0]} seeds" if len(n) == 1 else "n seeds per row"
    cut_words = " (a bar the axis cuts ends in an arrowhead, its end written)" if cut_any else ""
    mark_words = ("◇: the paper's effect scaled to this backbone (\"◇ x →\": off the axis, at x); "
                  if paper_marks else "")
    add_note(fig, f"Every row in the paper's direction: the variant the paper favours − the other (an ablation "
                  f"row: the full method − the ablation; an optimum: against its binding neighbour). Small dots: "
                  f"one seed's difference ({seeds}, pairs of one computation); dot and bar: their mean and 95 % "
                  f"t-interval{cut_words}; {mark_words}right: the verdict after Holm's correction within the "
                  f"claim's family, its colour the verdict's ({verdict_colour_words(rows['verdict'])}), as in the "
                  "overview of every claim"
                  + ("; \"inconclusive (N pairs needed)\": the pairs a powered null would take at this spread"
                     if rows["verdict"].astype(str).str.contains("a powered null needs").any() else "") + "."
                  + _not_drawn(left_out) + _drawn_elsewhere(table[elsewhere]))
    height = fig.get_figheight()   # grown by the note: the panels keep their inches above its strip
    grid.update(top=1 - 0.3 / height, bottom=(0.6 + getattr(fig, "_cselab_note_strip", 0.0)) / height)
    for ax in fig.axes:   # matplotlib moves no existing axes on a grid's update
        ax.set_position(ax.get_subplotspec().get_position(fig))
    if title:
        fig.suptitle(title)
    return fig


@styled
def plot_seed_points(frame: pd.DataFrame, x: str, y: str = "avg", hue: str | None = None,
                     xlabel: str | None = None, ylabel: str = "STS avg., 7 tasks (ρ × 100)",
                     numeric_x: bool = True, method: str | None = None, title: str | None = None,
                     about: str = "per point, not paired: the claims figure tests the paired differences") -> Figure:
    """``y`` per ``x`` (a swept setting, or a variant name when ``numeric_x`` is false) and ``hue``:
    each seed's run as a small dot, the mean over seeds with its 95 % t-interval as a bar. A line
    joins the means only where a series has at least :data:`LINE_FROM` settings, all run on the
    same seeds (``seed`` column; without it, the same number of seeds): a line through means over
    different seeds draws which seeds were averaged as a trend. Where the points' seed counts
    differ, each tick says its n. With a ``variant`` column (run labels) each point is drawn in its
    variant's method's colour and marker (SimCSE at M = 0 of a GS-InfoNCE sweep in SimCSE's), a
    series of another variant of the same method in a shade of it; ``method`` is the fallback.
    ``about`` says in the note what the means are (which seeds, what trained them, where the test is)."""
    from .style import method_style
    from ..labels import display_name, method_key

    if frame.empty or frame[x].nunique() < 2:
        raise TooFewPoints(f"plot_seed_points: need at least 2 values of {x!r}")
    fig, (ax,) = new_figure(panel_size=(COLUMN_WIDTH + (0.6 if hue else 0), 2.6))
    groups = list(frame.groupby(hue, sort=False)) if hue else [("", frame)]
    names = [str(name) for name, _ in groups]

    def method_of(part: pd.DataFrame) -> str | None:   # the method most of a part's runs are
        if "variant" not in part:
            return method
        keys = part["variant"].map(method_key).dropna()
        return keys.mode().iloc[0] if len(keys) else method

    series_methods = {name: method_of(group) for name, (_, group) in zip(names, groups)}
    styles = series_styles(names, series_methods)
    markers = point_markers(names, series_methods)
    categories = list(dict.fromkeys(frame[x]))
    offsets = np.linspace(-0.12, 0.12, len(groups)) if len(groups) > 1 else [0.0]
    counts: dict = {}      # category -> [n of each series there]
    lines, apart = 0, 0    # series joined by a line; series left as points because their seeds differ
    labelled: set = set()
    for offset, name, (_, group) in zip(offsets, names, groups):
        style = styles[name]
        xs, means, seed_sets = [], [], []
        for position, value in enumerate(categories):
            part = group[group[x] == value]
            values = part[y].astype(float).tolist()
            kept = [math.isfinite(v) for v in values]
            values = [v for v, k in zip(values, kept) if k]
            if not values:
                continue
            at = (float(value) if numeric_x else position)
            spread = offset * (np.ptp([float(c) for c in categories]) if numeric_x else 1.0) / 2 if numeric_x \
                else offset
            mean, low, high, n = _interval(values)
            counts.setdefault(value, []).append(n)
            seed_sets.append(frozenset(part["seed"][kept]) if "seed" in part else n)
            # the point's own method: a sweep's M = 0 is SimCSE, not the swept method
            own = method_of(part)
            if own is not None and own != series_methods[name]:
                colour, marker = method_style(own)["color"], method_style(own)["marker"]
                label = display_name(own)
            else:
                colour, marker = style["color"], markers[name]
                label = name or (display_name(own) if own else None)
            ax.scatter(np.full(len(values), at + spread) + _jitter(len(values)) * (0.05 if numeric_x else 0.3),
                       values, s=6, color=colour, alpha=0.4, linewidths=0, zorder=2)
            if n >= 2 and math.isfinite(low):
                ax.vlines(at + spread, low, high, color=colour, linewidth=1.4, zorder=3)
            # a second series of one method (ClusterNS without BML beside with): a shade of its colour and
            # its marker, open, so that the two read apart by more than a near-identical hue
            hollow = own == series_methods[name] and "marker" in style and name != names[0]
            ax.scatter([at + spread], [mean], s=20 if not hollow else 24, marker=marker, zorder=4,
                       **({"facecolors": "white", "edgecolors": colour, "linewidths": 1.1} if hollow
                          else {"color": colour}),
                       label=label if label and label not in labelled else None)
            labelled.add(label)
            xs.append(at + spread)
            means.append(mean)
        if len(xs) >= LINE_FROM:
            if len(set(seed_sets)) == 1:
                ax.plot(xs, means, color=style["color"], linestyle=style.get("linestyle", "-"), linewidth=1, zorder=1)
                lines += 1
            else:
                apart += 1
    mixed = len({n for ns in counts.values() for n in ns}) > 1
    ticks = [f"{c:g}" if isinstance(c, float) else str(c) for c in categories]
    if not numeric_x:
        ticks = [textwrap.fill(t, 12) for t in ticks]
    if mixed:   # n per point: "n = 3–10" hides which means rest on three seeds
        ticks = [f"{t}\n{' · '.join(str(n) for n in counts.get(c, []))}" for t, c in zip(ticks, categories)]
    if numeric_x:
        ax.set_xticks([float(c) for c in categories], ticks)
    else:
        ax.set_xticks(range(len(categories)), ticks, fontsize=7)
        ax.set_xlim(-0.5, len(categories) - 0.5)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if hue or len(labelled - {None, ""}) > 1:
        place_legend(ax, title=hue)
    n = sorted({n for ns in counts.values() for n in ns})
    if not mixed:
        seeds = f"{n[0]} seeds a point"
    elif len(groups) > 1:
        seeds = f"the number under each setting: its seeds, {' · '.join(names)}"
    else:
        seeds = "the number under each setting: its seeds"
    line = ""
    if numeric_x and apart:
        line = ("; no line: the settings were run on different seeds, and a line through their means would "
                "draw which seeds were averaged as a trend")
    elif numeric_x:
        line = "; a line joins the means only over 4 or more settings run on the same seeds"
    add_note(fig, f"Small dots: one seed's run each ({seeds}); large marker and bar: the mean over seeds and its "
                  f"95 % t-interval ({about})" + line + ".")
    return fig


@styled
def plot_seed_curves(series: Mapping[str, pd.DataFrame], ylabel: str, title: str | None = None,
                     logy: bool = False, panels: Mapping[str, Mapping[str, pd.DataFrame]] | None = None,
                     share: bool = False, methods: Mapping[str, str | None] | None = None,
                     statistics: Mapping[str, str] | None = None, leading: Sequence[str] = ()) -> Figure:
    """One line per variant (``{name: records_series frame}``: ``seed``, ``step``, ``value``): the
    mean over seeds at each logged step, its 95 % t-interval as a band (``share``: 0/1 values, their
    share and its Wilson interval). With ``panels``
    (``{panel title: {name: frame}}``, one panel per logged key) ``series`` is ignored: each key gets
    its own panel and axis, and a colour means the same variant in every panel. ``methods`` gives a
    line's method where its name does not say it (ClusterNS's "σ = 0.2": a shade of ClusterNS's
    colour, the method's own colour going to the lines in ``leading``: the method itself);
    ``statistics`` the statistic key of a line named in words (its colour and shape in every figure)."""
    panels = {t: {n: f for n, f in p.items() if not f.empty} for t, p in (panels or {"": series}).items()}
    panels = {t: p for t, p in panels.items() if p}
    if not panels:
        raise TooFewPoints("plot_seed_curves: no logged values to draw")
    fig, axes = new_figure(len(panels), panel_size=(COLUMN_WIDTH + 0.4, 2.5), ncols=2)
    names = list(dict.fromkeys(n for p in panels.values() for n in p))
    # seeds per line (at its steps): said in the legend where the lines rest on different counts
    line_counts = {name: {int(part["value"].notna().sum()) for p in panels.values() if name in p
                          for _, part in p[name].groupby("step")} for name in names}
    differ = len({frozenset(c) for c in line_counts.values()}) > 1

    def with_n(name: str) -> str:
        if not differ:
            return name
        c = sorted(line_counts[name])
        return f"{name} (n {c[0]})" if len(c) == 1 else f"{name} (n {c[0]}–{c[-1]})"

    # styled in this order: the method's own colour to the line that is the method, its variants' shades after
    styles = series_styles(sorted(names, key=lambda n: n not in leading), methods, statistics)
    markers = point_markers(names, methods, statistics)   # each method's own marker (MixCSE ■ in every figure)
    counts = set()
    merged: list[str] = []   # where lines end on each other (every seed clustering: a share of 1)
    every_step: set = set()
    for ax, (panel, drawn) in zip(axes, panels.items()):
        curves = {}
        steps_seen: set = set()
        for name, frame in drawn.items():
            rows = []
            for step, part in frame.groupby("step"):
                mean, low, high, n = _interval(part["value"].tolist(), log=logy, share=share)
                rows.append((step, mean, low, high))
                counts.add(n)
            steps, means, lows, highs = map(np.asarray, zip(*rows))
            steps_seen.update(steps.tolist())
            style = styles[name]
            ax.plot(steps, means, color=style["color"], linestyle=style.get("linestyle", "-"),
                    marker=style.get("marker") or markers[name], markersize=3, linewidth=1.2, label=with_n(name))
            curves[name] = dict(zip(steps.tolist(), means.tolist()))
            ok = np.isfinite(lows)
            if ok.any():
                ax.fill_between(steps[ok], lows[ok], highs[ok], color=style["color"], alpha=0.18, linewidth=0)
        merged += _merged_tails(curves, panel)
        ticks = sorted(steps_seen)
        if len(ticks) <= 10:
            ax.set_xticks(ticks)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel("training step")
        ax.set_ylabel(ylabel if len(panels) == 1 else panel)
        every_step.update(steps_seen)
    if len(panels) > 1:   # one x range and one set of ticks in every panel: stacked panels compare by step
        ordered = sorted(every_step)
        pad = 0.04 * ((ordered[-1] - ordered[0]) or 1)
        for ax in axes[:len(panels)]:
            ax.set_xlim(ordered[0] - pad, ordered[-1] + pad)
            if len(ordered) <= 10:
                ax.set_xticks(ordered)
    if title:
        fig.suptitle(title)
    separate_coincident(list(axes))   # two σ at a share of 1.0 all along: both shown, and said
    place_legend(axes[0], min_entries=2)
    n = sorted(counts)
    seeds = f"n = {n[0]} seeds" if len(n) == 1 else "n seeds: each line's in the legend"
    mean = "geometric mean" if logy else "share" if share else "mean"
    band = "95 % Wilson interval" if share else "95 % t-interval" + (" (both on the log scale)" if logy else "")
    add_note(fig, f"Line: the {mean} over seeds at each logged step ({seeds}); band: its {band}."
                  + "".join(f" {words}" for words in merged))
    return fig


def _merged_tails(curves: Mapping[str, Mapping[float, float]], panel: str) -> list[str]:
    """Sentences naming the lines that lie on each other from some step to the end (the same mean at
    every step from there: clustering_start's σ at a share of 1.0): drawn on top of each other, the
    lines below would read as missing there."""
    names = list(curves)
    if len(names) < 2:
        return []
    steps = sorted(set.intersection(*(set(c) for c in curves.values())))
    last = steps[-1] if steps else None
    groups: dict = {}
    for name in names:
        if last is None:
            break
        start = last
        for step in reversed(steps):
            same = [n for n in names if math.isclose(curves[n][step], curves[name][step], rel_tol=0, abs_tol=1e-9)]
            if len(same) < 2:
                break
            start = step
        together = tuple(n for n in names if all(math.isclose(curves[n][s], curves[name][s], abs_tol=1e-9)
                                                 for s in steps if s >= start))
        if len(together) > 1 and start < last:
            groups.setdefault(together, start)
    if not groups:
        return []
    where = f" in '{panel}'" if panel else ""
    parts = [f"{'all ' + str(len(g)) if len(g) == len(names) else _and(list(g))} from step {start:g}"
             for g, start in sorted(groups.items(), key=lambda item: item[1])]
    return [f"Lines on each other{where} (the same value at every step to the end): {_and(parts)}."]


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@styled
def plot_layer_profile_seeds(profiles: Mapping[str, Sequence[Sequence[float]]], title: str | None = None,
                             ylabel: str = "cos(layer [CLS], last [CLS])") -> Figure:
    """``{variant: [one seed's per-layer cosines to the last layer, ...]}`` (hidden states 0 … L):
    the mean over seeds per layer with its 95 % t-interval; the last layer (1 by definition) left out."""
    fig, (ax,) = new_figure(panel_size=(COLUMN_WIDTH + 0.4, 2.5))
    styles = series_styles(list(profiles))
    markers = point_markers(list(profiles))
    counts = set()
    for name, seeds in profiles.items():
        matrix = np.asarray([list(s)[:-1] for s in seeds], dtype=float)
        if matrix.size == 0:
            continue
        layers = np.arange(matrix.shape[1])
        stats = [_interval(matrix[:, j].tolist()) for j in layers]
        means = np.asarray([s[0] for s in stats])
        lows = np.asarray([s[1] for s in stats])
        highs = np.asarray([s[2] for s in stats])
        counts.add(matrix.shape[0])
        style = styles[name]
        ax.errorbar(layers, means, yerr=[means - lows, highs - means] if np.isfinite(lows).all() else None,
                    color=style["color"], marker=style.get("marker") or markers[name], markersize=3, capsize=2,
                    linewidth=1.2, label=name)
    ax.set_xticks(range(len(layers)), ["emb."] + [str(i) for i in range(1, len(layers))])
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    place_legend(ax)
    n = sorted(counts)
    most = "; ".join(f"{name}: {most_similar_words(seeds)}" for name, seeds in profiles.items() if len(seeds))
    each = ", ".join(f"{len(seeds)} ({name})" for name, seeds in profiles.items() if len(seeds))
    add_note(fig, f"Each point: the mean over seeds (n = {n[0] if len(n) == 1 else each}) of the probe "
                  "set's mean cosine at the last probe (256 STS-B dev sentences); bars: 95 % t-interval. The layer "
                  f"most similar to the last (of layers 1 to L − 1), seed by seed: {most}.")
    return fig


def most_similar_words(seeds: Sequence[Sequence[float]]) -> str:
    """Fig. 3's reading per seed: which intermediate layer (1 … L − 1) is closest to the last, counted
    over seeds, e.g. "layer 5 in 4 of 5 seeds, layer 4 in 1"."""
    from collections import Counter

    picks = Counter(int(np.argmax(list(s)[1:-1])) + 1 for s in seeds)
    ordered = picks.most_common()
    first, count = ordered[0]
    rest = ", ".join(f"layer {layer} in {c}" for layer, c in ordered[1:])
    return f"layer {first} in {count} of {len(seeds)} seeds" + (f", {rest}" if rest else "")


def _drawn_elsewhere(rows: pd.DataFrame) -> str:
    """The note's sentence on the comparisons another study decides: each claim, its verdict there and
    that study (whose claims figure draws its pairs)."""
    import re

    items = []
    for _, r in rows.iterrows():
        match = re.match(rf"^{DECIDED_IN} (\S+): (.*?)(?: \(its row: .*\))?$", str(r["verdict"]))
        study, words = (match.group(1), _verdict_words(match.group(2))) if match else ("another study", str(r["verdict"]))
        items.append(f"{textwrap.shorten(str(r['claim']), 70, placeholder='…')} ({words}, in {study})")
    return (" Decided in another study, whose claims figure draws its pairs (one verdict per comparison): "
            + "; ".join(items) + ".") if items else ""


def _not_drawn(rows: pd.DataFrame) -> str:
    """The note's last sentence: the claims the table holds that have no paired difference to draw (a
    spread claim, a claim without a test), each with its verdict, so that a tally counting them is
    not contradicted by rows missing without a word."""
    papers = rows[rows["kind"] == "paper"] if "kind" in rows else rows
    checks = len(rows) - len(papers)
    items = [f"{textwrap.shorten(str(r['claim']), 70, placeholder='…')} ({_verdict_words(r['verdict'])})"
             for _, r in papers.iterrows()]
    if checks:   # the checks are exploratory: counted, the tables name them
        items.append(f"{checks} of the workbench's checks (the study's claims table names them)")
    return " Not drawn, having no paired difference: " + "; ".join(items) + "." if items else ""


def _verdict_words(verdict) -> str:
    """The verdict short enough for the margin: an underpowered "not detected" keeps its MDE and target
    ("underpowered (MDE 2.54 > 0.30)"), an inconclusive one the pairs a powered null would need
    ("inconclusive (19 pairs needed)"); the hollow dot already says it was not detected."""
    import re

    text = str(verdict).replace("not detected, underpowered", "underpowered").replace(" > target ", " > ")
    text = re.sub(r"^not detected, inconclusive \(MDE ([0-9.]+)[^;)]*; a powered null needs (\d+) pairs[^)]*\)",
                  r"inconclusive (\2 pairs needed)", text)
    text = re.sub(r"^not detected, inconclusive \(MDE ([0-9.]+)[^)]*\)", r"inconclusive (MDE \1)", text)
    text = re.sub(r"^not detected \(powered: MDE ≤ ([0-9.]+) ≤ target ([0-9.]+)\)", r"not detected (MDE ≤ \1)", text)
    text = re.sub(r"^reversed \(below (\S+):.*\)$", r"reversed (below \1)", text)   # an optimum below a neighbour
    # a row without a test keeps its first words: the table gives the seeds left out and why
    return re.sub(r"^no test: (?:only )?(no pair|1 pair) of one computation.*", r"no test: \1 kept", text)
