"""Training probes: geometry of the embedding space measured every N steps during a run.

Opt-in with ``probe_every: N`` in the training config. Every N optimizer steps the trainer embeds a
fixed probe set (evaluation path, no dropout, no change to the run's random stream) and appends a
record to ``metrics.jsonl``::

    {"kind": "probe", "step": 250, "alignment": …, "uniformity": …, "mean_cos": …,
     "largest_angle": …, "layer_cls_sim": [cos(layer 0), …, 1.0], "sentences": 256,
     "positive_pairs": 31, "seconds": …}

* ``alignment`` / ``uniformity`` — Wang & Isola (2020), t = 2, on normalised embeddings
  (:mod:`cselab.model.evaluate.geometry`); positives = the probe pairs with gold score > 4;
* ``mean_cos`` — anisotropy, mean cosine of distinct probe sentences;
* ``largest_angle`` — the largest angle (degrees) between two probe embeddings (MixCSE);
* ``layer_cls_sim`` — for every hidden state a = 0 (embeddings) … L, the mean cosine between
  its [CLS] and the last layer's [CLS] (APINCSE Fig. 3, :mod:`cselab.workbench.analysis.apincse`).

The probe set (:func:`stsb_probe_set`) is the first ``probe_sentences`` distinct sentences of the
STS-B dev pairs in file order, and its positives the pairs whose two sentences are both inside.

``log_embedding_grad_norm: true`` adds MixCSE's gradient-norm dynamics (gradient analysis) to every train
record: ``grad/z1_norm`` and ``grad/z2_norm``, the mean over the batch of ‖∂L/∂z‖₂ for each view's
training embedding z (the vector the encoder outputs, before the loss normalises it).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ..evaluate.geometry import POSITIVE_THRESHOLD, geometry_summary


@dataclass(frozen=True)
class ProbeSet:
    sentences: tuple[str, ...]
    positive_pairs: tuple[tuple[int, int], ...]   # rows of ``sentences``


def stsb_probe_set(pairs, n_sentences: int = 256, threshold: float = POSITIVE_THRESHOLD) -> ProbeSet:
    """The first ``n_sentences`` distinct sentences of ``pairs`` (an :class:`~cselab.model.data.STSPairs`,
    e.g. STS-B dev) taking pairs in file order, and the pairs scored > ``threshold`` among them."""
    if n_sentences < 2:
        raise ValueError(f"n_sentences must be >= 2, got {n_sentences}")
    index: dict[str, int] = {}
    for a, b in zip(pairs.sentences1, pairs.sentences2):
        for s in (a, b):
            if len(index) < n_sentences:
                index.setdefault(s, len(index))
    positives = tuple((index[a], index[b]) for a, b, score in zip(pairs.sentences1, pairs.sentences2, pairs.scores)
                      if score > threshold and a in index and b in index and a != b)
    return ProbeSet(tuple(index), positives)


def _embed_with_layer_profile(encoder, sentences: list[str], batch_size: int) -> tuple[np.ndarray, list[float]]:
    """One evaluation-mode pass (no dropout) over ``sentences`` giving both the evaluation
    embeddings (what ``encoder.encode`` returns) and, from the same hidden states, the mean per-layer
    [CLS] cosine to the last layer (blank sentences left out, as the APINCSE analysis does)."""
    embeddings, sims = [], []
    for _, out in encoder.iter_batches(sentences, batch_size, output_hidden_states=True):
        embeddings.append(out.embeddings.float().cpu())
        cls = out.layer_cls()   # (n, L+1, H)
        sims.append(torch.nn.functional.cosine_similarity(cls, cls[:, -1:], dim=-1).cpu())
    non_blank = torch.tensor([bool(s.strip()) for s in sentences])
    return torch.cat(embeddings).numpy(), torch.cat(sims)[non_blank].double().numpy().mean(0).tolist()


def probe(encoder, probe_set: ProbeSet, batch_size: int = 128) -> dict:
    """The probe metrics of ``encoder`` on ``probe_set`` (see the module docstring)."""
    start = time.perf_counter()
    x, layer_profile = _embed_with_layer_profile(encoder, list(probe_set.sentences), batch_size)
    positives = None
    if probe_set.positive_pairs:
        rows = np.asarray(probe_set.positive_pairs)
        positives = (x[rows[:, 0]], x[rows[:, 1]])
    return {**geometry_summary(x, positives), "layer_cls_sim": layer_profile, "sentences": len(probe_set.sentences),
            "positive_pairs": len(probe_set.positive_pairs), "seconds": time.perf_counter() - start}


def probe_record(encoder, probe_set: ProbeSet, step: int, batch_size: int = 128) -> dict:
    """A ``metrics.jsonl`` record of kind ``probe``."""
    return {"kind": "probe", "step": step, **probe(encoder, probe_set, batch_size)}


def embedding_grad_norms(z1: torch.Tensor, z2: torch.Tensor, loss_scale: float = 1.0) -> dict[str, float]:
    """Mean per-row ‖∂L/∂z‖₂ of both views after ``backward`` (call ``retain_grad()`` on z1, z2
    before it). ``loss_scale``: the mixed-precision scaler's factor, divided out."""
    out = {}
    for name, z in (("z1", z1), ("z2", z2)):
        if z.grad is None:
            raise RuntimeError(f"{name} has no gradient: call retain_grad() on it before backward()")
        out[f"grad/{name}_norm"] = float(z.grad.float().norm(dim=1).mean()) / loss_scale
    return out
