"""The method registry itself (names → Component + params dataclass), apart from the package's
``__init__`` so that method modules import it without importing the package that imports them
(no import circle)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..losses.base import Component
from ..losses.momentum import MOMENTUM_STEP_COST
from ..losses.infonce import CORE_STAT_KINDS, CORE_STAT_LABELS, ContrastiveLoss


@dataclass(frozen=True)
class Identity:
    """What a method is, as every reader outside its module sees it (figures, tables, the cost
    model, the docs' method table). A component declares it as class attributes
    (:class:`~cselab.model.losses.base.Component`); the registry reads them into this record."""

    display_name: str
    citation: str = ""
    color_slot: int | None = None     # index into cselab.workbench.plots.style.METHOD_PALETTE; None: a hashed colour
    cost_factor: float = 0.0          # extra step time over SimCSE, an estimate
    stat_labels: Mapping[str, str] = field(default_factory=dict)
    key_labels: Mapping[str, str] = field(default_factory=dict)
    term_labels: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()     # spellings in run labels, lower-case letters and digits only
    stat_kinds: Mapping[str, str] = field(default_factory=dict)
    term_titles: Mapping[str, str] = field(default_factory=dict)
    auxiliary: bool = False           # a term beside any method (masked LM), not a method of its own


def _identity(name: str, component: type[Component]) -> Identity:
    cost = component.cost_factor
    if component.momentum_encoder:   # its graph-free pass over the batch, plus the EMA
        cost += MOMENTUM_STEP_COST
    display = component.display_name or name
    titles = {term: component.term_titles.get(term) or f"{display}: {words}"
              for term, words in {**component.term_labels, **component.term_titles}.items()}
    return Identity(display, component.citation, component.color_slot, cost,
                    dict(component.stat_labels), dict(component.key_labels), dict(component.term_labels),
                    (alias(name),), dict(component.stat_kinds), titles, component.auxiliary)


def alias(text: str) -> str:
    """A spelling of a method as run labels write it: lower case, letters and digits only
    (``gs_infonce`` and ``GS-InfoNCE`` → ``gsinfonce``; ``++`` reads ``pp``)."""
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("++", "pp"))


@dataclass(frozen=True)
class MethodSpec:
    name: str
    params: type                                  # a dataclass of hyper-parameters
    component: type[Component] | None             # None: the core alone (simcse)
    summary: str = ""
    identity: Identity | None = None              # None: read from the component

    @property
    def about(self) -> Identity:
        return self.identity if self.identity is not None else _identity(self.name, self.component)

    @property
    def display_name(self) -> str:
        return self.about.display_name

    def build(self, params) -> Component | None:
        return None if self.component is None else self.component(params)

    @property
    def config_check(self) -> Callable[..., None] | None:
        """The component's check of its hyper-parameters at config time (``check_config``): called by
        :mod:`cselab.model.config` with the params and the config values its keyword-only parameters name."""
        return None if self.component is None else self.component.check_config

    def check_distributed(self, params) -> None:
        """Raise ValueError when a multi-process run cannot run this method (``Component.check_distributed``)."""
        if self.component is not None:
            self.component.check_distributed(params)

    def smoke_batch_size(self, params, batch_size: int) -> int:
        """The smoke profile's batch for this method (``Component.smoke_batch_size``)."""
        return batch_size if self.component is None else self.component.smoke_batch_size(params, batch_size)

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


def _redefined(old: type | None, new: type | None) -> bool:
    """Whether ``new`` is ``old`` defined again by the same line of code (``importlib.reload`` of its
    module, IPython's autoreload): that replaces the registration; any other second one is refused."""
    return (old is not None and new is not None
            and (old.__module__, old.__qualname__) == (new.__module__, new.__qualname__))


def _register(spec: MethodSpec) -> None:
    if spec.name in METHODS and not _redefined(METHODS[spec.name].component, spec.component):
        raise ValueError(f"method {spec.name!r} is registered twice")
    METHODS[spec.name] = spec


@dataclass
class SimCSEParams:
    """Plain SimCSE has no hyper-parameters beyond the core's (temperature, ...)."""


_register(MethodSpec("simcse", SimCSEParams, None,
                     "Unsupervised SimCSE: InfoNCE with dropout positives and in-batch negatives",
                     Identity("SimCSE", "Gao, Yao & Chen, \"SimCSE: Simple Contrastive Learning of Sentence "
                              "Embeddings\", EMNLP 2021, eq. 1", color_slot=0, aliases=("simcse",))))


@dataclass(frozen=True)
class MethodFamily:
    """A paper's method made of several registered components (APINCSE: ``augmented_positive`` and
    ``interlayer_negative``). ``parts`` maps the paper's abbreviation of each part to its component:
    a run label ``<family>-no_<abbreviation>`` is the family without that part (its ablation).
    ``ablation_names`` gives each single remaining part's name as the paper writes it."""

    name: str
    parts: Mapping[str, str]
    display_name: str
    citation: str = ""
    color_slot: int | None = None

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(sorted(self.parts.values()))


FAMILIES: dict[str, MethodFamily] = {}


def register_family(family: MethodFamily) -> MethodFamily:
    """Declare, from the family's own package, that its components together are one method."""
    # the same declaration again (a reload of the family's package) replaces it
    if (family.name in FAMILIES and FAMILIES[family.name] != family) or family.name in METHODS:
        raise ValueError(f"method family {family.name!r} is registered twice")
    FAMILIES[family.name] = family
    return family


def is_auxiliary(name: str) -> bool:
    """Whether a registered method is a term beside any method (``Component.auxiliary``: the masked-LM
    term), which a run's method is named and grouped without."""
    spec = METHODS.get(name)
    return spec is not None and spec.about.auxiliary


def family_of(methods) -> MethodFamily | None:
    """The family a set of methods makes up exactly (auxiliary terms aside), else None."""
    chosen = tuple(sorted(m for m in methods if not is_auxiliary(m)))
    return next((f for f in FAMILIES.values() if f.methods == chosen), None)


def display_names() -> dict[str, str]:
    """Every registered method's display name by config name, and every family's by its name and
    by its parts joined with ``+`` (as a run's ``method`` list reads)."""
    names = {name: spec.display_name for name, spec in METHODS.items()}
    for family in FAMILIES.values():
        names[family.name] = family.display_name
        names["+".join(family.methods)] = family.display_name
    return names


def color_slots() -> dict[str, int]:
    """The palette slot of every method and family that declares one."""
    slots = {name: spec.about.color_slot for name, spec in METHODS.items()}
    slots.update({f.name: f.color_slot for f in FAMILIES.values()})
    return {k: v for k, v in slots.items() if v is not None}


def aliases() -> list[tuple[str, str]]:
    """``(spelling, method)`` pairs for reading run labels, longest spelling first, so that a
    method whose name contains another's (``esimcse`` ⊃ ``simcse``) is found first."""
    pairs = {a: name for name, spec in METHODS.items() for a in spec.about.aliases}
    pairs.update({alias(f.name): f.name for f in FAMILIES.values()})
    return sorted(pairs.items(), key=lambda p: (-len(p[0]), p[0]))


def key_labels() -> dict[str, str]:
    """Words for every method's hyper-parameters (``<method>.<key>``) and loss terms
    (``loss/<method>.<term>``), as the methods declare them."""
    labels = {}
    for name, spec in METHODS.items():
        about = spec.about
        labels.update({f"{name}.{k}": v for k, v in about.key_labels.items()})
        labels.update({f"loss/{name}.{k}": v for k, v in about.term_labels.items()})
    return labels


def term_titles() -> dict[str, str]:
    """Titles of every method's loss terms in panels of their own (``loss/<method>.<term>``), as the
    methods declare them (``term_titles``; else "<display name>: <term label>")."""
    return {f"loss/{name}.{term}": title for name, spec in METHODS.items()
            for term, title in spec.about.term_titles.items()}


def stat_kinds() -> dict[str, str]:
    """The kind of pair of every logged cosine that declares one: the core's under their own keys,
    each method's as ``<method>.<stat>`` (``clusterns.hard_neg_cos`` → "hard negative")."""
    kinds = dict(CORE_STAT_KINDS)
    for spec in METHODS.values():
        kinds.update({f"{spec.name}.{k}": v for k, v in spec.about.stat_kinds.items()})
    return kinds


def cost_factors() -> dict[str, float]:
    """Each method's estimated extra step time over SimCSE, as it declares it."""
    return {name: spec.about.cost_factor for name, spec in METHODS.items()}


def method_table() -> str:
    """The Markdown table of the methods (``method:`` key, what it adds, the paper), from the
    registry: what the docs' method table must read."""
    rows = ["| `method:` | what it adds to the InfoNCE core | paper |", "|---|---|---|"]
    for name in sorted(METHODS, key=lambda n: (n != "simcse", n)):
        spec = METHODS[name]
        rows.append(f"| `{name}` | {spec.summary} | {spec.about.citation} |")
    return "\n".join(rows)


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
    and ``symmetric``, e.g. a :class:`~cselab.model.config.TrainConfig`)."""
    return ContrastiveLoss(cfg.temperature, build_components(cfg.method, cfg.method_params), cfg.symmetric)


def stat_labels() -> dict[str, str]:
    """Words for every similarity statistic that training logs (``sim/<key>`` in metrics.jsonl):
    the core's and each method's, the latter as ``<method>.<stat>``."""
    labels = dict(CORE_STAT_LABELS)
    for spec in METHODS.values():
        labels.update({f"{spec.name}.{k}": v for k, v in spec.about.stat_labels.items()})
    return labels
