"""SentenceEncoder: backbone + pooler (+ SimCSE's MLP head), the one class users see.

Two paths, as in SimCSE:

* training (:meth:`SentenceEncoder.forward`): pooler output, through the MLP head when the
  pooler is ``cls`` (or sets ``uses_mlp_head``, as the PromptBERT pooler does);
* evaluation (:meth:`SentenceEncoder.encode`): the same, except that the head is skipped when
  ``mlp_only_train`` is set (SimCSE's unsupervised default).

This module holds the model and its two forward paths; the encoder's other jobs are mixed in,
one module each:

* :mod:`~cselab.model.encoder.saving`: ``from_pretrained`` and ``save`` (a Hugging Face folder plus
  cselab's pooler and head);
* :mod:`~cselab.model.encoder.modes`: how a pass runs: ``dropout_mode`` (dropout off, on, seeded) and
  ``eval_weights`` (the evaluation path's weights in bf16/fp16);
* :mod:`~cselab.model.encoder.batching`: ``iter_batches``, chunks of sentences through either path
  without gradients, and the deduplicated encoding behind ``encode``;
* :mod:`~cselab.model.encoder.interop`: the sentence-transformers surface (``encode``, ``similarity``,
  ``get_sentence_embedding_dimension``).
"""
from __future__ import annotations

import torch
from torch import nn

from . import cpu_dropout
from .batching import FEW_BATCHES, Batches
from .interop import EvaluatorMetrics, SentenceTransformersSurface
from .modes import PassModes
from .outputs import EncoderOutput
from .pooling import BackboneOutput, MLPHead, build_pooler
from .saving import CONFIG_NAME, MODULES_NAME, SavedFolder, read_saved_config

# The names this module held before the encoder's jobs had modules of their own; code imports them from here.
__all__ = ["CONFIG_NAME", "EncoderOutput", "FEW_BATCHES", "MODULES_NAME", "SentenceEncoder", "read_saved_config"]


class SentenceEncoder(SavedFolder, PassModes, Batches, SentenceTransformersSurface, nn.Module):
    def __init__(self, backbone: nn.Module, tokenizer, pooler: str = "cls", mlp_only_train: bool = True,
                 backbone_name: str = "", pooler_options: dict | None = None):
        super().__init__()
        self.backbone = backbone
        cpu_dropout.install(backbone)   # training-mode dropout masks on CPU from a cheaper draw (its docstring)
        self.tokenizer = tokenizer
        self.pooler_name = pooler
        self.mlp_only_train = mlp_only_train
        self.backbone_name = backbone_name
        self.pooler_options = dict(pooler_options or {})
        # Precision of every evaluation-path pass (encode, the suites, dev evaluation, probes): auto |
        # fp32 | bf16 | fp16, resolved per pass on the encoder's device (cselab.model.utils.resolve_precision);
        # a low precision runs a copy of the backbone in that dtype (eval_weights, cselab.model.encoder.modes).
        self.eval_precision = "auto"
        self._cast_outputs = False   # inside eval_weights: the backbone's states come back to fp32
        self._eval_copy: tuple | None = None   # (key, backbone copy), in a tuple so nn.Module does not register it
        # the vectors encode already computed for these weights (cselab.model.encoder.memo): only an encoder that
        # never trains gets one (cselab.model.evaluate.cache gives one to each saved model it evaluates)
        self.embedding_memo = None
        cfg = backbone.config
        self.pooler = build_pooler(pooler, cfg.hidden_size, cfg.num_hidden_layers, self.pooler_options)
        self.head = (MLPHead(cfg.hidden_size, getattr(cfg, "initializer_range", 0.02)) if self.pooler.uses_mlp_head
                     else None)
        self.pooler.bind(self)
        self.prompts: dict[str, str] = {}   # named prompts for encode(prompt_name=...), as sentence-transformers
        self.model_card_data = EvaluatorMetrics()   # where sentence-transformers' evaluators report

    # ------------------------------------------------------------------ what the model is
    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def uses_head_at_eval(self) -> bool:
        return self.head is not None and not self.mlp_only_train

    @property
    def num_layers(self) -> int:
        """L, the backbone's transformer layers."""
        return self.backbone.config.num_hidden_layers

    @property
    def backbone_config(self):
        return self.backbone.config

    @property
    def fast_cpu_dropout(self) -> bool:
        """Whether training-mode dropout on CPU draws its masks with :mod:`cselab.model.encoder.cpu_dropout`
        (the default) rather than torch's ``bernoulli_`` (a run's ``cpu_dropout: torch``)."""
        return cpu_dropout.is_enabled(self.backbone)

    @fast_cpu_dropout.setter
    def fast_cpu_dropout(self, enabled: bool) -> None:
        cpu_dropout.set_enabled(self.backbone, bool(enabled))
        self._eval_copy = None   # the low-precision copy was made from the modules as they were

    def embedding_dim(self) -> int:
        return self.backbone.config.hidden_size

    # ------------------------------------------------------------------ inputs
    def tokenize(self, sentences: list[str], max_length: int | None = None) -> dict:
        """Evaluation inputs, one row per sentence (built by the pooler: prompts rewrite them)."""
        return self.pooler.eval_inputs(self.tokenizer, list(sentences), self._length_limit(max_length))

    def training_inputs(self, sentences: list[str], max_length: int | None) -> dict:
        """The 2B-row training batch, view 1 rows then view 2 rows (built by the pooler: by default
        each sentence twice, so that the two views differ only by dropout)."""
        return self.pooler.training_inputs(self.tokenizer, list(sentences), self._length_limit(max_length))

    def _length_limit(self, max_length: int | None) -> int:
        limit = self.max_positions()
        return limit if max_length is None else min(max_length, limit)

    def max_positions(self) -> int:
        limit = getattr(self.backbone.config, "max_position_embeddings", 512)
        if getattr(self.backbone.config, "model_type", "") in ("roberta", "xlm-roberta"):
            limit -= 2  # RoBERTa's positions start after the padding index
        tok_limit = getattr(self.tokenizer, "model_max_length", limit) or limit
        return int(min(limit, tok_limit))

    # ------------------------------------------------------------------ the two paths
    def run_backbone(self, inputs, output_hidden_states: bool = False) -> BackboneOutput:
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        want_all = output_hidden_states or self.pooler.needs_hidden_states
        out = self.backbone(**inputs, output_hidden_states=want_all, return_dict=True)
        last, hidden = out.last_hidden_state, out.hidden_states if want_all else None
        if self._cast_outputs:   # low-precision weights: pooling, heads and cosines stay in fp32
            last = last.float()
            hidden = None if hidden is None else tuple(h.float() for h in hidden)
        return BackboneOutput(last, inputs["attention_mask"], hidden, inputs.get("input_ids"))

    def forward(self, inputs, output_hidden_states: bool = False) -> EncoderOutput:
        """Training path: the pooler, then the MLP head when the pooler uses one."""
        bb = self.run_backbone(inputs, output_hidden_states)
        pooled = self.pooler(bb)
        emb = self.head(pooled) if self.head is not None else pooled
        return EncoderOutput(emb, pooled, bb)

    def forward_eval(self, inputs, output_hidden_states: bool = False) -> EncoderOutput:
        """Evaluation path (SimCSE's ``sentemb_forward``): the head only when ``mlp_only_train``
        is off."""
        bb = self.run_backbone(inputs, output_hidden_states)
        pooled = self.pooler(bb)
        return EncoderOutput(self.head(pooled) if self.uses_head_at_eval else pooled, pooled, bb)

    def embed(self, inputs) -> torch.Tensor:
        """Evaluation-path embeddings of tokenised inputs."""
        return self.forward_eval(inputs).embeddings

    def project_cls(self, cls: torch.Tensor, backbone: BackboneOutput) -> torch.Tensor:
        """The training embedding this encoder would give if ``cls`` were the top layer's [CLS]:
        through the MLP head when there is one, else through the pooler's own projection
        (``layer_attention``). Check :attr:`can_project_cls` first."""
        if self.head is not None:
            return self.head(cls)
        if self.pooler.projects_cls:
            return self.pooler.project_cls(cls, backbone)
        raise ValueError(f"pooler {self.pooler_name!r} has no [CLS] projection (no MLP head, no projects_cls)")

    @property
    def can_project_cls(self) -> bool:
        return self.head is not None or self.pooler.projects_cls
