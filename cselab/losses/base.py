"""The interface between the InfoNCE core and the methods built on it.

A method is one or more :class:`Component` objects. Each training step the core computes the
cosine matrix of the two views once and asks every component for a :class:`Contribution`:

* ``negatives`` — extra logit blocks appended to the InfoNCE denominator (each with a weight
  entering as ``log w`` and a direction: anchors from view 1, ``forward``, or view 2, ``reverse``);
* ``positive_mask`` — in-batch entries that count as additional positives (numerator);
* ``denominator_mask`` — in-batch entries removed from the denominator;
* ``terms`` — extra loss terms (already weighted), added to the total;
* ``stats`` — similarity statistics logged every logging step.

Components never touch the training loop. They may keep state in buffers (queues, centroids):
it is saved in checkpoints through ``state_dict`` like any module state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import torch
from torch import nn

Direction = Literal["forward", "reverse"]


@dataclass
class ContrastiveBatch:
    """Everything a loss may look at for one step.

    ``z1``/``z2`` are the training embeddings of the two views (B×D, rows aligned). In a
    multi-process run they are the gathered global batch and ``local_rows`` says which rows this
    process owns (anchors are taken from those rows only); ``None`` means all rows.
    """

    z1: torch.Tensor
    z2: torch.Tensor
    step: int = 0
    outputs1: object | None = None  # EncoderOutput of view 1 (hidden states etc.), when requested
    outputs2: object | None = None
    inputs: dict | None = None       # the tokenised 2B-row batch (for input-level terms such as MLM)
    local_rows: slice | None = None
    amp_dtype: torch.dtype | None = None  # the encoder's autocast dtype, for components that run encoder parts
    compute_stats: bool = True       # set by the loss: False on steps whose statistics nobody reads

    @property
    def batch_size(self) -> int:
        return self.z1.shape[0]

    def anchors(self, view: int = 1) -> torch.Tensor:
        z = self.z1 if view == 1 else self.z2
        return z if self.local_rows is None else z[self.local_rows]


@dataclass
class NegativeBlock:
    """Extra denominator logits for the anchors of one direction: ``logits`` is (rows × M) and
    already divided by the temperature; ``-inf`` entries are absent negatives."""

    logits: torch.Tensor
    name: str
    log_weight: float = 0.0
    direction: Direction = "forward"


@dataclass
class Contribution:
    negatives: list[NegativeBlock] = field(default_factory=list)
    positive_mask: torch.Tensor | None = None
    denominator_mask: torch.Tensor | None = None
    terms: dict[str, torch.Tensor] = field(default_factory=dict)
    # floats or detached 0-dim tensors (converted only on logging steps, so no device sync otherwise)
    stats: dict[str, float | torch.Tensor] = field(default_factory=dict)


class Component(nn.Module):
    """Base class of a method's piece. Subclasses set ``name`` and implement :meth:`contribute`.

    ``needs_hidden_states`` asks the trainer for every layer's hidden states;
    ``uses_reverse_direction`` makes the core also compute the view-2-anchored InfoNCE and
    average the two directions.
    """

    name: ClassVar[str] = "component"
    needs_hidden_states: ClassVar[bool] = False
    uses_reverse_direction: bool = False

    def setup(self, encoder: nn.Module, corpus: list[str] | None = None) -> None:
        """Called once before training with the SentenceEncoder and the training corpus.

        The base class keeps plain references (``self.encoder``, ``self.corpus``), deliberately not
        as submodules: the encoder's parameters must not be registered twice. Override and call
        ``super().setup(...)`` to build encoder-dependent state.
        """
        self.__dict__["encoder"] = encoder
        self.__dict__["corpus"] = corpus

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        raise NotImplementedError
