"""The per-layer profile: mean cos(h^a_CLS, h^L_CLS) for every layer a below the last, a line per model
(APINCSE Fig. 3, :func:`plot_layer_profile`)."""
from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ...model.rundir import Runs, labelled_runs, read_config, read_metrics
from .core import COLUMN_WIDTH, new_figure, require_columns, styled
from ..labels import display_name
from .style import (integer_ticks, is_untuned, legend_beside, measured, method_key, place_legend, point_markers,
                    separate_coincident, series_styles)

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
        require_columns(frame, ["layer_cls_sim"], "plot_layer_profile (enable probes: probe_every)")
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
