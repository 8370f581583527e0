"""Your own evaluation data: scored sentence pairs (the STS protocol) and labelled texts (clustering).

Pairs file (UTF-8, one pair a line): ``sentence1<TAB>sentence2<TAB>score``, any real-valued score
(0–5, 0–1, a rank: Spearman only uses the order). A header is optional: a first line whose third
column is not a number (e.g. ``sentence1  sentence2  score``) is taken as the header; on any later
line a score that is not a number is an error. Blank lines are skipped. Sentences are whitespace-
normalised as SentEval does.

Texts file (UTF-8, one text a line): ``label<TAB>text``, the layout of ClusterNS's short-text sets;
any string is a label (a class name or an id). A first line ``label<TAB>text`` (any case) is a
header. K-means gets K = the number of distinct labels, so a file needs at least two labels and
more texts than labels.

Every problem is one error naming the file and the line.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .clustering import SHORT_TEXT_SETS, ClusteringData
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
            continue   # the header (a first score of nan or inf is a bad score, not a header)
        if not a.strip() or not b.strip():
            raise DataError(path, "a sentence is empty", line=lineno)
        scores.append(parse_score(path, lineno, value))
        s1.append(normalize_whitespace(a))
        s2.append(normalize_whitespace(b))
    if len(scores) < 2:
        raise DataError(path, f"{len(scores)} scored pair(s); a Spearman correlation needs at least 2")
    if len(set(scores)) == 1:
        raise DataError(path, f"every gold score is {scores[0]}; a correlation needs at least two different scores")
    if len(set(zip(s1, s2))) == 1:   # every prediction would be one cosine: Spearman nan
        raise DataError(path, f"every line holds the same pair {(s1[0], s2[0])!r}; a correlation needs at least two "
                        "different pairs")
    return STSPairs(name or path.stem, tuple(s1), tuple(s2), np.asarray(scores, dtype=float))


def load_texts_file(path: str | os.PathLike, name: str | None = None) -> ClusteringData:
    path = require_file(path, "texts file")
    texts, labels = [], []
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        label, text = split_columns(path, lineno, line, 2)
        if lineno == 1 and (label.strip().lower(), text.strip().lower()) == ("label", "text"):
            continue   # the header
        if not label.strip():
            raise DataError(path, "the label is empty", line=lineno)
        if not text.strip():
            raise DataError(path, "the text is empty", line=lineno)
        labels.append(label.strip())
        texts.append(normalize_whitespace(text))
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise DataError(path, f"{len(classes)} distinct label(s); clustering against gold classes needs at least 2")
    if len(texts) <= len(classes):
        raise DataError(path, f"{len(texts)} texts for {len(classes)} labels; K-means with K = {len(classes)} "
                        "needs more texts than labels")
    if len(set(texts)) < len(classes):   # K-means cannot find K clusters among fewer distinct points
        raise DataError(path, f"{len(set(texts))} distinct text(s) for {len(classes)} labels; K-means with K = "
                        f"{len(classes)} needs at least {len(classes)} different texts")
    ids = {c: i for i, c in enumerate(classes)}
    return ClusteringData(name or path.stem, tuple(texts), np.asarray([ids[c] for c in labels]),
                          {i: c for c, i in ids.items()})


def _is_number(value: str) -> bool:
    """Whether ``value`` parses as a float (nan and inf included: :func:`parse_score` refuses those)."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def named_files(files: str | os.PathLike | Sequence | Mapping | None, option: str,
                reserved: Sequence[str], kind: str) -> dict[str, Path]:
    """``{name: path}`` from one path, a list of paths (named by file stem) or a mapping; a name
    that repeats or that names one of the standard tasks (``reserved``) is an error."""
    if files is None:
        return {}
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    if isinstance(files, Mapping):
        named = {str(k): Path(v) for k, v in files.items()}
    else:
        named = {}
        for p in map(Path, files):
            if p.stem in named:
                raise ValueError(f"{option}: two files are named {p.stem!r} ({named[p.stem]}, {p}); pass a mapping "
                                 "{name: path} to tell them apart")
            named[p.stem] = p
    clash = [n for n in named if n in reserved]
    if clash:
        raise ValueError(f"{option}: the name {clash[0]!r} is a standard {kind}; rename the file or pass a mapping")
    return named


def pair_files(pairs: str | os.PathLike | Sequence | Mapping | None) -> dict[str, Path]:
    """The custom pairs files by name (:func:`named_files`; no name may be a standard STS task)."""
    return named_files(pairs, "pairs", STS_TASKS, "STS task")


def text_files(texts: str | os.PathLike | Sequence | Mapping | None) -> dict[str, Path]:
    """The labelled-texts files by name (:func:`named_files`; no name may be a standard clustering set)."""
    return named_files(texts, "texts", ("DBpedia", *SHORT_TEXT_SETS), "clustering set")
