"""What APINCSE needs from torch.distributed: the queue must be identical on every process, and
eq. 19's sum over j runs over the global batch's interlayer negatives.

Two situations. When the trainer already gathered the global batch (``batch.local_rows`` set),
``z2`` is global and needs no communication; hidden states are still per process, so the
interlayer negatives are gathered (the local rows keep their gradient, as in SimCSE's
all-gather). When it did not (``local_rows`` is None) but torch.distributed is initialised, the
queue's block is all-gathered so that every process enqueues the same rows. Without
torch.distributed both helpers return their input.
"""
from __future__ import annotations

import torch
import torch.distributed as dist


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized()


def _all_gather(rows: torch.Tensor) -> list[torch.Tensor]:
    """Every process's ``rows`` (detached), in rank order."""
    parts = [torch.empty_like(rows) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, rows.detach().contiguous())
    return parts


def queue_block(rows: torch.Tensor, local_rows: slice | None) -> tuple[torch.Tensor, int]:
    """``(block, offset)``: the rows every process enqueues this step (detached) and where
    ``rows`` starts inside it."""
    rows = rows.detach()
    if local_rows is not None or not is_distributed():
        return rows, 0
    return torch.cat(_all_gather(rows), dim=0), dist.get_rank() * rows.shape[0]


def gather_local_rows(rows: torch.Tensor, local_rows: slice | None) -> torch.Tensor:
    """The global batch's rows when ``rows`` holds this process's part of a gathered batch; the
    local part keeps its gradient."""
    if local_rows is None:
        return rows
    if not is_distributed():
        raise ValueError("the batch names local rows (a gathered multi-process batch) but torch.distributed "
                         "is not initialised")
    parts = _all_gather(rows)
    parts[dist.get_rank()] = rows
    return torch.cat(parts, dim=0)
