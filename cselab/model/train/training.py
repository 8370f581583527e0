"""What a run trains: the encoder, the method's loss, AdamW, the linear schedule and the gradient
scaler, with the counters of :class:`TrainState`, held together as one :class:`Training` (what a
step changes and a checkpoint saves). :func:`build_training` makes a fresh one, or one with the
model of ``last/`` that :func:`cselab.model.train.checkpoints.resume_from_checkpoint` then brings back
to the checkpoint's optimizer state, counters and random streams.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from transformers import get_linear_schedule_with_warmup

from ..config import TrainConfig
from ..encoder import SentenceEncoder
from ..methods import build_loss
from ..rundir import RunDir
from . import ddp


@dataclass
class TrainState:
    step: int = 0                 # optimizer steps done
    epoch: int = 0
    batch_in_epoch: int = 0       # batches of ``epoch`` already consumed
    best_score: float = -math.inf  # the select_by score of best/ (higher is better)
    best_step: int = -1
    best_stsb_dev: float | None = None   # STS-B dev of best/ (None in checkpoints older than select_by)
    evals_without_improvement: int = 0
    stopped_early: bool = False
    train_seconds: float = 0.0

    def __post_init__(self):
        if self.best_stsb_dev is None:   # before select_by, best/ was always chosen on STS-B dev
            self.best_stsb_dev = self.best_score


@dataclass
class Training:
    """One run's trainable objects and counters: what a step changes and ``last/`` saves."""

    encoder: SentenceEncoder
    model: torch.nn.Module                 # the encoder, or its DDP wrapper in a torchrun run
    loss_fn: torch.nn.Module               # the method: InfoNCE core plus its components
    params: list[torch.nn.Parameter]       # what AdamW updates and the gradient clipping sees
    optimizer: torch.optim.AdamW
    scheduler: torch.optim.lr_scheduler.LambdaLR
    scaler: torch.amp.GradScaler           # enabled for fp16 only
    state: TrainState = field(default_factory=TrainState)
    checkpoint_step: int | None = None     # step of the checkpoint in last/, named in error messages


def trainable_parameters(*modules: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Every trainable parameter once, in a stable order (a component may hold encoder parts)."""
    seen, params = set(), []
    for module in modules:
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    return params


def adamw(params: list[torch.nn.Parameter], cfg: TrainConfig, device: torch.device) -> torch.optim.AdamW:
    """AdamW with the config's settings; fused into one kernel per step on CPU and CUDA (the
    per-tensor loop was a quarter of a CPU training step of MiniLM: its 30k-row embedding table is
    half the parameters and gets a dense gradient every step)."""
    return torch.optim.AdamW(params, lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=cfg.adam_epsilon,
                             weight_decay=cfg.weight_decay, fused=device.type in ("cpu", "cuda"))


def build_training(cfg: TrainConfig, run: RunDir, resuming: bool, corpus: list[str], total_steps: int,
                   amp_dtype: torch.dtype | None, processes: ddp.Processes) -> Training:
    """The encoder (``cfg.model``, or ``last/``'s when resuming, which keeps its saved pooler), the
    loss set up on the corpus, AdamW over both, the schedule over ``total_steps`` and the scaler."""
    device = processes.device
    source = run.last_dir if resuming else cfg.model
    encoder = SentenceEncoder.from_pretrained(source, pooler=None if resuming else cfg.pooler,
                                              mlp_only_train=cfg.mlp_only_train, dropout=cfg.dropout,
                                              pooler_options=None if resuming else cfg.pooler_options)
    encoder.backbone_name = cfg.model
    encoder.eval_precision = cfg.eval_precision
    encoder.fast_cpu_dropout = cfg.cpu_dropout == "fast"
    encoder.to(device).train()
    loss_fn = build_loss(cfg).to(device)
    loss_fn.setup(encoder, corpus)
    params = trainable_parameters(encoder, loss_fn)
    optimizer = adamw(params, cfg, device)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total_steps), total_steps)
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    model = processes.wrap(encoder)   # DDP in a torchrun run: gradients averaged over processes
    return Training(encoder, model, loss_fn, params, optimizer, scheduler, scaler)
