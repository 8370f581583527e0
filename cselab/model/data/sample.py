"""Every k-th record of a data root, in the data root's own layout: the smoke profile's data.

A smoke run (cselab/workbench/studies/smoke.py) proves that every config and notebook cell goes through; its
numbers mean nothing, so its tiny models need not encode the mirror's 29,469 STS sentences each.
Each evaluation file that its loader reads one record a line (the loaders' ``RECORD_FILES``) keeps
its lines 0, k, 2k, …: line 0 keeps a header (SICK's, MRPC's), pairs split over two files
(STS12–16's input and gold) stay aligned, and a file sorted by label keeps every label. Every other
file (readmes, licences, DBpedia's label names, the training corpora) is a symbolic link to the
original. Lines end at ``\\n``, as the loaders read them, and bytes are copied as they are (TREC is
latin-1).
"""
from __future__ import annotations

import fnmatch
import itertools
import logging
import os
from pathlib import Path

from ..io import COMPLETE_MARKER, check_replaceable, is_complete, read_json, staged_dir
from . import clustering, sts, transfer
from .errors import DataError
from .root import data_root

logger = logging.getLogger(__name__)

# The evaluation sets only: runs and notebooks read the first N sentences of a training corpus (N
# fixed by their settings), so a thinner corpus would save nothing and could leave a run short.
RECORD_FILES = (*sts.RECORD_FILES, *transfer.RECORD_FILES, *clustering.RECORD_FILES)


def is_record_file(relative: str) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in RECORD_FILES)


def sample_data_root(source: str | os.PathLike | None, target: str | os.PathLike, every: int) -> Path:
    """``target`` holding every ``every``-th record of the data root ``source`` (``None``: the
    default root); built once, rebuilt when it was sampled from another root or at another rate."""
    if every < 1:
        raise ValueError(f"every: expected at least 1, got {every}")
    source, target = data_root(source).resolve(), Path(target)
    if not source.is_dir():
        raise DataError(source, "no data root here (cselab data fetch, or --data-dir)")
    manifest = {"sample_of": str(source), "every": every}
    if is_complete(target):
        try:
            if read_json(target / COMPLETE_MARKER) == manifest:
                return target
        except ValueError as e:   # a damaged marker (the cache's key): build the sample again, said once
            logger.warning("%s; building it again", e)
    check_replaceable(target, "the data sample")   # e.g. $CSELAB_SMOKE_DIR=. beside a real ./data
    with staged_dir(target, manifest) as tmp:
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source).as_posix()
            if not path.is_file() or relative.startswith("."):
                continue
            out = tmp / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            if is_record_file(relative):
                with path.open("rb") as lines, out.open("wb") as kept:
                    kept.writelines(itertools.islice(lines, 0, None, every))
            else:
                out.symlink_to(path.resolve())
    return target
