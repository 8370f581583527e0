"""Typed option dataclasses filled from plain mappings (YAML/JSON sections): every key and type is
checked and every error names the key. Used for the training config, each method's
hyper-parameters and each pooler's options."""
from __future__ import annotations

import difflib
import json
import math
import re
import reprlib
import types
import typing
from dataclasses import fields
from typing import Any, Iterable

import yaml


class ConfigError(ValueError):
    """A config, hyper-parameter or option value is invalid; the message names the key."""


# A config or study file is a page a person wrote. These bounds are far above any real one and keep a
# hostile one small: nine levels of YAML aliases expand 400 bytes into 9^9 values, which every reader
# after the parser (the type check's message, the config hash, a deep copy) would walk in full.
YAML_MAX_BYTES = 1 << 20
YAML_MAX_VALUES = 100_000
SHOWN_CHARS = 80   # a value inside an error message: at most this many characters, then its type and size

_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 3, 60, 60, 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = _SHORT.maxfrozenset = 4


def shown(value: Any) -> str:
    """``value`` for an error message: its repr when short, else its start and its type and size
    (``[1, 1, 1, 1, ...] (a list of 2,000,000 items)``), never the whole of a value a user can make huge."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"an integer of {value.bit_length():,} bits"
    text = _SHORT.repr(value)
    if isinstance(value, (str, bytes)):
        cut, size = len(value) > _SHORT.maxstring, f"{len(value):,} {'characters' if isinstance(value, str) else 'bytes'}"
    elif isinstance(value, (list, tuple, dict, set, frozenset)):
        noun = "key" if isinstance(value, dict) else "item"
        cut, size = "..." in text, f"{len(value):,} {noun}{'' if len(value) == 1 else 's'}"
    else:
        cut, size = False, ""
    if len(text) > SHOWN_CHARS:
        text, cut = text[:SHOWN_CHARS - 1] + "…", bool(size)
    return f"{text} (a {type(value).__name__} of {size})" if cut else text


def _bounded_error(problem: str, node=None) -> yaml.YAMLError:
    return yaml.constructor.ConstructorError(problem=problem, problem_mark=getattr(node, "start_mark", None))


def _expanded_values(root) -> int:
    """How many values the composed YAML graph ``root`` becomes once every alias is expanded, counted
    without expanding (each node's count once, reused at every alias of it); a collection that contains
    itself through an alias is refused."""
    counts: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        if done:
            on_path.discard(key)
            counts[key] = min(1 + sum(counts[id(c)] for c in children), YAML_MAX_VALUES + 1)
            if counts[key] > YAML_MAX_VALUES:
                raise _bounded_error(f"its aliases expand to more than {YAML_MAX_VALUES:,} values "
                                     "(a YAML alias bomb?)", node)
            continue
        if key in counts:
            continue
        if isinstance(node, yaml.MappingNode):
            _check_unique_keys(node)
        if key in on_path:
            raise _bounded_error("an alias refers to the collection that contains it (a value without end)", node)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in counts)
    return counts[id(root)]


STR_TAG = "tag:yaml.org,2002:str"


def _key_value(key):
    """What a scalar key becomes in the mapping: its text for a string; its value for a number, a
    boolean, null or a date, as PyYAML constructs it (``0.1`` and ``0.10``, or ``1`` and ``1.0``, are one
    key of a dict, as Python compares them); a tag PyYAML does not construct, its tag and text."""
    if key.tag == STR_TAG:
        return key.value
    constructor = yaml.constructor.SafeConstructor()
    try:
        return constructor.yaml_constructors[key.tag](constructor, key)
    except (KeyError, ValueError, TypeError, yaml.YAMLError):
        return (key.tag, key.value)


def _check_unique_keys(node) -> None:
    """A key written twice in one mapping: PyYAML keeps the last silently (``batch_size: 8`` then
    ``batch_size: 64`` trains with 64; a sweep's points ``0.1`` and ``0.10`` became one point); refused
    at the second one's line."""
    seen: dict = {}
    for key, _ in node.value:
        if isinstance(key, yaml.ScalarNode):
            name = _key_value(key)
            try:
                first = seen.get(name)
            except TypeError:   # unhashable: PyYAML itself refuses it as a key
                continue
            if first is not None:
                line, text = first
                again = "written twice" if text == key.value else f"the key {shown(text)} again"
                raise _bounded_error(f"the key {shown(key.value)} is {again} (also at line {line}); "
                                     "YAML would keep the last one silently", key)
            seen[name] = (key.start_mark.line + 1, key.value)


def load_yaml(text: str):
    """``yaml.safe_load`` with bounds: at most YAML_MAX_BYTES characters and YAML_MAX_VALUES values after
    alias expansion, no self-containing alias, no key twice in one mapping, no nesting deeper than the
    parser's recursion, no integer longer than Python converts. Every refusal is a ``yaml.YAMLError`` (with the line where known), so
    callers report it as they report a parse error."""
    if len(text) > YAML_MAX_BYTES:
        raise _bounded_error(f"{len(text):,} characters; at most {YAML_MAX_BYTES:,} are read")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_values(node)
        return loader.construct_document(node)
    except RecursionError:
        raise _bounded_error("nested too deeply") from None
    except ValueError as e:   # an integer of more than 4,300 digits (Python's conversion limit)
        raise _bounded_error(str(e).split(";")[0][:SHOWN_CHARS]) from None
    finally:
        loader.dispose()


class DuplicateKeyError(json.JSONDecodeError):
    """A JSON object with a key written twice; ``lineno`` is the second one's line. Its message is the
    problem alone (JSONDecodeError's appends the line and column, which the caller names already)."""

    def __str__(self) -> str:
        return self.msg


# a JSON string (escapes included) or one of the characters that open, close or separate a structure
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')


def _first_duplicate_key(text: str) -> tuple[str, int, int]:
    """(key, line of its first occurrence, offset of its second) of the first key written twice in one
    object of the valid JSON ``text``: json's own parser does not say where an object's keys are."""
    stack: list[dict | None] = []   # per open structure: an object's keys and their lines, None for an array
    last: tuple[str, int] = ("", 0)
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token in ("{", "["):
            stack.append({} if token == "{" else None)
        elif token in ("}", "]"):
            stack.pop()
        elif token == ":":   # the string before it is a key of the innermost object
            key, offset = last
            seen = stack[-1]
            if key in seen:
                return key, seen[key], offset
            seen[key] = text.count("\n", 0, offset) + 1
        else:
            last = (json.loads(token), m.start())
    raise AssertionError("no key is written twice")   # only called after the parser found one


def load_json(text: str):
    """``json.loads`` that refuses a key written twice in one object, as :func:`load_yaml` does (json
    keeps the last one silently: ``"batch_size": 8`` then ``"batch_size": 64`` would train with 64);
    the refusal is a :class:`DuplicateKeyError` at the second one's line."""
    class Duplicate(Exception):
        pass

    def unique(pairs):
        if len({k for k, _ in pairs}) < len(pairs):
            raise Duplicate
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique)
    except Duplicate:
        key, first, offset = _first_duplicate_key(text)
        raise DuplicateKeyError(f"the key {shown(key)} is written twice (also at line {first}); JSON would keep "
                                "the last one silently", text, offset) from None


def field_types(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def check_type(where: str, value: Any, annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return check_type(where, value, inner[0])
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true/false, got {shown(value)}")
        return value
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {shown(value)}")
        return value
    if annotation is float:
        if isinstance(value, str):
            # PyYAML reads 1e-5 (no dot) as a string; accept any float literal.
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{where}: expected a number, got {shown(value)}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {shown(value)}")
        if not math.isfinite(value):  # inf/NaN pass every range check and silently train nothing
            raise ConfigError(f"{where}: expected a finite number, got {value}")
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {shown(value)}")
        return value
    if annotation is list or origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {shown(value)}")
        return value
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {shown(value)}")
        return value
    if isinstance(annotation, type) and typing.get_origin(annotation) is None and annotation is not Any:
        if not isinstance(value, annotation):
            raise ConfigError(f"{where}: expected {annotation.__name__}, got {shown(value)}")
    return value


def unknown_key_error(where: str, key: str, valid: list[str]) -> ConfigError:
    hint = difflib.get_close_matches(key, valid, n=1) if isinstance(key, str) else []   # YAML keys can be numbers
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ConfigError(f"{where}unknown key {shown(key)}{suggestion}; valid keys: {', '.join(sorted(valid))}")


def build_dataclass(cls, values: dict | None, where: str):
    """Instantiate an options dataclass from a mapping, checking every key and type; errors read
    ``<where>.<key>: ...``."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a mapping of hyper-parameters, got {shown(values)}")
    hints = field_types(cls)
    names = [f.name for f in fields(cls)]
    checked = {}
    for key, value in values.items():
        if key not in names:
            raise unknown_key_error(f"{where}: ", key, names)
        checked[key] = check_type(f"{where}.{key}", value, hints[key])
    try:
        return cls(**checked)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def parse_key_values(items: Iterable[str], where: str) -> dict[str, Any]:
    """``["batch_size=32", "mixcse.mix_lambda=0.3"]`` → ``{"batch_size": 32, "mixcse.mix_lambda": 0.3}``:
    each value read as YAML (``k=`` gives None); the one parser of key=value items (config overrides,
    ``cselab reproduce --slurm``). ``where`` names their source in the error."""
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{where} {shown(item)}: expected key=value")
        try:
            out[key.strip()] = load_yaml(raw) if raw.strip() else None
        except yaml.YAMLError:
            raise ConfigError(f"{where} {key.strip() if len(key) <= SHOWN_CHARS else shown(key.strip())}: cannot parse value {shown(raw)}") from None
    return out
