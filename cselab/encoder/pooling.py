"""Sentence poolers (SimCSE's ``--pooler_type`` choices) and SimCSE's MLP head.

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
========================  ====================================================================
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class BackboneOutput:
    """What a pooler sees: the last layer, optionally every layer, and the padding mask."""

    last_hidden_state: torch.Tensor          # (N, T, H)
    attention_mask: torch.Tensor             # (N, T)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # embeddings + one per layer
    input_ids: torch.Tensor | None = None


def masked_mean(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class Pooler(nn.Module):
    """Base class. ``needs_hidden_states`` asks the encoder to return every layer."""

    name = "base"
    needs_hidden_states = False

    def bind(self, encoder: nn.Module) -> None:
        """Called by the SentenceEncoder; poolers that run the backbone themselves (prompt
        denoising) keep a plain reference here (not a submodule, to avoid double registration)."""
        self.__dict__["encoder"] = encoder

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        raise NotImplementedError


class ClsPooler(Pooler):
    name = "cls"

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return out.last_hidden_state[:, 0]


class ClsBeforePooler(ClsPooler):
    name = "cls_before_pooler"


class AvgPooler(Pooler):
    name = "avg"

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return masked_mean(out.last_hidden_state, out.attention_mask)


class AvgFirstLastPooler(Pooler):
    name = "avg_first_last"
    needs_hidden_states = True

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        hs = out.hidden_states
        return masked_mean((hs[1] + hs[-1]) / 2.0, out.attention_mask)


class AvgTop2Pooler(Pooler):
    name = "avg_top2"
    needs_hidden_states = True

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        hs = out.hidden_states
        return masked_mean((hs[-1] + hs[-2]) / 2.0, out.attention_mask)


POOLERS: dict[str, type[Pooler]] = {
    cls.name: cls for cls in (ClsPooler, ClsBeforePooler, AvgPooler, AvgFirstLastPooler, AvgTop2Pooler)
}


def register_pooler(cls: type[Pooler]) -> type[Pooler]:
    """Class decorator: make a pooler selectable by ``pooler: <cls.name>``."""
    POOLERS[cls.name] = cls
    return cls


def build_pooler(name: str, hidden_size: int, num_layers: int, **options) -> Pooler:
    if name not in POOLERS:
        raise ValueError(f"unknown pooler {name!r}; choose one of {sorted(POOLERS)}")
    cls = POOLERS[name]
    if options or getattr(cls, "takes_sizes", False):
        return cls(hidden_size=hidden_size, num_layers=num_layers, **options)
    return cls()


class MLPHead(nn.Module):
    """SimCSE's ``MLPLayer``: dense + tanh over the [CLS] vector (used with the ``cls`` pooler)."""

    def __init__(self, hidden_size: int, initializer_range: float = 0.02):
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()
        # BERT's _init_weights, which SimCSE's cl_init applies to the head.
        nn.init.normal_(self.dense.weight, std=initializer_range)
        nn.init.zeros_(self.dense.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(x))
