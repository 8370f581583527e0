"""Batched passes of a :class:`~cselab.model.encoder.SentenceEncoder` without gradients: ``iter_batches``
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
    """Batched passes, mixed into :class:`~cselab.model.encoder.SentenceEncoder` (it uses the encoder's
    two paths, ``forward_eval`` and ``forward``, their inputs, ``tokenize`` and
    ``training_inputs``, and the modes of :mod:`cselab.model.encoder.modes`)."""

    def iter_batches(self, sentences: Sequence[str], batch_size: int, path: str = "eval", views: int = 2,
                     dropout: bool | None = False, seed: int | None = None, max_length: int | None = None,
                     output_hidden_states: bool = False, progress: bool = False,
                     desc: str = "encoding", token_ids: Sequence[list[int]] | None = None
                     ) -> Iterator[tuple[list[str], EncoderOutput]]:
        """``(chunk, EncoderOutput)`` for consecutive chunks of ``sentences``, without gradients.

        ``path="eval"``: the evaluation path on :meth:`tokenize` inputs (one row per sentence).
        ``path="train"``: the training path on :meth:`training_inputs` (rows of view 1, then view
        2; ``views=1`` keeps view 1's rows only). ``dropout``/``seed``: see :meth:`dropout_mode`
        (the whole iteration runs in one mode and one random stream). ``token_ids``: the ids of
        ``sentences`` as :meth:`_plain_token_ids` gave them (evaluation path, default tokenisation
        only): each batch is padded from them instead of tokenised again.
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
                        inputs = (self.tokenize(chunk, max_length) if token_ids is None
                                  else self._padded(token_ids[start:start + batch_size]))
                        out = self.forward_eval(inputs, output_hidden_states)
                    else:
                        inputs = self.training_inputs(chunk, max_length)
                        if views == 1:
                            inputs = {k: v[:len(chunk)] for k, v in inputs.items()}
                        out = self(inputs, output_hidden_states)
                yield chunk, out

    def _plain_token_ids(self, sentences: list[str], max_length: int | None) -> list[list[int]] | None:
        """The evaluation inputs' ids of each sentence, unpadded, when the pooler tokenises as the
        tokenizer does (not a prompt) and pads on the right: what :meth:`_padded` builds batches
        from. ``None`` otherwise (batches are then tokenised one by one)."""
        from .pooling import Pooler

        plain = type(self.pooler).eval_inputs is Pooler.eval_inputs and self.tokenizer.padding_side == "right"
        return self._token_ids(sentences, max_length) if plain else None

    def _token_ids(self, sentences: list[str], max_length: int | None) -> list[list[int]]:
        """Each sentence's ids as the evaluation path truncates them (special tokens included; a
        prompt pooler adds the same template to each, which leaves their order by length as it is)."""
        return self.tokenizer(sentences, truncation=True, max_length=self._length_limit(max_length))["input_ids"]

    def _padded(self, ids: Sequence[list[int]]) -> dict:
        """A batch as the tokenizer would pad it (``padding=True``: to its longest row, on the
        right), built from ids already tokenised: the inputs of :meth:`tokenize`, key for key."""
        width = max(len(row) for row in ids)
        input_ids = torch.full((len(ids), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for i, row in enumerate(ids):
            input_ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[i, :len(row)] = 1
        batch = {"input_ids": input_ids}
        if "token_type_ids" in self.tokenizer.model_input_names:
            batch["token_type_ids"] = torch.zeros_like(input_ids)
        batch["attention_mask"] = mask
        return batch

    def _encode_unique(self, sentences: list[str], batch_size: int, show_progress_bar: bool | None,
                       max_length: int | None) -> np.ndarray:
        """(N, D) float32 embeddings, each distinct sentence encoded once, longest batches first."""
        if not sentences:
            return np.zeros((0, self.embedding_dim()), dtype=np.float32)
        unique = list(dict.fromkeys(sentences))
        memo, setting = self.embedding_memo, (max_length, self.resolved_eval_precision())
        known = memo.lookup(unique, setting) if memo is not None else {}
        if known:   # a memo (cselab.model.encoder.memo) already holds some: encode the others only
            missing = [s for s in unique if s not in known]
            vectors = (self._encode_unique(missing, batch_size, show_progress_bar, max_length) if missing
                       else np.zeros((0, self.embedding_dim()), dtype=np.float32))
            known.update(zip(missing, vectors))
            return np.stack([known[s] for s in sentences])
        # Longest first by *token* count, not characters: batches of near-equal token lengths carry
        # less padding (sorting by characters, as sentence-transformers does, left 20-25 % more time
        # in padded positions on the STS sentences: docs/performance.md). The ids of that one pass of
        # the tokenizer are padded into the batches (tokenising twice cost 5-8 % of an fp32 encode).
        ids = self._plain_token_ids(unique, max_length)
        tokens = [len(row) for row in (ids if ids is not None else self._token_ids(unique, max_length))]
        order = sorted(range(len(unique)), key=lambda i: (-tokens[i], -len(unique[i])))
        n_batches = (len(order) + batch_size - 1) // batch_size
        show = n_batches > FEW_BATCHES if show_progress_bar is None else show_progress_bar
        chunks = [out.embeddings.float().cpu() for _, out in
                  self.iter_batches([unique[i] for i in order], batch_size, max_length=max_length, progress=show,
                                    token_ids=None if ids is None else [ids[i] for i in order])]
        by_sorted = torch.cat(chunks).numpy()
        emb_unique = np.empty_like(by_sorted)
        emb_unique[order] = by_sorted
        if memo is not None:
            memo.store(unique, emb_unique, setting)
        index = {s: i for i, s in enumerate(unique)}
        return emb_unique[[index[s] for s in sentences]]


def pad_rows(rows: list[list[int]], pad_id: int) -> dict:
    """Token-id rows of different lengths as one batch: ``input_ids`` padded with ``pad_id`` on the
    right to the longest row, and the ``attention_mask`` of the real tokens (what a pooler that
    rewrites its input, or a method that rewrites a view, hands the encoder)."""
    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        input_ids[i, :len(row)] = torch.tensor(row, dtype=torch.long)
        attention_mask[i, :len(row)] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask}
