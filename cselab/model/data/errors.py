from __future__ import annotations

import os


class DataError(ValueError):
    """A data file is missing or malformed. The message always names the file (and line)."""

    def __init__(self, path: str | os.PathLike, message: str, line: int | None = None):
        self.path = os.fspath(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
