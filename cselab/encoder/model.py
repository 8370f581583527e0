"""SentenceEncoder: backbone + pooler (+ SimCSE's MLP head), with ``encode`` and save/load.

Two paths, as in SimCSE:

* training (:meth:`SentenceEncoder.forward`): pooler output, through the MLP head when the
  pooler is ``cls`` (or sets ``uses_mlp_head``, as the PromptBERT pooler does);
* evaluation (:meth:`SentenceEncoder.encode`): the same, except that the head is skipped when
  ``mlp_only_train`` is set (SimCSE's unsupervised default).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn
from tqdm.auto import tqdm

from ..io import atomic_write_json, read_json, read_safetensors
from .backbone import DEFAULT_BACKBONE, load_backbone, quiet_hf
from .pooling import BackboneOutput, MLPHead, build_pooler

CONFIG_NAME = "cselab.json"
MODULES_NAME = "cselab_modules.safetensors"


@dataclass
class EncoderOutput:
    """One forward pass over N rows (2B in training: both views stacked)."""

    embeddings: torch.Tensor          # (N, D) training embeddings (after the head for ``cls``)
    pooled: torch.Tensor              # (N, H) pooler output before the head
    backbone: BackboneOutput          # hidden states and mask, for components that need them


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


class SentenceEncoder(nn.Module):
    def __init__(self, backbone: nn.Module, tokenizer, pooler: str = "cls", mlp_only_train: bool = True,
                 backbone_name: str = "", pooler_options: dict | None = None):
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.pooler_name = pooler
        self.mlp_only_train = mlp_only_train
        self.backbone_name = backbone_name
        self.pooler_options = dict(pooler_options or {})
        cfg = backbone.config
        self.pooler = build_pooler(pooler, cfg.hidden_size, cfg.num_hidden_layers, **self.pooler_options)
        # SimCSE puts its MLP head on ``cls``; poolers that want it too (PromptBERT) set ``uses_mlp_head``.
        wants_head = pooler == "cls" or getattr(self.pooler, "uses_mlp_head", False)
        self.head = MLPHead(cfg.hidden_size, getattr(cfg, "initializer_range", 0.02)) if wants_head else None
        self.pooler.bind(self)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_pretrained(cls, name: str | os.PathLike = DEFAULT_BACKBONE, pooler: str | None = None,
                        mlp_only_train: bool | None = None, dropout: float | None = None,
                        pooler_options: dict | None = None) -> "SentenceEncoder":
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

    def save(self, path: str | os.PathLike, extra: dict | None = None) -> Path:
        """A standard Hugging Face folder (``AutoModel.from_pretrained`` loads the backbone)
        plus ``cselab.json`` and the head/pooler weights in ``cselab_modules.safetensors``."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with quiet_hf():
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
        return path

    def extra_state_dict(self) -> dict[str, torch.Tensor]:
        """Parameters and buffers outside the backbone (head, learnable poolers)."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith("backbone.")}

    # ------------------------------------------------------------------ forward
    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def uses_head_at_eval(self) -> bool:
        return self.head is not None and not self.mlp_only_train

    def tokenize(self, sentences: list[str], max_length: int | None = None):
        """Evaluation inputs (poolers that rewrite the input, e.g. prompts, provide ``eval_inputs``)."""
        limit = self.max_positions()
        max_length = limit if max_length is None else min(max_length, limit)
        if hasattr(self.pooler, "eval_inputs"):
            return self.pooler.eval_inputs(self.tokenizer, list(sentences), max_length)
        return self.tokenizer(list(sentences), padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt")

    def training_inputs(self, sentences: list[str], max_length: int | None):
        """The 2B-row training batch: each sentence twice (view 1 rows, then view 2 rows); the two
        views differ only by dropout. Poolers that change the input (prompts) override this via
        their own ``training_inputs``."""
        if hasattr(self.pooler, "training_inputs"):
            return self.pooler.training_inputs(self.tokenizer, sentences, max_length)
        enc = self.tokenize(sentences, max_length)
        return {k: torch.cat([v, v], dim=0) for k, v in enc.items()}

    def max_positions(self) -> int:
        limit = getattr(self.backbone.config, "max_position_embeddings", 512)
        if getattr(self.backbone.config, "model_type", "") in ("roberta", "xlm-roberta"):
            limit -= 2  # RoBERTa's positions start after the padding index
        tok_limit = getattr(self.tokenizer, "model_max_length", limit) or limit
        return int(min(limit, tok_limit))

    def run_backbone(self, inputs, output_hidden_states: bool = False) -> BackboneOutput:
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        want_all = output_hidden_states or self.pooler.needs_hidden_states
        out = self.backbone(**inputs, output_hidden_states=want_all, return_dict=True)
        return BackboneOutput(out.last_hidden_state, inputs["attention_mask"],
                              out.hidden_states if want_all else None, inputs.get("input_ids"))

    def forward(self, inputs, output_hidden_states: bool = False) -> EncoderOutput:
        """Training path: the head is always applied for ``cls``."""
        bb = self.run_backbone(inputs, output_hidden_states)
        pooled = self.pooler(bb)
        emb = self.head(pooled) if self.head is not None else pooled
        return EncoderOutput(emb, pooled, bb)

    def embed(self, inputs) -> torch.Tensor:
        """Evaluation path (SimCSE's ``sentemb_forward``)."""
        return self.eval_embedding(self.run_backbone(inputs))

    def eval_embedding(self, bb: BackboneOutput) -> torch.Tensor:
        """The evaluation-path embedding of an existing backbone output (for callers that also
        need its hidden states, such as training probes)."""
        pooled = self.pooler(bb)
        return self.head(pooled) if self.uses_head_at_eval else pooled

    @torch.no_grad()
    def encode(self, sentences: list[str], batch_size: int = 128, show_progress: bool | None = None,
               normalize: bool = False, max_length: int | None = None) -> np.ndarray:
        """Embeddings (float32, one row per input sentence, input order).

        Duplicates are encoded once and sentences are sorted by length to minimise padding.
        No truncation below the model's own limit unless ``max_length`` is given (SimCSE's
        evaluation batcher has none).
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        sentences = list(sentences)
        if not sentences:
            return np.zeros((0, self.embedding_dim()), dtype=np.float32)
        unique = list(dict.fromkeys(sentences))
        order = sorted(range(len(unique)), key=lambda i: -len(unique[i]))
        was_training = self.training
        self.eval()
        chunks = []
        n_batches = (len(order) + batch_size - 1) // batch_size
        show = n_batches > 20 if show_progress is None else show_progress
        try:
            for start in tqdm(range(0, len(order), batch_size), total=n_batches, desc="encoding",
                              unit="batch", disable=not show, leave=False):
                batch = [unique[i] for i in order[start:start + batch_size]]
                emb = self.embed(self.tokenize(batch, max_length)).float()
                if normalize:
                    emb = torch.nn.functional.normalize(emb, dim=-1)
                chunks.append(emb.cpu())
        finally:
            self.train(was_training)
        by_sorted = torch.cat(chunks).numpy()
        emb_unique = np.empty_like(by_sorted)
        emb_unique[order] = by_sorted
        index = {s: i for i, s in enumerate(unique)}
        return emb_unique[[index[s] for s in sentences]]

    def embedding_dim(self) -> int:
        return self.backbone.config.hidden_size
