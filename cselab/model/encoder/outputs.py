"""What one forward pass of a :class:`~cselab.model.encoder.SentenceEncoder` returns."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .pooling import BackboneOutput


@dataclass
class EncoderOutput:
    """One forward pass over N rows (2B in training: both views stacked)."""

    embeddings: torch.Tensor          # (N, D) embeddings of the path that produced them
    pooled: torch.Tensor              # (N, H) pooler output before the head
    backbone: BackboneOutput          # hidden states and mask, for components that need them

    def rows(self, index: slice) -> "EncoderOutput":
        return EncoderOutput(self.embeddings[index], self.pooled[index], self.backbone.rows(index))

    def split(self, n: int) -> tuple["EncoderOutput", "EncoderOutput"]:
        """``(rows 0 … n−1, rows n …)``: view 1 and view 2 of a training batch of n sentences."""
        return self.rows(slice(0, n)), self.rows(slice(n, None))

    def layer_cls(self) -> torch.Tensor:
        """(N, L+1, H) fp32 [CLS] vectors of every hidden state (see :meth:`BackboneOutput.layer_cls`)."""
        return self.backbone.layer_cls()
