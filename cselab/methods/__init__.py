"""The method registry: ``method: <name>`` in a config selects registered components.

A method registers a :class:`~cselab.losses.base.Component` subclass together with a dataclass of
its hyper-parameters; the config section named after the method fills that dataclass::

    method: [mixcse, gs_infonce]
    mixcse: {mix_lambda: 0.2}
    gs_infonce: {noise_ratio: 3.0}

``simcse`` is the core alone (no component). To add a method: write one module with a params
dataclass and a Component, decorate it with :func:`register_method`, import it below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..losses.base import Component
from ..losses.infonce import CORE_STAT_LABELS, ContrastiveLoss


@dataclass(frozen=True)
class MethodSpec:
    name: str
    params: type                                  # a dataclass of hyper-parameters
    component: type[Component] | None             # None: the core alone (simcse)
    summary: str = ""

    def build(self, params) -> Component | None:
        return None if self.component is None else self.component(params)

    def check_config(self, params, cfg) -> None:
        """Checks that need the whole training config (batch size, ...); raise ValueError."""
        if self.component is not None:
            self.component.check_config(params, cfg)

    def check_gradient_cache(self, params, cfg) -> None:
        """Whether gradient caching (``mini_batch_size``) can run this method; raise ValueError."""
        if self.component is not None:
            self.component.check_gradient_cache(params, cfg)


METHODS: dict[str, MethodSpec] = {}


def register_method(name: str, params: type, summary: str = "") -> Callable[[type[Component]], type[Component]]:
    """Class decorator for a :class:`Component`: selectable as ``method: <name>``, its
    hyper-parameters the config section ``<name>:`` (a ``params`` dataclass). Sets the class's
    ``name``, under which its loss terms and statistics are logged."""

    def wrap(component: type[Component]) -> type[Component]:
        _register(MethodSpec(name, params, component, summary or (component.__doc__ or "").strip().split("\n")[0]))
        component.name = name
        return component

    return wrap


def _register(spec: MethodSpec) -> None:
    if spec.name in METHODS:
        raise ValueError(f"method {spec.name!r} is registered twice")
    METHODS[spec.name] = spec


@dataclass
class SimCSEParams:
    """Plain SimCSE has no hyper-parameters beyond the core's (temperature, ...)."""


_register(MethodSpec("simcse", SimCSEParams, None,
                     "Unsupervised SimCSE: InfoNCE with dropout positives and in-batch negatives"))


def build_components(methods: list[str], params: dict[str, object]) -> list[Component]:
    components = []
    for name in methods:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; choose from {sorted(METHODS)}")
        component = METHODS[name].build(params[name])
        if component is not None:
            components.append(component)
    return components


def build_loss(cfg) -> ContrastiveLoss:
    """The loss of a training config (anything with ``temperature``, ``method``, ``method_params``
    and ``symmetric``, e.g. a :class:`~cselab.config.TrainConfig`)."""
    return ContrastiveLoss(cfg.temperature, build_components(cfg.method, cfg.method_params), cfg.symmetric)


def stat_labels() -> dict[str, str]:
    """Words for every similarity statistic that training logs (``sim/<key>`` in metrics.jsonl):
    the core's and each method's, the latter as ``<method>.<stat>``."""
    labels = dict(CORE_STAT_LABELS)
    for spec in METHODS.values():
        if spec.component is not None:
            labels.update({f"{spec.name}.{k}": v for k, v in spec.component.stat_labels.items()})
    return labels


# Method modules register themselves on import (one line per method module, alphabetical).
from . import apincse  # noqa: E402,F401
from . import clusterns  # noqa: E402,F401
from . import gs_infonce  # noqa: E402,F401
from . import mixcse  # noqa: E402,F401
from . import mlm  # noqa: E402,F401
