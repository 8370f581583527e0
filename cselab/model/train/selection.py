"""Which checkpoint becomes ``best/``: the config's ``select_by``.

* ``stsb_dev`` (the papers' default, SimCSE's ``metric_for_best_model=stsb_spearman``): the highest
  STS-B dev Spearman. STS-B test is then reported among the "unsupervised" STS tasks although the
  checkpoint was chosen on labelled STS data of the same source — tables mark such numbers (†).
* ``last``: the model at the end of training; nothing is chosen.
* ``heldout_infonce``: the lowest unsupervised SimCSE InfoNCE (SimCSE Eq. 1, the config's
  temperature, two dropout views, in-batch negatives over batches of ``batch_size``) on a held-out
  slice of the training corpus — ``heldout_sentences`` sentences drawn with a fixed seed and left
  out of training. No STS (or any labelled) data is used. Why this score: it is one number measured
  the same way for every method (the method's own extra terms are not in it, so selection does not
  favour an objective), it needs no weighting of two terms as alignment + uniformity would (the
  InfoNCE already trades them off: Wang & Isola 2020, Thm. 1), and it costs two forward passes of
  the slice. Its dropout masks come from a fixed private seed, so every checkpoint is scored on the
  same noise and the training's random stream is untouched (resume stays exact).

STS-B dev is still scored and logged at every evaluation whatever ``select_by`` is (the learning
curves need it); only the choice of ``best/`` and early stopping follow ``select_by``.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F

from ..config import SELECT_BY, uses_sts  # noqa: F401 (the choices, validated with the config)

HELDOUT_SEED = 20210416             # the held-out slice and its dropout masks: the same for every seed and run


def split_heldout(corpus: Sequence[str], n: int) -> tuple[list[str], list[str]]:
    """(training sentences, held-out sentences): ``n`` positions drawn with a fixed seed, so every
    seed of a study trains on the same sentences and is scored on the same slice; file order is
    kept in both parts."""
    if not 2 <= n < len(corpus) - 1:
        raise ValueError(f"heldout_sentences={n} must be at least 2 and leave at least 2 of the corpus's "
                         f"{len(corpus)} sentences for training")
    picked = set(torch.randperm(len(corpus), generator=torch.Generator().manual_seed(HELDOUT_SEED))[:n].tolist())
    train = [s for i, s in enumerate(corpus) if i not in picked]
    return train, [s for i, s in enumerate(corpus) if i in picked]


def heldout_infonce(encoder, sentences: Sequence[str], batch_size: int, temperature: float, max_len: int) -> float:
    """The mean per-sentence InfoNCE of the held-out slice (lower is better)."""
    total, count = 0.0, 0
    for chunk, out in encoder.iter_batches(sentences, batch_size, path="train", dropout=True, seed=HELDOUT_SEED,
                                           max_length=max_len):
        if len(chunk) < 2:   # a lone sentence has no in-batch negative
            continue
        z1, z2 = out.split(len(chunk))
        logits = F.normalize(z1.embeddings.float(), dim=-1) @ F.normalize(z2.embeddings.float(), dim=-1).T
        total += F.cross_entropy(logits / temperature, torch.arange(len(chunk), device=logits.device),
                                 reduction="sum").item()
        count += len(chunk)
    return total / count


def selection_score(select_by: str, step: int, stsb_dev: float, heldout_loss: float | None) -> float:
    """The number ``best/`` maximises: STS-B dev, the step (so the last evaluation wins) or minus the
    held-out InfoNCE."""
    if select_by == "stsb_dev":
        return stsb_dev
    if select_by == "last":
        return float(step)
    if heldout_loss is None or not math.isfinite(heldout_loss):
        raise FloatingPointError(f"the held-out InfoNCE is {heldout_loss}")
    return -heldout_loss
