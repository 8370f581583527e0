"""SentenceEncoder: backbone + pooler (+ SimCSE's MLP head), with ``encode`` and save/load.

Two paths, as in SimCSE:

* training (:meth:`SentenceEncoder.forward`): pooler output, through the MLP head when the
  pooler is ``cls`` (or sets ``uses_mlp_head``, as the PromptBERT pooler does);
* evaluation (:meth:`SentenceEncoder.encode`): the same, except that the head is skipped when
  ``mlp_only_train`` is set (SimCSE's unsupervised default).
"""
from __future__ import annotations

import contextlib
import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np
import torch
from safetensors.torch import save_file
from torch import nn

from ..io import atomic_write_json, read_json, read_safetensors
from ..progress import progress_bar
from ..timing import timed
from ..utils import precision_name, resolve_precision
from .backbone import DEFAULT_BACKBONE, SAVED_ENCODER, load_backbone, quiet_hf
from .interop import EvaluatorMetrics, embedding_similarity, note_ignored_kwargs, resolve_prompt
from .pooling import BackboneOutput, MLPHead, build_pooler

if TYPE_CHECKING:
    from .model_card import RunFacts

CONFIG_NAME = SAVED_ENCODER   # the name backbone.py gives it (the owner of model folders)
MODULES_NAME = "cselab_modules.safetensors"
FEW_BATCHES = 4   # encode shows a progress bar by default above this many batches


@dataclass
class EncoderOutput:
    """One forward pass over N rows (2B in training: both views stacked)."""

    embeddings: torch.Tensor          # (N, D) embeddings of the path that produced them
    pooled: torch.Tensor              # (N, H) pooler output before the head
    backbone: BackboneOutput          # hidden states and mask, for components that need them

    def rows(self, index: slice) -> "EncoderOutput":
        return EncoderOutput(self.embeddings[index], self.pooled[index], self.backbone.rows(index))

    def split(self, n: int) -> tuple["EncoderOutput", "EncoderOutput"]:
        """``(rows 0 … n−1, rows n …)``: view 1 and view 2 of a training batch of n sentences."""
        return self.rows(slice(0, n)), self.rows(slice(n, None))

    def layer_cls(self) -> torch.Tensor:
        """(N, L+1, H) fp32 [CLS] vectors of every hidden state (see :meth:`BackboneOutput.layer_cls`)."""
        return self.backbone.layer_cls()


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
    similarity_fn_name = "cosine"   # what ``similarity`` computes (sentence-transformers' attribute)

    def __init__(self, backbone: nn.Module, tokenizer, pooler: str = "cls", mlp_only_train: bool = True,
                 backbone_name: str = "", pooler_options: dict | None = None):
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.pooler_name = pooler
        self.mlp_only_train = mlp_only_train
        self.backbone_name = backbone_name
        self.pooler_options = dict(pooler_options or {})
        # Precision of every evaluation-path pass (encode, the suites, dev evaluation, probes): auto |
        # fp32 | bf16 | fp16, resolved per pass on the encoder's device (cselab.utils.resolve_precision);
        # a low precision runs a copy of the backbone in that dtype (eval_weights).
        self.eval_precision = "auto"
        self._cast_outputs = False   # inside eval_weights: the backbone's states come back to fp32
        self._eval_copy: tuple | None = None   # (key, backbone copy), in a tuple so nn.Module does not register it
        cfg = backbone.config
        self.pooler = build_pooler(pooler, cfg.hidden_size, cfg.num_hidden_layers, self.pooler_options)
        self.head = (MLPHead(cfg.hidden_size, getattr(cfg, "initializer_range", 0.02)) if self.pooler.uses_mlp_head
                     else None)
        self.pooler.bind(self)
        self.prompts: dict[str, str] = {}   # named prompts for encode(prompt_name=...), as sentence-transformers
        self.model_card_data = EvaluatorMetrics()   # where sentence-transformers' evaluators report

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

    def save(self, path: str | os.PathLike, extra: dict | None = None, card: "RunFacts | None" = None) -> Path:
        """A standard Hugging Face folder (``AutoModel.from_pretrained`` loads the backbone)
        plus ``cselab.json`` and the head/pooler weights in ``cselab_modules.safetensors``; it is
        also a sentence-transformers model (:mod:`cselab.encoder.export`) and carries a model card
        (:mod:`cselab.encoder.model_card`; ``card``: facts of the run the model comes from, as
        :func:`cselab.export.run_facts` reads them)."""
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

    # ------------------------------------------------------------------ forward
    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def resolved_eval_precision(self) -> str:
        """``fp32`` / ``bf16`` / ``fp16``: what :attr:`eval_precision` means on this device."""
        return precision_name(resolve_precision(self.eval_precision, self.device, evaluation=True))

    @property
    def uses_head_at_eval(self) -> bool:
        return self.head is not None and not self.mlp_only_train

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

    # ------------------------------------------------------------------ low-precision evaluation
    def _backbone_copy(self, dtype: torch.dtype) -> nn.Module:
        """The backbone with its floating-point weights in ``dtype`` (no gradients), made once and
        kept while the fp32 weights are unchanged: the key holds every tensor's storage, device and
        version counter, which an optimizer step, ``load_state_dict`` or ``.to()`` changes."""
        tensors = [*self.backbone.parameters(), *self.backbone.buffers()]
        key = (dtype, tuple((id(t), t.data_ptr(), t.device, t._version) for t in tensors))
        if self._eval_copy is not None and self._eval_copy[0] == key:
            return self._eval_copy[1]
        self._eval_copy = None   # free the stale copy before making the new one
        # The memo hands deepcopy the cast tensors, so the fp32 weights are never copied whole.
        memo = {}
        for name, t in [*self.backbone.named_parameters(remove_duplicate=False),
                        *self.backbone.named_buffers(remove_duplicate=False)]:
            if id(t) not in memo:
                cast = t.detach().to(dtype) if t.is_floating_point() else t.detach().clone()
                memo[id(t)] = nn.Parameter(cast, requires_grad=False) if isinstance(t, nn.Parameter) else cast
        backbone = copy.deepcopy(self.backbone, memo)
        self._eval_copy = (key, backbone)
        return backbone

    @contextlib.contextmanager
    def eval_weights(self, dtype: torch.dtype | None):
        """Inside the block the encoder's backbone is a copy with its weights in ``dtype`` (bf16,
        fp16), without autocast: a bf16 product needs no casts of the activations. The backbone's
        states are cast back to fp32 before the pooler, so pooling, the head and every cosine run
        in fp32 on the encoder's own (fp32) pooler and head. The encoder's fp32 weights, which
        training updates, are never touched. ``None``: the fp32 encoder as it is."""
        if dtype is None:
            yield self
            return
        original = self._modules["backbone"]
        self._modules["backbone"] = self._backbone_copy(dtype).train(original.training)   # dropout as the encoder's
        self._cast_outputs = True
        try:
            yield self
        finally:
            self._modules["backbone"] = original
            self._cast_outputs = False

    # ------------------------------------------------------------------ batched passes
    @contextlib.contextmanager
    def dropout_mode(self, dropout: bool | None = False, seed: int | None = None):
        """Evaluation mode (``dropout=False``), training mode (dropout on) or the current mode
        (``None``) for the block; with a ``seed`` the dropout draws come from a private RNG stream
        (CPU and CUDA) so that an analysis run mid-training leaves the run's random stream
        untouched. The previous mode is restored."""
        was_training = self.training
        self.train(was_training if dropout is None else dropout)
        try:
            if seed is None:
                yield
            else:
                device = self.device
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    torch.manual_seed(seed)
                    yield
        finally:
            self.train(was_training)

    def iter_batches(self, sentences: Sequence[str], batch_size: int, path: str = "eval", views: int = 2,
                     dropout: bool | None = False, seed: int | None = None, max_length: int | None = None,
                     output_hidden_states: bool = False, progress: bool = False,
                     desc: str = "encoding") -> Iterator[tuple[list[str], EncoderOutput]]:
        """``(chunk, EncoderOutput)`` for consecutive chunks of ``sentences``, without gradients.

        ``path="eval"``: the evaluation path on :meth:`tokenize` inputs (one row per sentence).
        ``path="train"``: the training path on :meth:`training_inputs` (rows of view 1, then view
        2; ``views=1`` keeps view 1's rows only). ``dropout``/``seed``: see :meth:`dropout_mode`
        (the whole iteration runs in one mode and one random stream).
        """
        if path not in ("eval", "train"):
            raise ValueError(f"path must be 'eval' or 'train', got {path!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        sentences = list(sentences)
        starts = range(0, len(sentences), batch_size)
        # The evaluation path runs in eval_precision's weights; the training path in the caller's autocast.
        weights = resolve_precision(self.eval_precision, self.device, evaluation=True) if path == "eval" else None
        with self.dropout_mode(dropout, seed):
            for start in progress_bar(starts, total=len(starts), desc=desc, unit="batch", enabled=progress, leave=False):
                chunk = sentences[start:start + batch_size]
                with timed("encode"), torch.no_grad(), self.eval_weights(weights):   # not around the yield
                    if path == "eval":
                        out = self.forward_eval(self.tokenize(chunk, max_length), output_hidden_states)
                    else:
                        inputs = self.training_inputs(chunk, max_length)
                        if views == 1:
                            inputs = {k: v[:len(chunk)] for k, v in inputs.items()}
                        out = self(inputs, output_hidden_states)
                yield chunk, out

    @torch.no_grad()
    def encode(self, sentences: str | Sequence[str], batch_size: int = 128, show_progress_bar: bool | None = None,
               normalize_embeddings: bool = False, convert_to_numpy: bool = True, convert_to_tensor: bool = False,
               max_length: int | None = None, prompt: str | None = None, prompt_name: str | None = None,
               device: str | torch.device | None = None, precision: str | None = "float32",
               truncate_dim: int | None = None, *, show_progress: bool | None = None, normalize: bool | None = None,
               **kwargs):
        """Embeddings on the evaluation path, called like sentence-transformers' ``encode``.

        Args:
            sentences: one string (→ a 1-D vector) or a sequence of strings (→ one row each, input order).
            batch_size: sentences per forward pass.
            show_progress_bar: a ``tqdm`` bar; default: only when there are more than a few batches
                (``TQDM_DISABLE`` silences it). ``show_progress`` is the older name.
            normalize_embeddings: L2-normalise each vector. ``normalize`` is the older name.
            convert_to_numpy / convert_to_tensor: an ``np.ndarray`` (default), a ``torch.Tensor`` on the
                model's device (``convert_to_tensor`` wins), or with both off a list of 1-D tensors.
            max_length: truncate inputs to this many tokens (default: none below the model's limit, as
                SimCSE's evaluation).
            prompt: a string put in front of every sentence; ``prompt_name`` picks one from
                ``self.prompts`` (empty unless you fill it).
            device: move the model there first (as sentence-transformers does).
            precision: only ``"float32"`` (or None); quantised outputs are not implemented.
            truncate_dim: keep the first ``truncate_dim`` dimensions (before normalising).
            **kwargs: anything else callers such as MTEB pass is ignored, with a one-time logged note.

        Duplicates are encoded once and sentences are sorted by length to minimise padding; the
        vectors are float32.
        """
        if kwargs.pop("output_value", "sentence_embedding") != "sentence_embedding":
            raise ValueError("encode: only output_value='sentence_embedding' is supported")
        if kwargs:
            note_ignored_kwargs(kwargs)
        if precision not in (None, "float32"):
            raise ValueError(f"encode: precision={precision!r} is not supported; cselab returns float32 embeddings")
        if batch_size < 1:
            raise ValueError(f"encode: batch_size must be >= 1, got {batch_size}")
        show_progress_bar = show_progress if show_progress_bar is None else show_progress_bar
        normalize_embeddings = normalize_embeddings or bool(normalize)
        single = isinstance(sentences, str)
        sentences = [sentences] if single else list(sentences)
        prompt = resolve_prompt(self.prompts, prompt, prompt_name)
        if prompt:
            sentences = [prompt + s for s in sentences]
        if device is not None:
            self.to(device)
        vectors = self._encode_unique(sentences, batch_size, show_progress_bar, max_length)
        if truncate_dim is not None:
            vectors = vectors[:, :truncate_dim]
        if normalize_embeddings:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        if convert_to_tensor:
            out = torch.from_numpy(np.ascontiguousarray(vectors)).to(self.device)
        elif convert_to_numpy:
            out = vectors
        else:
            out = list(torch.from_numpy(np.ascontiguousarray(vectors)).to(self.device))
        return out[0] if single else out

    def _encode_unique(self, sentences: list[str], batch_size: int, show_progress_bar: bool | None,
                       max_length: int | None) -> np.ndarray:
        """(N, D) float32 embeddings, each distinct sentence encoded once, longest batches first."""
        if not sentences:
            return np.zeros((0, self.embedding_dim()), dtype=np.float32)
        unique = list(dict.fromkeys(sentences))
        order = sorted(range(len(unique)), key=lambda i: -len(unique[i]))
        n_batches = (len(order) + batch_size - 1) // batch_size
        show = n_batches > FEW_BATCHES if show_progress_bar is None else show_progress_bar
        chunks = [out.embeddings.float().cpu() for _, out in
                  self.iter_batches([unique[i] for i in order], batch_size, max_length=max_length, progress=show)]
        by_sorted = torch.cat(chunks).numpy()
        emb_unique = np.empty_like(by_sorted)
        emb_unique[order] = by_sorted
        index = {s: i for i, s in enumerate(unique)}
        return emb_unique[[index[s] for s in sentences]]

    @property
    def num_layers(self) -> int:
        """L, the backbone's transformer layers."""
        return self.backbone.config.num_hidden_layers

    @property
    def backbone_config(self):
        return self.backbone.config
    def similarity(self, a, b) -> torch.Tensor:
        """Cosine similarity matrix of two sets of embeddings (arrays, tensors, 1-D or 2-D), as
        sentence-transformers' ``similarity``: (len(a), len(b))."""
        return embedding_similarity(a, b)

    def get_sentence_embedding_dimension(self) -> int:
        """Length of the vectors ``encode`` returns (sentence-transformers' name)."""
        return self.embedding_dim()

    get_embedding_dimension = get_sentence_embedding_dimension   # sentence-transformers >= 6 name

    def embedding_dim(self) -> int:
        return self.backbone.config.hidden_size
