"""Batched passes of a :class:`~cselab.encoder.SentenceEncoder` without gradients: ``iter_batches``
(either path, chunk by chunk: what the probes, analyses and ``encode`` run on) and the
deduplicated, length-sorted encoding behind ``encode``."""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch

from ..progress import progress_bar
from ..timing import timed
from ..utils import resolve_precision
from .outputs import EncoderOutput

FEW_BATCHES = 4   # encode shows a progress bar by default above this many batches


class Batches:
    """Batched passes, mixed into :class:`~cselab.encoder.SentenceEncoder` (it uses the encoder's
    two paths, ``forward_eval`` and ``forward``, their inputs, ``tokenize`` and
    ``training_inputs``, and the modes of :mod:`cselab.encoder.modes`)."""

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

    def _token_lengths(self, sentences: list[str], max_length: int | None) -> list[int]:
        """Tokens per sentence as the evaluation path would truncate them (special tokens included;
        a prompt pooler adds the same template to each, which leaves the order as it is)."""
        ids = self.tokenizer(sentences, truncation=True, max_length=self._length_limit(max_length))["input_ids"]
        return [len(row) for row in ids]

    def _encode_unique(self, sentences: list[str], batch_size: int, show_progress_bar: bool | None,
                       max_length: int | None) -> np.ndarray:
        """(N, D) float32 embeddings, each distinct sentence encoded once, longest batches first."""
        if not sentences:
            return np.zeros((0, self.embedding_dim()), dtype=np.float32)
        unique = list(dict.fromkeys(sentences))
        # Longest first by *token* count, not characters: batches of near-equal token lengths carry
        # less padding (sorting by characters, as sentence-transformers does, left 20-25 % more time
        # in padded positions on the STS sentences: docs/performance.md). One extra pass of the fast
        # tokenizer costs a few per cent of that.
        tokens = self._token_lengths(unique, max_length)
        order = sorted(range(len(unique)), key=lambda i: (-tokens[i], -len(unique[i])))
        n_batches = (len(order) + batch_size - 1) // batch_size
        show = n_batches > FEW_BATCHES if show_progress_bar is None else show_progress_bar
        chunks = [out.embeddings.float().cpu() for _, out in
                  self.iter_batches([unique[i] for i in order], batch_size, max_length=max_length, progress=show)]
        by_sorted = torch.cat(chunks).numpy()
        emb_unique = np.empty_like(by_sorted)
        emb_unique[order] = by_sorted
        index = {s: i for i, s in enumerate(unique)}
        return emb_unique[[index[s] for s in sentences]]
