"""Words for the raw keys that figures are drawn from (metrics records, result and sweep frames),
so that no axis, title or colour bar reads ``stsb_dev`` or ``loss/info_nce``.

Statistic names of the ``sim/`` records are labelled by the plotting functions' own statistic
labels; this mapping covers everything else and :func:`readable` turns any other key into words.
"""
from __future__ import annotations

KEY_LABELS = {
    # metrics records (cselab.train.loop, cselab.analysis.probes)
    "loss": "training loss",
    "loss/info_nce": "InfoNCE loss",
    "loss/info_nce_forward": "InfoNCE loss (view 1 anchors)",
    "loss/info_nce_reverse": "InfoNCE loss (view 2 anchors)",
    "loss/mlm.mlm": "masked-LM loss",
    "loss/clusterns.bml": "bidirectional margin loss",
    "loss/augmented_positive.l_p": "augmented-positive loss",
    "loss/interlayer_negative.l_n": "interlayer-negative loss",
    "lr": "learning rate",
    "epoch": "epoch",
    "step": "training step",
    "stsb_dev": "STS-B dev (Spearman ×100)",
    "best_stsb_dev": "best STS-B dev (Spearman ×100)",
    "grad/z1_norm": "‖∂L/∂z‖, view 1",
    "grad/z2_norm": "‖∂L/∂z‖, view 2",
    "alignment": "alignment",
    "uniformity": "uniformity",
    "mean_cos": "mean cosine",
    "largest_angle": "largest angle (degrees)",
    # result frames (cselab.rundir.read_results) and sweeps
    "sts_avg": "STS average (Spearman ×100)",
    "sts/avg": "STS average (Spearman ×100)",
    "sts/STSBenchmark": "STS-B test (Spearman ×100)",
    "sts/SICKRelatedness": "SICK-R (Spearman ×100)",
    "transfer/avg": "transfer average (accuracy)",
    "best_step": "best step",
    "batch_size": "batch size",
    "temperature": "temperature τ",
    "clusterns.num_clusters": "number of clusters K",
    "gs_infonce.noise_ratio": "Gaussian negatives per batch size (M / B)",
    "mixcse.mix_lambda": "mixing weight λ",
    "augmented_positive.top_k": "neighbours k",
    "augmented_positive.queue_size": "queue size L",
}


def readable(key: str) -> str:
    """Words for ``key``: :data:`KEY_LABELS`, else the key with its separators as spaces
    (``loss/<part>`` → "<part> loss", ``sts/<task>`` → "<task> (Spearman ×100)")."""
    if key in KEY_LABELS:
        return KEY_LABELS[key]
    if key.startswith("loss/"):
        return f"{_words(key.removeprefix('loss/'))} loss"
    if key.startswith("sts/"):
        return f"{key.removeprefix('sts/')} (Spearman ×100)"
    return _words(key)


def _words(key: str) -> str:
    for separator in ("/", ".", "_"):
        key = key.replace(separator, " ")
    return " ".join(key.split())
