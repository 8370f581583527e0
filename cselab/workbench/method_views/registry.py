"""The registry of the methods' views (:mod:`cselab.workbench.method_views`): what a view declares
and the lookups the shared plotting and analysis code reads."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Mapping

# The family of a statistic no view names (plot_statistic_families' last panel).
OTHER_FAMILY = "other statistics"


@dataclass(frozen=True)
class StatisticKind:
    """How a kind of statistic is drawn: its colour in every figure and the family of kinds it shares
    a panel with."""
    colour: str
    family: str


@dataclass(frozen=True)
class Threshold:
    """A configured threshold a statistic is compared with: its key in the method's config section,
    its symbol and what crossing it does (the figure note's words)."""
    option: str
    symbol: str
    words: str


@dataclass(frozen=True)
class OutOf:
    """A configured total a count is out of: its key in the method's config section and its symbol."""
    option: str
    symbol: str


@dataclass(frozen=True)
class MethodView:
    """One method's presentation (``method``: its registered name, the ``<method>.`` of its statistic
    keys; the core's view is :data:`CORE`'s). ``kinds``: the statistic kinds it brings (a kind its
    class names in ``stat_kinds``), ``{kind: StatisticKind}``; ``thresholds``, ``out_of`` and
    ``fill_ramps``: its statistics by name (without the ``<method>.`` prefix); ``column_words``: the
    words figures label the columns of its analyses with (``{column: words}``, the columns of
    ``cselab.workbench.analysis.<method>``'s frames, which are not logged statistics)."""
    method: str
    kinds: Mapping[str, StatisticKind] = field(default_factory=dict)
    thresholds: Mapping[str, Threshold] = field(default_factory=dict)
    out_of: Mapping[str, OutOf] = field(default_factory=dict)
    fill_ramps: tuple[str, ...] = ()
    column_words: Mapping[str, str] = field(default_factory=dict)


VIEWS: dict[str, MethodView] = {}


_DECLARED_IN: dict[str, str] = {}   # method → the module that registered its view


def register_view(view: MethodView) -> MethodView:
    """Add a method's view, from the module that declares it (that module reloaded, IPython's
    autoreload, replaces it); a second view of one method from another module, or a kind another
    method's view draws in another colour or family, is refused (one meaning per colour)."""
    module = sys._getframe(1).f_globals.get("__name__", "")
    if view.method in VIEWS and _DECLARED_IN[view.method] != module:
        raise ValueError(f"method {view.method!r} has a view already, in {_DECLARED_IN[view.method]}")
    for kind, drawn in view.kinds.items():
        other = next((v.method for v in VIEWS.values() if v.method != view.method
                      and kind in v.kinds and v.kinds[kind] != drawn), None)
        if other is not None:
            raise ValueError(f"{view.method}'s view draws the kind {kind!r} as {drawn}, {other}'s as "
                             f"{VIEWS[other].kinds[kind]}: a kind has one colour and one family")
    VIEWS[view.method] = view
    _DECLARED_IN[view.method] = module
    return view


def statistic_colours() -> dict[str, str]:
    """``{kind: colour}`` of every kind a view declares, in registration order (the core's first)."""
    return {kind: drawn.colour for view in VIEWS.values() for kind, drawn in view.kinds.items()}


def kind_families() -> dict[str, tuple[str, ...]]:
    """``{family: its kinds}``, the families in the order views first name them (the core's first)."""
    families: dict[str, list[str]] = {}
    for view in VIEWS.values():
        for kind, drawn in view.kinds.items():
            if kind not in families.setdefault(drawn.family, []):
                families[drawn.family].append(kind)
    return {family: tuple(kinds) for family, kinds in families.items()}


def column_words() -> dict[str, str]:
    """``{column: words}`` of the analyses' columns every view names, in registration order."""
    return {column: words for view in VIEWS.values() for column, words in view.column_words.items()}


def _declared(stat: str, part: str):
    method, _, name = str(stat).removeprefix("sim/").rpartition(".")
    view = VIEWS.get(method)
    return getattr(view, part).get(name) if view is not None else None


def threshold(stat: str) -> Threshold | None:
    """The threshold a ``<method>.<stat>`` key is compared with, or ``None``."""
    return _declared(stat, "thresholds")


def out_of(stat: str) -> OutOf | None:
    """The configured total a ``<method>.<stat>`` count is out of, or ``None``."""
    return _declared(stat, "out_of")


def is_fill_ramp(stat: str) -> bool:
    """Whether a ``<method>.<stat>`` key is a fill ramp its method's configuration fixes."""
    method, _, name = str(stat).removeprefix("sim/").rpartition(".")
    view = VIEWS.get(method)
    return view is not None and name in view.fill_ramps
