"""What cselab needs from torch.distributed, in one place. Every helper is the identity in a
single process, so code that calls them runs unchanged without a process group.

* :func:`all_gather` — every process's rows, detached, in rank order (queues, centroids);
* :func:`gather_with_local_grad` — the global batch with gradients flowing through this process's
  own rows only (SimCSE's all-gather of embeddings);
* :func:`broadcast_from_first_process` — process 0's copy everywhere (random choices, centroids
  that must stay bit-identical).
"""
from __future__ import annotations

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def all_gather(rows: torch.Tensor) -> list[torch.Tensor]:
    """Every process's ``rows`` (detached), in rank order; ``[rows]`` in a single process."""
    if not is_distributed():
        return [rows.detach()]
    parts = [torch.empty_like(rows) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, rows.detach().contiguous())
    return parts


def gather_with_local_grad(rows: torch.Tensor) -> torch.Tensor:
    """The rows of every process concatenated in rank order; this process's part keeps its
    gradient (the others are constants here: their gradients flow in their own process)."""
    if not is_distributed():
        return rows
    parts = all_gather(rows)
    parts[dist.get_rank()] = rows
    return torch.cat(parts, dim=0)


def broadcast_from_first_process(tensor: torch.Tensor) -> torch.Tensor:
    """Overwrite ``tensor`` (in place) with process 0's copy; a no-op in a single process."""
    if is_distributed():
        dist.broadcast(tensor, src=0)
    return tensor
