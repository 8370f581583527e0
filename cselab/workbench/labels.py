"""Words for the raw keys that figures are drawn from (metrics records, result and sweep frames),
so that no axis, title or colour bar reads ``stsb_dev`` or ``loss/info_nce``.

Statistic names of the ``sim/`` records are labelled by the plotting functions' own statistic
labels; this mapping covers everything else and :func:`readable` turns any other key into words.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping, Sequence

from ..model.config import DEFAULT_METHOD
from ..model.methods import FAMILIES, aliases as method_aliases, display_names, family_of, is_auxiliary
from ..model.methods import key_labels as registry_key_labels

KEY_LABELS = {
    # metrics records (cselab.model.train.loop, cselab.workbench.analysis.probes)
    "loss": "training loss",
    "loss/info_nce": "InfoNCE loss",
    "loss/info_nce_forward": "InfoNCE loss (view 1 anchors)",
    "loss/info_nce_reverse": "InfoNCE loss (view 2 anchors)",
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
    # result frames (cselab.model.rundir.read_results) and sweeps
    "sts_avg": "STS average (Spearman ×100)",
    "sts/avg": "STS average (Spearman ×100)",
    "sts/STSBenchmark": "STS-B test (Spearman ×100)",
    "sts/SICKRelatedness": "SICK-R (Spearman ×100)",
    "transfer/avg": "transfer average (accuracy)",
    "best_step": "best step",
    "batch_size": "batch size",
    "temperature": "temperature τ",
}


def readable(key: str) -> str:
    """Words for ``key``: :data:`KEY_LABELS`, else the key with its separators as spaces
    (``loss/<part>`` → "<part> loss", ``sts/<task>`` → "<task> (Spearman ×100)")."""
    # every method's hyper-parameters and loss terms, in the words its own module declares
    labels = {**registry_key_labels(), **KEY_LABELS}
    if key in labels:
        return labels[key]
    if key.startswith("loss/"):
        return f"{_words(key.removeprefix('loss/'))} loss"
    if key.startswith("sts/"):
        return f"{key.removeprefix('sts/')} (Spearman ×100)"
    return _words(key)


def _words(key: str) -> str:
    for separator in ("/", ".", "_"):
        key = key.replace(separator, " ")
    return " ".join(key.split())


# Display names of the methods (config ``method`` keys, families and their combinations), as each
# method's module declares them; the untrained backbone is no method but a series of its own.
def method_names() -> dict[str, str]:
    """Read from the registry on every call, so a method registered after this import is named too."""
    return {**display_names(), "bert": "BERT"}
# STS tasks as the papers' tables head them.
TASK_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R", "avg": "Avg.", "sts_avg": "Avg."}


def method_name(key: str | None) -> str:
    """The display name of a method key (``gs_infonce`` → "GS-InfoNCE"); other keys in words."""
    if key is None:
        return ""
    names = method_names()
    return names.get(key) or " + ".join(names.get(k, _words(k)) for k in key.split("+"))


# A method made of parts (a registered family), and the abbreviations its paper uses for them: a run
# label ``<method>-no_<part>`` is that method without the part, shown as the paper writes it
# (APINCSE's ablations "APINCSE-AP", "APINCSE-IN", Sec. 4.4) and coloured as the part that remains.
def method_parts() -> dict[str, dict[str, str]]:
    return {name: dict(family.parts) for name, family in FAMILIES.items()}
# the label's "-no_ap" or the paper's "-AP" (matched lower-case)
_ABLATION = re.compile(r"(?P<method>[a-z0-9_]+)-(?:no_)?(?P<part>[a-z0-9]+)")


def _ablation(text: str) -> tuple[str, str] | None:
    """(method, removed part) of an ablation label ``apincse-no_ap`` (or ``APINCSE-AP``), else ``None``."""
    match = _ABLATION.fullmatch(text.strip().lower())
    if match and match["part"] in method_parts().get(match["method"], {}):
        return match["method"], match["part"]
    return None


# A family's pooler with neither of its parts, i.e. with SimCSE's loss: the run label
# ``<family>-pooler`` (APINCSE's layer-attention pooler alone, the control that separates the
# pooler's effect from its two terms'; the paper's -bs64 is the same at its batch size of 64).
_POOLER_ONLY = re.compile(r"(?P<method>[a-z0-9_]+)[- ]pooler(?: only)?")
POOLER_ONLY_METHOD = DEFAULT_METHOD   # what is left of a family without its parts: the InfoNCE core


def _pooler_only(text: str) -> str | None:
    """The family of a pooler-only label (``apincse-pooler``, or its display name), else None."""
    match = _POOLER_ONLY.fullmatch(text.strip().lower())
    return match["method"] if match and match["method"] in FAMILIES else None


# The paper's own names for it: APINCSE-bs64 and -bs128 ("neither term", at those batch sizes).
_POOLER_ONLY_PAPER = re.compile(r"(?P<method>[a-z0-9_]+)-bs\d+")


def is_pooler_only(name) -> bool:
    """Whether a label or display name is a family's pooler-only control (``apincse-pooler``, or
    the paper's ``APINCSE-bs64``): the figures draw it in a colour of its own, dashed."""
    if not isinstance(name, str):
        return False
    paper = _POOLER_ONLY_PAPER.fullmatch(name.strip().lower())
    return _pooler_only(name) is not None or bool(paper and paper["method"] in FAMILIES)


def ablation_family(label: str) -> str | None:
    """The family (``apincse``) whose ablation a run label without its seed names: the family itself,
    the family without one of its parts (``apincse-no_ap``) or its pooler alone (``apincse-pooler``);
    None for any other label. What the compare notebook finds its ablation by on its defaults."""
    text = label.strip().lower()
    if text in FAMILIES:
        return text
    ablation = _ablation(text)
    return ablation[0] if ablation else _pooler_only(text)


def pooler_only_name(family: str) -> str:
    return f"{FAMILIES[family].display_name} pooler only"


# Backbones as their authors name them (an alias → its Hub name); the papers' backbones are
# named by cselab.workbench.published.BACKBONES.
BACKBONE_NAMES = {"all-minilm-l6": "all-MiniLM-L6-v2"}
# Poolers in words (the config's ``pooler``).
POOLER_NAMES = {"cls": "[CLS]", "cls_before_pooler": "[CLS] before the MLP", "avg": "mean pooling",
                "avg_first_last": "first-last mean", "avg_top2": "top-2 mean", "layer_attention": "layer-attention pooler",
                "prompt": "prompt [MASK]"}


def backbone_words(model) -> str:
    """A backbone as a figure names it: ``all-minilm-l6`` → "all-MiniLM-L6-v2", ``bert-base-uncased``
    → "BERT-base", a local folder by its last part, another Hub id as it is."""
    from pathlib import Path

    from .published import BACKBONES, paper_backbone

    text = str(model)
    paper = paper_backbone(text)
    if paper:
        return BACKBONES[paper]
    if text in BACKBONE_NAMES:
        return BACKBONE_NAMES[text]
    return Path(text).name if "/" in text and Path(text).exists() else text


def pooler_words(pooler: str) -> str:
    return POOLER_NAMES.get(pooler, _words(pooler))


def display_name(name) -> str:
    """A series name as a figure shows it: a raw method key becomes its display name
    (``interlayer_negative`` → "APINCSE-AP": APINCSE without its augmented positive), an ablation
    label its paper's name (``apincse-no_ap`` → "APINCSE-AP"), a pooler-only label its words
    (``apincse-pooler`` → "APINCSE pooler only"), another raw key (lower case,
    ``_``/``.`` separated, no spaces) becomes words, anything else stays as it is."""
    text = str(name)
    names = method_names()
    if text in names:
        return names[text]
    ablation = _ablation(text)
    if ablation:
        return method_name(method_key(text))
    family = _pooler_only(text)
    if family:
        return pooler_only_name(family)
    parts = text.split("+")
    if len(parts) > 1 and all(p in names for p in parts):   # a run's methods as read_results joins them
        return method_name(method_key(parts))
    if re.fullmatch(r"[a-z0-9]+(?:[_.][a-z0-9]+)+", text):
        return _words(text)
    return text


def task_name(task: str) -> str:
    """An STS task as the papers head it: ``STSBenchmark`` → "STS-B", ``sts/STS12`` → "STS12"."""
    task = str(task).removeprefix("sts/")
    return TASK_NAMES.get(task, task)


# Spellings of the methods in run labels and display names ("SimCSE", "simcse-s1", "gs-infonce"),
# longest first (the parts of APINCSE before APINCSE itself, ESimCSE before SimCSE).
def _aliases() -> list[tuple[str, str]]:
    return [*method_aliases(), ("bert", "bert")]


def method_key(name: str | Sequence[str] | None) -> str | None:
    """The method a run label, display name or config ``method`` list stands for (``None`` when it
    names none): ``["augmented_positive", "interlayer_negative"]`` → ``apincse``."""
    if name is None:
        return None
    if not isinstance(name, str):
        methods = sorted(str(m) for m in name if not is_auxiliary(m))
        family = family_of(methods)
        if family is not None:
            return family.name
        return methods[0] if len(methods) == 1 else ("+".join(methods) or None)
    if _pooler_only(name):   # apincse-pooler: the family's pooler with SimCSE's loss
        return POOLER_ONLY_METHOD
    ablation = _ablation(name)   # apincse-no_ap or APINCSE-AP
    if ablation:
        parts = method_parts()[ablation[0]]
        remaining = [key for part, key in parts.items() if part != ablation[1]]
        return remaining[0] if len(remaining) == 1 else "+".join(sorted(remaining))
    flat = re.sub(r"[^a-z0-9]", "", name.lower().replace("++", "pp"))
    for family in FAMILIES.values():   # all of a family's parts named: the family
        if all(re.sub(r"[^a-z0-9]", "", part) in flat for part in family.methods):
            return family.name
    for alias, key in _aliases():
        if alias in flat:
            return key
    return None


# ------------------------------------------------------------------ runs grouped by method
# Figures draw the runs of a group as one series and tables summarise them; the analysis layer
# (cselab.workbench.analysis) names groups the same way, so these live here, below both.
IGNORED_CONFIG = ("seed", "run_name", "output_dir")


def run_groups(runs: Mapping[str, Path]) -> dict[str, dict]:
    """Runs that differ only in ``seed`` (and where they were written) form one group, named by its
    method (``SimCSE``), or by its first run's label when the method has several settings:
    ``{group name: {"method": key, "runs": [labels]}}``, in the order of the runs."""
    from ..model.rundir import read_config

    configs = {}
    for label, path in runs.items():
        config = read_config(path)
        configs[label] = {k: v for k, v in config.items() if k not in IGNORED_CONFIG}
    settings: list[tuple[dict, list[str]]] = []
    for label, config in configs.items():
        for known, labels in settings:
            if known == config:
                labels.append(label)
                break
        else:
            settings.append((config, [label]))
    per_method: dict[str, int] = {}
    for config, _ in settings:
        key = method_key(config.get("method")) or "?"
        per_method[key] = per_method.get(key, 0) + 1
    groups = {}
    for config, labels in settings:
        key = method_key(config.get("method"))
        name = method_name(key) if key and per_method[key] == 1 and len(labels) > 1 else labels[0]
        if len(labels) > 1 and name == labels[0]:
            name = strip_seed(labels[0])
        groups[name] = {"method": key, "runs": labels}
    return groups


def frame_groups(runs: Sequence[str]) -> dict[str, dict]:
    """Groups for the runs of a frame (no configs to compare): labels that are the same but for a
    seed suffix (``simcse-s1``, ``simcse-s2``) form one group; every other run is its own."""
    stems: dict[str, list[str]] = {}
    for run in runs:
        stems.setdefault(strip_seed(str(run)), []).append(run)
    groups = {}
    for stem, labels in stems.items():
        if len(labels) > 1:
            key = method_key(stem)
            # "simcse-s1", "simcse-s2": the group is the method itself, named as the papers do
            exact = key is not None and re.sub(r"[^a-z0-9]", "", stem.lower()) in (
                re.sub(r"[^a-z0-9]", "", key), re.sub(r"[^a-z0-9]", "", method_name(key).lower()))
            groups[method_name(key) if exact else stem] = {"method": key, "runs": labels}
        else:
            groups[labels[0]] = {"method": method_key(str(labels[0])), "runs": labels}
    return groups


def strip_seed(label: str) -> str:
    """A run label without its seed suffix (``apincse-no_ap-s2`` → ``apincse-no_ap``)."""
    return re.sub(r"[-_ ]?(s|seed)[-_=]?\d+$", "", label) or label
