"""The method registry itself (names → Component + params dataclass), apart from the package's
``__init__`` so that method modules import it without importing the package that imports them
(no import circle)."""
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

    @property
    def config_check(self) -> Callable[..., None] | None:
        """The component's check of its hyper-parameters at config time (``check_config``): called by
        :mod:`cselab.config` with the params and the config values its keyword-only parameters name."""
        return None if self.component is None else self.component.check_config

    @property
    def gradient_cache_check(self) -> Callable[..., None] | None:
        """Whether gradient caching (``mini_batch_size``) can run this method (``check_gradient_cache``),
        called like :attr:`config_check`; raises ValueError."""
        return None if self.component is None else self.component.check_gradient_cache


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
