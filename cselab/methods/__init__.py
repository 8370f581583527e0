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


@dataclass(frozen=True)
class MethodSpec:
    name: str
    params: type            # a dataclass of hyper-parameters
    build: Callable[..., Component | None]
    summary: str = ""


METHODS: dict[str, MethodSpec] = {}


def register_method(name: str, params: type, summary: str = "") -> Callable:
    """Decorator for a Component class (or a factory taking the params instance)."""

    def wrap(build):
        if name in METHODS:
            raise ValueError(f"method {name!r} is registered twice")
        METHODS[name] = MethodSpec(name, params, build, summary or (build.__doc__ or "").strip().split("\n")[0])
        return build

    return wrap


@dataclass
class SimCSEParams:
    """Plain SimCSE has no hyper-parameters beyond the core's (temperature, ...)."""


register_method("simcse", SimCSEParams, "Unsupervised SimCSE: InfoNCE with dropout positives and in-batch negatives")(
    lambda params: None)


def build_components(methods: list[str], params: dict[str, object]) -> list[Component]:
    components = []
    for name in methods:
        if name not in METHODS:
            raise ValueError(f"unknown method {name!r}; choose from {sorted(METHODS)}")
        component = METHODS[name].build(params[name])
        if component is not None:
            components.append(component)
    return components


# Method modules register themselves on import (one line per method module, alphabetical).
from . import apincse  # noqa: E402,F401
from . import clusterns  # noqa: E402,F401
from . import gs_infonce  # noqa: E402,F401
from . import mixcse  # noqa: E402,F401
from . import mlm  # noqa: E402,F401
