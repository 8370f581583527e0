"""The batches of one epoch: a seeded order of the corpus cut into batches, optionally with no
sentence twice in a batch (``no_duplicates``).

Everything here is a pure function of the corpus, the seed and the epoch, so that a resumed run
(``TrainState.epoch`` and ``batch_in_epoch`` from the checkpoint) gets the very batches the
interrupted run would have seen next.
"""
from __future__ import annotations

import logging
import math
from collections import deque
from typing import Sequence

import torch

logger = logging.getLogger(__name__)


def epoch_order(n: int, seed: int, epoch: int, shuffle: bool) -> list[int]:
    """The corpus order of one epoch, from its own generator so that resuming reproduces it."""
    if not shuffle:
        return list(range(n))
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch)).tolist()


def batches_per_epoch(n: int, batch_size: int, drop_last: bool) -> int:
    """Batches in one epoch; a final batch of 1 sentence is always dropped (no in-batch negative)."""
    return n // batch_size if drop_last or n % batch_size == 1 else math.ceil(n / batch_size)


def batch_sizes(n: int, batch_size: int, drop_last: bool) -> list[int]:
    """The size of every batch of an epoch: full batches, then the remainder when it is kept."""
    count = batches_per_epoch(n, batch_size, drop_last)
    return [min(batch_size, n - b * batch_size) for b in range(count)]


def no_duplicate_batches(order: Sequence[int], texts: Sequence[str], sizes: Sequence[int]) -> list[list[int]]:
    """Cut ``order`` into batches of ``sizes`` with no text twice in a batch.

    The same greedy rule as sentence-transformers' ``NoDuplicatesBatchSampler``: walk the order and
    take each sentence whose exact string is not yet in the batch; one that is waits (in order) at
    the head of the queue for the next batch. So a corpus without duplicates gets exactly the plain
    batches, and an epoch keeps its number of steps. Occurrences still waiting after the last batch
    (a string repeated in more copies than the remaining batches can hold apart) sit out this
    epoch; a batch left with fewer than 2 sentences (no in-batch negative) is dropped.
    """
    pending = deque(order)
    batches, left_out = [], 0
    for size in sizes:
        batch, seen, waiting = [], set(), []
        while pending and len(batch) < size:
            i = pending.popleft()
            if texts[i] in seen:
                waiting.append(i)
            else:
                seen.add(texts[i])
                batch.append(i)
        pending.extendleft(reversed(waiting))   # first in line for the next batch, in their order
        if len(batch) >= 2:
            batches.append(batch)
        else:
            left_out += len(batch)
    left_out += len(pending)
    if left_out:
        logger.info("no_duplicates: %d occurrences of repeated sentences sit out this epoch (no batch left "
                    "without their copy)", left_out)
    return batches


def epoch_batches(corpus: Sequence[str], seed: int, epoch: int, batch_size: int, shuffle: bool = True,
                  drop_last: bool = False, no_duplicates: bool = False) -> list[list[int]]:
    """Corpus indices of every batch of ``epoch``, in training order."""
    order = epoch_order(len(corpus), seed, epoch, shuffle)
    sizes = batch_sizes(len(corpus), batch_size, drop_last)
    if no_duplicates:
        return no_duplicate_batches(order, corpus, sizes)
    starts = [b * batch_size for b in range(len(sizes))]
    return [order[s:s + size] for s, size in zip(starts, sizes)]
