"""Your own evaluation data: a TSV of scored sentence pairs, scored with the STS protocol.

Format (UTF-8, one pair a line): ``sentence1<TAB>sentence2<TAB>score``, any real-valued score
(0–5, 0–1, a rank: Spearman only uses the order). A header is optional: a first line whose third
column is not a number (e.g. ``sentence1  sentence2  score``) is taken as the header; on any later
line a score that is not a number is an error. Blank lines are skipped. Sentences are whitespace-
normalised as SentEval does. Every problem is one error naming the file and the line.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .errors import DataError
from .sts import STS_TASKS, STSPairs
from .text import iter_lines, normalize_whitespace, parse_score, require_file, split_columns


def load_pairs_file(path: str | os.PathLike, name: str | None = None) -> STSPairs:
    path = require_file(path, "pairs file")
    s1, s2, scores = [], [], []
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        a, b, value = split_columns(path, lineno, line, 3)
        if lineno == 1 and not _is_number(value):
            continue   # the header
        if not a.strip() or not b.strip():
            raise DataError(path, "a sentence is empty", line=lineno)
        scores.append(parse_score(path, lineno, value))
        s1.append(normalize_whitespace(a))
        s2.append(normalize_whitespace(b))
    if len(scores) < 2:
        raise DataError(path, f"{len(scores)} scored pair(s); a Spearman correlation needs at least 2")
    if len(set(scores)) == 1:
        raise DataError(path, f"every gold score is {scores[0]}; a correlation needs at least two different scores")
    return STSPairs(name or path.stem, tuple(s1), tuple(s2), np.asarray(scores, dtype=float))


def _is_number(value: str) -> bool:
    try:
        return float(value) == float(value)
    except ValueError:
        return False


def pair_files(pairs: str | os.PathLike | Sequence | Mapping | None) -> dict[str, Path]:
    """``{name: path}`` from one path, a list of paths (named by file stem) or a mapping; a name
    that repeats or that is a standard STS task is an error."""
    if pairs is None:
        return {}
    if isinstance(pairs, (str, os.PathLike)):
        pairs = [pairs]
    if isinstance(pairs, Mapping):
        named = {str(k): Path(v) for k, v in pairs.items()}
    else:
        named = {}
        for p in map(Path, pairs):
            if p.stem in named:
                raise ValueError(f"pairs: two files are named {p.stem!r} ({named[p.stem]}, {p}); pass a mapping "
                                 "{name: path} to tell them apart")
            named[p.stem] = p
    clash = [n for n in named if n in STS_TASKS]
    if clash:
        raise ValueError(f"pairs: the name {clash[0]!r} is a standard STS task; rename the file or pass a mapping")
    return named
