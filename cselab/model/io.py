"""Small file helpers: every result is written atomically (temp file + rename), so a crash
never leaves a half-written JSON, metrics file or checkpoint behind."""
from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

logger = logging.getLogger(__name__)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and not isinstance(e, WriteError) and e.errno is not None:
            raise WriteError(f"{path}: cannot write ({write_failure(e)})", e.errno) from e
        raise
    return path


def atomic_write_with(path: str | os.PathLike, write) -> Path:
    """``write(tmp)`` fills a temporary file beside ``path``, which then replaces ``path`` in one
    rename: no half-written file, and a link in ``path``'s place is replaced, never written through.
    For writers that take a file name (matplotlib's savefig)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and not isinstance(e, WriteError) and e.errno is not None:
            raise WriteError(f"{path}: cannot write ({write_failure(e)})", e.errno) from e
        raise
    return path


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(obj: Any) -> Any:
    # numpy scalars and paths show up in metrics; everything else is a bug worth seeing.
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")


def read_json(path: str | os.PathLike) -> Any:
    path = Path(path)
    try:
        return json.loads(read_utf8(path))   # invalid UTF-8: an error naming the file, line and byte
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None


def read_safetensors(path: str | os.PathLike) -> dict:
    """The tensors of a safetensors file; a truncated or foreign file is one error naming it."""
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return load_file(str(path))
    except Exception as e:  # SafetensorError (bad header, truncated data) or an unreadable file
        raise ValueError(f"{path}: not a readable safetensors file ({first_line(e)})") from None


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (library messages can span many lines)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON line. Lines are written whole (one write call) and flushed; a link in the
    file's place is refused, never appended through."""
    line = json.dumps(record, default=_json_default) + "\n"
    check_not_link(path, "records")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
    except OSError as e:
        if e.errno is None:
            raise
        raise WriteError(f"{path}: cannot write ({write_failure(e)})", e.errno) from e


def check_not_link(path: str | os.PathLike, what: str) -> Path:
    """``path`` unless it is a symbolic link: cselab writes (and locks) only files and folders it
    creates, and a link someone put in one's place would carry the write to its target (a file
    outside every cselab folder). One :class:`WriteError` naming the link, its target and ``what``
    goes there; nothing is written."""
    path = Path(path)
    if path.is_symlink():
        raise WriteError(f"{path}: is a symbolic link (to {os.readlink(path)}), where cselab writes {what}; cselab "
                         "does not write through links: remove the link", errno.ELOOP)
    return path


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """The records of a JSON-lines file. A last line that is cut short (no newline, not valid JSON: an
    append that a kill or a full disk interrupted, as :func:`append_jsonl` ends every record with a
    newline) is left out with a warning; any other bad line is an error naming the file and line."""
    path = Path(path)
    records = []
    lines = read_utf8(path).split("\n")   # only newlines end records (a JSON string may hold U+2028)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            if lineno == len(lines):   # the piece after the last newline: a record whose write was cut short
                logger.warning("%s:%d: a record cut short (an interrupted write); left out", path, lineno)
                continue
            raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
    return records


# ---------------------------------------------------------------- folders swapped into place
# A folder (a checkpoint, a model, a whole run) is written into ``<name>.tmp``, marked complete by a
# marker file written last, then swapped in: ``<name>`` → ``<name>.old``, ``<name>.tmp`` → ``<name>``,
# ``<name>.old`` removed. A crash can stop anywhere in between; :func:`recover_dir` puts the newest
# complete copy back in place, so a complete checkpoint is never lost to an interrupted swap.
COMPLETE_MARKER = ".complete.json"


class WriteError(OSError):
    """A result could not be written (full disk, permissions, ...). The message names the path."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def mark_complete(folder: str | os.PathLike, meta: dict | None = None) -> None:
    """Record that ``folder`` is completely written (``meta``, e.g. ``{"step": 40}``, orders copies)."""
    atomic_write_json(Path(folder) / COMPLETE_MARKER, meta or {})


def is_complete(folder: str | os.PathLike) -> bool:
    return (Path(folder) / COMPLETE_MARKER).is_file()


def recorded_step(folder: str | os.PathLike) -> float:
    """The step recorded in a folder's completeness marker (-inf when there is none)."""
    try:
        step = read_json(Path(folder) / COMPLETE_MARKER).get("step")
    except (OSError, ValueError, AttributeError):
        return -math.inf
    return step if isinstance(step, (int, float)) else -math.inf


def remove_dir(folder: str | os.PathLike) -> None:
    """Delete a folder, its completeness marker first: a deletion cut short is never taken for complete."""
    folder = Path(folder)
    if folder.is_symlink():   # the link only: its target is not ours to empty
        folder.unlink()
        return
    (folder / COMPLETE_MARKER).unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)


def replace_dir(tmp_dir: Path, final_dir: Path, meta: dict | None = None) -> None:
    """Swap a fully written temporary folder into place. It is marked complete first (with
    ``meta``); the old folder is removed only after the new one is in place, so a crash leaves
    a complete copy that :func:`recover_dir` finds."""
    tmp_dir, final_dir = Path(tmp_dir), Path(final_dir)
    if not is_complete(tmp_dir):
        mark_complete(tmp_dir, meta)
    old = final_dir.with_name(final_dir.name + ".old")
    if old.exists():
        remove_dir(old)
    if final_dir.exists():
        os.replace(final_dir, old)
    os.replace(tmp_dir, final_dir)
    if old.exists():
        remove_dir(old)


def check_replaceable(folder: str | os.PathLike, what: str) -> Path:
    """``folder`` when a swap may replace it: it does not exist, or it is a folder this module
    wrote (its completeness marker). Anything else (a user's folder, a link) is one
    :class:`WriteError` saying ``what`` goes there; nothing is touched."""
    folder = Path(folder)
    if (folder.exists() or folder.is_symlink()) and (folder.is_symlink() or not is_complete(folder)):
        raise WriteError(f"{folder}: exists and was not written by cselab (no {COMPLETE_MARKER}); it is where {what} "
                         "goes: move it, or choose another folder", errno.EEXIST)
    return folder


def recover_dir(final_dir: str | os.PathLike, suffix: str = ".tmp") -> Path | None:
    """Finish a swap that a crash interrupted; returns the folder now in place (None if there is none).

    A complete ``<name>.tmp`` (staging ``suffix``) newer than ``<name>`` (or with no ``<name>``) is
    swapped in; with neither, a complete ``<name>.old`` is moved back. "Newer" is decided by the step
    recorded in the markers; an unmarked ``.tmp``/``.old`` is incomplete and ignored (never promoted)."""
    final = Path(final_dir)
    tmp, old = final.with_name(final.name + suffix), final.with_name(final.name + ".old")
    if is_complete(tmp) and not final.is_dir():  # crashed between the two renames: finish the swap
        os.replace(tmp, final)
        if old.exists():
            remove_dir(old)  # superseded by the newer complete copy now in place
    elif is_complete(tmp) and recorded_step(tmp) >= recorded_step(final):
        replace_dir(tmp, final)  # crashed after the marker, before the first rename
    elif not final.is_dir() and is_complete(old):
        os.replace(old, final)
    return final if final.is_dir() else None


def staging_dir(final_dir: Path, suffix: str = ".tmp") -> Path:
    """An empty ``<final>.tmp`` to write into (after recovering an interrupted swap, so that only
    an incomplete or outdated ``.tmp`` is cleared)."""
    final_dir = Path(final_dir)
    final_dir.parent.mkdir(parents=True, exist_ok=True)
    recover_dir(final_dir, suffix)
    tmp = final_dir.with_name(final_dir.name + suffix)
    if tmp.exists():
        remove_dir(tmp)
    tmp.mkdir()
    return tmp


@contextlib.contextmanager
def staged_dir(final_dir: str | os.PathLike, meta: dict | None = None) -> Iterator[Path]:
    """Write a folder atomically: ``with staged_dir(final, {"step": n}) as tmp: write into tmp``.
    On success the folder is marked complete and swapped into place; on any error the staging
    folder is removed (nothing half-written stays behind) and a failed write becomes a
    :class:`WriteError` naming the folder."""
    final_dir = Path(final_dir)
    tmp = staging_dir(final_dir)
    try:
        yield tmp
    except BaseException as e:
        remove_dir(tmp)
        reason = write_failure(e)
        if reason is not None:
            raise WriteError(f"{final_dir}: cannot write ({reason})", getattr(e, "errno", None)) from e
        raise
    replace_dir(tmp, final_dir, meta)


def write_failure(e: BaseException) -> str | None:
    """A one-line reason when ``e`` is an I/O failure (safetensors reports those as
    ``SafetensorError ... (os error N)``), None for anything else."""
    code = getattr(e, "errno", None) if isinstance(e, OSError) else None
    if code is None and type(e).__name__ == "SafetensorError":
        match = re.search(r"os error (\d+)", str(e))
        code = int(match.group(1)) if match else None
        if code is None:
            return str(e).splitlines()[0] if str(e) else type(e).__name__
    if code is None:
        return None
    return "no space left on device" if code == errno.ENOSPC else os.strerror(code).lower()


# ---------------------------------------------------------------- names and folders given by users
DEFAULT_NAME_MAX = 255   # NAME_MAX of ext4, xfs, btrfs, tmpfs, APFS and NTFS (in bytes of the name)


def name_max(path: str | os.PathLike) -> int:
    """The longest file name (bytes) the file system holding ``path`` (or its nearest existing
    ancestor) accepts; :data:`DEFAULT_NAME_MAX` where the system cannot say."""
    existing = Path(os.path.abspath(path))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        return int(os.pathconf(existing, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return DEFAULT_NAME_MAX


def path_component_problem(name: str, limit: int = DEFAULT_NAME_MAX) -> str | None:
    """Why ``name`` cannot be one plain folder or file name inside another folder (None when it
    can): it must not be empty, ``.`` or ``..``, hold a path separator (so it can neither nest nor
    climb out, nor be absolute) or a NUL, be only white space, begin or end with white space, hold a
    control character, or be longer than ``limit`` bytes."""
    if not name:
        return "is empty"
    if name in (".", ".."):
        return "names the enclosing folder itself" if name == "." else "names the parent of the enclosing folder"
    separators = [s for s in {"/", os.sep, os.altsep} if s and s in name]
    if separators:
        return f"holds {separators[0]!r}: it must be one folder name, not a path (use output_dir for the location)"
    if "\0" in name:
        return "holds a NUL character"
    # names that look empty or differ only in invisible characters from another are refused too
    if not name.strip():
        return "is only white space"
    if name != name.strip():
        return "begins or ends with white space"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "holds a control character"
    size = len(os.fsencode(name))
    if size > limit:
        return f"is {size} bytes long, more than the {limit} that fit in a file name here"
    return None


def blocking_file(path: str | os.PathLike) -> Path | None:
    """The first of ``path`` and its ancestors that exists and is not a folder (a file standing
    where a folder must be), or None."""
    path = Path(path)
    for candidate in (path, *path.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
        if candidate.is_symlink():  # a dangling link: creating through it fails
            return candidate
    return None


def check_folder_location(path: str | os.PathLike, what: str) -> Path:
    """One error naming ``what`` (an option or a key) when ``path`` cannot be a folder because it
    or an ancestor is a file; nothing is created."""
    path = Path(path)
    blocker = blocking_file(path)
    if blocker is not None:
        where = "is a file" if blocker == path else f"lies below {blocker}, which is a file"
        raise WriteError(f"{what}: {path} {where}, not a folder; choose a folder", errno.ENOTDIR)
    return path


def check_writable(path: str | os.PathLike, what: str) -> Path:
    """One :class:`WriteError` naming ``what`` when nothing can be written in the folder ``path`` (or,
    while it does not exist, in its nearest existing ancestor, where it would be created): a
    read-only file system, no permission. Tried by creating and removing an empty hidden file, the
    one test that also holds for root and for read-only mounts; nothing stays behind."""
    path = check_folder_location(path, what)
    existing = Path(os.path.abspath(path))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".cselab-write-check-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        where = "" if existing == Path(os.path.abspath(path)) else f", where {path} would be created"
        raise WriteError(f"{what}: cannot write in {existing}{where} ({write_failure(e) or e})", e.errno) from e
    return path


def ensure_folder(path: str | os.PathLike, what: str) -> Path:
    """Create the folder ``path`` (and its parents) or raise one :class:`WriteError` naming
    ``what`` and the reason (a file in the way, no permission, a read-only file system)."""
    path = check_folder_location(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WriteError(f"{what}: cannot create the folder {path} ({write_failure(e) or e})", e.errno) from e
    return path


def read_utf8(path: Path, error: type[Exception] = ValueError) -> str:
    """The text of ``path``; invalid UTF-8 raises ``error`` naming the file, line and byte."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not valid UTF-8 (byte {e.start} of the file); save it as UTF-8") from None
