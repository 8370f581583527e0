"""Means over seeds with their intervals, drawn by seaborn inside cselab's style.

seaborn's estimators and interval drawing do the work (``pointplot``, ``lineplot``); cselab gives
them the interval and the look:

* the interval is the **95 % t-interval** of the mean over seeds (:func:`t_errorbar`, from
  :func:`cselab.workbench.results.mean_ci`: scipy's t with n − 1 degrees of freedom). seaborn's own
  ``errorbar=("ci", 95)`` is a bootstrap, which with 3 seeds resamples 3 numbers and gives an
  interval far too narrow; the t-interval is the one every table of the project states;
* a method keeps its colour (:func:`cselab.workbench.plots.style.method_color`), names and tasks are shown in
  words, and the legend says what the whiskers are and over how many seeds (``n = 3``);
* seaborn's error-bar segments are tagged as intervals (``gid="interval"``), so the figure checker
  does not read them as curves (:mod:`cselab.workbench.plots.check`).

=========================  ======================================================================
function                   what it shows
=========================  ======================================================================
plot_seed_means            a metric's mean over seeds with its 95 % t-interval, per category (or
                           along a numeric setting), one colour per method
plot_baseline_differences  per method and per task, the mean per-seed difference from the baseline
                           (SimCSE) with its 95 % paired t-interval (the cpu-compare figure)
baseline_differences       the per-seed differences that figure draws, and their summary
=========================  ======================================================================
"""
from __future__ import annotations

import math

from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...model.config import DEFAULT_METHOD
from ..results import CONFIDENCE, mean_ci
from .check import MIN_LINE_POINTS, mark_intervals
from .core import COLUMN_WIDTH, add_note, new_figure, styled
from ..labels import display_name, method_key, readable, task_name
from .rc import PAGE_WIDTH
from .style import place_legend, point_markers, series_styles



def t_errorbar(values) -> tuple[float, float]:
    """The 95 % t-interval of the mean of ``values`` as seaborn's ``errorbar`` callable takes it
    (``(low, high)``; NaN for a single value: no interval from one seed; NaN too when every seed
    gave the same value, e.g. the untrained backbone at step 0: a bar of zero length draws nothing)."""
    values = np.asarray(values, dtype=float)
    if values.size and np.ptp(values) == 0:
        return math.nan, math.nan
    summary = mean_ci(values, CONFIDENCE)
    return summary["ci_low"], summary["ci_high"]


def _n_words(counts) -> str:
    counts = sorted({int(c) for c in counts})
    return f"n = {counts[0]}" if len(counts) == 1 else f"n = {counts[0]}–{counts[-1]}"


def _whisker_entry(counts, what: str = "95 % t-interval over seeds"):
    """The legend's entry for the whiskers, ``(handle, words)``; ``(None, words)`` where no whisker
    is drawn (one seed everywhere): a legend row is for something drawn, so the words go to the
    legend's title (or, without a legend, under the panel) and no row stands for an interval that
    is not there, not even a blank one."""
    from matplotlib.lines import Line2D

    several = [c for c in counts if c >= 2]
    if not several:
        return None, f"one seed ({_n_words(counts)}): no interval"
    handle = Line2D([], [], color="grey", marker="|", markersize=8, linestyle="none")
    text = f"{what} ({_n_words(several)})"
    if len(several) < len(counts):
        text += "; n = 1: no interval"
    return handle, text


def _legend_with_whiskers(ax, handles, labels, counts, what: str = "95 % t-interval over seeds") -> None:
    """The series' legend and the whiskers' entry (:func:`_whisker_entry`): with no whisker drawn, the
    words are the legend's title, or the panel's note when there is no series to name."""
    handle, text = _whisker_entry(counts, what)
    if handle is not None:
        place_legend(ax, handles + [handle], labels + [text], min_entries=1)
    elif handles:   # one seed everywhere: the series in the legend, what is not drawn in its title
        place_legend(ax, handles, labels, title=text, min_entries=1)
    else:
        add_note(ax.get_figure(), f"{text[0].upper()}{text[1:]}.")


def _palette(names: Sequence[str], methods: dict[str, str | None]) -> dict[str, str]:
    styles = series_styles(list(names), methods)
    return {name: styles[name]["color"] for name in names}


def _width(categories: int, series: int) -> float:
    """A column for few categories; wider (up to a page) for many categories with several series."""
    return min(PAGE_WIDTH, max(COLUMN_WIDTH, 0.9 + categories * max(0.45, 0.15 * series)))


def _need(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; the frame has {list(frame.columns)}")


@styled
def plot_seed_means(frame: pd.DataFrame, x: str, y: str, hue: str | None = None, seed: str = "seed",
                    title: str | None = None, xlabel: str | None = None, ylabel: str | None = None) -> Figure:
    """The mean of ``y`` over seeds (the rows sharing ``hue`` and ``x``; one row per seed) with its
    95 % t-interval (:func:`t_errorbar`), drawn by seaborn: ``pointplot`` for categories (tasks,
    methods: points, no line between categories), ``lineplot`` with error bars along a numeric
    ``x`` of at least 3 values (joined by a line from 4 values on: the checker's ``MIN_LINE_POINTS``). ``hue`` (e.g. the method) gives each series its method's colour and
    name; the legend says what the whiskers are and over how many seeds."""
    import seaborn as sns

    _need(frame, [x, y, seed] + ([hue] if hue else []), "plot_seed_means")
    keys = [k for k in (hue, x) if k]
    duplicated = frame.duplicated(keys + [seed])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"plot_seed_means: two rows of {dict(row[keys + [seed]])}: one row per seed")
    data = frame[keys + [seed, y]].dropna(subset=[y]).copy()
    names, methods = [], {}
    if hue:
        data[hue] = [display_name(v) for v in data[hue]]
        names = list(dict.fromkeys(data[hue]))
        methods = {display_name(v): method_key(str(v)) for v in frame[hue].dropna().unique()}
    counts = data.groupby(keys)[y].count().to_numpy()
    numeric = pd.api.types.is_numeric_dtype(data[x]) and data[x].nunique() >= 3
    if not numeric:
        data[x] = [task_name(v) if isinstance(v, str) else v for v in data[x]]
    categories = data[x].nunique()
    fig, (ax,) = new_figure(panel_size=(_width(categories, max(1, len(names))) if not numeric else COLUMN_WIDTH,
                                        2.5))
    palette = _palette(names, methods) if hue else None
    colour = None if hue else "#333333"
    if numeric:
        # fewer than MIN_LINE_POINTS values: points with their intervals, no line implying a trend between them
        joined = {} if data[x].nunique() >= MIN_LINE_POINTS else {"linestyle": "none"}
        # a marker shape per series too: variants of one method share its colour
        # (each method's own marker, cselab.workbench.plots.style.method_marker: seaborn's by order drifted)
        shapes = {"style": hue, "markers": point_markers(names, methods), "dashes": False} \
            if hue and len(names) > 1 else {"marker": "o"}
        sns.lineplot(data=data, x=x, y=y, hue=hue, palette=palette, color=colour, errorbar=t_errorbar,
                     err_style="bars", markersize=5 if "style" in shapes else 4,
                     err_kws={"capsize": 2, "elinewidth": 1}, ax=ax,
                     **shapes, **joined)
    else:
        sns.pointplot(data=data, x=x, y=y, hue=hue, palette=palette, color=colour, errorbar=t_errorbar,
                      linestyle="none", markers="o", markersize=4, capsize=0.1, err_kws={"linewidth": 1},
                      dodge=0.4 if hue and len(names) > 1 else False, ax=ax)
        ax.grid(axis="x", visible=False)
    mark_intervals(ax)
    ax.set_xlabel(xlabel or readable(x))
    ax.set_ylabel(ylabel or readable(y))
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    _legend_with_whiskers(ax, handles, labels, counts)
    if title:
        ax.set_title(title)
    return fig


def baseline_differences(frame: pd.DataFrame, tasks: Sequence[str], baseline: str = DEFAULT_METHOD,
                         group: str = "method", seed: str = "seed") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per group other than ``baseline`` and per task: the per-seed differences from the baseline on
    the seeds both have (``(group, task, seed, difference)``, one row per pair), and their summary
    (``group, task, n, mean, ci_low, ci_high``: the mean difference and its 95 % paired t-interval,
    :func:`cselab.workbench.results.mean_ci` of the differences — what ``scipy.stats.ttest_rel`` pairs)."""
    tasks = list(tasks)
    _need(frame, [group, seed, *tasks], "baseline_differences")
    if baseline not in set(frame[group]):
        raise ValueError(f"baseline_differences: no {group} == {baseline!r} rows; present: {sorted(set(frame[group]))}")
    duplicated = frame.duplicated([group, seed])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise ValueError(f"baseline_differences: two rows of {group}={row[group]!r} with {seed}={row[seed]}")
    base = frame[frame[group] == baseline].set_index(seed)
    rows, summary = [], []
    for name, part in frame[frame[group] != baseline].groupby(group, sort=False):
        part = part.set_index(seed)
        for task in tasks:
            shared = part[task].dropna().index.intersection(base[task].dropna().index)
            diffs = (part.loc[shared, task] - base.loc[shared, task]).astype(float)
            rows += [{group: name, "task": task, seed: s, "difference": float(d)} for s, d in diffs.items()]
            if len(diffs):
                stats = mean_ci(diffs.to_numpy(), CONFIDENCE)
                summary.append({group: name, "task": task, "n": stats["n"], "mean": stats["mean"],
                                "ci_low": stats["ci_low"], "ci_high": stats["ci_high"]})
    return (pd.DataFrame(rows, columns=[group, "task", seed, "difference"]),
            pd.DataFrame(summary, columns=[group, "task", "n", "mean", "ci_low", "ci_high"]))


@styled
def plot_baseline_differences(frame: pd.DataFrame, tasks: Sequence[str], baseline: str = DEFAULT_METHOD,
                              group: str = "method", seed: str = "seed", ylabel: str | None = None,
                              title: str | None = None) -> Figure:
    """Per method and per task, the difference from the baseline with its paired 95 % interval over
    seeds: at each task (x, in the papers' names) a point per method (its colour) at the mean
    per-seed difference, whiskers the t-interval of the per-seed differences (seaborn's
    ``pointplot`` with :func:`t_errorbar` on :func:`baseline_differences`), a dotted line at 0 (no
    difference). ``frame`` has one row per run: ``group``, ``seed`` and a column per task (e.g.
    ``read_results(runs, config_keys=("method", "seed"))``). Methods sharing one seed with the
    baseline get a point without a whisker; when every one does, there is no interval to draw and
    the figure is refused."""
    import seaborn as sns

    pairs, summary = baseline_differences(frame, tasks, baseline, group, seed)
    if summary.empty:
        raise ValueError(f"plot_baseline_differences: no {group} shares a seed with {baseline!r}")
    if (summary["n"] < 2).all():
        raise ValueError(f"plot_baseline_differences: every {group} shares one seed with {baseline!r} (n = 1): "
                         "no interval to draw (the paired bootstrap over test pairs says how uncertain a "
                         "single-seed difference is: cselab.workbench.results.bootstrap_spearman_difference)")
    data = pairs.assign(**{group: [display_name(v) for v in pairs[group]],
                           "task": [task_name(t) for t in pairs["task"]]})
    names = list(dict.fromkeys(data[group]))
    methods = {display_name(v): method_key(str(v)) for v in pairs[group].unique()}
    fig, (ax,) = new_figure(panel_size=(_width(len(tasks), len(names)), 2.6))
    ax.axhline(0.0, color="grey", linestyle=":", linewidth=1)   # no difference (a reference line)
    sns.pointplot(data=data, x="task", y="difference", hue=group, palette=_palette(names, methods),
                  errorbar=t_errorbar, linestyle="none", markers="o", markersize=4, capsize=0.1,
                  err_kws={"linewidth": 1}, dodge=0.5 if len(names) > 1 else False, ax=ax)
    mark_intervals(ax)
    ax.grid(axis="x", visible=False)
    ax.set_xlabel("")
    ax.set_ylabel(ylabel or f"difference from {display_name(baseline)}")
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    _legend_with_whiskers(ax, handles, labels, summary["n"], "95 % paired t-interval over seeds")
    if title:
        ax.set_title(title)
    return fig
