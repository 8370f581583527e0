"""A grid of small panels, one per recorded key, each with its own y-axis.

Loss parts and method statistics live on very different scales (InfoNCE ≈ 3, ClusterNS's BML term
≈ 1e-5, a queue fill in [0, 1], a count of clusters), so they cannot share an axis, and a single
row of a dozen panels is unreadable at column width. :func:`plot_metric_grid` draws them in rows of
``ncols`` panels; a run keeps its colour in every panel and one legend serves the figure.

=====================  ==========================================================================
function               paper figures
=====================  ==========================================================================
plot_metric_grid       loss parts of every method; method statistics that are not cosines
                       (ClusterNS's share of anchors with a false negative, non-empty clusters;
                       APINCSE's queue fill); probe geometry over training (MixCSE's anisotropy
                       and largest angle)
plot_profile_grid      APINCSE Fig. 3 per run over training (per-layer [CLS] similarity of the
                       probe records, first and last probe)
legend_outside         (helper) legends moved beside their panels, for curves with many lines
=====================  ==========================================================================
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import pandas as pd
from matplotlib.figure import Figure

from ...model.rundir import Runs, labelled_runs, read_metrics
from .core import TooFewPoints, LEGEND_CHAR_WIDTH, color, new_figure, styled
from .training_curves import group_line, stat_label_words
from ..labels import display_name, frame_groups, run_groups
from ...model.methods import term_titles
from .palettes import looks_like_steps, step_colours
from .style import (SEEDS_NOTE, group_label, integer_ticks, legend_beside, legend_under, measured,
                   point_markers, separate_coincident, series_styles)

TITLE_WIDTH = 22   # characters per title line at a panel width of 2.4 in (9-pt titles)

# Words for the record keys that are no method's (a method's loss terms and statistics are worded
# in its own module: ``term_titles``, ``stat_labels``).
KEY_WORDS = {
    "loss": "total loss",
    "loss/info_nce": "InfoNCE",
    "loss/info_nce_forward": "InfoNCE, view-1 anchors",
    "loss/info_nce_reverse": "InfoNCE, view-2 anchors",
    "grad/z1_norm": "‖∂L/∂z‖, view 1 (anchors)",
    "grad/z2_norm": "‖∂L/∂z‖, view 2 (positives)",
    "alignment": "alignment",
    "uniformity": "uniformity",
    "mean_cos": "anisotropy (mean cosine)",
    "largest_angle": "largest angle (degrees)",
    "stsb_dev": "STS-B dev (Spearman ×100)",
    "lr": "learning rate",
}


def key_words(key: str) -> str:
    """Words for a record key: :data:`KEY_WORDS`, then the methods' titles of their loss terms
    (:func:`cselab.model.methods.term_titles`) and their statistic labels for ``sim/<stat>``, then
    ``loss: <part>`` for other loss parts, else the key itself."""
    if key in KEY_WORDS:
        return KEY_WORDS[key]
    titles = term_titles()
    if key in titles:
        return titles[key]
    if key.startswith("sim/"):
        return stat_label_words().get(key[4:], key[4:])
    if key.startswith("loss/"):
        return f"loss: {key[5:]}"
    return key


def legend_in_free_cell(fig: Figure, handles, labels, title: str | None = None, fontsize: float = 8) -> bool:
    """Put the legend over the grid's first unused cell (hidden by :func:`new_figure`) when it fits
    there, one entry a line; returns whether it did (the caller places it elsewhere otherwise)."""
    free = [ax for ax in fig.axes if not ax.get_visible()]
    if not free:
        return False
    cell = free[0]
    grid = cell.get_subplotspec().get_gridspec()   # the cell's share of the figure (its room, titles included)
    width, height = fig.get_figwidth() / grid.ncols - 0.2, fig.get_figheight() / grid.nrows - 0.2
    char = LEGEND_CHAR_WIDTH * fontsize / 8
    labels = [textwrap.fill(str(label), max(12, int((width - 0.45) / char))) for label in labels]
    lines = sum(label.count("\n") + 1 for label in labels) + (1 if title else 0)
    if 0.19 * lines * fontsize / 8 > height:
        return False
    # a figure legend over the hidden cell (whose place constrained layout keeps up to date): not a
    # panel of its own, so every data panel stays checked for the series it names
    fig.legend(handles, labels, loc="center", bbox_to_anchor=(0, 0, 1, 1), bbox_transform=cell.transAxes,
               frameon=False, title=title, fontsize=fontsize, borderaxespad=0.0)
    return True


LOG_SPAN = 10   # a log axis for values spanning more than a decade (so that it has a labelled tick or two)


def _log_scale(ax, values) -> bool:
    from matplotlib.ticker import NullFormatter

    values = pd.to_numeric(pd.Series(values), errors="coerce").dropna()
    if len(values) and (values > 0).all() and values.max() / values.min() > LOG_SPAN:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())   # 2×10⁻², 3×10⁻² … would collide
        return True
    return False


SHARE_WORDS = ("share of", "fraction of")   # a statistic in [0, 1] by definition, whatever its values
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _plain_y_axis(ax, values, title: str) -> str:
    """A linear y axis a reader reads without matplotlib's corner texts: a share on its whole 0–1
    range (ClusterNS's false-negative share on 0.81–0.88 here and 0–1 in Fig. 7 read as different
    quantities), no offset ("+0.8"), and values of another order of magnitude scaled in the title
    ("(× 10⁻⁷)") instead of a "1e−7" over the axis. Returns the panel's title."""
    import math

    from matplotlib.ticker import FuncFormatter

    if title.lower().startswith(SHARE_WORDS):
        ax.set_ylim(0, 1)
        return title
    finite = pd.to_numeric(pd.Series(values), errors="coerce").dropna().abs()
    largest = float(finite.max()) if len(finite) else 0.0
    if largest and not 1e-2 <= largest < 1e4:
        exponent = math.floor(math.log10(largest))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 10 ** exponent:.3g}".replace("-", "\u2212")))
        return f"{title} (× 10{str(exponent).translate(SUPERSCRIPT)})"
    formatter = ax.yaxis.get_major_formatter()
    if hasattr(formatter, "set_useOffset"):
        formatter.set_useOffset(False)
    return title


@styled
def plot_metric_grid(data: Runs | pd.DataFrame, keys: Sequence[str], kind: str = "train", ncols: int = 3,
                     labels: Mapping[str, str] | None = None, title: str | None = None,
                     logy: bool | Sequence[str] = False, panel_width: float = 2.4) -> Figure:
    """One panel per key of the ``kind`` records (titled in words, :func:`key_words` or
    ``labels``), a line per run that recorded it, rows of ``ncols`` panels (at most a page wide),
    each panel with its own y-axis; one legend for the runs, in the grid's free cell when there
    is one, else under the panels (none for a single run). ``logy`` (all keys, or the keys
    listed): a log y-axis where the panel's values are positive and span more than 10× (losses
    whose runs differ by orders of magnitude: on a linear axis the largest flattens the others).
    ``panel_width`` (inches): narrower panels leave room for a legend of long names beside a grid
    that would otherwise put it under the panels, a row an entry.

    ``data``: run directories (:func:`cselab.model.rundir.read_metrics`) or a frame with ``run``, ``step``
    and the keys. Keys no run recorded are an error naming what is there."""
    frame = data.copy() if isinstance(data, pd.DataFrame) else read_metrics(data, kind)
    if "run" not in frame:
        frame.insert(0, "run", "")
    keys = list(keys)
    if not keys:
        raise ValueError("plot_metric_grid: no keys to draw")
    missing = [k for k in keys if k not in frame or frame[k].isna().all()]
    if missing:
        available = sorted(c for c in frame.columns if c not in ("run", "kind", "step"))
        raise ValueError(f"plot_metric_grid: no values for {missing}; available: {available}")
    steps = frame.loc[frame[keys].notna().any(axis=1), "step"].dropna().unique()
    if len(steps) < 2:
        raise TooFewPoints(f"plot_metric_grid: {keys} recorded at {len(steps)} step(s); a curve over training "
                         "needs at least 2")
    words = {**{k: key_words(k) for k in keys}, **(labels or {})}
    runs = list(dict.fromkeys(frame["run"]))
    groups = (run_groups(labelled_runs(data)) if not isinstance(data, pd.DataFrame)
              else frame_groups(runs))
    shown = {name: display_name(name) for name in groups}
    styles = series_styles(list(shown.values()), {shown[n]: g["method"] for n, g in groups.items()})
    markers = point_markers(list(shown.values()), {shown[n]: g["method"] for n, g in groups.items()})
    fig, axes = new_figure(len(keys), panel_size=(panel_width, 1.9), ncols=min(ncols, len(keys)))
    logged = set(keys) if logy is True else set(logy or ())
    for ax, key in zip(axes, keys):
        for name, group in groups.items():
            group_line(ax, frame, key, group["runs"], group_label(shown[name], len(group["runs"])), styles[shown[name]],
                        markers[shown[name]])
        panel_title = words[key]   # not `title`: that is the figure's own (a suptitle when given)
        if key in logged:
            _log_scale(ax, frame[key])   # its ticks (10⁻², 10⁻¹) say so
        else:
            panel_title = _plain_y_axis(ax, frame[key], panel_title)
        ax.set_title(textwrap.fill(panel_title, TITLE_WIDTH))
        ax.set_xlabel("training step")
        integer_ticks(ax.xaxis)
    separate_coincident(axes, {ax: words[key] for ax, key in zip(axes, keys)})
    handles = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    if len(handles) > 1:
        names = list(handles)
        seeds = SEEDS_NOTE if any(len(g["runs"]) > 1 for g in groups.values()) else None
        # in a free cell of the grid; else below the panels when one row holds it, else beside
        # them (or below when beside is wider than a page)
        column = 0.5 + LEGEND_CHAR_WIDTH * max(len(str(n)) for n in names)
        if legend_in_free_cell(fig, [handles[n] for n in names], names, title=seeds):
            pass
        elif len(names) * column <= fig.get_figwidth() and len(names) <= 4:
            fig.legend([handles[n] for n in names], names, loc="outside lower center", ncols=len(names),
                       frameon=False, title=seeds)
            # room for it: a legend row (and its title) below must not squeeze the panels
            fig.set_figheight(fig.get_figheight() + 0.35 + (0.2 if seeds else 0))
        else:
            legend_beside(fig, [handles[n] for n in names], names, title=seeds)
    if title:
        fig.suptitle(title)
    return fig


@styled
def legend_outside(fig: Figure, ncols: int = 1) -> Figure:
    """Replace the legends of ``fig``'s panels by one legend to the right of the figure (each label
    once, in order of appearance): for curves with many labelled lines, where legends inside the
    panels would cover them or repeat in every panel. The figure is widened by about the legend's
    width, so the panels keep theirs — or, where that would be wider than a page, the legend goes
    under the panels (:func:`cselab.workbench.plots.style.legend_beside`). Returns ``fig``."""
    handles: dict[str, object] = {}
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
        legend.remove()
    if handles:
        legend_beside(fig, list(handles.values()), list(handles), max_rows=-(-len(handles) // ncols))
    return fig


@styled
def plot_profile_grid(panels: Mapping[str, Mapping[str, Sequence[float]]], ncols: int = 3,
                      xlabel: str = "layer (0 = embeddings)", ylabel: str = "cos to last-layer [CLS]",
                      title: str | None = None) -> Figure:
    """Small multiples of per-layer profiles: one panel per key of ``panels`` (e.g. a run), in each
    a line per profile (e.g. ``{"step 0": [...], "step 30": [...]}``); a name keeps its colour in
    every panel and one legend serves the figure. APINCSE Fig. 3 over training from probe records
    (:func:`cselab.workbench.analysis.logged.probe_layer_profiles`)."""
    if not panels:
        raise ValueError("plot_profile_grid: no panels to draw")
    names = list(dict.fromkeys(name for profiles in panels.values() for name in profiles))
    # steps and snapshots in the sequential greys of steps (light: early, dark: late), never in a
    # method's colour; other names in the colours of no method, statistic or step
    colours = step_colours(len(names)) if looks_like_steps(names) else [color(i) for i in range(len(names))]
    fig, axes = new_figure(len(panels), panel_size=(2.4, 1.9), ncols=min(ncols, len(panels)), sharey=True)
    for ax, (panel, profiles) in zip(axes, panels.items()):
        for name, values in profiles.items():
            ax.plot(range(len(values)), values, label=name,
                    **measured({"marker": "o", "markersize": 2.5, "color": colours[names.index(name)]}, len(values)))
        ax.set_title(textwrap.fill(display_name(panel), TITLE_WIDTH))
        ax.set_xlabel(xlabel)
        integer_ticks(ax.xaxis)
    separate_coincident(axes)
    for i, ax in enumerate(axes):
        if i % min(ncols, len(panels)) == 0:
            ax.set_ylabel(ylabel)
    handles = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    if len(handles) > 1:   # under the panels, the figure grown by its height (the panels keep theirs)
        legend_under(fig, list(handles.values()), list(handles))
    if title:
        fig.suptitle(title)
    return fig
