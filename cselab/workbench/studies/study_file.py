"""The study file as YAML: parsed with the line of each list item (for error messages), its schema's
keys, and the checks every part of it applies (known keys, non-empty lists, names the file system
accepts). :class:`StudyError` is the one error all of a study's validation raises.
"""
from __future__ import annotations

import difflib
import functools
import re
from pathlib import Path
from typing import Any

import yaml

from ...model.io import read_utf8
from ...model.options import YAML_MAX_BYTES, load_yaml, shown

STUDY_KEYS = ("name", "description", "figures_dir", "profiles", "runs", "notebooks", "slurm", "power", "claims",
              "record_extras", "record_figures")
# the figures root a study's folder (<figures_dir>/<study>/: its record.jsonl and figures) lives in when
# the study file names none; `cselab reproduce --figures-dir` overrides either
DEFAULT_FIGURES_DIR = "figures"
GROUP_KEYS = ("label", "config", "set", "grid", "seeds", "profiles")
NOTEBOOK_KEYS = ("notebook", "name", "runs", "parameters", "profiles")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+=-]*$")


class StudyError(ValueError):
    """A study file that cannot be run; the message names the file, line, run label and key."""


def item_lines(text: str, key: str) -> list[int]:
    """1-based line of each item of the top-level sequence ``key`` (for error messages)."""
    return list(_sequence_lines(text).get(key, ()))


@functools.lru_cache(maxsize=16)
def _sequence_lines(text: str) -> dict[str, tuple[int, ...]]:
    """``{key: lines of its items}`` for every top-level sequence: the file composed once, not once a key."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return {}
    if not isinstance(root, yaml.MappingNode):
        return {}
    out: dict[str, tuple[int, ...]] = {}
    for k, v in root.value:
        key = getattr(k, "value", None)
        if isinstance(key, str) and isinstance(v, yaml.SequenceNode) and key not in out:
            out[key] = tuple(item.start_mark.line + 1 for item in v.value)
    return out


def read_yaml(path: Path) -> tuple[dict, str]:
    """The study file as a mapping, and its text (for :func:`item_lines`); a parse error names its line."""
    if path.is_file() and path.stat().st_size > YAML_MAX_BYTES:   # before reading: a study is a page
        raise StudyError(f"{path}: {path.stat().st_size:,} bytes; a study file has at most {YAML_MAX_BYTES:,}")
    text = read_utf8(path, StudyError)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise StudyError(f"{path}{line}: cannot parse ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: a study is a mapping with keys {', '.join(STUDY_KEYS)}")
    return data, text


def key_line(text: str, key: str) -> int | None:
    """1-based line of the top-level ``key`` (for error messages), None when it is not there."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if isinstance(root, yaml.MappingNode):
        for k, _ in root.value:
            if getattr(k, "value", None) == key:
                return k.start_mark.line + 1
    return None


def figures_dir_of(path: Path, data: dict, text: str) -> str:
    """Where the study's folder lives: the study file's ``figures_dir`` (a relative folder, read from the
    working directory as ``--figures-dir`` is), else :data:`DEFAULT_FIGURES_DIR`. One home for the
    record: ``cselab reproduce``'s runs, ``--dry-run``, ``--replan`` and ``--from-record`` all read it."""
    value = data.get("figures_dir", DEFAULT_FIGURES_DIR)
    if not isinstance(value, str) or not value.strip() or Path(value).is_absolute() or ".." in Path(value).parts:
        line = key_line(text, "figures_dir")
        raise StudyError(f"{path}{f':{line}' if line else ''}: figures_dir: expected a relative folder inside the "
                         f"project, e.g. figures/cpu-papers, got {shown(value)}")
    return value


def check_keys(where: str, mapping: Any, allowed: tuple[str, ...], what: str) -> None:
    """``mapping`` is a mapping whose keys are all ``allowed``; an unknown one is named with the closest."""
    if not isinstance(mapping, dict):
        raise StudyError(f"{where}: expected a mapping ({what}), got {shown(mapping)}")
    for key in mapping:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise StudyError(f"{where}: unknown key {shown(key)}{suggestion}; valid keys: {', '.join(allowed)}")


def profile_entries(path, text: str, key: str, entries: list, allowed: tuple[str, ...], what: str, profile: str,
                    known: list[str]):
    """``(where, entry)`` for each entry of the top-level list ``key`` that belongs to ``profile``,
    ``where`` its file and line; every entry's keys checked (:func:`check_keys`), those of other
    profiles skipped (:func:`belongs`). The run groups, notebooks, claims, record extras and record
    figures are all read through it."""
    lines = item_lines(text, key)
    for i, entry in enumerate(entries):
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: {key}[{i}]"
        check_keys(where, entry, allowed, what)
        if belongs(where, entry, profile, known):
            yield where, entry


def belongs(where: str, entry: dict, profile: str, known: list[str]) -> bool:
    """Whether a list entry belongs to ``profile``: it names no ``profiles``, or names it among them;
    every profile it names must be one of the study's (``known``)."""
    chosen = entry.get("profiles")
    if chosen is None:
        return True
    as_list(f"{where}: profiles", chosen, str, "profile names")
    unknown = [p for p in chosen if p not in known]
    if unknown:
        raise StudyError(f"{where}: profiles: unknown profile {shown(unknown[0])} (the study's profiles: {', '.join(known)})")
    return profile in chosen


def as_list(where: str, value: Any, item_type: type, what: str) -> list:
    """A non-empty list whose items are ``item_type`` (booleans are not integers here)."""
    ok = isinstance(value, list) and value and all(
        isinstance(v, item_type) and not isinstance(v, bool) for v in value)
    if not ok:
        raise StudyError(f"{where}: expected a non-empty list of {what}, got {shown(value)}")
    return value


def check_file_name(where: str, what: str, name: str, suffix: str, folder: Path) -> None:
    """A label or name the engine turns into a file or folder name (``<name><suffix>``) must be one
    the file system accepts: checked when the study is validated (``--dry-run`` included), not when
    every run fails."""
    from ...model.io import name_max, path_component_problem

    limit = name_max(folder) - len(suffix)
    problem = path_component_problem(name, limit)
    if problem is not None:
        room = f" (the file system's {limit + len(suffix)} bytes minus {suffix})" if suffix else ""
        raise StudyError(f"{where}: {what} {problem}{room}; shorten it")
