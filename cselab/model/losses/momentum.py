"""A momentum (exponential-moving-average) copy of the encoder, for methods that encode keys or
negatives with a slowly moving encoder (MoCo, He et al., CVPR 2020, eq. 2; ESimCSE, Wu et al.,
COLING 2022, Sec. 3.2):

    θ_m ← m·θ_m + (1 − m)·θ

A component asks for one by creating it in ``setup`` from the encoder it is given (a collaborator
passed in, never a global) and declaring ``momentum_encoder = True``; the trainer calls
``Component.after_optimizer_step`` after every optimizer step, where the component calls
:meth:`MomentumEncoder.update`. As a submodule of the component its weights are part of the loss's
state: saved in ``last/`` and restored on resume, never in the exported model (which is the
encoder alone). Its weights take no gradient and are not in the optimizer (``requires_grad`` off).
"""
from __future__ import annotations

import copy
from typing import Callable

import torch
from torch import nn

# A graph-free forward pass of B sentences, against a step's forward and backward pass of 2B rows
# (a backward costs about two forwards): 1 / (2 · 3) of a step, plus an EMA over the weights that
# is small next to either. Read by the study cost estimator through the registry.
MOMENTUM_STEP_COST = 1 / 6


class MomentumEncoder(nn.Module):
    """An EMA copy of ``online`` (any module; a :class:`~cselab.model.encoder.SentenceEncoder` in cselab).

    Args:
        online: the trained encoder; held as a plain reference (not a submodule), so its weights
            are registered once, by the trainer.
        momentum: m in [0, 1]; 1 never moves, 0 copies the online weights at every update.
        follow_online: parameter names (of the copy) that are copied from the online encoder at
            every update instead of averaged (e.g. a head that the original code shares between
            the two encoders).
        dropout: whether the copy encodes with dropout (MoCo and ESimCSE's code: off).
        unused: parameter names that no forward pass reads; the copy keeps them as it was made (or
            loaded), never averaged: what the online encoder holds there may differ between a run
            and its resumed continuation without changing what the run computes, and must then not
            reach the copy's saved state either.

    Calling it runs the copy's training path (pooler and head) without a graph.

    Example::

        ema = MomentumEncoder(encoder, 0.995)
        keys = ema(inputs).embeddings      # no gradient reaches anything
        ...; optimizer.step(); ema.update()
    """

    def __init__(self, online: nn.Module, momentum: float, follow_online: Callable[[str], bool] | None = None,
                 dropout: bool = False, unused: Callable[[str], bool] | None = None):
        super().__init__()
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.momentum = float(momentum)
        self.dropout = dropout
        self.__dict__["online"] = online
        self.copy = copy.deepcopy(online).requires_grad_(False)
        self.__dict__["follow_online"] = follow_online or (lambda name: False)
        self.__dict__["unused"] = unused or (lambda name: False)

    @torch.no_grad()
    def update(self) -> None:
        """θ_m ← m·θ_m + (1 − m)·θ for every parameter (the followed ones: θ_m ← θ; the unused ones
        are left as they are)."""
        copied = dict(self.copy.named_parameters())
        for name, p in self.online.named_parameters():
            target = copied[name]
            if self.unused(name):
                continue
            if self.follow_online(name):
                target.copy_(p)
            else:
                target.mul_(self.momentum).add_(p.detach(), alpha=1.0 - self.momentum)

    @torch.no_grad()
    def forward(self, *args, **kwargs):
        self.copy.train(self.dropout)   # set on every call: the trainer's .train() reaches submodules
        return self.copy(*args, **kwargs)
