"""GS-InfoNCE's Fig. 1 (Wu et al., COLING 2022): the hardest in-batch negatives against batch size.

The paper motivates its Gaussian negatives by how few hard negatives a batch holds: for a model,
take a random batch of B corpus sentences, compute the cosine of every negative pair (every pair
of distinct sentences of the batch), and keep the mean of the 4 highest; average that over 100
random batches; plot it against B. Larger batches contain harder (more similar) negatives.

Embeddings are the model's evaluation embeddings (``encode``: no dropout), so a "negative pair" is
two different sentences — different texts: :func:`top4_curve` draws its batches from the corpus's
distinct sentences, because a text repeated in the corpus (wiki1m's head repeats 22 of its first
2,000 sentences, one of them 11 times) would be a pair of cosine exactly 1, and at B = 512 nearly
every batch held one (the curve ended at 0.9997 for every model). Every sentence that any sampled
batch uses is encoded once.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...model.evaluate.geometry import normalize_rows


def top_k_negative_mean(embeddings: np.ndarray, k: int = 4) -> float:
    """Mean of the k highest cosines among all pairs i < j of one batch."""
    x = normalize_rows(embeddings)
    n = len(x)
    if n * (n - 1) // 2 < k:
        raise ValueError(f"a batch of {n} has {n * (n - 1) // 2} negative pairs, fewer than k = {k}")
    cos = (x @ x.T)[np.triu_indices(n, 1)]
    return float(np.sort(np.partition(cos, -k)[-k:]).mean())   # the k largest, summed in ascending order


def sample_batches(corpus_size: int, batch_size: int, n_batches: int, rng: np.random.Generator) -> np.ndarray:
    """(n_batches × batch_size) corpus indices, each batch without repeats."""
    if batch_size > corpus_size:
        raise ValueError(f"batch_size {batch_size} exceeds the corpus ({corpus_size} sentences)")
    return np.stack([rng.choice(corpus_size, size=batch_size, replace=False) for _ in range(n_batches)])


def _curve(batches: dict[int, np.ndarray], vectors: np.ndarray, row: np.ndarray, k: int) -> pd.DataFrame:
    rows = []
    for b, idx in batches.items():
        values = [top_k_negative_mean(vectors[row[batch]], k) for batch in idx]
        rows.append({"batch_size": int(b), "top_k_mean": float(np.mean(values)), "std": float(np.std(values)),
                     "k": k, "n_batches": len(idx)})
    return pd.DataFrame(rows)


def top4_curve_from_embeddings(embeddings: np.ndarray, batch_sizes: Sequence[int], n_batches: int = 100,
                               k: int = 4, seed: int = 0) -> pd.DataFrame:
    """One row per batch size: mean and std over ``n_batches`` random batches of the top-k mean."""
    rng = np.random.default_rng(seed)
    batches = {b: sample_batches(len(embeddings), b, n_batches, rng) for b in batch_sizes}
    return _curve(batches, np.asarray(embeddings), np.arange(len(embeddings)), k)


def top4_curve(model, corpus: Sequence[str], batch_sizes: Sequence[int] = (16, 32, 64, 128, 256, 512),
               n_batches: int = 100, k: int = 4, seed: int = 0, batch_size: int = 128) -> pd.DataFrame:
    """GS-InfoNCE Fig. 1 for ``model`` (anything with ``encode``) on the distinct sentences of
    ``corpus`` (the first occurrence of each text, in order: see the module's docstring).

    The batches are drawn first (seeded, the same draws as :func:`top4_curve_from_embeddings`),
    then only the sentences they use are encoded, once.
    """
    corpus = list(dict.fromkeys(corpus))
    rng = np.random.default_rng(seed)
    batches = {b: sample_batches(len(corpus), b, n_batches, rng) for b in batch_sizes}
    used = np.unique(np.concatenate([idx.ravel() for idx in batches.values()]))
    vectors = np.asarray(model.encode([corpus[i] for i in used], batch_size=batch_size))
    row = np.full(len(corpus), -1)
    row[used] = np.arange(len(used))
    return _curve(batches, vectors, row, k)
