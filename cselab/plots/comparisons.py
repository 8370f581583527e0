"""Figures that compare models, settings or simulations (DataFrames in, Figure out).

=====================  ==========================================================================
function               paper figures / tables
=====================  ==========================================================================
plot_sweep             ClusterNS Fig. 8–9 (batch size, K), GS-InfoNCE Table 3 (M), APINCSE Fig. 4
                       and Tables 4–5 (k, queue size L, layer M): a metric against a setting,
                       mean ± std over seeds
plot_ablation_bars     APINCSE Fig. 2: one group of bars per STS task, a bar per variant
plot_top4_curve        GS-InfoNCE Fig. 1: mean of the top-4 negative cosines against batch size
plot_cap_geometry      MixCSE Knowl 3: mean and variance of cos θ on a spherical cap against d
plot_lambda_bound      MixCSE Knowl 5: share of mixed negatives closer than the positive against λ
plot_umap_panels       UMAP / PCA maps coloured by label, side by side (before / after training)
=====================  ==========================================================================
"""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .core import color, distinct_colors, legend_if_several, new_figure
from .labels import readable
from .panels import legend_outside


def _need_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; the frame has {list(frame.columns)}")


def _as_frames(data: pd.DataFrame | Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {"": data} if isinstance(data, pd.DataFrame) else dict(data)


def plot_sweep(results: pd.DataFrame, x: str, y: str, hue: str | None = None, seed: str | None = "seed",
               logx: bool = False, title: str | None = None, xlabel: str | None = None,
               ylabel: str | None = None) -> Figure:
    """``y`` against the swept setting ``x``: the mean over the rows sharing (hue, x) — e.g. seeds —
    with ± one standard deviation as error bars when there is more than one. Axis labels are the
    columns in words (:mod:`cselab.plots.labels`) unless ``xlabel``/``ylabel`` are given."""
    _need_columns(results, [x, y] + ([hue] if hue else []), "plot_sweep")
    fig, (ax,) = new_figure()
    groups = results.groupby(hue, sort=False) if hue else [("", results)]
    for i, (name, group) in enumerate(groups):
        stats = group.groupby(x)[y].agg(["mean", "std", "count"]).sort_index()
        err = stats["std"].where(stats["count"] > 1).fillna(0.0)
        ax.errorbar(stats.index, stats["mean"], yerr=err, marker="o", markersize=3, capsize=2, color=color(i),
                    label=str(name) if hue else None)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel or readable(x))
    ax.set_ylabel(ylabel or readable(y))
    if hue:
        legend_if_several(ax, title=readable(hue))
    if title:
        ax.set_title(title)
    return fig


def plot_ablation_bars(scores: pd.DataFrame, tasks: Sequence[str] | None = None, variant: str = "variant",
                       ylim: tuple[float, float] | None = None, title: str | None = None) -> Figure:
    """Grouped bars: one group per task (column), one bar per variant (row; the ``variant``
    column or the index). Several rows of one variant (seeds) give mean bars with std whiskers."""
    frame = scores.reset_index() if variant not in scores else scores
    if variant not in frame:
        frame = frame.rename(columns={frame.columns[0]: variant})
    tasks = list(tasks) if tasks is not None else [c for c in frame.columns if c != variant and
                                                   pd.api.types.is_numeric_dtype(frame[c])]
    _need_columns(frame, [variant, *tasks], "plot_ablation_bars")
    grouped = frame.groupby(variant, sort=False)[tasks]
    means, stds = grouped.mean(), grouped.std().fillna(0.0)
    fig, (ax,) = new_figure(panel_size=(max(3.3, 0.55 * len(tasks) * max(1, len(means)) / 1.5), 2.6))
    width = 0.8 / len(means)
    positions = np.arange(len(tasks))
    for i, name in enumerate(means.index):
        ax.bar(positions + (i - (len(means) - 1) / 2) * width, means.loc[name], width, yerr=stds.loc[name],
               capsize=1.5, color=color(i), label=str(name))
    ax.set_xticks(positions, tasks)
    if ylim is not None:
        ax.set_ylim(*ylim)
    else:
        low = float(np.nanmin(means.to_numpy()))
        ax.set_ylim(max(0.0, low - 5), None)
    legend_if_several(ax)
    legend_outside(fig)   # beside the bars: a legend of several variants inside would cover or squeeze them
    ax.set_ylabel("score")
    if title:
        ax.set_title(title)
    return fig


def plot_top4_curve(curves: pd.DataFrame | Mapping[str, pd.DataFrame], title: str | None = None) -> Figure:
    """Mean of the top-k negative-pair cosines against batch size (frames from
    :func:`cselab.analysis.gs_infonce.top4_curve`; a mapping gives one line per model)."""
    fig, (ax,) = new_figure()
    for i, (name, frame) in enumerate(_as_frames(curves).items()):
        _need_columns(frame, ["batch_size", "top_k_mean"], "plot_top4_curve")
        frame = frame.sort_values("batch_size")
        ax.errorbar(frame["batch_size"], frame["top_k_mean"], yerr=frame.get("std"), marker="o", markersize=3,
                    capsize=2, color=color(i), label=name or None)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size")
    k = int(frame["k"].iloc[0]) if "k" in frame else 4
    ax.set_ylabel(f"mean of top-{k} negative cosines")
    legend_if_several(ax)
    if title:
        ax.set_title(title)
    return fig


def plot_cap_geometry(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Two panels against the dimension d, one line per cap radius ω: mean and variance of cos θ
    (:func:`cselab.analysis.mixcse.cap_geometry_table`)."""
    _need_columns(table, ["d", "omega_deg", "mean_cos", "var_cos"], "plot_cap_geometry")
    fig, axes = new_figure(2)
    for i, (omega, group) in enumerate(table.groupby("omega_deg", sort=True)):
        group = group.sort_values("d")
        for ax, key in zip(axes, ("mean_cos", "var_cos")):
            ax.plot(group["d"], group[key], marker="o", markersize=3, color=color(i), label=f"ω = {omega:g}°")
    axes[0].set_ylabel("mean of cos θ")
    axes[1].set_ylabel("variance of cos θ")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("dimension d")
    legend_if_several(axes[0])
    if title:
        fig.suptitle(title)
    return fig


def plot_lambda_bound(curves: pd.DataFrame | Mapping[str, pd.DataFrame], title: str | None = None) -> Figure:
    """Share of mixed negatives closer to the anchor than its positive, against λ
    (:func:`cselab.analysis.mixcse.lambda_bound_curve`; a mapping: one line per model)."""
    fig, (ax,) = new_figure()
    for i, (name, frame) in enumerate(_as_frames(curves).items()):
        _need_columns(frame, ["lambda", "closer_share"], "plot_lambda_bound")
        frame = frame.sort_values("lambda")
        ax.plot(frame["lambda"], frame["closer_share"], marker="o", markersize=3, color=color(i), label=name or None)
    ax.set_xlabel("λ (weight of the positive in the mixture)")
    ax.set_ylabel("share closer than the positive")
    ax.set_ylim(-0.02, 1.02)
    legend_if_several(ax)
    if title:
        ax.set_title(title)
    return fig


UMAP_TITLE_WIDTH = 28   # characters per title line of a 3-inch panel


def plot_umap_panels(frames: pd.DataFrame | Mapping[str, pd.DataFrame], max_legend: int = 12,
                     title: str | None = None) -> Figure:
    """One scatter panel per frame (columns x, y, label; :func:`cselab.analysis.umap.umap_frames`),
    points coloured by label with the same colour for a label in every panel."""
    frames = _as_frames(frames)
    for frame in frames.values():
        _need_columns(frame, ["x", "y", "label"], "plot_umap_panels")
    labels = sorted({lab for f in frames.values() for lab in f["label"]}, key=str)
    colors = distinct_colors(len(labels))    # more than 10 classes must not share colours
    fig, axes = new_figure(len(frames), panel_size=(3.0, 3.0))
    for ax, (name, frame) in zip(axes, frames.items()):
        for i, lab in enumerate(labels):
            part = frame[frame["label"] == lab]
            ax.scatter(part["x"], part["y"], s=6, color=colors[i], label=str(lab), linewidths=0)
        method = frame.attrs.get("method", "")
        # wrapped: long model names of neighbouring 3-inch panels would run into each other
        ax.set_title(textwrap.fill(f"{name} ({method})" if method else str(name), UMAP_TITLE_WIDTH))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    if len(labels) <= max_legend:
        legend_if_several(axes[-1], markerscale=2, loc="center left", bbox_to_anchor=(1.0, 0.5))
    if title and len(axes) == 1:
        axes[0].set_title(title)   # one panel: its title is the figure's, never both
    elif title:
        fig.suptitle(title)
    return fig
