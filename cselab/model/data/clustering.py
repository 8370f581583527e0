"""Clustering data: the 8 short-text sets (ClusterNS Table 6) and the DBpedia sample (Table 5).

Short-text sets (``clustering/short-text/``), one ``label<TAB>text`` per line, read as ClusterNS's
``cluster_eval.py`` reads them: the text is the second tab-separated field exactly as written
(StackOverflow lines end with an extra empty field, and its line 10,344 has a tab inside the title,
which ClusterNS — and therefore this loader — cuts at the tab; CRLF line ends are dropped). Labels
are the file's integers (Tweet's 89 labels are not contiguous: they run from 1 to 110).

DBpedia (``clustering/dbpedia/``): CSV ``"label","abstract"`` with label ids 1–14 named in
``meta.txt``; ``test.csv`` and ``val.csv`` hold 5,000 abstracts each.
"""
from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError
from .root import data_root
from .text import iter_lines, require_dir

# Name in ClusterNS Table 6 → file under clustering/short-text (ClusterNS's dataset_map order).
SHORT_TEXT_SETS = {
    "AgNews": "agnewsdataraw-8000",
    "Biomedical": "biomedical/biomedical_true_text",
    "GoogleNews-S": "S",
    "GoogleNews-T": "T",
    "GoogleNews-TS": "TS",
    "SearchSnippets": "search_snippets/search_snippets_true_text",
    "StackOverflow": "stackoverflow/stackoverflow_true_text",
    "Tweet": "tweet-original-order.txt",
}
DBPEDIA_SPLITS = ("test", "val", "all")
# The files read one record a line (what a sample of the data root thins: cselab/model/data/sample.py);
# meta.txt names the labels and stays whole.
RECORD_FILES = (*(f"clustering/short-text/{name}" for name in SHORT_TEXT_SETS.values()),
                "clustering/dbpedia/test.csv", "clustering/dbpedia/val.csv")


@dataclass(frozen=True)
class ClusteringData:
    """Texts with their gold classes; ``n_clusters`` (= number of distinct labels) is K for K-means."""

    name: str
    texts: tuple[str, ...]
    labels: np.ndarray
    label_names: dict[int, str] | None = None

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def n_clusters(self) -> int:
        return int(len(np.unique(self.labels)))

    def _subset(self, index: np.ndarray, suffix: str) -> "ClusteringData":
        return ClusteringData(f"{self.name}{suffix}", tuple(self.texts[i] for i in index), self.labels[index],
                              self.label_names)

    def subsample(self, max_texts: int, seed: int = 0) -> "ClusteringData":
        """At most ``max_texts`` texts drawn uniformly without replacement (seeded, file order kept):
        a cheaper evaluation whose class shares match the full set's in expectation. A class may
        vanish from a small sample; K (``n_clusters``) is then the number of classes left.
        Returns the set itself when it has no more than ``max_texts`` texts."""
        if isinstance(max_texts, bool) or not isinstance(max_texts, (int, np.integer)) or max_texts < 2:
            raise ValueError(f"max_texts must be an integer >= 2, got {max_texts!r}")
        if max_texts >= len(self):
            return self
        index = np.sort(np.random.default_rng(seed).choice(len(self), size=int(max_texts), replace=False))
        return self._subset(index, f"[{max_texts} of {len(self)}, seed {seed}]")

    def sample_per_class(self, per_class: int, seed: int = 0, classes=None) -> "ClusteringData":
        """Up to ``per_class`` texts of each class (all of a smaller class), drawn without replacement
        (seeded), grouped by class in label order: balanced sets for maps coloured by class.
        ``classes`` keeps only those labels (ids, or names when ``label_names`` exist)."""
        if isinstance(per_class, bool) or not isinstance(per_class, (int, np.integer)) or per_class < 1:
            raise ValueError(f"per_class must be an integer >= 1, got {per_class!r}")
        present = np.unique(self.labels)
        if classes is not None:
            by_name = {v: k for k, v in (self.label_names or {}).items()}
            wanted = [by_name.get(c, c) for c in classes]
            unknown = [c for c, w in zip(classes, wanted) if w not in set(present.tolist())]
            if unknown:
                known = [self.label_names[k] for k in present] if self.label_names else present.tolist()
                raise ValueError(f"{self.name}: unknown class(es) {unknown}; classes: {known}")
            present = np.asarray(sorted(set(wanted)))
        rng = np.random.default_rng(seed)
        chosen = []
        for label in present:
            members = np.flatnonzero(self.labels == label)
            chosen.append(np.sort(rng.choice(members, size=min(per_class, len(members)), replace=False)))
        return self._subset(np.concatenate(chosen), f"[{per_class} per class, seed {seed}]")

    def label_words(self) -> list:
        """Each text's class name (``label_names``), or its label id when the set has no names."""
        if not self.label_names:
            return self.labels.tolist()
        return [self.label_names[int(k)] for k in self.labels]


def _clustering_dir(data_dir, sub: str) -> Path:
    return require_dir(data_root(data_dir) / "clustering" / sub, f"clustering/{sub} folder")


def load_short_text(name: str, data_dir: str | os.PathLike | None = None) -> ClusteringData:
    """One of :data:`SHORT_TEXT_SETS`."""
    if name not in SHORT_TEXT_SETS:
        raise ValueError(f"unknown short-text set {name!r}; expected one of {list(SHORT_TEXT_SETS)}")
    path = _clustering_dir(data_dir, "short-text") / SHORT_TEXT_SETS[name]
    texts, labels = [], []
    for lineno, line in enumerate(iter_lines(path, "utf-8"), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise DataError(path, "expected 'label<TAB>text', found no tab", line=lineno)
        try:
            labels.append(int(cols[0]))
        except ValueError:
            raise DataError(path, f"label {cols[0]!r} is not an integer", line=lineno) from None
        texts.append(cols[1])
    if not texts:
        raise DataError(path, "no labelled lines")
    return ClusteringData(name, tuple(texts), np.asarray(labels, dtype=np.int64))


def _dbpedia_names(path: Path) -> dict[int, str]:
    names = {}
    for line in iter_lines(path):
        match = re.fullmatch(r"\s*(\d+):\s*(.+?)\s*", line)
        if match:
            names[int(match.group(1))] = match.group(2)
    if not names:
        raise DataError(path, "no 'id: name' lines")
    return names


def _read_dbpedia_csv(path: Path, names: dict[int, str]) -> tuple[list[str], list[int]]:
    texts, labels = [], []
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        row = next(csv.reader([line]))
        if len(row) != 2:
            raise DataError(path, f"expected 2 CSV fields (label, abstract), found {len(row)}", line=lineno)
        if not row[0].isdigit() or int(row[0]) not in names:
            raise DataError(path, f"label {row[0]!r} is not one of the ids in meta.txt", line=lineno)
        labels.append(int(row[0]))
        texts.append(row[1])
    return texts, labels


def load_dbpedia(split: str = "test", data_dir: str | os.PathLike | None = None) -> ClusteringData:
    """The DBpedia-14 sample: ``test`` (default), ``val`` or ``all`` (both, test first)."""
    if split not in DBPEDIA_SPLITS:
        raise ValueError(f"split must be one of {DBPEDIA_SPLITS}, got {split!r}")
    root = _clustering_dir(data_dir, "dbpedia")
    names = _dbpedia_names(root / "meta.txt")
    texts, labels = [], []
    for part in (("test", "val") if split == "all" else (split,)):
        t, y = _read_dbpedia_csv(root / f"{part}.csv", names)
        texts += t
        labels += y
    return ClusteringData(f"DBpedia/{split}", tuple(texts), np.asarray(labels, dtype=np.int64), names)


def load_clustering_task(name: str, data_dir: str | os.PathLike | None = None) -> ClusteringData:
    """``DBpedia`` (the test split) or any of :data:`SHORT_TEXT_SETS`."""
    if name == "DBpedia":
        return load_dbpedia("test", data_dir)
    return load_short_text(name, data_dir)
