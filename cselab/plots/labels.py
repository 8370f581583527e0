"""Words for the raw keys that figures are drawn from (metrics records, result and sweep frames),
so that no axis, title or colour bar reads ``stsb_dev`` or ``loss/info_nce``.

Statistic names of the ``sim/`` records are labelled by the plotting functions' own statistic
labels; this mapping covers everything else and :func:`readable` turns any other key into words.
"""
from __future__ import annotations

import re
from typing import Sequence

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


# Display names of the methods (config ``method`` keys and their combinations).
METHOD_NAMES = {
    "simcse": "SimCSE",
    "mixcse": "MixCSE",
    "gs_infonce": "GS-InfoNCE",
    "clusterns": "ClusterNS",
    "apincse": "APINCSE",
    # a part of APINCSE trained alone is the paper's ablation without the other (Sec. 4.4)
    "augmented_positive": "APINCSE-IN",
    "interlayer_negative": "APINCSE-AP",
    "mlm": "masked-LM term",
    "bert": "BERT",
}
# STS tasks as the papers' tables head them.
TASK_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R", "avg": "Avg.", "sts_avg": "Avg."}


def method_name(key: str | None) -> str:
    """The display name of a method key (``gs_infonce`` → "GS-InfoNCE"); other keys in words."""
    if key is None:
        return ""
    return METHOD_NAMES.get(key) or " + ".join(METHOD_NAMES.get(k, _words(k)) for k in key.split("+"))


# A method made of parts, and the abbreviations its paper uses for them: a run label
# ``<method>-no_<part>`` is that method without the part, shown as the paper writes it (APINCSE's
# ablations "APINCSE-AP", "APINCSE-IN", Sec. 4.4) and coloured as the part that remains.
METHOD_PARTS = {"apincse": {"ap": "augmented_positive", "in": "interlayer_negative"}}
# the label's "-no_ap" or the paper's "-AP" (matched lower-case)
_ABLATION = re.compile(r"(?P<method>[a-z0-9_]+)-(?:no_)?(?P<part>[a-z0-9]+)")


def _ablation(text: str) -> tuple[str, str] | None:
    """(method, removed part) of an ablation label ``apincse-no_ap`` (or ``APINCSE-AP``), else ``None``."""
    match = _ABLATION.fullmatch(text.strip().lower())
    if match and match["part"] in METHOD_PARTS.get(match["method"], {}):
        return match["method"], match["part"]
    return None


def display_name(name) -> str:
    """A series name as a figure shows it: a raw method key becomes its display name
    (``interlayer_negative`` → "APINCSE-AP": APINCSE without its augmented positive), an ablation
    label its paper's name (``apincse-no_ap`` → "APINCSE-AP"), another raw key (lower case,
    ``_``/``.`` separated, no spaces) becomes words, anything else stays as it is."""
    text = str(name)
    if text in METHOD_NAMES:
        return METHOD_NAMES[text]
    ablation = _ablation(text)
    if ablation:
        return method_name(method_key(text))
    parts = text.split("+")
    if len(parts) > 1 and all(p in METHOD_NAMES for p in parts):   # a run's methods as read_results joins them
        return method_name(method_key(parts))
    if re.fullmatch(r"[a-z0-9]+(?:[_.][a-z0-9]+)+", text):
        return _words(text)
    return text


def task_name(task: str) -> str:
    """An STS task as the papers head it: ``STSBenchmark`` → "STS-B", ``sts/STS12`` → "STS12"."""
    task = str(task).removeprefix("sts/")
    return TASK_NAMES.get(task, task)


# Spellings of the methods in run labels and display names ("SimCSE", "simcse-s1", "gs-infonce").
# the parts of APINCSE before APINCSE itself: "APINCSE augmented positive" is the part
_ALIASES = [("gsinfonce", "gs_infonce"), ("clusterns", "clusterns"), ("mixcse", "mixcse"),
            ("augmentedpositive", "augmented_positive"), ("interlayernegative", "interlayer_negative"),
            ("apincse", "apincse"), ("simcse", "simcse"), ("bert", "bert")]


def method_key(name: str | Sequence[str] | None) -> str | None:
    """The method a run label, display name or config ``method`` list stands for (``None`` when it
    names none): ``["augmented_positive", "interlayer_negative"]`` → ``apincse``."""
    if name is None:
        return None
    if not isinstance(name, str):
        methods = sorted(str(m) for m in name if m != "mlm")
        if set(methods) == {"augmented_positive", "interlayer_negative"}:
            return "apincse"
        return methods[0] if len(methods) == 1 else ("+".join(methods) or None)
    ablation = _ablation(name)   # apincse-no_ap or APINCSE-AP
    if ablation:
        parts = METHOD_PARTS[ablation[0]]
        remaining = [key for part, key in parts.items() if part != ablation[1]]
        return remaining[0] if len(remaining) == 1 else "+".join(sorted(remaining))
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    if "augmentedpositive" in flat and "interlayernegative" in flat:
        return "apincse"
    for alias, key in _ALIASES:
        if alias in flat:
            return key
    return None
