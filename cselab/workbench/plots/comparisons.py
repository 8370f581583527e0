"""Figures that compare models, settings or simulations (DataFrames in, Figure out).

=====================  ==========================================================================
function               paper figures / tables
=====================  ==========================================================================
plot_sweep             ClusterNS Fig. 8–9 (batch size, K), GS-InfoNCE Table 3 (M), APINCSE Fig. 4
                       and Tables 4–5 (k, queue size L, layer M): a metric against a setting,
                       mean and 95 % t-interval over seeds
plot_ablation_bars     APINCSE Fig. 2: one group of bars per STS task, a bar per variant (points on a
                       zoomed axis where bars from zero would look equal)
plot_top4_curve        GS-InfoNCE Fig. 1: mean of the top-4 negative cosines against batch size
plot_cap_geometry      MixCSE spherical cap (Distribution of BERT Embeddings): mean and variance of cos θ on a spherical cap against d
plot_lambda_bound      MixCSE λ bound (section MixCSE): share of mixed negatives closer than the positive against λ
plot_umap_panels       UMAP / PCA maps coloured by label, side by side (before / after training)
=====================  ==========================================================================
"""
from __future__ import annotations

import re
import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator

from ..results import mean_ci
from .core import TooFewPoints, add_note, color, distinct_colors, new_figure, styled
from ..labels import display_name, readable, task_name
from .rc import PAGE_WIDTH
from .style import (MARKERS, integer_ticks, legend_below, legend_beside, log2_ticks, measured, place_legend, point_markers,
                    separate_coincident, series_styles)


def _need_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; the frame has {list(frame.columns)}")


def _as_frames(data: pd.DataFrame | Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {"": data} if isinstance(data, pd.DataFrame) else dict(data)


def t_interval(values) -> tuple[float, float, int]:
    """Mean and the half-width of its 95 % t-interval over ``values`` (NaN half-width for n < 2)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return float("nan"), float("nan"), 0
    summary = mean_ci(values)   # cselab.workbench.results: scipy's t, the interval every table states
    return summary["mean"], summary["ci_high"] - summary["mean"], summary["n"]


def _n_words(counts) -> str:
    counts = sorted({int(c) for c in counts})
    return f"n = {counts[0]}" if len(counts) == 1 else f"n = {counts[0]}–{counts[-1]}"


def _whisker():
    """A legend handle for error bars (a proxy: not drawn in the axes)."""
    return Line2D([], [], color="grey", marker="|", markersize=8, linestyle="none")


def _interval_handle(ax, n_text: str, over: str = "seeds"):
    """A legend entry saying what the error bars are (95 % t-interval) and over what n."""
    return _whisker(), f"95 % t-interval over {over} ({n_text})"


def _need_values(values, what: str, setting: str) -> None:
    distinct = sorted({float(v) for v in values if pd.notna(v)})
    if len(distinct) < 2:
        shown = ", ".join(f"{v:g}" for v in distinct) or "none"
        raise TooFewPoints(f"{what}: the {setting} has {len(distinct)} value ({shown}); "
                         "a sweep or trend needs at least 2 values")


def _setting_ticks(ax, values, log2: bool | None, axis: str = "x") -> None:
    """Ticks for a swept setting: a log₂ axis for batch sizes (or ``log2=True``), ticks at the
    swept values when they are whole numbers (K, k, L, layers), none between them."""
    values = sorted({float(v) for v in values if pd.notna(v)})
    whole = all(float(v).is_integer() for v in values)
    powers = whole and all(v > 0 and (int(v) & (int(v) - 1)) == 0 for v in values)
    if log2 or (log2 is None and powers and values[-1] / values[0] >= 8):
        log2_ticks(ax, values, axis)
    elif whole:
        if len(values) <= 10:
            (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(FixedLocator(values))
        else:
            integer_ticks(ax.xaxis if axis == "x" else ax.yaxis)


@styled
def plot_sweep(results: pd.DataFrame, x: str, y: str, hue: str | None = None, seed: str | None = "seed",
               logx: bool | None = None, title: str | None = None, xlabel: str | None = None,
               ylabel: str | None = None, method: str | None = None, legend_title: str | None = None,
               legend_below_panel: bool = False) -> Figure:
    """``y`` against the swept setting ``x``: the mean over the rows sharing (hue, x) — seeds —
    with its 95 % t-interval as error bars where there are at least 2 (the legend says so and over
    what n; for a single curve, the note under the panel). Axis labels are the columns in words (:mod:`cselab.workbench.labels`) unless
    ``xlabel``/``ylabel`` are given. A sweep of fewer than 2 values of ``x`` is an error (one dot
    is no trend). ``method``: the method a curve without ``hue`` belongs to (the λ sweep: MixCSE),
    whose colour it takes, as in every other figure. ``logx``: a log₂ axis; ``None`` chooses it for powers of two spanning ≥ 8×
    (batch sizes); whole-number settings get ticks at their values. ``legend_title``: the legend's
    title (default: ``hue`` in words; ``""``: none); ``legend_below_panel``: the legend under the
    panel, not beside it (short entries that would take half the figure's width there)."""
    _need_columns(results, [x, y] + ([hue] if hue else []), "plot_sweep")
    _need_values(results[x], f"plot_sweep of {y!r} against {x!r}", f"sweep of {x!r}")
    fig, (ax,) = new_figure()
    groups = list(results.groupby(hue, sort=False)) if hue else [("", results)]
    names = [display_name(name) if hue else "" for name, _ in groups]
    styles = series_styles(names, None if hue else {"": method})
    counts = []
    import seaborn as sns

    from .check import mark_intervals
    from .seeds import t_errorbar

    for shown, (name, group) in zip(names, groups):
        part = group[[x, y]].dropna()
        n_per_x = part.groupby(x)[y].count()
        style = measured({**styles[shown], "marker": styles[shown].get("marker", "o"), "markersize": 3.5},
                         len(n_per_x))
        # seaborn's estimator and error bars: the mean over the seeds at each x and its 95 %
        # t-interval (t_errorbar: scipy's t; seaborn's own ("ci", 95) bootstraps 3 numbers)
        sns.lineplot(data=part, x=x, y=y, estimator="mean", errorbar=t_errorbar if n_per_x.max() >= 2 else None,
                     err_style="bars",
                     err_kws={"capsize": 2, "elinewidth": 1}, color=style["color"],
                     linestyle=style.get("linestyle", "-"), marker=style["marker"],
                     markersize=style["markersize"], markeredgewidth=0, label=shown or None, legend=False, ax=ax)
        counts += [int(n) for n in n_per_x if n >= 2]
    mark_intervals(ax, [line for line in ax.lines if _is_errorbar_segment(line)])
    _setting_ticks(ax, results[x], logx)
    ax.set_xlabel(xlabel or readable(x))
    ax.set_ylabel(ylabel or readable(y))
    separate_coincident([ax])
    handles, labels = ax.get_legend_handles_labels()
    if title:
        ax.set_title(title)
    if counts and len(handles) < 2:
        # one curve: what its bars are fits a line under the panel; a legend of that one entry
        # beside the panel doubled the figure's width
        _, text = _interval_handle(ax, _n_words(counts))
        add_note(fig, f"Each point: the mean over seeds; bars: its {text}.")
        return fig
    if counts:
        handle, text = _interval_handle(ax, _n_words(counts))
        handles, labels = handles + [handle], labels + [text]
    title = (readable(hue) if legend_title is None else legend_title or None) if hue and len(groups) > 1 else None
    if legend_below_panel and len(handles) >= (1 if counts else 2):
        legend_below(fig, handles, labels, title=title)
    else:
        place_legend(ax, handles, labels, title=title, min_entries=1 if counts else 2)
    return fig


def _is_errorbar_segment(line: Line2D) -> bool:
    """seaborn's error bars (err_style="bars") are ax.errorbar's segments and caps: lines without a
    label of their own."""
    return str(line.get_label()).startswith("_")


# bars that share a colour are told apart by hatching, one per dash style of series_styles
HATCHES = {"-": None, "--": "//", ":": "..", "-.": "xx"}


@styled
def plot_ablation_bars(scores: pd.DataFrame, tasks: Sequence[str] | None = None, variant: str = "variant",
                       ylim: tuple[float, float] | None = None, title: str | None = None,
                       kind: str = "auto") -> Figure:
    """Grouped bars from zero: one group per task (column), one bar per variant (row; the
    ``variant`` column or the index). Several rows of one variant (seeds) give mean bars with their
    95 % t-interval as whiskers (the legend says so, with n); one row gives a bar without whiskers.
    ``ylim`` may raise the top; bars always start at 0 (a truncated bar exaggerates differences).

    Bars from zero that differ by less than 5 % of their height look equal (the figure checker
    says so: :data:`cselab.workbench.plots.check.BAR_MIN_SPREAD`); with ``kind="auto"`` such scores are drawn
    as points (mean and interval) on an axis zoomed to them instead, the y label saying that it does
    not start at zero. ``kind="bars"`` or ``"points"`` chooses."""
    from .check import flat_bar_groups

    if kind not in ("auto", "bars", "points"):
        raise ValueError(f"plot_ablation_bars: kind must be 'auto', 'bars' or 'points', got {kind!r}")
    frame = scores.reset_index() if variant not in scores else scores
    if variant not in frame:
        frame = frame.rename(columns={frame.columns[0]: variant})
    tasks = list(tasks) if tasks is not None else [c for c in frame.columns if c != variant and
                                                   pd.api.types.is_numeric_dtype(frame[c])]
    _need_columns(frame, [variant, *tasks], "plot_ablation_bars")
    if ylim is not None and ylim[0] != 0:
        raise ValueError(f"plot_ablation_bars: bars start at 0, got ylim={ylim} (draw points with intervals "
                         "to show small differences)")
    grouped = frame.groupby(variant, sort=False)[tasks]
    means, counts = grouped.mean(), grouped.count()
    halves = grouped.agg(lambda s: t_interval(s)[1])
    if kind != "points":
        fig = _ablation_figure(means, counts, halves, tasks, ylim, title, points=False)
        if kind == "bars" or not flat_bar_groups(fig.axes[0]):
            return fig
    return _ablation_figure(means, counts, halves, tasks, ylim, title, points=True)


def _ablation_figure(means, counts, halves, tasks, ylim, title, points: bool) -> Figure:
    # wide enough for a tick label per task (about half an inch each) and the bars of every variant,
    # never wider than a page
    width = min(PAGE_WIDTH, max(3.3, 0.8 + len(tasks) * max(0.5, 0.22 * len(means))))
    fig, (ax,) = new_figure(panel_size=(width, 2.6))
    step = 0.8 / len(means)
    positions = np.arange(len(tasks))
    names = [display_name(name) for name in means.index]
    styles = series_styles(names)
    n_seen = []
    for i, (name, shown) in enumerate(zip(means.index, names)):
        has = (counts.loc[name] >= 2).to_numpy()
        where = positions + (i - (len(means) - 1) / 2) * step
        values = means.loc[name].to_numpy()
        if points:
            ax.plot(where, values, linestyle="none", marker=styles[shown].get("marker", "o"), markersize=4,
                    color=styles[shown]["color"], label=shown)
        else:
            ax.bar(where, values, step, color=styles[shown]["color"], label=shown,
                   hatch=HATCHES[styles[shown]["linestyle"]], edgecolor="white", linewidth=0.5)
        if has.any():
            ax.errorbar(where[has], values[has], yerr=halves.loc[name].to_numpy()[has], fmt="none",
                        ecolor=styles[shown]["color"] if points else "black", capsize=1.5, elinewidth=0.8)
            n_seen += list(counts.loc[name].to_numpy()[has])
    ax.set_xticks(positions, [task_name(t) for t in tasks])
    if points:
        ax.set_xlim(-0.5, len(tasks) - 0.5)
        ax.grid(axis="x", visible=False)   # categories: no grid line through a group
        ax.set_ylabel("score (axis not from 0)")
    else:
        ax.set_ylim(0, ylim[1] if ylim is not None else None)
        ax.set_ylabel("score")
    handles, labels = ax.get_legend_handles_labels()
    if n_seen:
        handle, text = _interval_handle(ax, _n_words(n_seen))
        handles, labels = handles + [handle], labels + [text]
    if len(names) > 1 or n_seen:
        # beside the bars: a legend of several variants inside would cover or squeeze them
        legend_beside(fig, handles, labels)
    if title:
        ax.set_title(title)
    return fig


REFERENCE_COLOR = "0.45"   # rows that are no method (the untuned backbone): grey, hollow markers
ROW_LABEL_WIDTH = 28       # characters per line of a row label


@styled
def plot_score_points(scores: pd.DataFrame, tasks: Sequence[str] | None = None, variant: str = "variant",
                      references: pd.DataFrame | None = None, xlabel: str = "score",
                      title: str | None = None, over: str = "seeds") -> Figure:
    """Scores as points on a zoomed axis: one panel per task (column), one row per variant (rows of
    ``scores``, the ``variant`` column; several rows of a variant are repeated measurements —
    training seeds, or what ``over`` names, e.g. "K-means starts": the dot is their mean with its
    95 % t-interval, a single row a dot alone; the note under the panels says what the interval is
    over and its n). Each task has its own axis range, set by the values (not from 0: bars from 0
    of scores that differ by a point or two would look equal). ``references`` (same columns, e.g.
    the untuned backbones; several rows of one name likewise a mean with its interval) are drawn
    below the variants as grey hollow diamonds. A row's colour is its method's."""
    frame = scores.reset_index() if variant not in scores else scores
    tasks = list(tasks) if tasks is not None else [c for c in frame.columns if c != variant and
                                                   pd.api.types.is_numeric_dtype(frame[c])]
    _need_columns(frame, [variant, *tasks], "plot_score_points")
    refs = ref_halves = None
    if references is not None and len(references):
        refs = references.reset_index() if variant not in references else references
        _need_columns(refs, [variant, *tasks], "plot_score_points (references)")
        grouped_refs = refs.groupby(variant, sort=False)[tasks]
        refs, ref_halves = grouped_refs.mean().reset_index(), grouped_refs.agg(lambda s: t_interval(s)[1])
        ref_counts = grouped_refs.count()
    grouped = frame.groupby(variant, sort=False)[tasks]
    means, counts = grouped.mean(), grouped.count()
    halves = grouped.agg(lambda s: t_interval(s)[1])
    from matplotlib.figure import Figure as _Figure

    from .core import PAGE_WIDTH, style

    names = [display_name(name) for name in means.index]
    ref_names = [display_name(name) for name in refs[variant]] if refs is not None else []
    rows = len(names) + len(ref_names)
    if rows < 2:
        raise TooFewPoints(f"plot_score_points: one row ({', '.join(names)}): points of one model compare with nothing")
    shown_rows = [textwrap.fill(n, ROW_LABEL_WIDTH) for n in [*names, *ref_names]]
    label_width = 0.25 + 0.07 * max(len(part) for n in shown_rows for part in n.split("\n"))
    # as many panels a row as a page holds at 1.3 in or more each (the paper's 7 tasks and their
    # average wrap into two rows of four), the row labels beside each row's first panel
    ncols = min(len(tasks), max(1, int((PAGE_WIDTH - label_width) // MIN_SCORE_PANEL)))
    nrows = -(-len(tasks) // ncols)
    panel = min(2.4, max(MIN_SCORE_PANEL, (PAGE_WIDTH - label_width) / ncols))
    height = max(1.8, 0.85 + 0.24 * rows + 0.12 * sum(n.count("\n") for n in shown_rows))
    # the row labels take room of their own, beside the first panel: the panels keep equal widths
    with style():
        fig = _Figure(figsize=(min(PAGE_WIDTH, label_width + panel * ncols), height * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, sharey=True, squeeze=False,
                            width_ratios=[(panel + label_width) / panel] + [1] * (ncols - 1)).ravel().tolist()
    for ax in axes[len(tasks):]:
        ax.set_visible(False)
    axes = axes[:len(tasks)]
    styles = series_styles(names)
    positions = list(range(rows))[::-1]   # first variant on top
    n_seen, alike = [], []
    for ax, task in zip(axes, tasks):
        for y, (name, shown) in zip(positions, zip(means.index, names)):
            style = styles[shown]
            value, n = means.loc[name, task], int(counts.loc[name, task])
            if n >= 2 and halves.loc[name, task] > 1e-9 * max(1.0, abs(value)):
                # over the dot, its ends ticked: an interval narrower than the dot still shows both ends
                ax.errorbar([value], [y], xerr=[halves.loc[name, task]], fmt="none", ecolor=style["color"],
                            elinewidth=1.2, capsize=3, zorder=4)
                n_seen.append(n)
            elif n >= 2:   # every seed scored the same: an interval of zero width, which a bar cannot show
                alike.append(f"{shown} on {task_name(task)}")
            ax.scatter([value], [y], marker=style.get("marker", "o"), s=25, color=style["color"], zorder=3)
        for y, (_, row) in zip(positions[len(names):], refs.iterrows() if refs is not None else []):
            n, half = int(ref_counts.loc[row[variant], task]), ref_halves.loc[row[variant], task]
            if n >= 2 and half > 1e-9 * max(1.0, abs(row[task])):
                ax.errorbar([row[task]], [y], xerr=[half], fmt="none", ecolor=REFERENCE_COLOR, elinewidth=1.2,
                            capsize=3, zorder=4)
                n_seen.append(n)
            ax.scatter([row[task]], [y], marker="D", s=25, facecolors="none", edgecolors=REFERENCE_COLOR, zorder=3)
        ax.set_title(textwrap.fill(task_name(task), 24))
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
        ax.margins(x=0.12)
    axes[0].set_yticks(positions, shown_rows)
    axes[0].set_ylim(-0.6, rows - 0.4)
    if refs is not None:   # a thin rule between the trained variants and the references
        for ax in axes:
            ax.axhline(len(ref_names) - 0.5, color="0.8", linewidth=0.6)
    if n_seen:   # what the bars are, under the panels (a legend in a panel would cover its points)
        add_note(fig, f"Dot: the mean over a row's {over}; bar: its 95 % t-interval over them ({_n_words(n_seen)}); "
                      f"a row of one has no bar.")
    if alike:   # said, not drawn: a zero-length bar reads as an interval from one value
        add_note(fig, f"No bar where every one of a row's {over} scored the same (a zero-width interval): "
                      f"{', '.join(alike)}.")
    if title:
        fig.suptitle(title)
    return fig


MIN_SCORE_PANEL = 1.3   # inches: the narrowest panel of plot_score_points (a row wraps below it)
DODGE_OCTAVES = 0.04   # whiskers of several models at one batch size, this far apart on the log₂ axis


@styled
def plot_top4_curve(curves: pd.DataFrame | Mapping[str, pd.DataFrame], title: str | None = None) -> Figure:
    """Mean of the top-k negative-pair cosines against batch size (frames from
    :func:`cselab.workbench.analysis.gs_infonce.top4_curve`; a mapping gives one line per model). The
    whiskers, when the frames have ``std``, are ± one standard deviation over the random batches
    (the legend says over how many, from ``n_batches`` when given); several models are drawn a
    little apart at each batch size, so that their whiskers do not overlap. Fewer than 2 batch
    sizes are an error."""
    frames = _as_frames(curves)
    sizes = [b for frame in frames.values() for b in frame.get("batch_size", [])]
    fig, (ax,) = new_figure()
    names = [display_name(name) for name in frames]
    styles = series_styles(names)
    spread = []
    markers = point_markers(names)
    for i, (shown, (name, frame)) in enumerate(zip(names, frames.items())):
        _need_columns(frame, ["batch_size", "top_k_mean"], "plot_top4_curve")
        _need_values(frame["batch_size"], f"plot_top4_curve of {name or 'the model'!r}", "batch size")
        frame = frame.sort_values("batch_size")
        style = styles[shown]
        # the models at one batch size side by side (a small shift on the log axis), whiskers apart
        shifted = frame["batch_size"] * 2 ** (DODGE_OCTAVES * (i - (len(frames) - 1) / 2))
        ax.plot(shifted, frame["top_k_mean"], label=shown or None,
                **measured({**style, "marker": style.get("marker", markers[shown]), "markersize": 3.5}, len(frame)))
        if "std" in frame and (frame["std"] > 0).any():
            ax.errorbar(shifted, frame["top_k_mean"], yerr=frame["std"], fmt="none",
                        ecolor=style["color"], capsize=2, elinewidth=1)
            spread.append(int(frame["n_batches"].iloc[0]) if "n_batches" in frame else None)
    log2_ticks(ax, sizes)
    ax.set_xlabel("batch size")
    k = int(frame["k"].iloc[0]) if "k" in frame else 4
    ax.set_ylabel(f"mean of top-{k} negative cosines")
    separate_coincident([ax])
    handles, labels = ax.get_legend_handles_labels()
    if spread:
        counts = sorted({n for n in spread if n})
        handles.append(_whisker())
        # the count inside the words: "(n = 10)" at the end of a long entry wrapped apart from its n
        labels.append(f"± 1 std over {counts[0]} random batches" if len(counts) == 1 else "± 1 std over random batches")
    place_legend(ax, handles, labels, min_entries=1 if spread else 2)
    if title:
        ax.set_title(title)
    return fig


BERT_BASE_D = 768   # the embedding width of BERT-base, where the spherical-cap argument is made


@styled
def plot_cap_geometry(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Two panels against the dimension d, one line per cap radius ω: mean and variance of cos θ
    (:func:`cselab.workbench.analysis.mixcse.cap_geometry_table`). Radii whose curves coincide (ω = 120° and
    180° both give a mean of 0) get their own dashes and markers, and the legend says so."""
    _need_columns(table, ["d", "omega_deg", "mean_cos", "var_cos"], "plot_cap_geometry")
    _need_values(table["d"], "plot_cap_geometry", "dimension d")
    fig, axes = new_figure(2)
    omegas = sorted(table["omega_deg"].unique())
    # every radius its own marker, the larger radii hollow and bigger and drawn first (underneath):
    # where curves coincide (ω ≥ 90° in the variance panel, 120° and 180° in the mean panel) each
    # still shows as a ring around the next
    styles = {o: {"color": color(i), "marker": MARKERS[i % len(MARKERS)], "markersize": 3 + 1.6 * i,
                  "markerfacecolor": color(i) if i < 2 else "none", "markeredgewidth": 1.0,
                  "linestyle": ("-", "-", "-", "--", ":")[i % 5], "zorder": 3 + len(omegas) - i}
              for i, o in enumerate(omegas)}
    for omega, group in table.groupby("omega_deg", sort=True):
        group = group.sort_values("d")
        for ax, key in zip(axes, ("mean_cos", "var_cos")):
            ax.plot(group["d"], group[key], label=f"ω = {omega:g}°", **measured(styles[omega], len(group)))
    axes[0].set_ylabel("mean of cos θ")
    axes[1].set_ylabel("variance of cos θ")
    axes[1].set_yscale("log")
    for ax in axes:
        # d = 768 (BERT-base's width) is the dimension the paper's argument is about: its tick stays
        log2_ticks(ax, table["d"], keep=[BERT_BASE_D] if BERT_BASE_D in set(table["d"]) else [])
        ax.set_xlabel("dimension d")
    _label_equal_radii(axes)
    handles, labels = axes[0].get_legend_handles_labels()
    if len(handles) > 1:
        legend_beside(fig, handles, labels)
    if title:
        fig.suptitle(title)
    return fig


def _label_equal_radii(axes) -> None:
    """Say in each radius's label which smaller radius it equals (within the checker's 1 % of the
    span, :func:`~.check.equal_series`) and in which panel: "ω = 180° (= ω = 120°)", "(= ω = 90° in
    'variance of cos θ')"; the checker reads and verifies these claims. A radius drawn on a smaller
    one (every point within :data:`NEAR_PT`) without being equal is named too: "(≈ ω = 90° in …)"."""
    from .check import equal_series

    lines = [list(ax.get_lines()) for ax in axes]
    names = [line.get_label() for line in lines[0]]   # before any claim is added to them
    for j in range(len(lines[0])):
        # an equal radius first; else one it is drawn on without being equal, said "(≈ …)"
        for sign, test in (("=", lambda a, b: equal_series(a, b)[0]),
                           ("≈", lambda a, b: _drawn_apart_pt(a, b) <= NEAR_PT)):
            found = next(((i, same) for i in range(j)
                          if (same := [k for k in range(len(axes)) if test(lines[k][j], lines[k][i])])), None)
            if found:
                i, same = found
                where = "" if len(same) == len(axes) else f" in '{axes[same[0]].get_ylabel()}'"
                for panel in lines:
                    panel[j].set_label(f"{panel[j].get_label()} ({sign} {names[i]}{where})")
                break


NEAR_PT = 3.0   # radii whose points all lie this close (typographic points, as drawn) read as one line


def _drawn_apart_pt(a, b) -> float:
    """The largest distance, in points as drawn, between two lines' vertices at the same x."""
    ax = a.axes
    ax.get_xlim(), ax.get_ylim()   # settles autoscaled limits, so transData is the drawn one
    xa, xb = np.asarray(a.get_xdata(), float), np.asarray(b.get_xdata(), float)
    if xa.shape != xb.shape or not np.allclose(xa, xb):
        return float("inf")
    pa = ax.transData.transform(np.column_stack([xa, np.asarray(a.get_ydata(), float)]))
    pb = ax.transData.transform(np.column_stack([xb, np.asarray(b.get_ydata(), float)]))
    return float(np.sqrt(((pa - pb) ** 2).sum(axis=1)).max() * 72.0 / ax.figure.dpi)


@styled
def plot_lambda_bound(curves: pd.DataFrame | Mapping[str, pd.DataFrame], title: str | None = None) -> Figure:
    """Share of mixed negatives closer to the anchor than its positive, against λ
    (:func:`cselab.workbench.analysis.mixcse.lambda_bound_curve`; a mapping: one line per model). Fewer than
    2 values of λ are an error."""
    fig, (ax,) = new_figure()
    frames = _as_frames(curves)
    names = [display_name(name) for name in frames]
    styles = series_styles(names)
    markers = point_markers(names)
    for shown, (name, frame) in zip(names, frames.items()):
        _need_columns(frame, ["lambda", "closer_share"], "plot_lambda_bound")
        _need_values(frame["lambda"], f"plot_lambda_bound of {name or 'the model'!r}", "λ")
        frame = frame.sort_values("lambda")
        style = styles[shown]
        ax.plot(frame["lambda"], frame["closer_share"], label=shown or None,
                **measured({**style, "marker": style.get("marker", markers[shown]), "markersize": 3.5}, len(frame)))
    ax.set_xlabel("λ (weight of the positive in the mixture)")
    ax.set_ylabel("share closer than the positive")
    ax.set_ylim(-0.02, 1.02)
    separate_coincident([ax])
    place_legend(ax)
    if title:
        ax.set_title(title)
    return fig


UMAP_TITLE_WIDTH = 26   # characters per title line of a 2.4-inch map
MAP_LEGEND_FONTSIZE = 7
MAP_POINT_AREA = 16     # pt² of a point on a 2.4-inch map (scaled with the map's area)
# Each class a colour and a shape: dark colours on small points read alike, so the classes that
# follow each other in the palette (and some that share a lightness) differ in shape as well.
MAP_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def separation_words(frame: pd.DataFrame) -> str:
    """A map's separation number as its panel shows it ("" when the frame has none)."""
    accuracy = frame.attrs.get("knn_accuracy")
    return "" if accuracy is None else f"{frame.attrs.get('knn_k', 5)}-NN accuracy {accuracy:.2f}"


def class_words(label) -> str:
    """A class name as words: DBpedia's ``EducationalInstitution`` → "Educational institution"
    (any other name as it is)."""
    text = str(label)
    if re.fullmatch(r"(?:[A-Z][a-z]+){2,}", text):
        words = re.findall(r"[A-Z][a-z]+", text)
        return " ".join([words[0], *(w.lower() for w in words[1:])])
    return text


def _legend_fits_cell(labels: Sequence[str], size: float) -> bool:
    """Whether a one-column 7-pt legend of ``labels`` fits a ``size``-inch square cell."""
    from .core import LEGEND_CHAR_WIDTH

    width = 0.35 + 0.9 * LEGEND_CHAR_WIDTH * max(len(label) for label in labels)
    return 0.15 * len(labels) + 0.1 <= size and width <= size


def draw_label_maps(frames: Mapping[str, pd.DataFrame], titles: Sequence[str], ncols: int = 3,
                    max_legend: int = 20, max_panel: float = 3.0) -> Figure:
    """Maps of one labelled sample (x, y, label per frame), a label's colour the same in every map
    (:func:`~cselab.workbench.plots.core.distinct_colors`), in a grid of ``ncols`` columns no wider than a
    page (maps at most ``max_panel`` inches). The legend of the classes takes the grid's next
    cell when it fits there (a 3 × 2 grid: five maps and the legend), else it goes under the maps;
    more than ``max_legend`` classes get none."""
    from .core import PAGE_WIDTH
    from .style import legend_below

    labels = sorted({lab for f in frames.values() for lab in f["label"]}, key=str)
    colors = distinct_colors(len(labels))
    words = [class_words(lab) for lab in labels]
    legend = 1 < len(labels) <= max_legend
    n = len(frames)
    size = min(max_panel, PAGE_WIDTH / min(ncols, n + legend))
    in_cell = legend and _legend_fits_cell(words, size)
    ncols = min(ncols, n + in_cell)
    fig, axes = new_figure(n, panel_size=(size, size), ncols=ncols)
    in_cell = in_cell and len(fig.axes) > n   # a full grid has no free cell: the legend goes under it
    for ax, frame, text in zip(axes, frames.values(), titles):
        for i, lab in enumerate(labels):
            part = frame[frame["label"] == lab]
            ax.scatter(part["x"], part["y"], s=MAP_POINT_AREA * (size / 2.4) ** 2, color=colors[i],
                       marker=MAP_MARKERS[i % len(MAP_MARKERS)], label=words[i], edgecolors="white",
                       linewidths=0.3)
        separation = separation_words(frame)   # how well the classes separate, as a number
        ax.set_title(textwrap.fill(text, UMAP_TITLE_WIDTH) + (f"\n{separation}" if separation else ""))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        for spine in ax.spines.values():   # a light frame: each map reads as its own
            spine.set_visible(True)
            spine.set_color("0.75")
            spine.set_linewidth(0.6)
    if legend:
        handles, names = axes[0].get_legend_handles_labels()
        if in_cell:   # a figure legend over the free cell (not a panel: the checker reads it as a legend)
            cell = fig.axes[n]
            fig.legend(handles, names, loc="center", bbox_to_anchor=(0, 0, 1, 1), bbox_transform=cell.transAxes,
                       frameon=False, fontsize=MAP_LEGEND_FONTSIZE, markerscale=1.6, handletextpad=0.2,
                       borderaxespad=0.0, labelspacing=0.35)
        else:
            legend_below(fig, handles, names, markerscale=1.6)
    return fig


@styled
def plot_umap_panels(frames: pd.DataFrame | Mapping[str, pd.DataFrame], max_legend: int = 20,
                     title: str | None = None, ncols: int = 3) -> Figure:
    """One map per frame (columns x, y, label; :func:`cselab.workbench.analysis.umap.umap_frames`), titled
    by the frame's name in words, points coloured by label with the same colour for a label in
    every map (:func:`draw_label_maps`: at most a page wide, the classes' legend in the grid's next
    cell or under it)."""
    frames = _as_frames(frames)
    for frame in frames.values():
        _need_columns(frame, ["x", "y", "label"], "plot_umap_panels")
    fig = draw_label_maps(frames, [display_name(name) for name in frames], ncols=ncols, max_legend=max_legend)
    if title:
        fig.suptitle(title)
    return fig
