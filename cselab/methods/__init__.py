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

from .registry import (METHODS, MethodSpec, SimCSEParams, build_components, build_loss, register_method,
                       stat_labels)

__all__ = ["METHODS", "MethodSpec", "SimCSEParams", "build_components", "build_loss", "register_method",
           "stat_labels"]

# Method modules register themselves on import (one line per method module, alphabetical).
from . import apincse  # noqa: E402,F401
from . import clusterns  # noqa: E402,F401
from . import gs_infonce  # noqa: E402,F401
from . import mixcse  # noqa: E402,F401
from . import mlm  # noqa: E402,F401
