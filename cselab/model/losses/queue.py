"""One FIFO queue of detached embeddings for every method that remembers past batches: APINCSE's
dynamic neighbourhood (eq. 10–11, normalised positives) and ESimCSE's momentum-encoded negatives
(Wu et al., COLING 2022, Sec. 3.2; MoCo's dictionary, He et al., CVPR 2020). Kept in buffers, so
that it is checkpointed and restored on resume with the loss's state; a method owns its queue (a
submodule it creates in ``setup``), nothing is shared or global."""
from __future__ import annotations

import torch
from torch import nn


# The largest queue a method accepts: MoCo's dictionary (K = 65,536, He et al., CVPR 2020), the
# largest in this line of work, 256 MB of fp32 rows at BERT-large's width. A size above it is a typo
# that would otherwise allocate gigabytes before the first step (10^8 rows of 32 values: 12.8 GB).
MAX_QUEUE_SIZE = 65_536


def check_queue_size(size: int) -> None:
    """A ``ValueError`` when ``size`` exceeds :data:`MAX_QUEUE_SIZE` (a method's params call it)."""
    if size > MAX_QUEUE_SIZE:
        raise ValueError(f"queue_size must be <= {MAX_QUEUE_SIZE:,} (MoCo's dictionary, the largest queue of these "
                         f"methods; the queue is allocated whole before training), got {size:,}")


class EmbeddingQueue(nn.Module):
    """The last ``size`` rows pushed, oldest first: row 0 is the oldest, row ``size − 1`` the newest.

    Until ``size`` rows have been pushed the oldest slots hold zeros; ``count`` says how many are
    real. ``push`` runs under ``no_grad`` and stores detached copies.

    Example::

        q = EmbeddingQueue(4, 2)
        q.push(torch.eye(2)); q.push(torch.eye(2))
        q.is_full  # True; q.entries = [e1, e2, e1, e2]
    """

    def __init__(self, size: int, dim: int):
        super().__init__()
        if size < 1:
            raise ValueError(f"queue size must be >= 1, got {size}")
        self.register_buffer("entries", torch.zeros(size, dim))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    @property
    def size(self) -> int:
        return self.entries.shape[0]

    @property
    def dim(self) -> int:
        return self.entries.shape[1]

    @property
    def is_full(self) -> bool:
        return int(self.count) >= self.size

    @property
    def fill(self) -> float:
        """Fraction of the slots holding pushed rows (1.0 once full)."""
        return int(self.count) / self.size

    def filled(self) -> torch.Tensor:
        """The rows pushed so far (at most ``size``), oldest first: the queue without its empty
        slots. A view of the buffer; it changes on the next push."""
        return self.entries[self.size - int(self.count):]

    @torch.no_grad()
    def push(self, rows: torch.Tensor) -> None:
        """Append ``rows`` (n × dim) as the newest entries, dropping the n oldest."""
        if rows.dim() != 2 or rows.shape[1] != self.dim:
            raise ValueError(f"queue rows must be (n, {self.dim}), got {tuple(rows.shape)}")
        n = rows.shape[0]
        if n > self.size:
            raise ValueError(f"cannot push {n} rows into a queue of {self.size}: the queue size must be at least "
                             "the (global) batch size")
        rows = rows.detach().to(self.entries.dtype)
        self.entries.copy_(torch.cat([self.entries[n:], rows], dim=0))
        self.count.add_(n).clamp_(max=self.size)

    def newest_positions(self, n: int) -> torch.Tensor:
        """Queue rows of the last ``n`` rows pushed, in push order."""
        return torch.arange(self.size - n, self.size, device=self.entries.device)
