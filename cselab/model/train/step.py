"""One training step's loss and its backward pass: plain, or with gradient caching.

:func:`training_loss` builds this process's two views (the pooler's tokenised rows, then each
component's ``build_views`` hook: ``ContrastiveLoss.training_inputs``), encodes them, gathers the global batch
in a multi-process run (:mod:`.ddp`), runs the InfoNCE core with the method's components, and
returns the loss with a ``backward(scale)`` to call once the loss is known to be finite.

Gradient caching (``mini_batch_size``; Gao, Zhang, Han & Callan, "Scaling Deep Contrastive Learning
Batch Size under Memory Limited Setup", RepL4NLP 2021) makes the memory of a step that of one chunk
of sentences, whatever the batch:

1. encode the sentences in chunks *without* a graph, recording the random state (CPU and CUDA)
   each chunk starts from, and keep the embeddings of both views — and, when a component reads
   hidden states, every layer's [CLS] vector — as leaf tensors;
2. compute the loss **once** on the whole batch from those leaves and backpropagate it to them:
   the loss's gradients w.r.t. the embeddings (and the per-layer [CLS]), and every per-step state
   change of the components (noise draw, centroid initialisation and update, queue push) happens
   exactly once per optimizer step, as without caching;
3. re-encode each chunk with the random state restored — the same dropout masks — and backpropagate
   ⟨cached gradient, recomputed output⟩ through the encoder, accumulating parameter gradients (in a
   DDP run all chunks but the last under ``no_sync``).

With dropout the masks are drawn per chunk rather than for the whole batch, so a cached run is a
different (equally valid) draw from an uncached one; with dropout 0 the gradients are equal up to
floating-point rounding (tests/test_gradient_cache.py). Components that read more of the encoder's
output than the embeddings and per-layer [CLS], or run the encoder inside the loss, refuse caching
when the config is loaded (``Component.check_gradient_cache``).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from ..encoder.outputs import EncoderOutput
from ..encoder.pooling import BackboneOutput
from ..losses import ContrastiveBatch, ContrastiveLoss
from ..losses.infonce import LossOutput
from ..utils import autocast, device_rng_state, set_device_rng_state
from .ddp import Processes, gathered_batch, no_sync

Scale = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class StepLoss:
    """The loss of one step (``result``: total, parts, statistics; ``batch``: what the loss saw)
    and the backward pass to run for it. ``scale`` maps the loss to what is backpropagated (the
    world size and the fp16 gradient scaler multiply it)."""

    result: LossOutput
    batch: ContrastiveBatch
    _backward: Callable[[Scale], None]
    recompute_error: list[float] = field(default_factory=list)  # filled when check_recompute is on
    leaves: dict[str, torch.Tensor] = field(default_factory=dict)  # gradient caching: z1, z2 (cls1, cls2)

    def backward(self, scale: Scale = lambda loss: loss) -> None:
        self._backward(scale)


def training_loss(model: nn.Module, encoder, loss_fn: ContrastiveLoss, sentences: list[str], *, step: int,
                  max_len: int, amp_dtype: torch.dtype | None, processes: Processes | None = None,
                  compute_stats: bool = True, mini_batch_size: int | None = None, retain_embedding_grad: bool = False,
                  check_recompute: bool = False) -> StepLoss:
    """The loss of one step on this process's ``sentences``.

    ``model`` is what the forward pass calls (the DDP wrapper or the encoder itself), ``encoder``
    the :class:`~cselab.model.encoder.SentenceEncoder` inside it. ``mini_batch_size``: gradient caching
    in chunks of that many sentences (off when None or not smaller than the batch).
    ``retain_embedding_grad``: keep ∂L/∂z on ``batch.z1``/``batch.z2`` for the gradient-norm probe.
    ``check_recompute``: record, per chunk, the largest difference between the embeddings of the
    two encoder passes of gradient caching (0 when the dropout masks were replayed exactly).
    """
    processes = processes or Processes(device=encoder.device)
    if mini_batch_size is None or mini_batch_size >= len(sentences):
        return _plain(model, encoder, loss_fn, sentences, step, max_len, amp_dtype, processes, compute_stats,
                      retain_embedding_grad)
    return _cached(model, encoder, loss_fn, sentences, step, max_len, amp_dtype, processes, compute_stats,
                   retain_embedding_grad, mini_batch_size, check_recompute)


def _plain(model, encoder, loss_fn, sentences, step, max_len, amp_dtype, processes, compute_stats,
           retain) -> StepLoss:
    inputs = loss_fn.training_inputs(encoder, sentences, max_len)   # the views: the methods' hook
    with autocast(encoder.device, amp_dtype):
        out = model(inputs, output_hidden_states=loss_fn.needs_hidden_states)
    view1, view2 = out.split(len(sentences))
    # The loss runs in fp32 whatever the encoder's precision: logits are divided by τ = 0.05.
    batch = gathered_batch(view1.embeddings.float(), view2.embeddings.float(), processes, step=step,
                           outputs1=view1, outputs2=view2, inputs=inputs, amp_dtype=amp_dtype)
    if retain:
        batch.z1.retain_grad()
        batch.z2.retain_grad()
    result = loss_fn(batch, compute_stats=compute_stats)

    def backward(scale: Scale) -> None:
        scale(result.loss).backward()

    return StepLoss(result, batch, backward)


@dataclass
class _Chunk:
    """What the graph-free pass keeps of one chunk: its inputs, the random state it started from
    and its outputs (embeddings of both views; per-layer [CLS] when hidden states are needed)."""

    size: int
    inputs: dict
    rng: dict
    z1: torch.Tensor
    z2: torch.Tensor
    cls1: torch.Tensor | None
    cls2: torch.Tensor | None


def cached_output(embeddings: torch.Tensor, layer_cls: torch.Tensor | None) -> EncoderOutput:
    """An :class:`EncoderOutput` built from cached leaves: the embeddings and, when given, every
    layer's [CLS] (as one-token hidden states, so that ``layer_cls()`` returns the leaf's rows with
    their gradient). Nothing else of the encoder's output is cached: ``pooled`` repeats the
    embeddings and token states beyond [CLS] do not exist (components reading them refuse caching)."""
    if layer_cls is None:
        backbone = BackboneOutput(embeddings[:, None], torch.ones(len(embeddings), 1, device=embeddings.device))
    else:
        hidden = tuple(layer_cls[:, layer:layer + 1] for layer in range(layer_cls.shape[1]))
        backbone = BackboneOutput(hidden[-1], torch.ones(len(embeddings), 1, device=embeddings.device), hidden)
    return EncoderOutput(embeddings, embeddings, backbone)


def _cached(model, encoder, loss_fn, sentences, step, max_len, amp_dtype, processes, compute_stats, retain,
            mini_batch_size, check_recompute) -> StepLoss:
    device = encoder.device
    hidden = loss_fn.needs_hidden_states

    # 1. every chunk without a graph, remembering the random state its dropout started from
    chunks: list[_Chunk] = []
    for start in range(0, len(sentences), mini_batch_size):
        part = sentences[start:start + mini_batch_size]
        rng = device_rng_state(device)
        inputs = loss_fn.training_inputs(encoder, part, max_len)
        with torch.no_grad(), autocast(device, amp_dtype):
            out = encoder(inputs, output_hidden_states=hidden)
        v1, v2 = out.split(len(part))
        chunks.append(_Chunk(len(part), inputs, rng, v1.embeddings.float(), v2.embeddings.float(),
                             v1.layer_cls() if hidden else None, v2.layer_cls() if hidden else None))

    # 2. the loss of the whole batch, once, on leaves
    def leaf(name: str) -> torch.Tensor | None:
        parts = [getattr(c, name) for c in chunks]
        return None if parts[0] is None else torch.cat(parts).requires_grad_()

    z1, z2, cls1, cls2 = leaf("z1"), leaf("z2"), leaf("cls1"), leaf("cls2")
    batch = gathered_batch(z1, z2, processes, step=step, outputs1=cached_output(z1, cls1),
                           outputs2=cached_output(z2, cls2), inputs=None, amp_dtype=amp_dtype)
    if retain and batch.z1 is not z1:   # gathered: keep the gradient of the global rows too
        batch.z1.retain_grad()
        batch.z2.retain_grad()
    result = loss_fn(batch, compute_stats=compute_stats)
    after_loss = device_rng_state(device)
    loss = StepLoss(result, batch, lambda scale: None,
                    leaves={k: v for k, v in (("z1", z1), ("z2", z2), ("cls1", cls1), ("cls2", cls2)) if v is not None})

    # 3. the loss's gradients w.r.t. the leaves, pushed through each re-encoded chunk
    def backward(scale: Scale) -> None:
        with no_sync(model):
            scale(result.loss).backward()
        offset = 0
        for i, chunk in enumerate(chunks):
            rows = slice(offset, offset + chunk.size)
            offset += chunk.size
            last = i == len(chunks) - 1
            set_device_rng_state(chunk.rng, device)
            with no_sync(model) if not last else contextlib.nullcontext():
                with autocast(device, amp_dtype):
                    out = model(chunk.inputs, output_hidden_states=hidden)
                v1, v2 = out.split(chunk.size)
                again = [(v1.embeddings.float(), z1), (v2.embeddings.float(), z2)]
                if hidden:
                    again += [(v1.layer_cls(), cls1), (v2.layer_cls(), cls2)]
                surrogate = sum((value * cached.grad[rows]).sum() for value, cached in again if cached.grad is not None)
                surrogate.backward()
            if check_recompute:
                with torch.no_grad():
                    loss.recompute_error.append(max(float((v.detach() - c.detach()[rows]).abs().max())
                                                    for v, c in again))
        set_device_rng_state(after_loss, device)   # the stream continues from where the loss left it

    loss._backward = backward   # (single process: batch.z1 is the leaf z1, whose .grad is kept anyway)
    return loss
