"""The method registry: ``method: <name>`` in a config selects registered components.

A method registers a :class:`~cselab.model.losses.base.Component` subclass together with a dataclass of
its hyper-parameters; the config section named after the method fills that dataclass::

    method: [mixcse, gs_infonce]
    mixcse: {mix_lambda: 0.2}
    gs_infonce: {noise_ratio: 3.0}

``simcse`` is the core alone (no component). To add a method: write one module (or package) in
this folder with a params dataclass and a Component, decorate it with :func:`register_method` and
declare its identity on the class; every module here is imported below, so nothing else changes.
"""
from __future__ import annotations

import importlib
import pkgutil

from .registry import (FAMILIES, METHODS, Identity, MethodFamily, MethodSpec, SimCSEParams, aliases,
                       build_components, build_loss, color_slots, cost_factors, display_names, family_of,
                       is_auxiliary, key_labels, method_table, register_family, register_method, stat_kinds,
                       stat_labels, term_titles)

__all__ = ["FAMILIES", "METHODS", "Identity", "MethodFamily", "MethodSpec", "SimCSEParams", "aliases",
           "build_components", "build_loss", "color_slots", "cost_factors", "display_names", "family_of",
           "is_auxiliary", "key_labels", "method_table", "register_family", "register_method", "stat_kinds",
           "stat_labels", "term_titles"]

# Method modules register themselves on import: every module and package of this folder, in name
# order (so registration, and with it every table read from the registry, is the same each run).
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "registry":
        importlib.import_module(f"{__name__}.{_module}")
