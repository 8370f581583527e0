"""The alignment–uniformity plane of single models and runs (ℓ_align against ℓ_uniform, lower-left is
better): points, probe trajectories over training. The plane over seeds (means with t-intervals) is
:mod:`cselab.workbench.plots.plane`.

=============================  =======================================================================
function                       paper figures
=============================  =======================================================================
plot_alignment_uniformity      ClusterNS Fig. 6 / SimCSE Fig. 2 (points or probe trajectories)
plot_alignment_trajectories    each run's path in the plane over training, a panel per starting model
=============================  =======================================================================
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .check import MIN_COLOUR_VALUES
from .core import new_figure, require_columns, styled
from ..labels import display_name, frame_groups, readable
from .palettes import METHOD_MARKERS, NON_METHOD_MARKERS, STEP_CMAP
from .point_labels import label_points
from .style import (MARKERS, integer_ticks, is_untuned, legend_below, measured, method_color, method_key,
                    place_legend, point_markers, separate_coincident, series_styles)

NEUTRAL = "#333333"   # points that stand for no method, statistic or step (one colour, no meaning)

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
    require_columns(points, ["alignment", "uniformity"], "plot_alignment_uniformity")
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
        require_columns(points, [color_by], "plot_alignment_uniformity")
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
        label_points(ax, points["uniformity"], points["alignment"],
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

    require_columns(probes, ["alignment", "uniformity", "step"], "plot_alignment_trajectories")
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
