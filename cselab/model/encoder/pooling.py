"""Sentence poolers as registered plug-ins (SimCSE's ``--pooler_type`` choices and more) and SimCSE's
MLP head.

Every pooler maps the backbone's output to one vector per sentence:

========================  ====================================================================
``cls``                   [CLS] of the last layer; in training it always goes through the MLP
                          head; at evaluation the head is dropped when ``mlp_only_train`` (the
                          unsupervised SimCSE default), which then equals ``cls_before_pooler``
``cls_before_pooler``     [CLS] of the last layer, no head
``avg``                   attention-masked mean of the last layer
``avg_first_last``        masked mean of (hidden_states[1] + hidden_states[-1]) / 2 — SimCSE's
                          corrected variant (the first *transformer* layer, not the embeddings)
``avg_top2``              masked mean of the last two layers
``prompt``                PromptBERT's [MASK] vector (:mod:`.prompt`)
``layer_attention``       APINCSE's attention over every layer (:mod:`.layer_attention`)
========================  ====================================================================

A pooler declares what it needs and offers through class attributes and methods of
:class:`Pooler` — never probed with ``hasattr``: ``needs_hidden_states``, ``uses_mlp_head``,
``projects_cls`` with :meth:`Pooler.project_cls`, the input builders :meth:`Pooler.eval_inputs` and
:meth:`Pooler.training_inputs`, and an ``Options`` dataclass for ``pooler_options`` (validated when
a config is loaded, through :func:`pooler_options`). :func:`register_pooler` makes it selectable.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable, ClassVar

import torch
from torch import nn

from ..options import ConfigError, build_dataclass, shown


@dataclass
class BackboneOutput:
    """What a pooler sees: the last layer, optionally every layer, and the padding mask."""

    last_hidden_state: torch.Tensor          # (N, T, H)
    attention_mask: torch.Tensor             # (N, T)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # embeddings + one per layer
    input_ids: torch.Tensor | None = None

    def rows(self, index: slice) -> "BackboneOutput":
        """The same output restricted to some rows (e.g. one view of a training batch)."""
        return BackboneOutput(
            self.last_hidden_state[index], self.attention_mask[index],
            None if self.hidden_states is None else tuple(h[index] for h in self.hidden_states),
            None if self.input_ids is None else self.input_ids[index])

    def layer_cls(self) -> torch.Tensor:
        """(N, L+1, H) in fp32: the [CLS] vector of every hidden state (0 = embeddings … L)."""
        if self.hidden_states is None:
            raise ValueError("per-layer [CLS] vectors need every hidden state (output_hidden_states=True)")
        return torch.stack([h[:, 0] for h in self.hidden_states], dim=1).float()


def masked_mean(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


@dataclass(frozen=True)
class NoOptions:
    """The options of a pooler that takes none."""


class Pooler(nn.Module):
    """Base class of a pooler. Subclasses implement :meth:`forward` and are registered with
    :func:`register_pooler`, which sets ``name`` and ``Options``.

    Declared capabilities (class attributes):

    * ``needs_hidden_states`` — the encoder returns every layer's hidden states;
    * ``uses_mlp_head`` — SimCSE's MLP head goes on top in training (``cls``, ``prompt``);
    * ``projects_cls`` — :meth:`project_cls` exists: the pooler's own projection of a [CLS]
      vector, which APINCSE's interlayer negative can pass through (``layer_attention``).

    Input builders (override to rewrite the input, as the prompt pooler does):
    :meth:`eval_inputs` (N rows) and :meth:`training_inputs` (2N rows, view 1 then view 2).
    """

    name: ClassVar[str] = "base"
    Options: ClassVar[type] = NoOptions
    needs_hidden_states: ClassVar[bool] = False
    uses_mlp_head: ClassVar[bool] = False
    projects_cls: ClassVar[bool] = False

    def __init__(self, options=None, hidden_size: int = 0, num_layers: int = 0):
        super().__init__()
        self.options = options if options is not None else self.Options()
        self.hidden_size = hidden_size
        self.num_layers = num_layers

    def bind(self, encoder: nn.Module) -> None:
        """Called by the SentenceEncoder; poolers that run the backbone themselves (prompt
        denoising) keep a plain reference here (not a submodule, to avoid double registration)."""
        self.__dict__["encoder"] = encoder

    def eval_inputs(self, tokenizer, sentences: list[str], max_length: int | None) -> dict:
        """Tokenised evaluation inputs for ``sentences`` (one row each)."""
        enc = tokenizer(list(sentences), padding=True, truncation=max_length is not None, max_length=max_length,
                        return_tensors="pt")
        return dict(enc)

    def training_inputs(self, tokenizer, sentences: list[str], max_length: int | None) -> dict:
        """The 2N-row training batch: each sentence twice (view 1 rows, then view 2 rows); the
        two views differ only by dropout."""
        enc = self.eval_inputs(tokenizer, sentences, max_length)
        return {k: torch.cat([v, v], dim=0) for k, v in enc.items()}

    def project_cls(self, cls: torch.Tensor, out: BackboneOutput) -> torch.Tensor:
        """The embedding this pooler would give if ``cls`` were the top layer's [CLS] (only for
        poolers that declare ``projects_cls``)."""
        raise NotImplementedError(f"pooler {self.name!r} has no [CLS] projection")

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        raise NotImplementedError


POOLERS: dict[str, type[Pooler]] = {}


def register_pooler(name: str, options: type = NoOptions) -> Callable[[type[Pooler]], type[Pooler]]:
    """Class decorator: make a :class:`Pooler` selectable as ``pooler: <name>``, with ``options`` the
    dataclass that ``pooler_options`` fills."""

    def wrap(cls: type[Pooler]) -> type[Pooler]:
        # a reload of the pooler's module (IPython's autoreload) defines the same class again and
        # replaces it; another class under a taken name is refused
        old = POOLERS.get(name)
        if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
            raise ValueError(f"pooler {name!r} is registered twice")
        cls.name, cls.Options = name, options
        POOLERS[name] = cls
        return cls

    return wrap


def rewrites_inputs(name: str) -> bool:
    """Whether pooler ``name`` builds its own input rows (overrides :meth:`Pooler.eval_inputs` or
    :meth:`Pooler.training_inputs`, as the prompt pooler's templates do); False for an unknown name."""
    cls = POOLERS.get(name)
    return cls is not None and (cls.eval_inputs is not Pooler.eval_inputs
                                or cls.training_inputs is not Pooler.training_inputs)


def pooler_options(name: str, options: dict | None):
    """The validated options dataclass of pooler ``name`` (a :class:`ConfigError` naming the key)."""
    if name not in POOLERS:
        raise ConfigError(f"pooler: must be one of {sorted(POOLERS)}, got {shown(name)}")
    cls = POOLERS[name]
    if options and not fields(cls.Options):
        raise ConfigError(f"pooler_options: pooler {name!r} takes no options, got {shown(options)}")
    return build_dataclass(cls.Options, options, "pooler_options")


def build_pooler(name: str, hidden_size: int, num_layers: int, options: dict | None = None) -> Pooler:
    validated = pooler_options(name, options)
    return POOLERS[name](validated, hidden_size=hidden_size, num_layers=num_layers)


@register_pooler("cls")
class ClsPooler(Pooler):
    uses_mlp_head = True

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return out.last_hidden_state[:, 0]


@register_pooler("cls_before_pooler")
class ClsBeforePooler(Pooler):
    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return out.last_hidden_state[:, 0]


@register_pooler("avg")
class AvgPooler(Pooler):
    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return masked_mean(out.last_hidden_state, out.attention_mask)


@register_pooler("avg_first_last")
class AvgFirstLastPooler(Pooler):
    needs_hidden_states = True

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        hs = out.hidden_states
        return masked_mean((hs[1] + hs[-1]) / 2.0, out.attention_mask)


@register_pooler("avg_top2")
class AvgTop2Pooler(Pooler):
    needs_hidden_states = True

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        hs = out.hidden_states
        return masked_mean((hs[-1] + hs[-2]) / 2.0, out.attention_mask)


class MLPHead(nn.Module):
    """SimCSE's ``MLPLayer``: dense + tanh over the pooled vector (poolers with ``uses_mlp_head``)."""

    def __init__(self, hidden_size: int, initializer_range: float = 0.02):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()
        # BERT's _init_weights, which SimCSE's cl_init applies to the head.
        nn.init.normal_(self.dense.weight, std=initializer_range)
        nn.init.zeros_(self.dense.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(x))
