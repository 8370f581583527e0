"""What lets a :class:`~cselab.model.encoder.SentenceEncoder` stand where code written for
sentence-transformers or MTEB expects a model: its surface (``encode``, ``similarity``,
``get_sentence_embedding_dimension``, as :class:`SentenceTransformersSurface`) and the small pieces
behind it: prompt resolution, the note on ignored keyword arguments, the cosine matrix of
``similarity`` and the object its evaluators report metrics to.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import numpy as np
import torch

logger = logging.getLogger(__name__)

_noted: set[str] = set()   # keyword names already reported (the note is logged once per name)


def note_ignored_kwargs(kwargs: Mapping[str, Any]) -> None:
    """Log, once per process and name, that ``encode`` ignores keyword arguments it has no use
    for (MTEB and sentence-transformers' evaluators pass e.g. ``task_name``, ``prompt_type``)."""
    new = sorted(set(kwargs) - _noted)
    if new:
        _noted.update(new)
        logger.warning("SentenceEncoder.encode ignores the keyword argument(s) %s (no meaning for a cselab model)",
                       ", ".join(new))


def resolve_prompt(prompts: Mapping[str, str], prompt: str | None, prompt_name: str | None) -> str | None:
    """sentence-transformers' rule: an explicit ``prompt`` wins; ``prompt_name`` must name one of
    ``prompts``."""
    if prompt is not None or prompt_name is None:
        return prompt
    if prompt_name not in prompts:
        known = ", ".join(sorted(prompts)) or "none: the model's prompts dict is empty"
        raise ValueError(f"encode: prompt_name {prompt_name!r} is not one of the model's prompts ({known})")
    return prompts[prompt_name]


def _as_matrix(x) -> torch.Tensor:
    t = x.detach().float() if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x), dtype=torch.float32)
    return t.unsqueeze(0) if t.dim() == 1 else t


def embedding_similarity(a, b) -> torch.Tensor:
    """(len(a), len(b)) cosine similarities of two sets of vectors (arrays or tensors, 1-D or 2-D)."""
    a = _as_matrix(a)
    b = _as_matrix(b).to(a.device)
    a = torch.nn.functional.normalize(a, dim=-1)
    b = torch.nn.functional.normalize(b, dim=-1)
    return a @ b.T


class EvaluatorMetrics:
    """Stands in for sentence-transformers' ``model_card_data``: its evaluators (e.g.
    ``EmbeddingSimilarityEvaluator``) call ``set_evaluation_metrics`` on the model they score;
    cselab keeps each call's metrics in ``evaluations`` (oldest first)."""

    def __init__(self):
        self.evaluations: list[dict] = []

    def set_evaluation_metrics(self, evaluator, metrics: Mapping[str, Any], epoch: int = 0, step: int = 0) -> None:
        self.evaluations.append({"evaluator": type(evaluator).__name__, "metrics": dict(metrics),
                                 "epoch": epoch, "step": step})


class SentenceTransformersSurface:
    """sentence-transformers' model surface, mixed into :class:`~cselab.model.encoder.SentenceEncoder`
    (it uses the encoder's ``prompts``, ``device``, ``embedding_dim`` and the deduplicated encoding of
    :mod:`cselab.model.encoder.batching`)."""

    similarity_fn_name = "cosine"   # what ``similarity`` computes (sentence-transformers' attribute)

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

    def similarity(self, a, b) -> torch.Tensor:
        """Cosine similarity matrix of two sets of embeddings (arrays, tensors, 1-D or 2-D), as
        sentence-transformers' ``similarity``: (len(a), len(b))."""
        return embedding_similarity(a, b)

    def get_sentence_embedding_dimension(self) -> int:
        """Length of the vectors ``encode`` returns (sentence-transformers' name)."""
        return self.embedding_dim()

    get_embedding_dimension = get_sentence_embedding_dimension   # sentence-transformers >= 6 name
