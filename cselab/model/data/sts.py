"""Semantic textual similarity data in SentEval's layout.

STS12–16 are read subset by subset with SentEval's subset lists (``STS.gs.ALL.txt`` and
LDC-withheld subsets such as STS13 SMT are not subsets); pairs whose gold score is blank are
unscored and skipped, exactly as SentEval does. STS-B and SICK-R are read per split.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .root import data_root
from .text import normalize_whitespace, parse_score, read_lines, require_dir, split_columns

# SentEval's subset lists (senteval/sts.py), in SentEval's order.
STS_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}
STSB_SPLITS = ("train", "dev", "test")
SICK_SPLITS = ("train", "trial", "test")
SICK_FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}

# The files read one record a line (what a sample of the data root thins: cselab/model/data/sample.py).
RECORD_FILES = ("downstream/STS/*-en-test/STS.*.txt", "downstream/STS/STSBenchmark/sts-*.csv",
                "downstream/SICK/SICK_*.txt")

# The seven tasks SimCSE reports, in its table order.
STS_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")


@dataclass(frozen=True)
class STSPairs:
    """Scored sentence pairs of one subset or split."""

    name: str
    sentences1: tuple[str, ...]
    sentences2: tuple[str, ...]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)

    def subset(self, indices) -> "STSPairs":
        """The pairs at ``indices``, in that order."""
        indices = list(indices)
        return STSPairs(self.name, tuple(self.sentences1[i] for i in indices),
                        tuple(self.sentences2[i] for i in indices), self.scores[indices])


def _sts_dir(root: Path, year_task: str) -> Path:
    return root / "downstream" / "STS" / f"{year_task}-en-test"


def load_sts_year(task: str, data_dir: str | os.PathLike | None = None) -> dict[str, STSPairs]:
    """One of STS12–16: ``{subset: STSPairs}`` with unscored pairs dropped."""
    if task not in STS_SUBSETS:
        raise ValueError(f"unknown STS task {task!r}; expected one of {sorted(STS_SUBSETS)}")
    folder = require_dir(_sts_dir(data_root(data_dir), task), f"{task} folder")
    return {subset: _load_sts_subset(folder, task, subset) for subset in STS_SUBSETS[task]}


def _load_sts_subset(folder: Path, task: str, subset: str) -> STSPairs:
    input_path = folder / f"STS.input.{subset}.txt"
    gold_path = folder / f"STS.gs.{subset}.txt"
    inputs = read_lines(input_path)
    golds = read_lines(gold_path)
    if len(inputs) != len(golds):
        raise DataError(gold_path, f"{len(golds)} gold lines but {input_path.name} has {len(inputs)} pairs")
    s1, s2, scores = [], [], []
    for lineno, (pair, gold) in enumerate(zip(inputs, golds), 1):
        a, b = split_columns(input_path, lineno, pair, 2)
        if gold.strip() == "":
            continue  # unscored pair: SentEval skips it
        scores.append(parse_score(gold_path, lineno, gold.strip()))
        s1.append(normalize_whitespace(a))
        s2.append(normalize_whitespace(b))
    return scored_pairs(gold_path, f"{task}/{subset}", s1, s2, scores)


def scored_pairs(path: Path, name: str, s1: list, s2: list, scores: list) -> STSPairs:
    """The pairs read from ``path``; a file with none (empty, blank lines, every pair unscored) is an error
    naming it, here rather than as numpy's "zero-size array" from a correlation far from the file."""
    if not scores:
        raise DataError(path, "no scored sentence pairs (the file is empty or every pair is unscored)")
    return STSPairs(name, tuple(s1), tuple(s2), np.asarray(scores, dtype=np.float64))


def load_stsb(data_dir: str | os.PathLike | None = None) -> dict[str, STSPairs]:
    """STS Benchmark ``{train, dev, test}`` from ``sts-*.csv`` (tab-separated: genre, file, year,
    id, score, s1, s2; trailing extra columns, present in some releases, are ignored as SentEval does)."""
    folder = require_dir(data_root(data_dir) / "downstream" / "STS" / "STSBenchmark", "STSBenchmark folder")
    out = {}
    for split in STSB_SPLITS:
        path = folder / f"sts-{split}.csv"
        s1, s2, scores = [], [], []
        for lineno, line in enumerate(read_lines(path), 1):
            if not line.strip():
                continue
            cols = split_columns(path, lineno, line, 7, at_least=True)
            scores.append(parse_score(path, lineno, cols[4]))
            s1.append(normalize_whitespace(cols[5]))
            s2.append(normalize_whitespace(cols[6]))
        out[split] = scored_pairs(path, f"STSBenchmark/{split}", s1, s2, scores)
    return out


def load_sick(data_dir: str | os.PathLike | None = None) -> dict[str, STSPairs]:
    """SICK relatedness ``{train, trial, test}`` (header line skipped; pair_ID, A, B, score, ...)."""
    folder = require_dir(data_root(data_dir) / "downstream" / "SICK", "SICK folder")
    out = {}
    for split in SICK_SPLITS:
        path = folder / SICK_FILES[split]
        lines = read_lines(path)
        if not lines or not lines[0].startswith("pair_ID"):
            raise DataError(path, "expected a header line starting with 'pair_ID'", line=1)
        s1, s2, scores = [], [], []
        for lineno, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            cols = split_columns(path, lineno, line, 4, at_least=True)
            scores.append(parse_score(path, lineno, cols[3]))
            s1.append(normalize_whitespace(cols[1]))
            s2.append(normalize_whitespace(cols[2]))
        out[split] = scored_pairs(path, f"SICKRelatedness/{split}", s1, s2, scores)
    return out


def load_sts_task(task: str, data_dir: str | os.PathLike | None = None) -> dict[str, STSPairs]:
    """Any of :data:`STS_TASKS` as ``{subset or split: STSPairs}``."""
    if task in STS_SUBSETS:
        return load_sts_year(task, data_dir)
    if task == "STSBenchmark":
        return load_stsb(data_dir)
    if task == "SICKRelatedness":
        return load_sick(data_dir)
    raise ValueError(f"unknown STS task {task!r}; expected one of {list(STS_TASKS)}")
