"""How each method's statistics are presented on the workbench side, declared beside nothing else of it.

A method declares on its class (cselab/model/methods/) what its statistics *are*: their words
(``stat_labels``) and the kind of pair each logged cosine is about (``stat_kinds``: "hard negative",
"queue negative", ...). How the figures and notes show them is declared here, one module per method
(this folder's ``<method>.py``, registered on import with :func:`register_view`), and read by the
shared plotting and analysis code through the functions below, which name no method:

* a statistic kind's **colour**, the same in every figure (:func:`statistic_colours`; the colour
  rules, ΔE ≥ 15 from every method, step and other statistic colour, are tests/test_palettes.py's),
  and its **family**, the panel it shares with the kinds about the same thing in
  ``plot_statistic_families`` (:func:`kind_families`);
* a statistic compared with a configured **threshold** (:func:`threshold`: ClusterNS's batch mean
  against σ, ``start_threshold``), drawn as a dotted line in its panel;
* a count **out of** a configured total (:func:`out_of`: ClusterNS's non-empty clusters of
  ``num_clusters``), said in its title;
* a **fill ramp** fixed by the configuration (:func:`is_fill_ramp`: a queue's fill), which a figure
  says in words instead of drawing;
* the **words** of the columns a method's analysis computes (:func:`column_words`: MixCSE's positive /
  random-negative / mixed-negative scores), which figures label them with.

The core's kinds (the positive pair, the in-batch negatives) are declared in :mod:`.core`, the
registry in :mod:`.registry`. Adding a method with a new statistic kind: its class declares the kind
(``stat_kinds``), a module here declares the kind's colour and family; no shared module changes
(tests/test_adding_a_method.py). Every module of this folder is imported below, in name order.
"""
from __future__ import annotations

import importlib
import pkgutil

from .registry import (OTHER_FAMILY, VIEWS, MethodView, OutOf, StatisticKind, Threshold, column_words, is_fill_ramp,
                       kind_families, out_of, register_view, statistic_colours, threshold)

__all__ = ["OTHER_FAMILY", "VIEWS", "MethodView", "OutOf", "StatisticKind", "Threshold", "column_words", "is_fill_ramp",
           "kind_families", "out_of", "register_view", "statistic_colours", "threshold"]

# The views register themselves on import: the core's first, then every module of this folder in name
# order (so the colours' and families' order is the same each run).
for _module in ["core", *sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in ("core", "registry"))]:
    importlib.import_module(f"{__name__}.{_module}")
