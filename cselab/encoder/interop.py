"""Small pieces that let a :class:`~cselab.encoder.SentenceEncoder` stand where code written for
sentence-transformers or MTEB expects a model: prompt resolution, the note on ignored keyword
arguments, the cosine matrix of ``similarity`` and the object its evaluators report metrics to.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

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
