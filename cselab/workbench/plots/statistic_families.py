"""One run's statistics in panels by what they are about (their kinds' families, as each method's view
declares them: :mod:`cselab.workbench.method_views`): a method that logs many (ClusterNS) has curves
within 0.02 of each other that hide one another in one panel. A statistic compared with a configured
threshold (its method's view says which, and the config key) gets it as a dotted line in its panel.

=============================  =======================================================================
function                       paper figures
=============================  =======================================================================
plot_statistic_families        ClusterNS Fig. 3, 4, 7 (one run's ``sim/<stat>``, a panel per family)
statistic_family_note          the sentence its note needs for the thresholds drawn
=============================  =======================================================================
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...model.rundir import Runs, labelled_runs, read_config, read_metrics
from ..labels import display_name
from ..method_views import OTHER_FAMILY, kind_families, threshold
from .core import require_columns, styled
from .training_curves import curves_over_steps, stat_label_words

# the colour of a configured threshold's dotted line and its words (cselab.workbench.method_views.threshold)
THRESHOLD_COLOUR = "0.45"


def statistic_families(stats: Sequence[str]) -> dict[str, list[str]]:
    """``stats`` (``sim/`` keys without the prefix) grouped by the families of their kinds
    (:func:`cselab.workbench.method_views.kind_families`, in its order; a statistic of no known kind
    under "other statistics"); empty families left out."""
    from .palettes import statistic_kind

    families = kind_families()
    out: dict[str, list[str]] = {}
    for stat in stats:
        kind = statistic_kind(stat)
        family = next((name for name, kinds in families.items() if kind in kinds), OTHER_FAMILY)
        out.setdefault(family, []).append(stat)
    return {name: out[name] for name in [*families, OTHER_FAMILY] if name in out}


def _thresholds(runs: Mapping[str, object], stats: Sequence[str]) -> dict[str, tuple[str, float]]:
    """``{stat: (symbol, value)}`` for the statistics of ``stats`` a run's config sets a threshold for."""
    found = {}
    for stat in stats:
        line = threshold(stat)
        if line is not None:
            component = stat.rpartition(".")[0]
            values = {read_config(path).get(component, {}).get(line.option) for path in runs.values()} - {None}
            if len(values) == 1:
                found[stat] = (line.symbol, float(values.pop()))
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
    require_columns(frame, stats, "plot_statistic_families")
    families = statistic_families(stats)
    parts = []
    for family, members in families.items():   # the run's records once per family, its others blanked
        part = frame[["step", *stats]].copy()
        part[[s for s in stats if s not in members]] = np.nan
        parts.append(part.assign(run=family))
    long = pd.concat(parts, ignore_index=True)
    fig = curves_over_steps(long, stats, stat_label_words(), "run", "mean cosine", None, None, None,
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
                    f"({threshold(stat).words})." for stat, (symbol, value) in lines.items())
