"""``cselab data fetch``: fill the data root from a local mirror or from the canonical sources.

A mirror is a folder in the layout of ``../shared/data`` (SentEval's ``downstream/`` plus
``corpus/`` and ``clustering/``); it is copied, never modified. Without a mirror the files are
downloaded: SimCSE's packaging of SentEval's evaluation data (the exact files its evaluation
reads) and SimCSE's wiki1m corpus. Downloads go to a temporary file first and are renamed when
complete, so an interrupted fetch never leaves a truncated file behind.
"""
from __future__ import annotations

import logging
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from ..io import ensure_folder
from ..progress import progress_bar
from .errors import DataError
from .root import data_root, data_root_source

logger = logging.getLogger(__name__)

MIRROR_FOLDERS = ("downstream", "corpus", "clustering")

# (url, where it goes under the data root, how to unpack it)
SOURCES = {
    # SimCSE's SentEval/data/downstream/download_dataset.sh: STS12-16, STS-B, SICK and the
    # transfer tasks, already in SentEval's layout and tokenisation.
    "senteval": (
        "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/senteval.tar",
        "downstream",
        "tar",
    ),
    # SimCSE's data/download_wiki.sh
    "wiki1m": (
        "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main/wiki1m_for_simcse.txt",
        "corpus/wiki1m_for_simcse.txt",
        "file",
    ),
}


def fetch(data_dir: str | os.PathLike | None = None, mirror: str | os.PathLike | None = None,
          what: tuple[str, ...] = tuple(SOURCES)) -> Path:
    """Fill the data root. Returns its path. Existing files of the same size are kept."""
    root = ensure_folder(data_root(data_dir), data_root_source(data_dir))   # a file there: one line naming its source
    if mirror is not None:
        copy_mirror(Path(mirror), root)
    else:
        for name in what:
            download_source(name, root)
    return root


def copy_mirror(mirror: Path, root: Path) -> int:
    """Copy the mirror's data folders into ``root``; returns the number of files copied."""
    mirror = Path(mirror).expanduser()
    folders = [mirror / f for f in MIRROR_FOLDERS if (mirror / f).is_dir()]
    if not folders:
        raise DataError(mirror, f"not a data mirror (none of {', '.join(MIRROR_FOLDERS)}/ inside)")
    if mirror.resolve() == root.resolve():
        raise DataError(mirror, "the mirror and the data root are the same folder")
    files = [p for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()]
    copied = 0
    logger.info("copying %d files from %s to %s", len(files), mirror, root)
    for src in progress_bar(files, desc="copying data", unit="file", enabled=len(files) >= 50):
        dst = root / src.relative_to(mirror)
        if dst.exists() and dst.stat().st_size == src.stat().st_size:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".part")
        shutil.copyfile(src, tmp)  # copyfile, not copy2: the mirror is read-only, our copy is not
        os.replace(tmp, dst)
        copied += 1
    logger.info("%d files copied, %d already there", copied, len(files) - copied)
    return copied


def download_source(name: str, root: Path) -> Path:
    url, target, kind = SOURCES[name]
    dst = root / target
    if kind == "file":
        if dst.exists():
            return dst
        _download(url, dst)
        return dst
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        archive = Path(tmp) / Path(url).name
        _download(url, archive)
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(archive) as tar:
            _safe_extract(tar, unpacked)
        # The archive holds the task folders (STS/, SICK/, MR/ ...), possibly under one top folder.
        top = unpacked
        while not (top / "STS").is_dir():
            children = [c for c in top.iterdir() if c.is_dir()]
            if len(children) != 1:
                raise DataError(url, "archive does not contain SentEval's STS/ folder")
            top = children[0]
        dst.mkdir(parents=True, exist_ok=True)
        for task_folder in top.iterdir():
            if not (dst / task_folder.name).exists():
                shutil.move(str(task_folder), dst / task_folder.name)
    return dst


def _download(url: str, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    part = dst.with_name(dst.name + ".part")
    logger.info("downloading %s", url)
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(part, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with progress_bar(total=total, unit="B", unit_scale=True, desc=dst.name) as bar:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
                    bar.update(len(chunk))
    except OSError as e:
        part.unlink(missing_ok=True)
        raise ConnectionError(f"could not download {url}: {e}. Without network, use "
                              "`cselab data fetch --mirror DIR` with a local copy.") from e
    os.replace(part, dst)


def _safe_extract(tar: tarfile.TarFile, dst: Path) -> None:
    dst = dst.resolve()
    for member in tar.getmembers():
        target = (dst / member.name).resolve()
        if dst not in target.parents and target != dst:
            raise DataError(tar.name or "archive", f"member {member.name!r} would be written outside {dst}")
        if member.issym() or member.islnk():
            raise DataError(tar.name or "archive", f"member {member.name!r} is a link; refusing to extract")
    tar.extractall(dst)
