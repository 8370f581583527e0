"""Geometry of an embedding space: alignment, uniformity, anisotropy, the largest angle.

Alignment and uniformity (Wang & Isola, ICML 2020, eq. 4–5), on L2-normalised embeddings f:

    ℓ_align   = E_{(x, y) ~ p_pos} ‖f(x) − f(y)‖₂^α                    (α = 2)
    ℓ_uniform = log E_{x, y ~ p_data i.i.d.} e^{−t ‖f(x) − f(y)‖₂²}     (t = 2)

Lower is better for both. As in their reference code (``torch.pdist(x).pow(2).mul(-t).exp().mean().log()``)
the uniformity expectation runs over the distinct pairs i < j of the sentence set.

SimCSE (§3, Fig. 2, footnote 3: "STS-B pairs with a score higher than 4 as p_pos and all STS-B
sentences as p_data") and ClusterNS (Fig. 6) measure them on STS-B. :func:`evaluate_alignment_uniformity` does that; its
``split`` argument chooses which STS-B split (default ``"all"``: the papers say "STS-B" without a
split; see docs/evaluation.md).

Anisotropy is the mean cosine between distinct embeddings (Ethayarajh 2019); the largest angle
between any two embeddings is MixCSE's measure of the spherical cap the embeddings occupy.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..data.sts import load_stsb
from ..io import atomic_write_json

GEOMETRY_SPLITS = ("train", "dev", "test", "all")   # STS-B's splits, or all of them
POSITIVE_THRESHOLD = 4.0


def normalize_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array of embeddings, got shape {x.shape}")
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """ℓ_align: mean ‖f(x_i) − f(y_i)‖^α over aligned rows (positive pairs), after normalising."""
    x, y = normalize_rows(x), normalize_rows(y)
    if x.shape != y.shape:
        raise ValueError(f"positive pairs need equal shapes, got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise ValueError("alignment needs at least one positive pair")
    return float(np.mean(np.linalg.norm(x - y, axis=1) ** alpha))


def _pair_cosines(x: np.ndarray, block: int = 2048):
    """Yield the cosines of the pairs i < j of unit rows ``x``, one block of rows at a time (no
    n×n matrix in memory)."""
    n = len(x)
    for start in range(0, n, block):
        stop = min(start + block, n)
        upper = np.arange(start, stop)[:, None] < np.arange(n)[None, :]
        if upper.any():
            yield (x[start:stop] @ x.T)[upper]


def _uniformity_and_smallest_cosine(x: np.ndarray, t: float) -> tuple[float, float]:
    """ℓ_uniform and the smallest pair cosine of unit rows ``x`` (n >= 2), in one blocked pass."""
    n = len(x)
    total, smallest = 0.0, np.inf
    for cos in _pair_cosines(x):
        # For unit vectors ‖a − b‖² = 2 − 2 cos(a, b); accumulate in log-space-safe float64.
        sq = np.clip(2.0 - 2.0 * cos, 0.0, 4.0)
        total += float(np.exp(-t * sq).sum())
        smallest = min(smallest, float(cos.min()))
    return float(np.log(total / (n * (n - 1) / 2))), smallest


def _angle_degrees(cos: float) -> float:
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def _unit_rows(x: np.ndarray, what: str) -> np.ndarray:
    x = normalize_rows(x)
    if len(x) < 2:
        raise ValueError(f"{what} needs at least two embeddings")
    return x


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """ℓ_uniform: log of the mean of exp(−t‖f(x_i) − f(x_j)‖²) over the pairs i < j."""
    return _uniformity_and_smallest_cosine(_unit_rows(x, "uniformity"), t)[0]


def mean_pairwise_cosine(x: np.ndarray) -> float:
    """Anisotropy: mean cosine over ordered pairs i ≠ j, = (‖Σ f(x_i)‖² − n) / (n(n − 1))."""
    x = _unit_rows(x, "mean pairwise cosine")
    n = len(x)
    s = x.sum(axis=0)
    return float((s @ s - np.sum(x * x)) / (n * (n - 1)))


def largest_angle(x: np.ndarray) -> float:
    """The largest angle (degrees) between any two of the embeddings."""
    x = _unit_rows(x, "the largest angle")
    return _angle_degrees(_uniformity_and_smallest_cosine(x, t=2.0)[1])   # the pass's ℓ_uniform is dropped


def geometry_summary(embeddings: np.ndarray, positives: tuple[np.ndarray, np.ndarray] | None = None,
                     t: float = 2.0, alpha: float = 2.0) -> dict[str, float]:
    """Uniformity, anisotropy and largest angle of ``embeddings``; alignment when ``positives`` is given.

    One blocked pass over the pairs serves both uniformity and the largest angle."""
    uniform, smallest = _uniformity_and_smallest_cosine(_unit_rows(embeddings, "uniformity"), t)
    out = {"uniformity": uniform, "mean_cos": mean_pairwise_cosine(embeddings),
           "largest_angle": _angle_degrees(smallest)}
    if positives is not None:
        out = {"alignment": alignment(*positives, alpha=alpha), **out}
    return out


def describe_geometry(result: dict) -> str:
    """What an alignment–uniformity result was measured on, in words (a figure's note): "ℓ_align:
    the 162 pairs scored > 4 of a 600-pair sample of STS-B dev; ℓ_uniform: its 1,187 sentences"."""
    split = result.get("split", "all")
    where = "STS-B (train, dev and test)" if split == "all" else f"STS-B {split}"
    sample = f"a {result['max_pairs']:,}-pair sample of {where}" if result.get("max_pairs") else where
    return (f"ℓ_align: the {result['positive_pairs']:,} pairs scored > {result.get('threshold', POSITIVE_THRESHOLD):g} "
            f"of {sample}; ℓ_uniform: its {result['sentences']:,} sentences")


def evaluate_alignment_uniformity(model, split: str = "all", data_dir: str | os.PathLike | None = None,
                                  batch_size: int = 128, t: float = 2.0, alpha: float = 2.0,
                                  threshold: float = POSITIVE_THRESHOLD, max_pairs: int | None = None,
                                  sample_seed: int = 0, output: str | os.PathLike | None = None) -> dict:
    """Alignment and uniformity (plus anisotropy and largest angle) of ``model`` on STS-B.

    Positives: the pairs of ``split`` with gold score > ``threshold``; uniformity and the rest: the
    distinct sentences of ``split``. ``split="all"`` pools train, dev and test. ``max_pairs``
    keeps a seeded uniform sample of that many pairs of the split (``sample_seed``; file order
    kept) and measures on their sentences and positives only: cheaper, noisier, not the papers'
    protocol (the result records ``max_pairs``).
    """
    if split not in GEOMETRY_SPLITS:
        raise ValueError(f"split must be one of {GEOMETRY_SPLITS}, got {split!r}")
    if max_pairs is not None and (isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 2):
        raise ValueError(f"max_pairs must be an integer >= 2 or None, got {max_pairs!r}")
    start = time.perf_counter()
    stsb = load_stsb(data_dir)
    parts = list(stsb.values()) if split == "all" else [stsb[split]]
    s1 = [s for p in parts for s in p.sentences1]
    s2 = [s for p in parts for s in p.sentences2]
    scores = np.concatenate([p.scores for p in parts])
    if max_pairs is not None and max_pairs < len(scores):
        keep = np.sort(np.random.default_rng(sample_seed).choice(len(scores), size=max_pairs, replace=False))
        s1, s2, scores = [s1[i] for i in keep], [s2[i] for i in keep], scores[keep]
    sentences = sorted(set(s1) | set(s2))
    vectors = np.asarray(model.encode(sentences, batch_size=batch_size))
    row = {s: i for i, s in enumerate(sentences)}
    positive = np.flatnonzero(scores > threshold)
    summary = geometry_summary(vectors, (vectors[[row[s1[i]] for i in positive]],
                                         vectors[[row[s2[i]] for i in positive]]), t=t, alpha=alpha)
    result = {**summary, "split": split, "positive_pairs": int(len(positive)), "sentences": len(sentences),
              "t": t, "alpha": alpha, "threshold": threshold, "max_pairs": max_pairs,
              "seconds": time.perf_counter() - start}
    if output is not None:
        atomic_write_json(Path(output), result)
    return result
