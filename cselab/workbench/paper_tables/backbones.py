"""Which backbone a study's runs start from: a run's ``model``, its runs grouped per backbone, the
backbone as the papers write it (``BERT-base``), and the layer count that turns APINCSE's
``interlayer`` setting into the hidden-state index the paper counts."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

from ..published import BACKBONES, paper_backbone
from ...model.rundir import RunDir, read_config


def run_model(run_dir: str | os.PathLike) -> str:
    """The ``model`` a run was trained from (Hub id, alias or folder)."""
    return str(read_config(run_dir)["model"])

def group_model(members: Mapping[str, Path]) -> str:
    """The backbone the runs of a group start from (``mixed: a, b`` when they differ)."""
    models = list(dict.fromkeys(run_model(p) for p in members.values()))
    return models[0] if len(models) == 1 else "mixed: " + ", ".join(models)

def runs_by_backbone(runs: Mapping[str, Path]) -> dict[str, dict[str, Path]]:
    """``{model: {label: run dir}}``, models in order of first appearance."""
    out: dict[str, dict[str, Path]] = {}
    for label, path in runs.items():
        out.setdefault(run_model(path), {})[label] = Path(path)
    return out

def one_per_backbone(runs: Mapping[str, Path]) -> dict[str, tuple[str, Path]]:
    """``{model: (label, run dir)}``: the first run of each backbone (e.g. whose snapshot 0 stands
    for the untuned backbone)."""
    out: dict[str, tuple[str, Path]] = {}
    for label, path in runs.items():
        out.setdefault(run_model(path), (label, Path(path)))
    return out

def backbone_label(model: str) -> str:
    """How to write a backbone in a label: the papers' name (``BERT-base``), an alias's Hub name
    (``all-MiniLM-L6-v2``) or the folder's name."""
    from ..labels import BACKBONE_NAMES

    backbone = paper_backbone(model)
    return BACKBONES[backbone] if backbone else BACKBONE_NAMES.get(str(model), Path(model).name)

def num_layers(run_dir: str | os.PathLike) -> int:
    """Transformer layers of a run's backbone (``num_hidden_layers`` of its saved model)."""
    from ...model.encoder.backbone import read_model_config

    for folder in RunDir(Path(run_dir)).saved_models().values():
        return int(read_model_config(folder)["num_hidden_layers"])
    raise FileNotFoundError(f"{run_dir}: no saved model (best/ or last/) to read the number of layers from")

def interlayer_index(values: Sequence, runs: Mapping[str, Path], labels: Sequence[str]) -> list[float]:
    """APINCSE's ``interlayer_negative.interlayer`` of each run as the hidden-state index it means
    (−2 of 12 layers → 11, as the paper counts M); ``most_similar`` (no fixed layer) → NaN."""
    from ...model.methods.apincse.interlayer import MOST_SIMILAR, resolve_layer

    return [float("nan") if value == MOST_SIMILAR else float(resolve_layer(int(value), num_layers(runs[label])))
            for value, label in zip(values, labels)]
