"""Multi-process training with ``torchrun``: the process group, who writes, the DDP wrapper and the
gathered global batch.

``torchrun --nproc_per_node W -m cselab.cli train CONFIG`` starts W processes; each reads
``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` from the environment and :func:`setup` joins them into one
process group (NCCL on GPUs, gloo on CPUs). ``batch_size`` is the global batch: process r encodes
the r-th of W equal slices of every batch (:meth:`Processes.local_slice`).

How the loss is shared, and why it is multiplied by W. Every process gathers both views of every
process's slice into the global batch (:func:`gathered_batch`), with gradients flowing only through
its own rows (:func:`cselab.model.distributed.gather_with_local_grad`; the other rows are constants here),
and computes the loss of the **whole** global batch — the very number a single process would
compute. Then the gradient of L reaching each embedding z_i on the process that owns z_i is
complete (every term of L that involves z_i, as anchor, positive or negative of any row, is in
that process's loss), so process r holds g_r = Σ_{i ∈ r} ∂L/∂z_i · ∂z_i/∂θ, and the single-process
gradient is Σ_r g_r. DDP *averages* over processes, giving Σ_r g_r / W: the loss is multiplied by W
before ``backward`` to undo it. (Anchoring only a process's own rows, as a per-process mean, would
lose ∂ℓ_a/∂z_i for anchors a of other processes: z_i as *their* negative — and per-pair means such
as ClusterNS's BML would not average back to the global mean.) The components see
``local_rows = slice(0, B)``: every row is an anchor, and the batch is marked as gathered.

Random state. Every process seeds the same way (``seed``); what must be identical everywhere is
broadcast from process 0 (GS-InfoNCE's noise, ClusterNS's first centroid and centroids): the
processes' random streams drift apart because dropout draws depend on their own sequence lengths.
Only process 0 writes the run directory and evaluates; the others learn its decisions (resume,
dev scores for best model and early stopping) by broadcast, so their training state stays equal.
"""
from __future__ import annotations

import contextlib
import inspect
import os
from dataclasses import dataclass
from typing import Callable

import torch
import torch.distributed as dist
from torch import nn

from ..distributed import gather_with_local_grad
from ..losses import ContrastiveBatch
from ..utils import resolve_device


@dataclass
class Processes:
    """This process's place in the run: rank, world size, device; one process without torchrun."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")
    owns_group: bool = False       # setup_processes() created the process group (and close() destroys it)

    @property
    def is_main(self) -> bool:
        """Process 0: the one that writes the run directory and evaluates."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def check_config(self, cfg) -> None:
        """What a multi-process run cannot do, as errors naming the key, before anything is written."""
        if cfg.batch_size % self.world_size:
            raise ValueError(f"batch_size={cfg.batch_size} is the global batch and must be divisible by the "
                             f"{self.world_size} processes (each encodes an equal slice)")
        if self.distributed:   # what each method cannot do on a gathered batch, it says itself
            from ..methods import METHODS

            for name in cfg.method:
                METHODS[name].check_distributed(cfg.method_params[name])

    def local_slice(self, sentences: list[str]) -> list[str]:
        """This process's slice of a global batch: equal slices in rank order. An incomplete last
        batch whose size W does not divide loses its last ``len % W`` sentences."""
        n = len(sentences) // self.world_size
        return sentences[self.rank * n:(self.rank + 1) * n]

    def broadcast(self, value: float) -> float:
        """Process 0's ``value`` on every process."""
        if not self.distributed:
            return value
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.broadcast(t, src=0)
        return float(t.item())

    def run_on_main(self, fn: Callable[[], int]) -> int:
        """``fn()`` on process 0 only (e.g. preparing the run directory); every process gets its
        integer result. When it raises on process 0 the others raise too instead of waiting."""
        result, error = 0, None
        if self.is_main:
            try:
                result = int(fn())
            except Exception as e:          # re-raised below, after the others have been told
                error, result = e, -(2 ** 31)
        result = int(self.broadcast(result))
        if error is not None:
            raise error
        if result == -(2 ** 31):
            raise RuntimeError("process 0 failed (see its error above); stopping this process too")
        return result

    def gather_rng_states(self, state: dict) -> list[dict] | None:
        """Every process's RNG state (``cselab.model.utils.rng_state()``) on process 0 (None elsewhere),
        so that a checkpoint resumes each process's dropout stream exactly."""
        if not self.distributed:
            return [state]
        states = [None] * self.world_size if self.is_main else None
        dist.gather_object(state, states, dst=0)   # in memory only; checkpoints stay safetensors + JSON
        return states

    def scatter_rng_states(self, states: list[dict]) -> dict:
        """This process's entry of a checkpoint's per-process RNG states."""
        if len(states) != self.world_size:
            raise ValueError(f"the checkpoint was written by {len(states)} process(es); resume it with the same "
                             f"number (this run has {self.world_size}) so that every random stream continues exactly")
        return states[self.rank]

    def wrap(self, encoder: nn.Module) -> nn.Module:
        """The module the training step calls: DDP around the encoder in a multi-process run, the
        encoder itself otherwise. ``find_unused_parameters``: the backbone's own pooler layer (BERT's
        ``pooler.dense``) is never used by cselab's poolers, and which parameters get a gradient
        depends on the pooler and the method. Buffers are not broadcast (the encoder has no running
        statistics; the components' buffers are kept equal by construction)."""
        if not self.distributed:
            return encoder
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        # torch 2.13 renamed broadcast_buffers (the initial buffers are equal anyway: synced or not)
        no_buffer_sync = ({"forward_sync_buffers": False}
                          if "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters
                          else {"broadcast_buffers": False})
        return DistributedDataParallel(encoder, device_ids=ids, find_unused_parameters=True, **no_buffer_sync)

    def close(self) -> None:
        if self.owns_group and dist.is_initialized():
            dist.destroy_process_group()


def setup_processes(device: str = "auto") -> Processes:
    """Join torchrun's process group (``WORLD_SIZE`` > 1 in the environment) or use the one the
    caller already initialised; a single process otherwise. On CUDA each process takes the GPU of
    its ``LOCAL_RANK``."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    owns = False
    if world > 1 and not dist.is_initialized():
        cuda = torch.cuda.is_available() and device in ("auto", "cuda")
        # CSELAB_DIST_BACKEND=gloo lets more processes than GPUs share them (NCCL refuses two ranks
        # on one GPU): a functional check of the multi-process path on a one-GPU machine
        # (benchmarks/gpu_check.sh), never a speed setting.
        dist.init_process_group(backend=os.environ.get("CSELAB_DIST_BACKEND") or ("nccl" if cuda else "gloo"))
        owns = True
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return Processes(device=resolve_device(device), owns_group=owns)
    rank, world = dist.get_rank(), dist.get_world_size()
    if device in ("auto", "cuda") and torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        resolved = torch.device("cuda", local)
    else:
        resolved = resolve_device(device)
    return Processes(rank, world, resolved, owns)


def gathered_batch(z1: torch.Tensor, z2: torch.Tensor, processes: Processes, **fields) -> ContrastiveBatch:
    """The loss's batch from this process's rows of both views: in a multi-process run the global
    batch (rank order, gradients through this process's rows only) with every row an anchor
    (``local_rows = slice(0, B)``: see the module docstring); the rows themselves otherwise."""
    if not processes.distributed:
        return ContrastiveBatch(z1, z2, **fields)
    z1, z2 = gather_with_local_grad(z1), gather_with_local_grad(z2)
    return ContrastiveBatch(z1, z2, local_rows=slice(0, z1.shape[0]), **fields)


def no_sync(model: nn.Module):
    """DDP's ``no_sync()`` (accumulate gradients locally, no all-reduce) or nothing."""
    return model.no_sync() if hasattr(model, "no_sync") else contextlib.nullcontext()
