"""The lockfile of the tested environment (``cselab/model/locks/cpu.txt``) and how the running
environment compares with it: recorded in every run's ``config.json`` (``lockfile``, next to
``versions``; not part of the run's hash) and in the model card.

A run is reproducible bit for bit only with the same lockfile, the same precision, the same kind of
machine and the same number of threads (docs/reliability.md, "Reproduce a run bit for bit").
"""
from __future__ import annotations

import functools
import hashlib
import re
from importlib import metadata
from pathlib import Path

LOCKFILE = Path(__file__).parent / "locks" / "cpu.txt"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: str | Path = LOCKFILE) -> dict[str, str]:
    """``{canonical name: version}`` of the lockfile's ``name==version`` lines; any other line that
    is not a comment or a pip option is an error naming the file and the line."""
    path = Path(path)
    pins = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "--")):
            continue
        match = _PIN.match(line)
        if not match:
            raise ValueError(f"{path}:{lineno}: expected a pinned `name==version`, got {line!r}")
        pins[canonical(match.group(1))] = match.group(2)
    return pins


@functools.lru_cache(maxsize=1)
def installed_versions() -> dict[str, str]:
    """``{canonical name: version}`` of the installed distributions, read once per process: asking
    ``metadata.version`` for each of the lockfile's ~180 pins parsed every METADATA file again for
    every run (0.4 s of a 1.3 s smoke run). What a process has imported cannot change under it, so
    the first reading stays true for it."""
    versions: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(canonical(name), dist.version)   # first on sys.path wins, as for imports
    return versions


def lockfile_info(path: str | Path = LOCKFILE, show: int = 10) -> dict | None:
    """The lockfile's name and sha256 and whether the installed packages match its pins (the first
    ``show`` differences listed); None when the lockfile is not there."""
    path = Path(path)
    if not path.is_file():
        return None
    differences = []
    installed_now = installed_versions()
    for name, locked in read_pins(path).items():
        installed = installed_now.get(name)
        if installed != locked:
            differences.append(f"{name}: locked {locked}, installed {installed or 'none'}")
    return {"file": f"cselab/model/locks/{path.name}" if path.parent == LOCKFILE.parent else str(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "matches": not differences,
            "differences": len(differences), "first_differences": differences[:show]}
