"""MixCSE's analyses (Zhang et al., AAAI 2022): pair scores, the spherical cap and the λ bound.

**Scores.** :func:`mixcse_scores` gives the paper's positive / random-negative / mixed-negative
scores (cos/τ) of a model on a sentence set (:func:`mixcse_pair_scores` for one batch of views);
figures name them with the words MixCSE's view declares (:mod:`cselab.workbench.method_views.mixcse`).

**Spherical cap (section Distribution of BERT Embeddings).** MixCSE argues that anisotropic sentence embeddings occupy a spherical
cap of angular radius ω on the unit sphere S^{d−1}, and studies the cosine cos θ between two random
points of the cap: its mean and variance as functions of the dimension d and of ω (the variance
shrinks as d grows, so random negatives all look alike and stop providing gradient signal).
:func:`cap_cosine_moments` estimates both by simulation, exactly, without building d-dimensional
vectors: a point of the cap around the pole e is ``t·e + √(1−t²)·u`` with ``t = cos(angle to e)``
distributed with density ∝ (1 − t²)^{(d−3)/2} on [cos ω, 1] (a truncated Beta((d−1)/2, (d−1)/2)
on (t+1)/2) and u uniform on the sphere orthogonal to e, so for two points

    cos θ = t₁t₂ + √(1−t₁²)√(1−t₂²) · (u₁·u₂),   (u₁·u₂ + 1)/2 ~ Beta((d−2)/2, (d−2)/2).

:func:`sample_cap` builds the vectors themselves (the tests check the two agree).

**λ bound (section MixCSE).** A mixed negative h̃'_ij = normalize(λ h'_i + (1−λ) h'_j) is only a negative
while it stays farther from the anchor h_i than the positive h'_i; for large λ it does not.
:func:`mixed_closer_share` measures, for one batch of two views, the share of mixed negatives with
cos(h_i, h̃'_ij) > cos(h_i, h'_i); :func:`lambda_bound_curve` does it for a model over a sentence set
and a range of λ (two dropout views per batch, as in training).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import torch
from scipy.stats import beta

from ...model.losses.infonce import cosine_matrix
from ...model.methods.mixcse import VARIANTS, MixCSE, mixed_negative_logits, official_mixed_logits


def _check_cap(d: int, omega: float) -> None:
    if d < 3:
        raise ValueError(f"d must be >= 3 (a cap on S^(d-1) needs an orthogonal sphere of dimension >= 1), got {d}")
    if not 0.0 < omega <= np.pi:
        raise ValueError(f"omega must be in (0, π] (the cap's angular radius in radians), got {omega}")


def _cap_heights(n: int, d: int, omega: float, rng: np.random.Generator) -> np.ndarray:
    """t = cos(angle to the pole) of n uniform points of the cap, by inverse survival function
    (precise even when the cap is a tiny share of the sphere)."""
    a = (d - 1) / 2.0
    tail = beta.sf((np.cos(omega) + 1.0) / 2.0, a, a)      # probability mass of the cap
    u = rng.uniform(0.0, 1.0, size=n) * tail
    return np.clip(2.0 * beta.isf(u, a, a) - 1.0, -1.0, 1.0)


def _sphere_dots(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """u₁·u₂ for n independent pairs of uniform points on S^{dim−1}."""
    if dim == 1:   # S^0 = {−1, +1}
        return rng.choice([-1.0, 1.0], size=n)
    a = (dim - 1) / 2.0
    return 2.0 * rng.beta(a, a, size=n) - 1.0


def cap_pair_cosines(n_pairs: int, d: int, omega: float, seed: int = 0) -> np.ndarray:
    """cos θ of ``n_pairs`` independent pairs of uniform points on a cap of radius ω in S^{d−1}."""
    _check_cap(d, omega)
    rng = np.random.default_rng(seed)
    t1, t2 = _cap_heights(n_pairs, d, omega, rng), _cap_heights(n_pairs, d, omega, rng)
    return t1 * t2 + np.sqrt(1 - t1 ** 2) * np.sqrt(1 - t2 ** 2) * _sphere_dots(n_pairs, d - 1, rng)


def sample_cap(n: int, d: int, omega: float, seed: int = 0) -> np.ndarray:
    """n uniform unit vectors of R^d within angle ω of the pole e₁ (rows)."""
    _check_cap(d, omega)
    rng = np.random.default_rng(seed)
    t = _cap_heights(n, d, omega, rng)
    u = rng.standard_normal((n, d - 1))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return np.concatenate([t[:, None], np.sqrt(1 - t ** 2)[:, None] * u], axis=1)


def cap_cosine_moments(d: int, omega: float, n_pairs: int = 200_000, seed: int = 0) -> dict[str, float]:
    """Mean and variance of cos θ between two random points of the cap (simulation)."""
    cos = cap_pair_cosines(n_pairs, d, omega, seed)
    return {"mean_cos": float(cos.mean()), "var_cos": float(cos.var())}


def cap_geometry_table(dims: Sequence[int] = (16, 64, 256, 768, 1024),
                       omegas_deg: Sequence[float] = (30, 60, 90, 120, 180),
                       n_pairs: int = 200_000, seed: int = 0) -> pd.DataFrame:
    """The spherical-cap simulation grid (section Distribution of BERT Embeddings): one row per (d, ω) with the mean and variance of cos θ."""
    rows = []
    for d in dims:
        for omega_deg in omegas_deg:
            moments = cap_cosine_moments(d, np.radians(omega_deg), n_pairs, seed)
            rows.append({"d": d, "omega_deg": float(omega_deg), **moments})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- scores
def mixcse_pair_scores(z1: torch.Tensor, z2: torch.Tensor, mix_lambda: float = 0.2, temperature: float = 0.05,
                       variant: str = "paper") -> dict[str, torch.Tensor]:
    """Per-pair scores cos/τ of one batch of two views (rows aligned), as in MixCSE's Fig. on the
    gradient signal: ``positive`` (h_i, h'_i), ``random_negative`` (h_i, h'_j) for j ≠ i and
    ``mixed_negative`` (h_i, h̃'_ij): paper — every j ≠ i; official — the mixture of the positive
    with the next row, λ·z2_i + (1−λ)·z2_{i+1} on raw vectors. Returns flat tensors."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    n = z1.shape[0]
    if n < 2:
        raise ValueError(f"a batch needs at least 2 rows to have negatives, got {n}")
    cos = cosine_matrix(z1, z2)
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=cos.device)
    if variant == "paper":
        mixed = mixed_negative_logits(cos, cosine_matrix(z2, z2), torch.arange(n, device=cos.device),
                                      mix_lambda, temperature)[off_diagonal]
    else:
        mixed = official_mixed_logits(z1, z2, mix_lambda, temperature)[0].diagonal()
    return {"positive": cos.diagonal() / temperature, "random_negative": cos[off_diagonal] / temperature,
            "mixed_negative": mixed}


# How many distinct STS-B dev sentences MixCSE's scores are recomputed over at every snapshot on a CPU
# profile: the one number the dynamics notebook's mixcse_scores_snapshots and paper_mixcse's
# scores_snapshots_mixcse both default to (the cpu-demo drew them over 96 and 128 sentences, so its two
# figures of the same scores said different numbers), and both say on their face.
SCORE_SENTENCES = 256


def mixcse_scores(encoder, sentences: list[str], mix_lambda: float = 0.2, temperature: float = 0.05,
                  batch_size: int = 64, max_length: int | None = 32, variant: str = "paper",
                  seed: int = 0) -> dict[str, float]:
    """Mean positive / random-negative / mixed-negative scores (cos/τ) of ``encoder`` on ``sentences``.

    The sentences (deduplicated, order kept, so that no "negative" is the sentence itself) are cut
    into batches of ``batch_size`` in order; each batch goes through the training path twice, as in
    training (the training path with dropout on), so the two views differ
    by dropout only. Means are over all pairs of all batches (a last batch of one sentence is
    skipped: it has no negatives). Dropout draws come from ``seed`` inside a forked RNG, so calling
    this during training changes nothing in the run.

    Args:
        encoder: a :class:`~cselab.model.encoder.SentenceEncoder` (its ``iter_batches``).
        sentences: e.g. the STS-B dev sentences.

    Returns:
        ``{"positive": …, "random_negative": …, "mixed_negative": …}`` (floats, cos/τ).

    Example::

        dev = load_stsb(data_dir)["dev"]
        mixcse_scores(encoder, list(dev.sentences1) + list(dev.sentences2))
    """
    unique = list(dict.fromkeys(sentences))
    if len(unique) < 2:
        raise ValueError(f"sentences: need at least 2 distinct sentences, got {len(unique)}")
    if batch_size < 2:
        raise ValueError(f"batch_size must be >= 2, got {batch_size}")
    sums = {"positive": 0.0, "random_negative": 0.0, "mixed_negative": 0.0}
    counts = dict.fromkeys(sums, 0)
    if len(unique) % batch_size == 1:   # a last batch of one sentence has no negatives
        unique = unique[:-1]
    for chunk, out in encoder.iter_batches(unique, batch_size, path="train", dropout=True, seed=seed,
                                           max_length=max_length):
        emb = out.embeddings.float()
        scores = mixcse_pair_scores(emb[:len(chunk)], emb[len(chunk):], mix_lambda, temperature, variant)
        for key, values in scores.items():
            sums[key] += float(values.sum())
            counts[key] += values.numel()
    return {key: sums[key] / counts[key] for key in sums}


# --------------------------------------------------------------------------- λ bound
def mixed_closer_share(z1: torch.Tensor, z2: torch.Tensor, mix_lambda: float) -> float:
    """Share of the B(B−1) mixed negatives h̃'_ij (j ≠ i) closer to the anchor h_i = z1_i than its
    positive h'_i = z2_i is (strictly larger cosine). ``z1``, ``z2``: (B×D) views, rows aligned."""
    if z1.shape != z2.shape or z1.ndim != 2 or z1.shape[0] < 2:
        raise ValueError(f"expected two (B×D) views with B >= 2, got {tuple(z1.shape)} and {tuple(z2.shape)}")
    z1, z2 = z1.double(), z2.double()
    n = z1.shape[0]
    cos = cosine_matrix(z1, z2)
    mixed = mixed_negative_logits(cos, cosine_matrix(z2, z2), torch.arange(n), mix_lambda, 1.0)
    off_diagonal = ~torch.eye(n, dtype=torch.bool)
    closer = mixed > cos.diagonal().unsqueeze(1)
    return float(closer[off_diagonal].double().mean())


def dropout_views(encoder, sentences: Sequence[str], max_length: int | None = 32, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Two training-path views of one batch (dropout on, as in a training step), drawn from ``seed``
    in a forked RNG so that calling this mid-training leaves the run's random stream untouched."""
    sentences = list(sentences)
    (_, out), = encoder.iter_batches(sentences, len(sentences), path="train", dropout=True, seed=seed,
                                     max_length=max_length)
    emb = out.embeddings.float().cpu()
    return emb[:len(sentences)], emb[len(sentences):]


def lambda_bound_curve(encoder, sentences: Sequence[str], lambdas: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
                       batch_size: int = 64, max_length: int | None = 32, seed: int = 0) -> pd.DataFrame:
    """For each λ, the share of mixed negatives closer to the anchor than its positive, over the
    sentences cut into training-sized batches (deduplicated, in order; batches of one skipped)."""
    unique = list(dict.fromkeys(sentences))
    if batch_size < 2 or len(unique) < 2:
        raise ValueError(f"need batch_size >= 2 and at least 2 distinct sentences, got {batch_size} and {len(unique)}")
    batches = [unique[i:i + batch_size] for i in range(0, len(unique), batch_size)]
    views = [dropout_views(encoder, b, max_length, seed + k) for k, b in enumerate(batches) if len(b) >= 2]
    weights = [len(z1) * (len(z1) - 1) for z1, _ in views]   # mixed negatives per batch
    rows = []
    for lam in lambdas:
        shares = [mixed_closer_share(z1, z2, lam) for z1, z2 in views]
        rows.append({"lambda": float(lam), "closer_share": float(np.average(shares, weights=weights))})
    return pd.DataFrame(rows)


def mixcse_score_series(runs, sentences: list[str], batch_size: int = 64, max_length: int | None = 32,
                        seed: int = 0, steps=None) -> pd.DataFrame:
    """MixCSE's score dynamics from the runs' model snapshots (``snapshot_every``): one row per
    (run, step) with ``positive``, ``random_negative`` and ``mixed_negative`` (:func:`mixcse_scores`,
    cos/τ with the run's τ). A MixCSE run's mixtures use its own λ and variant; any other run (e.g. SimCSE, the
    paper's comparison) is scored with MixCSE's default λ: the mixed negatives it would have had.
    The same ``seed`` draws the dropout of every snapshot, so the curves differ by the model only."""
    from ...model.methods.mixcse import MixCSEParams
    from .logged import snapshot_series

    def measure(encoder, config) -> dict[str, float]:
        params = config.get(MixCSE.name) or {}
        return mixcse_scores(encoder, sentences, params.get("mix_lambda", MixCSEParams().mix_lambda),
                             config["temperature"], batch_size, max_length, params.get("variant", "paper"), seed)

    return snapshot_series(runs, measure, steps)


# --------------------------------------------------------------------------- largest angle (Analysis)
def largest_angle_series(runs, data_dir=None, batch_size: int = 128) -> pd.DataFrame:
    """MixCSE's largest-angle curve (Analysis): the largest angle between two probe embeddings over training, one
    row per (run, step) with ``largest_angle`` in degrees, **from step 0**: the paper's claim is
    about how far training widens the cap the untrained backbone's embeddings fill. The trainer
    probes the model it starts from; for runs made before it did, that model is measured here on
    the run's own probe set (:func:`cselab.workbench.analysis.logged.start_probe_records`) and put first."""
    from ...model.rundir import read_metrics
    from .logged import start_probe_records

    probes = read_metrics(runs, "probe")
    if "largest_angle" not in probes or probes["largest_angle"].isna().all():
        raise ValueError("largest_angle_series: the runs hold no probe records (train with probe_every)")
    start = start_probe_records(runs, data_dir, batch_size)
    frame = (pd.concat([start, probes], ignore_index=True) if len(start) else probes)[["run", "step", "largest_angle"]]
    frame = frame.dropna()
    order = {label: i for i, label in enumerate(dict.fromkeys(probes["run"]))}
    return (frame.assign(_order=frame["run"].map(order)).sort_values(["_order", "step"], kind="stable")
            .drop(columns="_order").drop_duplicates(["run", "step"]).reset_index(drop=True))
