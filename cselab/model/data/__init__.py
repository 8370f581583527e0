"""Data: the data root, ``cselab data fetch``, the training corpus and the STS loaders."""
from .corpus import CORPORA, load_corpus, resolve_corpus
from .errors import DataError
from .root import data_root
from .sts import STS_SUBSETS, STS_TASKS, STSPairs, load_sick, load_sts_task, load_sts_year, load_stsb

__all__ = [
    "CORPORA", "DataError", "STSPairs", "STS_SUBSETS", "STS_TASKS", "data_root", "load_corpus",
    "load_sick", "load_sts_task", "load_sts_year", "load_stsb", "resolve_corpus",
]
