"""Curves over training steps, fed from run directories (or from DataFrames of the same shape): a
panel per key with a line per run (seeds as faint lines under their mean), or a panel per run with
a line per key.

=============================  =======================================================================
function                       paper figures
=============================  =======================================================================
plot_similarity_dynamics       ClusterNS Fig. 3, 4, 5, 7, 10 (``sim/<stat>`` of the train records);
                               MixCSE's positive / random-negative / mixed-negative scores (cos/τ)
plot_training_curves           loss parts, STS-B dev (any numeric key of train or eval records)
plot_largest_angle             MixCSE's largest-angle curve (probe records)
plot_grad_norm                 MixCSE gradient analysis, ‖∂L/∂z‖ per step (``grad/*`` of the train records)
=============================  =======================================================================

One run's statistics in panels by their kind: :mod:`cselab.workbench.plots.statistic_families`.
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ...model.methods import stat_labels
from ...model.rundir import Runs, labelled_runs, read_config, read_metrics
from .core import TooFewPoints, COLUMN_WIDTH, color, new_figure, require_columns, styled
from ..labels import display_name, frame_groups, run_groups, readable
from ..method_views import column_words
from .palettes import is_statistic, statistic_colour
from .rc import PAGE_WIDTH
from .style import (SEED_ALPHA, SEEDS_NOTE, group_label, integer_ticks, legend_below, legend_beside, measured,
                    place_legend, point_markers, separate_coincident, series_styles)

TITLE_WIDTH = 32   # characters per title line of a 3.3-inch panel (9-pt titles)


def stat_label_words() -> dict[str, str]:
    """Words for the statistic keys: the core's and the methods' (:func:`cselab.model.methods.stat_labels`,
    each method owns its labels) and the columns of the methods' analyses their views name
    (:func:`cselab.workbench.method_views.column_words`: MixCSE's scores)."""
    return {**stat_labels(), **column_words()}


def _frame(data: Runs | pd.DataFrame, kind: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
        if "run" not in frame:
            frame.insert(0, "run", "")
        return frame
    return read_metrics(data, kind)


def _groups(data) -> dict[str, dict] | None:
    """Runs grouped by setting (seeds together) when ``data`` are run directories; a frame has no
    configs, so each of its runs is a series of its own."""
    return None if isinstance(data, pd.DataFrame) else run_groups(labelled_runs(data))


def curves_over_steps(frame: pd.DataFrame, keys: Sequence[str], labels: Mapping[str, str], panels: str, ylabel: str,
            title: str | None, ncols: int | None = None, groups: Mapping[str, dict] | None = None,
            what: str = "curve", logy: bool = False) -> Figure:
    """Lines over training steps: a panel per key (a line per run) or a panel per run (a line per
    key). A single panel carries ``title`` itself (no figure title above it); several panels get
    their own titles and ``title`` above them. Legends only where there are several lines.

    ``groups`` (:func:`cselab.workbench.plots.style.run_groups`): with ``panels="key"``, runs that differ
    only in their seed are one series — faint seed lines under their mean, one legend entry, the
    method's colour."""
    if panels not in ("key", "run"):
        raise ValueError(f"panels must be 'key' or 'run', got {panels!r}")

    def words(key: str) -> str:
        return labels.get(key) or readable(key)

    runs = list(dict.fromkeys(frame["run"]))
    steps = frame.loc[frame[list(keys)].notna().any(axis=1), "step"].dropna().unique()
    if len(steps) < 2:
        raise TooFewPoints(f"{what}: the runs recorded {list(keys)} at {len(steps)} step(s) "
                         f"({', '.join(f'{s:g}' for s in steps) or 'none'}); a curve over training needs at least 2")
    if groups is None and panels == "key":
        groups = frame_groups(runs)
    if panels == "run":
        groups = {run: {"method": None, "runs": [run]} for run in runs}
    outer = keys if panels == "key" else runs
    # up to three panels share one row of a page (2.4 in each); more wrap into rows of 3.3-in panels,
    # or, where ``ncols`` asks for more than two a row (small multiples), rows of that many narrower ones
    width = COLUMN_WIDTH if ncols is not None or len(outer) > 3 else min(COLUMN_WIDTH, PAGE_WIDTH / len(outer))
    small = ncols is not None and ncols * COLUMN_WIDTH > PAGE_WIDTH
    if small:
        width = PAGE_WIDTH / min(ncols, len(outer))
    fig, axes = new_figure(len(outer), panel_size=(width, 2.0 if small else 2.5), sharey=True, ncols=ncols)
    if panels == "key":
        names = list(groups)
        styles = series_styles([display_name(n) for n in names],
                               {display_name(n): g["method"] for n, g in groups.items()})
        markers = point_markers([display_name(n) for n in names], {display_name(n): g["method"] for n, g in groups.items()})
    else:
        # a statistic keeps its colour in every figure (cselab.workbench.plots.palettes); other keys take the
        # colours of no method, statistic or step
        others = iter(color(i) for i in range(len(keys)))
        styles = {words(k): {"color": statistic_colour(k) if is_statistic(k) else next(others)} for k in keys}
        markers = point_markers([words(k) for k in keys], statistics={words(k): k for k in keys})
    for ax, o in zip(axes, outer):
        if panels == "key":
            for name, group in groups.items():
                shown = display_name(name)
                group_line(ax, frame, o, group["runs"], group_label(shown, len(group["runs"])), styles[shown],
                            markers[shown])
        else:
            for key in keys:
                part = frame.loc[frame["run"] == o, ["step", key]].dropna()   # every key exists: require_columns
                if len(part):
                    ax.plot(part["step"], part[key], label=words(key),
                            **measured(styles[words(key)], len(part), marker=markers[words(key)]))
        ax.set_xlabel("training step")
        integer_ticks(ax.xaxis)
        if logy:   # values spanning orders of magnitude: each decade as tall as the next
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(NullFormatter())   # 2×10⁻³, 3×10⁻³ … would collide
    # wrapped: a long run name must not run past its panel (or into the neighbour's title)
    chars = int(TITLE_WIDTH * width / COLUMN_WIDTH)   # narrower panels: shorter title lines
    panel_titles = [textwrap.fill(words(o) if panels == "key" else display_name(o), chars) for o in outer]
    if len(axes) == 1:
        # A single key's words are the y label already; a single run's name is a fair title.
        axes[0].set_title(title or ("" if panels == "key" else panel_titles[0]))
    else:
        for ax, text in zip(axes, panel_titles):
            ax.set_title(text)
        if title and title not in panel_titles:
            fig.suptitle(title)
    for ax in axes[::min(len(axes), ncols or len(axes))]:   # the first column
        ax.set_ylabel(ylabel)
    separate_coincident(axes)
    seeds = panels == "key" and any(len(g["runs"]) > 1 for g in groups.values())
    figure_legend(fig, axes, title=SEEDS_NOTE if seeds else None)
    return fig


def group_line(ax, frame: pd.DataFrame, key: str, runs: Sequence[str], label: str, style: dict,
                marker: str = "o") -> None:
    """One series: a run's line, or for several seeds a faint line each and their mean (over the
    steps every seed recorded) in the series' style."""
    parts = [frame.loc[frame["run"] == run, ["step", key]].dropna() for run in runs]
    parts = [p for p in parts if len(p)]
    if not parts:
        return
    if len(parts) == 1:
        ax.plot(parts[0]["step"], parts[0][key], label=label or None, **measured(style, len(parts[0]), marker=marker))
        return
    for part in parts:
        ax.plot(part["step"], part[key], **measured({"color": style["color"], "alpha": SEED_ALPHA, "linewidth": 0.8},
                                                    len(part), markersize=2))
    mean = pd.concat([p.groupby("step")[key].mean() for p in parts], axis=1).dropna().mean(axis=1)
    ax.plot(mean.index, mean.to_numpy(), label=f"{label}", **measured(style, len(mean), marker=marker))


def figure_legend(fig: Figure, axes, title: str | None = None) -> None:
    """One legend for the figure's labelled series (each label once): placed inside the single
    panel where it covers no data, else beside the panels."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    if len(handles) < 2:
        return
    if len(axes) == 1:
        place_legend(axes[0], list(handles.values()), list(handles), title=title)
    elif fig.get_figwidth() <= COLUMN_WIDTH + 0.01:
        legend_below(fig, list(handles.values()), list(handles), title=title)   # stacked for one column: stay one
    else:
        legend_beside(fig, list(handles.values()), list(handles), title=title)


@styled
def plot_similarity_dynamics(data: Runs | pd.DataFrame, stats: Sequence[str] = ("pos_cos", "neg_cos"),
                             per_temperature: bool = False, panels: str = "key", ylabel: str | None = None,
                             title: str | None = None, ncols: int | None = None,
                             labels: Mapping[str, str] | None = None) -> Figure:
    """Mean cosine of each pair type over training, from the ``sim/<stat>`` keys of the train
    records (``stats`` without the ``sim/`` prefix), or from a DataFrame with ``step`` and the
    ``stats`` as columns (e.g. MixCSE scores per checkpoint: positive, random_negative, mixed_negative).

    ``per_temperature`` divides by each run's τ (read from its config), MixCSE's cos/τ scores.
    ``panels="key"``: one panel per statistic, a line per run; ``"run"``: a panel per run.
    ``ylabel`` defaults to "mean cosine" (or "cos / τ"). ``ncols=1`` stacks several panels (one
    column of a paper). ``labels`` words a statistic for this figure (e.g. a hypothetical one)."""
    if isinstance(data, pd.DataFrame):
        if per_temperature:
            raise ValueError("per_temperature needs run directories (τ comes from their configs)")
        frame = _frame(data, "train")
    else:
        runs = labelled_runs(data)
        frame = read_metrics(runs, "train").rename(columns={f"sim/{s}": s for s in stats})
        if per_temperature:
            tau = frame["run"].map({label: read_config(path)["temperature"] for label, path in runs.items()})
            for s in stats:
                if s in frame:
                    frame[s] = frame[s] / tau
    require_columns(frame, stats, "plot_similarity_dynamics")
    ylabel = ylabel or ("cos / τ" if per_temperature else "mean cosine")
    return curves_over_steps(frame, stats, {**stat_label_words(), **(labels or {})}, panels, ylabel, title, ncols, _groups(data),
                   "plot_similarity_dynamics")

@styled
def plot_training_curves(data: Runs | pd.DataFrame, keys: Sequence[str] = ("loss",), kind: str = "train",
                         panels: str = "key", title: str | None = None, ncols: int | None = None,
                         ylabel: str | None = None) -> Figure:
    """Any numeric keys of the ``kind`` records over training (``loss``, ``loss/info_nce``,
    ``stsb_dev`` with ``kind="eval"``, ...), labelled in words (:mod:`cselab.workbench.labels`) or by
    ``ylabel``."""
    frame = _frame(data, kind)
    require_columns(frame, keys, "plot_training_curves")
    return curves_over_steps(frame, keys, {}, panels, ylabel or (readable(keys[0]) if len(keys) == 1 else ""), title, ncols,
                   _groups(data), "plot_training_curves")


@styled
def plot_largest_angle(data: Runs | pd.DataFrame, title: str | None = None) -> Figure:
    """MixCSE's largest angle between any two probe embeddings (degrees) over training."""
    frame = _frame(data, "probe")
    require_columns(frame, ["largest_angle"], "plot_largest_angle (enable probes: probe_every)")
    return curves_over_steps(frame, ["largest_angle"], {}, "key", readable("largest_angle"), title, None, _groups(data),
                   "plot_largest_angle")


@styled
def plot_grad_norm(data: Runs | pd.DataFrame, keys: Sequence[str] = ("grad/z1_norm", "grad/z2_norm"),
                   title: str | None = None, logy: bool | None = None) -> Figure:
    """MixCSE gradient analysis: mean ‖∂L/∂z‖₂ per step (train records with ``log_embedding_grad_norm``).
    ``logy``: a log y-axis; ``None`` chooses it where the positive values span more than 10× (one
    method's norms ten times another's crowd the rest into the bottom of a linear axis)."""
    frame = _frame(data, "train")
    require_columns(frame, keys, "plot_grad_norm (enable log_embedding_grad_norm)")
    labels = {"grad/z1_norm": "view 1 (anchors)", "grad/z2_norm": "view 2 (positives)"}
    if logy is None:
        values = frame[list(keys)].to_numpy(dtype=float).ravel()
        values = values[np.isfinite(values)]
        logy = bool(len(values)) and bool((values > 0).all()) and values.max() / values.min() > LOG_SPAN
    return curves_over_steps(frame, keys, labels, "key", "mean ‖∂L/∂z‖" + (" (log scale)" if logy else ""), title, None,
                   _groups(data), "plot_grad_norm", logy=logy)


LOG_SPAN = 10   # values spanning more than this factor get a log axis (plot_grad_norm)
