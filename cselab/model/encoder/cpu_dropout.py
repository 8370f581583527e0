"""Dropout on CPU from a cheaper random source than torch's Bernoulli sampler.

Dropout is SimCSE's only augmentation, and on a CPU drawing its masks is a large part of a training
step: torch's ``bernoulli_`` draws one value of the Mersenne Twister per element on one thread
(about 12 ms for the 1.6 M activations of one MiniLM dropout site at batch 64 and 32 tokens,
whatever the thread count), and a BERT-like encoder has three such sites per layer. On a CPU with
native bf16 that was 27 % of cselab's SimCSE step (docs/performance.md, "Dropout masks on CPU").

Here one 64-bit draw of the same generator (``torch.empty(int64).random_()``, seeded by
``torch.manual_seed`` and replayed by ``set_rng_state``, as gradient caching needs) gives four
15-bit uniform integers, and an element is dropped when its integer is below ``round(p · 2¹⁵)``.
The drop probability is therefore ``round(p · 2¹⁵) / 2¹⁵`` (0.1000061 for p = 0.1) and the kept
activations are scaled by the inverse of its complement, so the expectation is exact. Everything
else is torch's dropout: the same module (a subclass of ``nn.Dropout`` keeping ``p``), the same
backward (``native_dropout_backward``, a multiply by the saved boolean mask and the scale).

Only the training path on a CPU changes: on CUDA, with dropout off (every evaluation pass) or with
``enabled = False`` (:func:`set_enabled`, ``SentenceEncoder.fast_cpu_dropout``; a run's ``cpu_dropout:
torch``) the modules and
the attention are torch's own. The attention-probability dropout happens inside scaled dot-product
attention, so the backbone's attention runs through :func:`cpu_sdpa_attention`, registered with
transformers as ``cselab_sdpa``: transformers' SDPA function unchanged whenever it would not drop
anything, and the same softmax attention with these masks when training on a CPU (where torch's
SDPA, given a dropout probability, falls back to this unfused computation anyway).
"""
from __future__ import annotations

import math

import torch
from torch import nn

BITS = 15                   # resolution of the drop probability: multiples of 2⁻¹⁵
ATTENTION = "cselab_sdpa"   # the name the attention function is registered under with transformers


def drop_threshold(p: float) -> int:
    """The integer below which a 15-bit uniform draw drops its element: ``round(p · 2¹⁵)``."""
    return round(p * (1 << BITS))


def effective_p(p: float) -> float:
    """The drop probability the masks have for a nominal ``p`` (a multiple of 2⁻¹⁵)."""
    return drop_threshold(p) / (1 << BITS)


def keep_mask(shape: torch.Size | tuple[int, ...], p: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """A boolean CPU tensor of ``shape``: each element kept with probability ``1 - effective_p(p)``,
    independently, from ``generator`` (None: torch's default CPU generator)."""
    n = math.prod(shape)
    # random_() on int64 fills [0, 2⁶³): 63 uniform bits a word, so the low 15 bits of each of its four
    # 16-bit pieces are uniform (the top piece's sign bit, always 0, is masked off with the others').
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(generator=generator)
    pieces = words.view(torch.int16)[:n] & ((1 << BITS) - 1)
    return (pieces >= drop_threshold(p)).view(shape)


class _MaskAndScale(torch.autograd.Function):
    """``x · mask · scale`` with the boolean mask saved for the backward pass (as torch's dropout)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(mask)
        ctx.scale = scale
        return torch.ops.aten.native_dropout_backward(x, mask, scale)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (mask,) = ctx.saved_tensors
        return torch.ops.aten.native_dropout_backward(grad, mask, ctx.scale), None, None


def cpu_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """Dropout of a CPU tensor in training mode with this module's masks (``0 < p < 1``)."""
    scale = 1.0 / (1.0 - effective_p(p))
    return _MaskAndScale.apply(x, keep_mask(x.shape, p), scale)


def _fast(x: torch.Tensor, p: float, training: bool, enabled: bool) -> bool:
    """Whether these masks apply: training on a CPU, and a drop probability that rounds to neither
    0 nor 1 (torch's dropout handles those ends, where a 15-bit threshold drops nothing or all)."""
    return enabled and training and x.device.type == "cpu" and 0 < drop_threshold(p) < 1 << BITS


class CpuDropout(nn.Dropout):
    """``nn.Dropout`` whose training-mode masks on CPU come from :func:`keep_mask` (``enabled``);
    torch's own dropout everywhere else."""

    enabled = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _fast(x, self.p, self.training, self.enabled):
            return cpu_dropout(x, self.p)
        return super().forward(x)


def cpu_sdpa_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                       attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                       **kwargs):
    """transformers' SDPA attention, except when it would drop attention probabilities of CPU
    tensors: then ``softmax(q kᵀ · scaling + mask) · v`` with :func:`cpu_dropout` on the
    probabilities. Inputs (batch, heads, length, head dim); output (batch, length, heads, head dim),
    as transformers' attention functions return it."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    dropper = getattr(module, "dropout", None)
    enabled = isinstance(dropper, CpuDropout) and dropper.enabled
    same_heads = key.shape[1] == query.shape[1]   # grouped-query attention (not in BERT-like encoders): torch's
    if not (same_heads and _fast(query, dropout, True, enabled)):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, key.transpose(-1, -2)) * scaling
    if attention_mask is not None:   # transformers' SDPA mask: boolean (True: attend) or additive
        scores = (scores.masked_fill(~attention_mask, float("-inf")) if attention_mask.dtype == torch.bool
                  else scores + attention_mask)
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    output = torch.matmul(cpu_dropout(probs, dropout), value)
    return output.transpose(1, 2).contiguous(), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface

    AttentionInterface.register(ATTENTION, cpu_sdpa_attention)
    AttentionMaskInterface.register(ATTENTION, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])   # SDPA's mask format


def install(backbone: nn.Module) -> int:
    """Turn every ``nn.Dropout`` of ``backbone`` into a :class:`CpuDropout` (same ``p``, in place)
    and route its SDPA attention through :func:`cpu_sdpa_attention`; returns how many dropout
    modules were converted. A backbone on another attention implementation (eager, flash) keeps it:
    its attention-probability dropout stays torch's."""
    converted = 0
    for submodule in backbone.modules():
        if type(submodule) is nn.Dropout:
            submodule.__class__ = CpuDropout
            converted += 1
    config = getattr(backbone, "config", None)
    settable = getattr(backbone, "_can_set_attn_implementation", lambda: False)()   # else transformers warns
    if getattr(config, "_attn_implementation", None) == "sdpa" and settable:
        _register()
        backbone.set_attn_implementation(ATTENTION)
    return converted


def set_enabled(backbone: nn.Module, enabled: bool) -> None:
    """Switch the converted modules (and with them the attention's dropout) between these masks
    (True) and torch's (False)."""
    for submodule in backbone.modules():
        if isinstance(submodule, CpuDropout):
            submodule.enabled = enabled


def is_enabled(backbone: nn.Module) -> bool:
    """Whether any dropout module of ``backbone`` draws :func:`keep_mask` masks on CPU."""
    return any(isinstance(m, CpuDropout) and m.enabled for m in backbone.modules())
