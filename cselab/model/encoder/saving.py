"""A :class:`~cselab.model.encoder.SentenceEncoder` on disk: ``from_pretrained`` and ``save``.

A saved encoder is a standard Hugging Face folder (the backbone and its tokenizer) plus two cselab
files: ``cselab.json`` (pooler, ``mlp_only_train``, backbone name, pooler options, whatever the
caller adds, such as the step) and ``cselab_modules.safetensors`` (the weights outside the
backbone: the MLP head, learnable poolers). :mod:`cselab.model.encoder.export` adds the
sentence-transformers files and :mod:`cselab.model.encoder.model_card` the README.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Self

import torch
from safetensors.torch import save_file

from ..io import atomic_write_json, read_json, read_safetensors
from .backbone import DEFAULT_BACKBONE, SAVED_ENCODER, load_backbone, quiet_hf

if TYPE_CHECKING:
    from .model_card import RunFacts

CONFIG_NAME = SAVED_ENCODER   # the name backbone.py gives it (the owner of model folders)
MODULES_NAME = "cselab_modules.safetensors"


def read_saved_config(path: Path) -> dict:
    """``cselab.json`` of a saved encoder, checked: one error naming the file when it is damaged."""
    saved = read_json(path)
    if not isinstance(saved, dict):
        raise ValueError(f"{path}: expected a JSON object with the saved pooler, got {type(saved).__name__}")
    if not isinstance(saved.get("pooler"), str) or not isinstance(saved.get("mlp_only_train"), bool):
        raise ValueError(f"{path}: missing or invalid 'pooler' (a string) or 'mlp_only_train' (true/false)")
    if not isinstance(saved.get("pooler_options") or {}, dict):
        raise ValueError(f"{path}: 'pooler_options' must be a mapping")
    return saved


class SavedFolder:
    """Loading and saving, mixed into :class:`~cselab.model.encoder.SentenceEncoder` (it uses the
    encoder's ``backbone``, ``tokenizer``, ``pooler_name``, ``mlp_only_train``, ``backbone_name``
    and ``pooler_options``)."""

    @classmethod
    def from_pretrained(cls, name: str | os.PathLike = DEFAULT_BACKBONE, pooler: str | None = None,
                        mlp_only_train: bool | None = None, dropout: float | None = None,
                        pooler_options: dict | None = None) -> Self:
        """A backbone (alias, Hub id or folder). A folder saved by cselab keeps its pooler and
        head unless overridden; a plain backbone gets ``pooler`` (default ``cls``) and a fresh head."""
        path = Path(os.fspath(name)).expanduser()
        saved = read_saved_config(path / CONFIG_NAME) if (path / CONFIG_NAME).is_file() else None
        model, tokenizer = load_backbone(name, dropout=dropout)
        if saved is None:
            return cls(model, tokenizer, pooler or "cls", True if mlp_only_train is None else mlp_only_train,
                       backbone_name=os.fspath(name), pooler_options=pooler_options)
        enc = cls(model, tokenizer, pooler or saved["pooler"],
                  saved["mlp_only_train"] if mlp_only_train is None else mlp_only_train,
                  backbone_name=saved.get("backbone_name", os.fspath(name)),
                  pooler_options=saved.get("pooler_options") if pooler_options is None else pooler_options)
        modules = path / MODULES_NAME
        if modules.is_file():
            state = read_safetensors(modules)
            own = enc.extra_state_dict()
            loadable = {k: v for k, v in state.items() if k in own}  # pooler may have been overridden
            enc.load_state_dict(loadable, strict=False)
        return enc

    def save(self, path: str | os.PathLike, extra: dict | None = None, card: "RunFacts | None" = None) -> Path:
        """A standard Hugging Face folder (``AutoModel.from_pretrained`` loads the backbone)
        plus ``cselab.json`` and the head/pooler weights in ``cselab_modules.safetensors``; it is
        also a sentence-transformers model (:mod:`cselab.model.encoder.export`) and carries a model card
        (:mod:`cselab.model.encoder.model_card`; ``card``: facts of the run the model comes from, as
        :func:`cselab.model.export.run_facts` reads them)."""
        from .export import head_in_backbone_pooler, write_interop_files
        from .model_card import write_model_card

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with quiet_hf(), head_in_backbone_pooler(self):
            self.backbone.save_pretrained(path, safe_serialization=True)
            self.tokenizer.save_pretrained(path)
        extra_state = {k: v.detach().cpu().contiguous() for k, v in self.extra_state_dict().items()}
        if extra_state:
            save_file(extra_state, str(path / MODULES_NAME))
        atomic_write_json(path / CONFIG_NAME, {
            "pooler": self.pooler_name,
            "mlp_only_train": self.mlp_only_train,
            "backbone_name": self.backbone_name,
            "pooler_options": self.pooler_options,
            **(extra or {}),
        })
        write_interop_files(self, path)
        write_model_card(path, card)
        return path

    def extra_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters and buffers outside the backbone (head, learnable poolers)."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith("backbone.")}
