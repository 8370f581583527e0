"""Reading text files line by line with errors that name the file and the line."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterator

from .errors import DataError


def require_file(path: str | os.PathLike, what: str = "file") -> Path:
    path = Path(path)
    if not path.exists():
        raise DataError(path, f"{what} not found (run `cselab data fetch` or check --data-dir / $CSELAB_DATA)")
    if path.is_dir():
        raise DataError(path, f"expected a {what}, found a folder")
    if not path.is_file():   # /dev/null, a FIFO (reading it could block), a socket
        raise DataError(path, f"expected a {what}, found a special file (a device, pipe or socket); give a regular "
                        "file")
    return path


def require_dir(path: str | os.PathLike, what: str = "data folder") -> Path:
    path = Path(path)
    if not path.is_dir():
        raise DataError(path, f"{what} not found (run `cselab data fetch` or check --data-dir / $CSELAB_DATA)")
    return path


def iter_lines(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[str]:
    """Lines of a file without their line ends (LF or CRLF); a leading UTF-8 BOM is dropped.

    A line that does not decode raises :class:`DataError` naming the file and the line.
    ``encoding='latin-1'`` is accepted for the SentEval files that use it (TREC).
    """
    path = require_file(path)
    with open(path, "rb") as f:
        for lineno, chunk in enumerate(f, 1):
            if lineno == 1 and chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
            chunk = chunk.rstrip(b"\n").rstrip(b"\r")
            try:
                yield chunk.decode(encoding)
            except UnicodeDecodeError as e:
                raise DataError(path, f"not valid {encoding} (byte {e.start} of the line)", line=lineno) from None


def read_lines(path: str | os.PathLike, encoding: str = "utf-8") -> list[str]:
    return list(iter_lines(path, encoding))


def split_columns(path: Path, lineno: int, line: str, n: int, at_least: bool = False) -> list[str]:
    cols = line.split("\t")
    if (len(cols) < n) if at_least else (len(cols) != n):
        need = f"at least {n}" if at_least else str(n)
        raise DataError(path, f"expected {need} tab-separated columns, found {len(cols)}", line=lineno)
    return cols


def parse_score(path: Path, lineno: int, value: str) -> float:
    try:
        score = float(value)
    except ValueError:
        raise DataError(path, f"gold score {value!r} is not a number", line=lineno) from None
    if score != score:  # NaN
        raise DataError(path, f"gold score {value!r} is not a number", line=lineno)
    if score in (math.inf, -math.inf):   # ranks of infinities tie: the correlation would be nan
        raise DataError(path, f"gold score {value!r} is not a finite number", line=lineno)
    return score


def normalize_whitespace(sentence: str) -> str:
    # SentEval splits every sentence on whitespace and the SimCSE batcher joins the tokens with
    # single spaces; doing the same here keeps our inputs byte-identical to theirs.
    return " ".join(sentence.split())
