"""Embeddings of one saved model that a process already computed, for its next evaluation.

A notebook evaluates the same model on overlapping sentences: the STS-B test table and the
alignment–uniformity point on STS-B test, the model before training under two notebooks' questions.
An :class:`EmbeddingMemo` handed to an encoder (``encoder.embedding_memo``) keeps every evaluation-
path embedding ``encode`` computes, by sentence and by what else decides the vector (the token
limit, the evaluation precision), and ``encode`` then computes only the sentences it lacks.

The memo belongs to one set of weights: :mod:`cselab.model.evaluate.cache` gives one to each saved model
folder it evaluates (keyed by the folder's files, so a rewritten model gets a new one), never to an
encoder that trains. A vector is the one the first request computed, in that request's batch:
another batch pads a sentence to another length. Measured on all-minilm-l6's STS-B test (AMX CPU),
encoding 45 % of the sentences first and the rest later moved an embedding by at most 2e-6 in fp32
(the Spearman ×100 unchanged) and 0.03 in bf16 (the Spearman ×100 by 0.002).
"""
from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np


class EmbeddingMemo:
    """``(setting, sentence) → vector`` for one model; ``nbytes`` counts the vectors held."""

    def __init__(self):
        self._vectors: dict[tuple[Hashable, str], np.ndarray] = {}
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def lookup(self, sentences: Sequence[str], setting: Hashable) -> dict[str, np.ndarray]:
        """The vectors held for ``sentences`` under ``setting``, by sentence (missing ones left out)."""
        found = {}
        for s in sentences:
            vector = self._vectors.get((setting, s))
            if vector is not None:
                found[s] = vector
        return found

    def store(self, sentences: Sequence[str], vectors: np.ndarray, setting: Hashable) -> None:
        """Keep row i of ``vectors`` as the vector of ``sentences[i]`` under ``setting`` (copied:
        the caller's array may be reused)."""
        if len(sentences) != len(vectors):
            raise ValueError(f"{len(sentences)} sentences but {len(vectors)} vectors")
        for s, vector in zip(sentences, np.array(vectors, dtype=np.float32, copy=True)):
            key = (setting, s)
            if key not in self._vectors:
                self._vectors[key] = vector
                self.nbytes += vector.nbytes
