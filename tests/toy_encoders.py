"""Tiny deterministic stand-ins for a sentence encoder (anything with ``encode(sentences, batch_size)``)."""
from __future__ import annotations

import zlib

import numpy as np


class HashedBagOfWords:
    """Counts of lower-cased whitespace tokens hashed (CRC32) into ``dim`` buckets: sentences that
    share no word are orthogonal, a word decides its bucket on every machine."""

    def __init__(self, dim: int = 2048):
        self.dim = dim
        self.calls: list[int] = []

    def encode(self, sentences, batch_size: int = 128, **kwargs) -> np.ndarray:
        self.calls.append(len(sentences))
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for i, sentence in enumerate(sentences):
            for word in sentence.lower().split():
                out[i, zlib.crc32(word.encode("utf-8")) % self.dim] += 1.0
        return out


class LookupEncoder:
    """Returns a fixed vector per sentence (rows of ``table`` by key) — for hand-computed geometry."""

    def __init__(self, table: dict[str, np.ndarray]):
        self.table = {k: np.asarray(v, dtype=np.float64) for k, v in table.items()}

    def encode(self, sentences, batch_size: int = 128, **kwargs) -> np.ndarray:
        return np.stack([self.table[s] for s in sentences])
