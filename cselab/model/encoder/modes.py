"""The modes a pass of a :class:`~cselab.model.encoder.SentenceEncoder` runs in, besides autograd:

* dropout (``dropout_mode``): off (evaluation), on (training), or as it is, optionally from a
  private random stream so that an analysis in the middle of training leaves the run's stream alone;
* the evaluation path's weights (``eval_weights``): fp32 as trained, or a cached bf16/fp16 copy of
  the backbone (``eval_precision``, resolved per pass on the encoder's device).
"""
from __future__ import annotations

import contextlib
import copy

import torch
from torch import nn

from ..utils import precision_name, resolve_precision


class PassModes:
    """Dropout and evaluation weights, mixed into :class:`~cselab.model.encoder.SentenceEncoder` (it uses
    the encoder's ``backbone``, ``device``, ``eval_precision`` and the two fields the encoder
    starts empty: ``_eval_copy``, the cached low-precision backbone, and ``_cast_outputs``, set
    inside :meth:`eval_weights` so that ``run_backbone`` casts the states back to fp32)."""

    def resolved_eval_precision(self) -> str:
        """``fp32`` / ``bf16`` / ``fp16``: what :attr:`eval_precision` means on this device."""
        return precision_name(resolve_precision(self.eval_precision, self.device, evaluation=True))

    # ------------------------------------------------------------------ low-precision evaluation
    def weights_changed(self) -> None:
        """Say that the fp32 weights were updated in place: the next low-precision pass makes a new
        copy. The trainer calls it after every optimizer step, because a fused optimizer (AdamW with
        ``fused=True``, cselab's on CPU and CUDA) writes the weights without bumping their version
        counters, so the key below alone would keep serving the weights of before the step."""
        self._eval_copy = None

    def _backbone_copy(self, dtype: torch.dtype) -> nn.Module:
        """The backbone with its floating-point weights in ``dtype`` (no gradients), made once and
        kept while the fp32 weights are unchanged: the key holds every tensor's storage, device and
        version counter, which ``load_state_dict``, ``.to()`` or an unfused optimizer step changes
        (a fused step does not: :meth:`weights_changed`)."""
        tensors = [*self.backbone.parameters(), *self.backbone.buffers()]
        key = (dtype, tuple((id(t), t.data_ptr(), t.device, t._version) for t in tensors))
        if self._eval_copy is not None and self._eval_copy[0] == key:
            return self._eval_copy[1]
        self._eval_copy = None   # free the stale copy before making the new one
        # The memo hands deepcopy the cast tensors, so the fp32 weights are never copied whole.
        memo = {}
        for name, t in [*self.backbone.named_parameters(remove_duplicate=False),
                        *self.backbone.named_buffers(remove_duplicate=False)]:
            if id(t) not in memo:
                cast = t.detach().to(dtype) if t.is_floating_point() else t.detach().clone()
                memo[id(t)] = nn.Parameter(cast, requires_grad=False) if isinstance(t, nn.Parameter) else cast
        backbone = copy.deepcopy(self.backbone, memo)
        self._eval_copy = (key, backbone)
        return backbone

    @contextlib.contextmanager
    def eval_weights(self, dtype: torch.dtype | None):
        """Inside the block the encoder's backbone is a copy with its weights in ``dtype`` (bf16,
        fp16), without autocast: a bf16 product needs no casts of the activations. The backbone's
        states are cast back to fp32 before the pooler, so pooling, the head and every cosine run
        in fp32 on the encoder's own (fp32) pooler and head. The encoder's fp32 weights, which
        training updates, are never touched. ``None``: the fp32 encoder as it is."""
        if dtype is None:
            yield self
            return
        original = self._modules["backbone"]
        self._modules["backbone"] = self._backbone_copy(dtype).train(original.training)   # dropout as the encoder's
        self._cast_outputs = True
        try:
            yield self
        finally:
            self._modules["backbone"] = original
            self._cast_outputs = False

    # ------------------------------------------------------------------ dropout
    @contextlib.contextmanager
    def dropout_mode(self, dropout: bool | None = False, seed: int | None = None):
        """Evaluation mode (``dropout=False``), training mode (dropout on) or the current mode
        (``None``) for the block; with a ``seed`` the dropout draws come from a private RNG stream
        (CPU and CUDA) so that an analysis run mid-training leaves the run's random stream
        untouched. The previous mode is restored."""
        was_training = self.training
        self.train(was_training if dropout is None else dropout)
        try:
            if seed is None:
                yield
            else:
                device = self.device
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    torch.manual_seed(seed)
                    yield
        finally:
            self.train(was_training)
