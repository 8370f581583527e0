"""Figures of training dynamics, fed from run directories (or from DataFrames of the same shape).

=============================  =======================================================================
function                       paper figures
=============================  =======================================================================
plot_similarity_dynamics       ClusterNS Fig. 3, 4, 5, 7, 10 (``sim/<stat>`` of the train records);
                               MixCSE's positive / random-negative / mixed-negative scores (cos/τ)
plot_training_curves           loss parts, STS-B dev (any numeric key of train or eval records)
plot_largest_angle             MixCSE's largest-angle curve (probe records)
plot_grad_norm                 MixCSE gradient analysis, ‖∂L/∂z‖ per step (``grad/*`` of the train records)
plot_alignment_uniformity      ClusterNS Fig. 6 / SimCSE Fig. 2 (points or probe trajectories)
plot_layer_profile             APINCSE Fig. 3 (per-layer [CLS] similarity to the last layer)
=============================  =======================================================================
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, NullFormatter

from ..analysis.mixcse import SCORE_LABELS
from ...model.methods import stat_labels
from ...model.rundir import Runs, labelled_runs, read_config, read_metrics
from .check import MIN_COLOUR_VALUES
from .core import TooFewPoints, COLUMN_WIDTH, color, new_figure, styled
from ..labels import display_name, frame_groups, run_groups, readable
from .palettes import METHOD_MARKERS, NON_METHOD_MARKERS, STEP_CMAP, is_statistic, statistic_colour
from .rc import PAGE_WIDTH
from .style import (MARKERS, SEED_ALPHA, SEEDS_NOTE, group_label, integer_ticks, is_untuned, legend_below,
                   legend_beside, measured, method_color, method_key, place_legend, point_markers,
                   separate_coincident, series_styles)

NEUTRAL = "#333333"   # points that stand for no method, statistic or step (one colour, no meaning)

TITLE_WIDTH = 32   # characters per title line of a 3.3-inch panel (9-pt titles)


def stat_label_words() -> dict[str, str]:
    """Words for the statistic keys: the core's and the methods' (:func:`cselab.model.methods.stat_labels`,
    each method owns its labels) and the MixCSE score columns of :mod:`cselab.workbench.analysis.mixcse`."""
    return {**stat_labels(), **SCORE_LABELS}


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


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame or frame[c].isna().all()]
    if missing:
        available = sorted(c for c in frame.columns if c not in ("run", "kind", "step"))
        raise ValueError(f"{what}: no values for {missing}; available: {available}")


def _curves(frame: pd.DataFrame, keys: Sequence[str], labels: Mapping[str, str], panels: str, ylabel: str,
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
        markers = point_markers([words(k) for k in keys])
    for ax, o in zip(axes, outer):
        if panels == "key":
            for name, group in groups.items():
                shown = display_name(name)
                _group_line(ax, frame, o, group["runs"], group_label(shown, len(group["runs"])), styles[shown],
                            markers[shown])
        else:
            for key in keys:
                part = frame.loc[frame["run"] == o, ["step", key]].dropna()   # every key exists: _require
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


def _group_line(ax, frame: pd.DataFrame, key: str, runs: Sequence[str], label: str, style: dict,
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
    _require(frame, stats, "plot_similarity_dynamics")
    ylabel = ylabel or ("cos / τ" if per_temperature else "mean cosine")
    return _curves(frame, stats, {**stat_label_words(), **(labels or {})}, panels, ylabel, title, ncols, _groups(data),
                   "plot_similarity_dynamics")


# A run's statistics in panels by what they are about (their kinds, cselab.workbench.plots.palettes):
# a method that logs many (ClusterNS) has curves within 0.02 of each other that hide one another
# in one panel.
STATISTIC_FAMILIES = {
    "pairs the loss contrasts": ("positive", "augmented positive", "in-batch negative", "hard negative",
                                 "mixed negative", "noise negative", "interlayer negative", "queue negative",
                                 "off-dropout negative"),
    "clusters": ("nearest centroid", "between centroids", "false negative"),
    "all pairs of the batch": ("batch mean",),
}
OTHER_FAMILY = "other statistics"
# Statistics compared with a configured threshold, its key in the method's section and its symbol:
# the threshold is drawn as a dotted line in their panel.
THRESHOLDS = {"batch_cos": ("start_threshold", "σ", "the method starts clustering once this mean falls below it")}
THRESHOLD_COLOUR = "0.45"


def statistic_families(stats: Sequence[str]) -> dict[str, list[str]]:
    """``stats`` (``sim/`` keys without the prefix) grouped by :data:`STATISTIC_FAMILIES`, in its
    order (a statistic of no known kind under "other statistics"); empty families left out."""
    from .palettes import statistic_kind

    out: dict[str, list[str]] = {}
    for stat in stats:
        kind = statistic_kind(stat)
        family = next((name for name, kinds in STATISTIC_FAMILIES.items() if kind in kinds), OTHER_FAMILY)
        out.setdefault(family, []).append(stat)
    return {name: out[name] for name in [*STATISTIC_FAMILIES, OTHER_FAMILY] if name in out}


def _thresholds(runs: Mapping[str, object], stats: Sequence[str]) -> dict[str, tuple[str, float]]:
    """``{stat: (symbol, value)}`` for the statistics of ``stats`` a run's config sets a threshold for."""
    found = {}
    for stat in stats:
        component, _, name = stat.rpartition(".")
        if name in THRESHOLDS:
            option, symbol, _ = THRESHOLDS[name]
            values = {read_config(path).get(component, {}).get(option) for path in runs.values()} - {None}
            if len(values) == 1:
                found[stat] = (symbol, float(values.pop()))
    return found


@styled
def plot_statistic_families(data: Runs, stats: Sequence[str], title: str | None = None) -> Figure:
    """One run's statistics (``sim/<stat>`` of its train records, ``stats`` without the prefix) in a
    panel per family (:func:`statistic_families`: the pairs its loss contrasts, its clusters, the
    mean over all pairs of the batch), on one shared y axis; a statistic compared with a configured
    threshold (ClusterNS's start test against σ) gets it as a dotted line in its panel. Each
    statistic keeps its colour (:func:`cselab.workbench.plots.palettes.statistic_colour`)."""
    runs = labelled_runs(data)
    if len(runs) != 1:
        raise ValueError(f"plot_statistic_families draws one run, got {len(runs)}: {list(runs)}")
    frame = read_metrics(runs, "train").rename(columns={f"sim/{s}": s for s in stats})
    _require(frame, stats, "plot_statistic_families")
    families = statistic_families(stats)
    parts = []
    for family, members in families.items():   # the run's records once per family, its others blanked
        part = frame[["step", *stats]].copy()
        part[[s for s in stats if s not in members]] = np.nan
        parts.append(part.assign(run=family))
    long = pd.concat(parts, ignore_index=True)
    fig = _curves(long, stats, stat_label_words(), "run", "mean cosine", None, None, None,
                  "plot_statistic_families")
    lines = _thresholds(runs, stats)
    for ax, (family, members) in zip(fig.axes, families.items()):
        for stat in members:
            if stat in lines:
                symbol, value = lines[stat]
                ax.axhline(value, color=THRESHOLD_COLOUR, linestyle=":", linewidth=1.0, zorder=1)
                ax.annotate(f"{symbol} = {value:g}", (1.0, value), xycoords=("axes fraction", "data"),
                            xytext=(-2, 2), textcoords="offset points", ha="right", va="bottom", fontsize=7,
                            color=THRESHOLD_COLOUR)
    fig.suptitle(title or display_name(next(iter(runs))))
    return fig


def statistic_family_note(data: Runs, stats: Sequence[str]) -> str:
    """The sentence a :func:`plot_statistic_families` figure's note needs for its thresholds ("")."""
    lines = _thresholds(labelled_runs(data), stats)
    words = stat_label_words()
    return " ".join(f"Dotted, with the {words.get(stat, stat)}: {symbol} = {value:g}, the threshold "
                    f"({THRESHOLDS[stat.rpartition('.')[2]][2]})." for stat, (symbol, value) in lines.items())


@styled
def plot_training_curves(data: Runs | pd.DataFrame, keys: Sequence[str] = ("loss",), kind: str = "train",
                         panels: str = "key", title: str | None = None, ncols: int | None = None,
                         ylabel: str | None = None) -> Figure:
    """Any numeric keys of the ``kind`` records over training (``loss``, ``loss/info_nce``,
    ``stsb_dev`` with ``kind="eval"``, ...), labelled in words (:mod:`cselab.workbench.labels`) or by
    ``ylabel``."""
    frame = _frame(data, kind)
    _require(frame, keys, "plot_training_curves")
    return _curves(frame, keys, {}, panels, ylabel or (readable(keys[0]) if len(keys) == 1 else ""), title, ncols,
                   _groups(data), "plot_training_curves")


@styled
def plot_largest_angle(data: Runs | pd.DataFrame, title: str | None = None) -> Figure:
    """MixCSE's largest angle between any two probe embeddings (degrees) over training."""
    frame = _frame(data, "probe")
    _require(frame, ["largest_angle"], "plot_largest_angle (enable probes: probe_every)")
    return _curves(frame, ["largest_angle"], {}, "key", readable("largest_angle"), title, None, _groups(data),
                   "plot_largest_angle")


@styled
def plot_grad_norm(data: Runs | pd.DataFrame, keys: Sequence[str] = ("grad/z1_norm", "grad/z2_norm"),
                   title: str | None = None, logy: bool | None = None) -> Figure:
    """MixCSE gradient analysis: mean ‖∂L/∂z‖₂ per step (train records with ``log_embedding_grad_norm``).
    ``logy``: a log y-axis; ``None`` chooses it where the positive values span more than 10× (one
    method's norms ten times another's crowd the rest into the bottom of a linear axis)."""
    frame = _frame(data, "train")
    _require(frame, keys, "plot_grad_norm (enable log_embedding_grad_norm)")
    labels = {"grad/z1_norm": "view 1 (anchors)", "grad/z2_norm": "view 2 (positives)"}
    if logy is None:
        values = frame[list(keys)].to_numpy(dtype=float).ravel()
        values = values[np.isfinite(values)]
        logy = bool(len(values)) and bool((values > 0).all()) and values.max() / values.min() > LOG_SPAN
    return _curves(frame, keys, labels, "key", "mean ‖∂L/∂z‖" + (" (log scale)" if logy else ""), title, None,
                   _groups(data), "plot_grad_norm", logy=logy)


LOG_SPAN = 10   # values spanning more than this factor get a log axis (plot_grad_norm)


@styled
def plot_alignment_uniformity(points: pd.DataFrame, label: str | None = "run", color_by: str | None = None,
                              trajectory: str | None = None, title: str | None = None,
                              quantity: str | None = None) -> Figure:
    """ℓ_align against ℓ_uniform (lower-left is better); ``quantity`` says on what they were
    measured (e.g. "STS-B dev pairs"), in the axis labels.

    ``points`` has columns ``alignment`` and ``uniformity``; ``label`` names each point (e.g. the
    model; labels are placed where they overlap no other label), ``color_by`` a numeric column
    shown as colour (e.g. ``sts_avg``, ClusterNS Fig. 6), ``trajectory`` a column whose groups are
    joined in ``step`` order (probe records of several runs: ``read_metrics(runs, "probe")`` with
    ``trajectory="run"``, ``color_by="step"``), each in its method's colour."""
    _require(points, ["alignment", "uniformity"], "plot_alignment_uniformity")
    fig, (ax,) = new_figure(panel_size=(3.3, 2.9))
    if trajectory is not None:
        paths = dict(list(points.groupby(trajectory, sort=False)))
        # runs that differ only in their seed: one colour and one legend entry (frame_groups)
        groups = frame_groups(list(paths))
        names = {name: display_name(name) for name in groups}
        styles = series_styles(list(names.values()), {names[n]: g["method"] for n, g in groups.items()})
        for name, group in groups.items():
            style = styles[names[name]]
            for i, run in enumerate(group["runs"]):
                path = paths[run].sort_values("step") if "step" in paths[run] else paths[run]
                n = len(group["runs"])   # a path per seed (no mean of paths): "SimCSE (3 seeds)"
                label = (f"{names[name]} ({n} seeds)" if n > 1 else names[name]) if i == 0 else None
                ax.plot(path["uniformity"], path["alignment"], alpha=0.7, label=label,
                        **measured({k: v for k, v in style.items() if k != "markersize"}, len(path)))
                if len(path) >= 2:
                    ax.annotate("", xy=(path["uniformity"].iloc[-1], path["alignment"].iloc[-1]),
                                xytext=(path["uniformity"].iloc[-2], path["alignment"].iloc[-2]),
                                arrowprops={"arrowstyle": "->", "color": style["color"]})
        separate_coincident([ax])
    texts = None   # what each point's label says (its model, and the value when colour cannot carry it)
    if color_by is not None:
        _require(points, [color_by], "plot_alignment_uniformity")
        if points[color_by].dropna().nunique() < MIN_COLOUR_VALUES and label is not None and label in points:
            # a colour scale over 2 or 3 values carries nothing (the checker's few_colour_values):
            # the points keep their methods' colours and each label gives the value
            texts = [f"{display_name(v)}: {c:.4g}" for v, c in zip(points[label], points[color_by])]
            color_by = None
    repeated = label is not None and label in points and trajectory is None and \
        points[label].map(display_name).duplicated().any()
    if color_by is not None:
        # steps in the sequential grey of steps (never a method's hue); other values in viridis
        cmap = STEP_CMAP if color_by == "step" else "viridis"
        if repeated:   # several runs (seeds) per model: a shape per model, named in a legend
            from matplotlib.cm import ScalarMappable
            from matplotlib.colors import Normalize

            norm = Normalize(float(points[color_by].min()), float(points[color_by].max()))
            _shapes_by_model(ax, points, label, c=points[color_by], cmap=cmap, norm=norm)
            sc = ScalarMappable(norm=norm, cmap=cmap)
            sc.set_array(points[color_by].to_numpy(float))
        else:
            sc = ax.scatter(points["uniformity"], points["alignment"], c=points[color_by], cmap=cmap, s=28, zorder=3)
        fig.colorbar(sc, ax=ax, label=readable(color_by), shrink=0.9, aspect=25)
        if color_by == "step":
            integer_ticks(sc.colorbar.ax.yaxis)
    elif repeated:
        _shapes_by_model(ax, points, label)
    elif label is not None and label in points and trajectory is None:
        # each point in its method's colour (grey: untuned) and a marker of its own, so that a legend
        # can name them when the points crowd too much for labels beside them
        shown = [display_name(v) for v in points[label]]
        marks = _distinct_marks(list(dict.fromkeys(shown)))
        for x, y, name, text in zip(points["uniformity"], points["alignment"], shown, texts or shown):
            colour, marker = marks[name]
            if is_untuned(name):   # hollow: no model of any method
                ax.scatter([x], [y], marker=marker, s=34, zorder=3, label=text, facecolors="none",
                           edgecolors=colour, linewidths=1.1)
                continue
            ax.scatter([x], [y], color=colour, marker=marker, s=34,
                       zorder=3, label=text, edgecolors="white", linewidths=0.4)
    else:
        # a point that is a method's model in the method's colour, any other in one neutral colour
        names = points[label] if label is not None and label in points else [None] * len(points)
        colours = [method_color(n) if n is not None and method_key(str(n)) else NEUTRAL for n in names]
        ax.scatter(points["uniformity"], points["alignment"], color=colours, s=28, zorder=3)
    ax.set_xlabel(r"$\ell_{uniform}$" + (f", {quantity}" if quantity else ""))
    ax.set_ylabel(r"$\ell_{align}$" + (f", {quantity}" if quantity else ""))
    if title:
        ax.set_title(title)
    if trajectory is not None:
        place_legend(ax)
    if repeated:
        place_legend(ax, min_entries=1)
    elif label is not None and label in points and trajectory is None:
        _label_points(ax, points["uniformity"], points["alignment"],
                      texts or [display_name(v) for v in points[label]], marked=color_by is None)
    return fig


def _distinct_marks(names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) per model: its method's colour and its family's marker, another marker where
    two models of one method would otherwise look the same (MixCSE and MixCSE one-way)."""
    styles = series_styles(list(names))
    fallback = point_markers(list(names))
    apart = point_markers_apart(list(names))   # an untuned backbone: a shape no method's point has
    taken, marks = set(), {}
    for name in names:
        colour = styles[name]["color"]
        marker = apart[name] if is_untuned(name) else styles[name].get("marker", fallback[name])
        if not is_untuned(name) and marker in UNTUNED_MARKERS:   # the untuned backbones' shapes are theirs alone
            marker = apart[name]
        if (colour, marker) in taken:
            marker = next((m for m in MARKERS if (colour, m) not in taken and m not in UNTUNED_MARKERS), marker)
        taken.add((colour, marker))
        marks[name] = (colour, marker)
    return marks


def _shapes_by_model(ax, points: pd.DataFrame, label: str, **colouring) -> None:
    """One marker shape per model (the runs of one model, e.g. its seeds, share it) and a legend
    entry "SimCSE (3 runs)"; with ``colouring`` (``c``, ``cmap``, ``norm``) the points take the
    colour scale and the legend shows the shapes in grey, else each model its method's colour."""
    from matplotlib.lines import Line2D

    shown = points[label].map(display_name)
    names = list(dict.fromkeys(shown))
    marks = _distinct_marks(names)
    styles = {name: {"color": marks[name][0]} for name in names}
    markers = {name: marks[name][1] for name in names}   # each method's own shape, coloured or not
    for name in names:
        chosen = (shown == name).to_numpy()
        n = int(chosen.sum())
        text = f"{name} ({n} runs)" if n > 1 else name
        if colouring:
            ax.scatter(points["uniformity"][chosen], points["alignment"][chosen], c=np.asarray(colouring["c"])[chosen],
                       cmap=colouring["cmap"], norm=colouring["norm"], marker=markers[name], s=34, zorder=3,
                       edgecolors="black", linewidths=0.4)
            ax.add_line(Line2D([], [], linestyle="none", marker=markers[name], markersize=5, color="0.45",
                               markeredgecolor="black", markeredgewidth=0.4, label=text))
        else:
            ax.scatter(points["uniformity"][chosen], points["alignment"][chosen], color=styles[name]["color"],
                       marker=markers[name], s=34, zorder=3, edgecolors="white", linewidths=0.4, label=text)


@styled
def plot_alignment_trajectories(probes: pd.DataFrame, panels: Mapping[str, Sequence[str]] | None = None,
                                quantity: str = "probe set") -> Figure:
    """Each run's path in the (ℓ_uniform, ℓ_align) plane over training, from its probe records
    (``read_metrics(runs, "probe")``, step 0 = the model it started from): a line in the run's
    method colour through a dot at every probe, the last probe a larger dot with a black edge and
    the start a black ring (one per panel: the runs of a panel start from one model). ``panels``
    (``{title: run labels}``, e.g. the runs of each starting model) draws each group in its own
    panel, so that runs from different starts do not cross each other. ``quantity`` names what
    ℓ_align and ℓ_uniform are measured on (the axis labels say it: the same symbols on STS-B pairs
    are another quantity)."""
    from matplotlib.lines import Line2D

    _require(probes, ["alignment", "uniformity", "step"], "plot_alignment_trajectories")
    runs = list(dict.fromkeys(probes["run"]))
    panels = dict(panels) if panels else {"": runs}
    fig, axes = new_figure(len(panels), panel_size=(3.5, 3.0), sharey=True)
    names = {run: display_name(run) for run in runs}
    styles = series_styles(list(names.values()))
    for ax, (title, members) in zip(axes, panels.items()):
        starts = []
        for run in members:
            path = probes[probes["run"] == run].sort_values("step")
            if path.empty:
                continue
            style = styles[names[run]]
            # under 4 probes the points alone (a line would imply a path nobody measured between them); the
            # start ring and the larger last dot still give their order
            drawn = measured({"color": style["color"], "linestyle": style["linestyle"],
                              "marker": style.get("marker", "o"), "markersize": 2.5}, len(path))
            ax.plot(path["uniformity"], path["alignment"], linewidth=1.2, label=names[run], **drawn)
            ax.scatter(path["uniformity"].iloc[-1:], path["alignment"].iloc[-1:], marker=style.get("marker", "o"), s=36,
                       color=style["color"], edgecolors="black", linewidths=0.7, zorder=4)
            if int(path["step"].iloc[0]) == 0:
                starts.append((path["uniformity"].iloc[0], path["alignment"].iloc[0]))
        for x, y in dict.fromkeys(starts):
            ax.scatter([x], [y], marker="o", s=49, facecolors="none", edgecolors="black", linewidths=1.0, zorder=5)
        if title:
            ax.set_title(textwrap.fill(title, 40))
        ax.set_xlabel(r"$\ell_{uniform}$" + f", {quantity}")
    axes[0].set_ylabel(r"$\ell_{align}$" + f", {quantity}")
    separate_coincident(axes)
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    last = int(probes["step"].max())
    keys = [Line2D([], [], linestyle="none", marker="o", markersize=7, markerfacecolor="none", markeredgecolor="black"),
            Line2D([], [], linestyle="none", marker="o", markersize=6, color="0.6", markeredgecolor="black")]
    legend_below(fig, [*handles.values(), *keys], [*handles, "step 0 (before training)", f"last probe (step {last})"])
    return fig


# hollow, for untuned backbones: shapes no method's point takes (METHOD_MARKERS: ClusterNS's ◆ "D" was
# the first of these, so its points became squares beside an untuned backbone, ◆ everywhere else)
UNTUNED_MARKERS = tuple(m for m in ("*", "8", ">", "<", "H")
                        if m not in METHOD_MARKERS and m not in NON_METHOD_MARKERS.values())


def point_markers_apart(names: Sequence[str]) -> dict[str, str]:
    """A marker per point name: the untuned backbones (:func:`cselab.workbench.plots.style.is_untuned`)
    take :data:`UNTUNED_MARKERS` in turn, every other name a shape of :data:`MARKERS` that none of
    them has, so that shape alone tells a trained model from an untuned one."""
    pool = [m for m in MARKERS if m not in UNTUNED_MARKERS]
    untuned = [n for n in names if is_untuned(n)]
    trained = [n for n in names if not is_untuned(n)]
    return {**{n: UNTUNED_MARKERS[i % len(UNTUNED_MARKERS)] for i, n in enumerate(untuned)},
            **{n: pool[i % len(pool)] for i, n in enumerate(trained)}}


# Offsets (points) tried in turn for a point label: above right first, then around the point; then
# the same directions farther out, with a leader line back to the point.
_LABEL_DIRECTIONS = [(1, 1, "left", "bottom"), (1, -1, "left", "top"), (-1, 1, "right", "bottom"),
                     (-1, -1, "right", "top"), (0, 1.7, "center", "bottom"), (0, -1.7, "center", "top"),
                     (1.5, 0, "left", "center"), (-1.5, 0, "right", "center")]
_LABEL_RADII = (4, 12, 22)


def _label_points(ax, xs, ys, texts, marked: bool = False) -> None:
    """Name each point with a text placed at the first offset around it where it overlaps no label
    placed before and stays inside the panel, nearest first (a far one gets a leader line). Where
    some label finds no free place — points that crowd, which depends on the numbers and so on the
    machine's precision — every point is named in a legend instead, each with its own marker: the
    figure stays readable whatever its numbers are."""
    from .check import draw

    fig = ax.get_figure()
    renderer = draw(fig)
    placed, notes = [], []
    for x, y, text in zip(xs, ys, texts):
        found = None
        for radius in _LABEL_RADII:
            for dx, dy, ha, va in _LABEL_DIRECTIONS:
                leader = {"arrowprops": {"arrowstyle": "-", "lw": 0.5, "color": "0.5"}} if radius > 4 else {}
                note = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx * radius, dy * radius),
                                   fontsize=7, ha=ha, va=va, **leader)
                box = note.get_window_extent(renderer)
                if not any(box.overlaps(other) for other in placed) and ax.bbox.contains(box.x0, box.y0) and \
                        ax.bbox.contains(box.x1, box.y1):
                    found = (note, box)
                    break
                note.remove()
            if found:
                break
        if found is None:
            for note in notes:
                note.remove()
            if marked:   # each point has its own colour and marker already: a legend names them
                from matplotlib.collections import PathCollection
                from matplotlib.legend_handler import HandlerPathCollection

                _ring_overlapping(ax, renderer)
                handles, labels = ax.get_legend_handles_labels()   # every entry at the points' common size
                legend_beside(fig, handles, labels, handler_map={PathCollection: HandlerPathCollection(sizes=[34])})
            else:
                _legend_points(ax, xs, ys, texts)
            return
        notes.append(found[0])
        placed.append(found[1])


def _ring_overlapping(ax, renderer) -> None:
    """Where point markers overlap on the page (two models measured alike), a filled marker would
    hide the one under it: every marker of the panel is then drawn open, its edge in its colour,
    and each overlapping marker after the first of its cluster twice as wide as the one before, so
    that it rings it (a legend drawn after keeps one size for all)."""
    import numpy as np

    points = [c for c in ax.collections if len(c.get_offsets()) == 1]
    if len(points) < 2:
        return
    centres = np.array([ax.transData.transform(c.get_offsets()[0]) for c in points])
    radius = np.sqrt(max(c.get_sizes()[0] for c in points)) / 2 * renderer.points_to_pixels(1.0)
    near = np.linalg.norm(centres[:, None] - centres[None], axis=-1) < 2 * radius
    np.fill_diagonal(near, False)
    if not near.any():
        return
    for i, c in enumerate(points):
        face = c.get_facecolor()
        colour = face[0] if len(face) and face[0][3] > 0 else c.get_edgecolor()[0]   # a hollow one keeps its edge
        c.set_facecolor("none")
        c.set_edgecolor(colour)
        c.set_linewidth(1.1)
        k = int(near[i, :i].sum())   # the k-th of its cluster in drawing order: 4^k times the area, 2^k the width
        c.set_sizes([c.get_sizes()[0] * 4 ** k])


def _legend_points(ax, xs, ys, texts) -> None:
    """Each point ringed by its own marker, named in the legend (the fallback of :func:`_label_points`)."""
    for i, (x, y, text) in enumerate(zip(xs, ys, texts)):
        ax.scatter([x], [y], marker=MARKERS[i % len(MARKERS)], s=70, facecolors="none", edgecolors="0.2",
                   linewidths=0.8, zorder=4, label=text)
    place_legend(ax, min_entries=1)


LAST_LAYER_NOTE = "the last layer, 1 by definition, is not drawn"


@styled
def plot_layer_profile(profiles: Mapping[str, Sequence[float]] | Runs, title: str | None = None,
                       last_layer: bool = False, split: bool | None = None) -> Figure:
    """Mean cos(h^a_CLS, h^L_CLS) for every layer a (0 = embeddings) below the last, one line per
    model in its method's colour (a model that is no method, the untuned backbone, in a colour no
    method uses); profiles that coincide get their own dashes and markers (the legend says so).
    The last layer's value is 1 by definition: drawn only with ``last_layer`` (it would set the
    y range and squeeze the layers that differ).

    ``split``: the untuned backbones in a panel of their own beside the trained models, both panels
    at one scale (the same y span, each at its own offset), so that the trained profiles, which may
    lie within a few hundredths of each other far from the untuned one, are not squeezed under an
    empty gap; ``None`` splits where the two groups' ranges are apart by more than half the
    trained group's own span (one panel would then be at least a third empty).

    ``profiles``: ``{name: per-layer means}`` (e.g. ``layer_cls_similarity(...).mean``), or run
    directories, whose last probe record's ``layer_cls_sim`` is used."""
    methods = {}
    if isinstance(profiles, Mapping) and all(not isinstance(v, (str, bytes)) and hasattr(v, "__len__")
                                             for v in profiles.values()):
        curves = {name: np.asarray(v, dtype=float) for name, v in profiles.items()}
    else:
        runs = labelled_runs(profiles)
        frame = read_metrics(runs, "probe")
        _require(frame, ["layer_cls_sim"], "plot_layer_profile (enable probes: probe_every)")
        curves = {run: np.asarray(group["layer_cls_sim"].dropna().iloc[-1], dtype=float)
                  for run, group in frame.groupby("run", sort=False)}
        methods = {display_name(run): method_key(read_config(runs[run]).get("method")) for run in curves}
    names = [display_name(name) for name in curves]
    shown_values = {shown: (values if last_layer else values[:-1]) for shown, values in zip(names, curves.values())}
    untuned = [n for n in names if is_untuned(n)]
    trained = [n for n in names if not is_untuned(n)]
    if split is None:
        split = bool(untuned and trained) and _apart(shown_values, untuned, trained)
    panels = [untuned, trained] if split else [names]
    fig, axes = new_figure(len(panels), panel_size=(2.6 if split else COLUMN_WIDTH, 2.5))
    styles = series_styles(names, methods)
    markers = point_markers(names, methods)
    for ax, members in zip(axes, panels):
        for shown in members:
            style = {"marker": markers[shown], "markersize": 3, **styles[shown]}
            values = shown_values[shown]
            ax.plot(np.arange(len(values)), values, label=shown, **measured(style, len(values)))
    depths = sorted({len(values) - 1 for values in curves.values()})   # several with backbones of several depths
    for ax in axes:
        # beside each other, two panels' long labels would run into each other: the note says what is not drawn
        ax.set_xlabel("layer (0 = embeddings)" if last_layer or split else
                      f"layer (0 = embeddings; {depths[0]}: not drawn)" if len(depths) == 1 else
                      f"layer (0 = embeddings; each model's last, {', '.join(map(str, depths))}: not drawn)")
        integer_ticks(ax.xaxis)
    axes[0].set_ylabel("cos to last-layer [CLS]")
    if split:
        axes[0].set_title("untuned" if len(untuned) > 1 else textwrap.fill(untuned[0], 30))
        axes[1].set_title("trained models")
        _same_span(axes, [[shown_values[n] for n in untuned], [shown_values[n] for n in trained]])
    separate_coincident(axes)
    if split:
        handles: dict[str, object] = {}
        for ax in axes:
            for handle, name in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(name, handle)
        legend_beside(fig, list(handles.values()), list(handles))
    else:
        place_legend(axes[0])
    if title:
        (fig.suptitle if split else axes[0].set_title)(title)
    return fig


def _apart(values: Mapping[str, np.ndarray], first: Sequence[str], second: Sequence[str]) -> bool:
    """Whether the values of two groups of curves lie apart by more than half the second group's span."""
    a = np.concatenate([values[n] for n in first])
    b = np.concatenate([values[n] for n in second])
    gap = max(a.min() - b.max(), b.min() - a.max())
    return bool(gap > 0 and gap > 0.5 * (b.max() - b.min()))


SPAN_MARGIN = 0.12   # of the span, above and below the curves of a panel drawn at a shared scale


def _same_span(axes, groups: Sequence[Sequence[np.ndarray]]) -> None:
    """Each panel's y range around its own curves, all of the same span (the widest group's plus a
    margin): one scale across the panels, so that a slope reads the same in each."""
    ranges = [(min(v.min() for v in group), max(v.max() for v in group)) for group in groups]
    span = max(high - low for low, high in ranges) * (1 + 2 * SPAN_MARGIN) or 0.01
    for ax, (low, high) in zip(axes, ranges):
        middle = (low + high) / 2
        ax.set_ylim(middle - span / 2, middle + span / 2)
