"""The unsupervised training corpus: a text file, one sentence a line (SimCSE's wiki1m format)."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import DataError
from .root import data_root
from .text import iter_lines

# Short names for the corpora ``cselab data fetch`` puts under the data root.
CORPORA = {
    "wiki1m": "corpus/wiki1m_for_simcse.txt",
    "wiki1m-head": "corpus/wiki1m-head.txt",
    "enwiki": "corpus/enwiki-sentences.txt",
}


def resolve_corpus(corpus: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> Path:
    """A known corpus name (``wiki1m``, ``wiki1m-head``, ``enwiki``) under the data root, or a path."""
    if isinstance(corpus, str) and corpus in CORPORA:
        return data_root(data_dir) / CORPORA[corpus]
    return Path(corpus).expanduser()


def load_corpus(
    corpus: str | os.PathLike, max_sentences: int | None = None, data_dir: str | os.PathLike | None = None
) -> list[str]:
    """Sentences of a training corpus in file order. Blank lines are skipped.

    ``max_sentences`` keeps the first N non-blank lines (it does not sample), so a short run
    sees the same head of the corpus as the paper-scale run.
    """
    if max_sentences is not None and max_sentences < 1:
        raise ValueError(f"max_sentences must be >= 1, got {max_sentences}")
    path = resolve_corpus(corpus, data_dir)
    sentences = []
    for line in iter_lines(path):
        if line.strip():
            sentences.append(line.strip())
            if max_sentences is not None and len(sentences) >= max_sentences:
                break
    if not sentences:
        raise DataError(path, "the corpus is empty (no non-blank lines)")
    return sentences
