"""SentEval's seven transfer tasks, read the way SentEval reads them.

================  ==================================================  =========  ====================
task              files (under ``downstream/``)                       encoding   splits
================  ==================================================  =========  ====================
MR                ``MR/rt-polarity.{pos,neg}``                        latin-1    all (cross-validated)
CR                ``CR/custrev.{pos,neg}``                            latin-1    all
SUBJ              ``SUBJ/subj.{objective,subjective}``                latin-1    all
MPQA              ``MPQA/mpqa.{pos,neg}``                             latin-1    all
SST2              ``SST/binary/sentiment-{train,dev,test}``           utf-8      train / dev / test
TREC              ``TREC/{train_5500,TREC_10}.label``                 latin-1    train / test
MRPC              ``MRPC/msr_paraphrase_{train,test}.txt``            utf-8      train / test (pairs)
================  ==================================================  =========  ====================

Parsing follows SentEval (``senteval/binary.py``, ``sst.py``, ``trec.py``, ``mrpc.py``):

* every sentence is split on whitespace and re-joined with single spaces (what SentEval's
  tokenisation plus SimCSE's batcher ``' '.join(tokens)`` produce);
* binary tasks: positive file first with label 1, then the negative file with label 0; SUBJ passes
  ``subj.objective`` as its *positive* class (label 1). Blank lines are kept as empty sentences —
  SentEval keeps them too (CR has 2 + 2, MPQA 1 + 2), and the README counts include them;
* SST-2: ``sentence<TAB>label``; TREC: ``COARSE:fine question`` with the six coarse classes
  (ABBR, DESC, ENTY, HUM, LOC, NUM → 0–5), the fine label dropped; MRPC: header line dropped
  (it carries the UTF-8 BOM), columns ``Quality, #1 ID, #2 ID, #1 String, #2 String``.

One difference: SentEval splits the binary files with ``str.splitlines`` (which also breaks at
form feeds, U+0085, …); here lines end at ``\\n`` only. The mirror's binary files are pure ASCII
without such characters, so the two agree (the tests check every count).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .root import data_root
from .text import iter_lines, normalize_whitespace, read_lines, require_dir, split_columns

# SimCSE's table order.
TRANSFER_TASKS = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")

BINARY_FILES = {  # task: (folder, file of label 1, file of label 0) — SentEval's pos/neg order
    "MR": ("MR", "rt-polarity.pos", "rt-polarity.neg"),
    "CR": ("CR", "custrev.pos", "custrev.neg"),
    "SUBJ": ("SUBJ", "subj.objective", "subj.subjective"),
    "MPQA": ("MPQA", "mpqa.pos", "mpqa.neg"),
}
# The files read one record a line (what a sample of the data root thins: cselab/model/data/sample.py).
RECORD_FILES = ("downstream/MR/rt-polarity.*", "downstream/CR/custrev.*", "downstream/SUBJ/subj.*",
                "downstream/MPQA/mpqa.*", "downstream/SST/binary/sentiment-*", "downstream/TREC/*.label",
                "downstream/MRPC/msr_paraphrase_*.txt")
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


@dataclass(frozen=True)
class LabelledSentences:
    """Sentences with integer class labels (one split of a single-sentence task)."""

    name: str
    sentences: tuple[str, ...]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class LabelledPairs:
    """Sentence pairs with integer labels (one split of a pair task such as MRPC)."""

    name: str
    sentences1: tuple[str, ...]
    sentences2: tuple[str, ...]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class TransferData:
    """One task. ``splits`` decides SentEval's protocol: ``{"all"}`` → nested cross-validation,
    ``{"train", "test"}`` → cross-validation on train, ``{"train", "dev", "test"}`` → dev selection."""

    name: str
    n_classes: int
    splits: dict[str, LabelledSentences | LabelledPairs]


def _task_dir(data_dir, folder: str) -> Path:
    return require_dir(data_root(data_dir) / "downstream" / folder, f"{folder} folder")


def _sentences(path: Path, encoding: str) -> list[str]:
    return [normalize_whitespace(line) for line in iter_lines(path, encoding)]


def load_binary(task: str, data_dir: str | os.PathLike | None = None) -> TransferData:
    """MR, CR, SUBJ or MPQA: one ``all`` split, label-1 file first (SentEval's order)."""
    if task not in BINARY_FILES:
        raise ValueError(f"unknown binary task {task!r}; expected one of {sorted(BINARY_FILES)}")
    folder, pos_file, neg_file = BINARY_FILES[task]
    root = _task_dir(data_dir, folder)
    pos = _sentences(root / pos_file, "latin-1")
    neg = _sentences(root / neg_file, "latin-1")
    labels = np.array([1] * len(pos) + [0] * len(neg), dtype=np.int64)
    return TransferData(task, 2, {"all": LabelledSentences(f"{task}/all", tuple(pos + neg), labels)})


def _read_sst_split(path: Path) -> LabelledSentences:
    sentences, labels = [], []
    for lineno, line in enumerate(iter_lines(path, "utf-8"), 1):
        if not line.strip():
            continue
        sentence, label = split_columns(path, lineno, line.strip(), 2)
        if label not in ("0", "1"):
            raise DataError(path, "expected 'sentence<TAB>0|1'", line=lineno)
        sentences.append(normalize_whitespace(sentence))
        labels.append(int(label))
    return LabelledSentences(f"SST2/{path.name.removeprefix('sentiment-')}", tuple(sentences),
                             np.asarray(labels, dtype=np.int64))


def load_sst2(data_dir: str | os.PathLike | None = None) -> TransferData:
    root = _task_dir(data_dir, "SST/binary")
    splits = {split: _read_sst_split(root / f"sentiment-{split}") for split in ("train", "dev", "test")}
    return TransferData("SST2", 2, splits)


def _read_trec_split(path: Path, split: str) -> LabelledSentences:
    sentences, labels = [], []
    for lineno, line in enumerate(iter_lines(path, "latin-1"), 1):
        if not line.strip():
            continue
        coarse, sep, rest = line.strip().partition(":")
        fine_and_question = rest.split(" ", 1)
        if not sep or coarse not in TREC_CLASSES or len(fine_and_question) != 2:
            raise DataError(path, f"expected 'COARSE:fine question' with COARSE in {TREC_CLASSES}", line=lineno)
        sentences.append(normalize_whitespace(fine_and_question[1]))
        labels.append(TREC_CLASSES.index(coarse))
    return LabelledSentences(f"TREC/{split}", tuple(sentences), np.asarray(labels, dtype=np.int64))


def load_trec(data_dir: str | os.PathLike | None = None) -> TransferData:
    root = _task_dir(data_dir, "TREC")
    return TransferData("TREC", len(TREC_CLASSES), {"train": _read_trec_split(root / "train_5500.label", "train"),
                                                    "test": _read_trec_split(root / "TREC_10.label", "test")})


def _read_mrpc_split(path: Path, split: str) -> LabelledPairs:
    lines = read_lines(path)  # UTF-8; the header line's BOM is dropped
    if not lines or not lines[0].startswith("Quality"):
        raise DataError(path, "expected a header line starting with 'Quality'", line=1)
    s1, s2, labels = [], [], []
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        quality, _, _, a, b = split_columns(path, lineno, line.strip(), 5)
        if quality not in ("0", "1"):
            raise DataError(path, f"expected the label 0|1 in the first column, found {quality!r}", line=lineno)
        labels.append(int(quality))
        s1.append(normalize_whitespace(a))
        s2.append(normalize_whitespace(b))
    return LabelledPairs(f"MRPC/{split}", tuple(s1), tuple(s2), np.asarray(labels, dtype=np.int64))


def load_mrpc(data_dir: str | os.PathLike | None = None) -> TransferData:
    root = _task_dir(data_dir, "MRPC")
    return TransferData("MRPC", 2, {"train": _read_mrpc_split(root / "msr_paraphrase_train.txt", "train"),
                                    "test": _read_mrpc_split(root / "msr_paraphrase_test.txt", "test")})


def load_transfer_task(task: str, data_dir: str | os.PathLike | None = None) -> TransferData:
    """Any of :data:`TRANSFER_TASKS`."""
    if task in BINARY_FILES:
        return load_binary(task, data_dir)
    loaders = {"SST2": load_sst2, "TREC": load_trec, "MRPC": load_mrpc}
    if task not in loaders:
        raise ValueError(f"unknown transfer task {task!r}; expected one of {list(TRANSFER_TASKS)}")
    return loaders[task](data_dir)
