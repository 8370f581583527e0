"""Typed option dataclasses filled from plain mappings (YAML/JSON sections): every key and type is
checked and every error names the key. Used for the training config, each method's
hyper-parameters and each pooler's options."""
from __future__ import annotations

import difflib
import math
import types
import typing
from dataclasses import fields
from typing import Any, Iterable

import yaml


class ConfigError(ValueError):
    """A config, hyper-parameter or option value is invalid; the message names the key."""


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
            raise ConfigError(f"{where}: expected true/false, got {value!r}")
        return value
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if annotation is float:
        if isinstance(value, str):
            # PyYAML reads 1e-5 (no dot) as a string; accept any float literal.
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{where}: expected a number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        if not math.isfinite(value):  # inf/NaN pass every range check and silently train nothing
            raise ConfigError(f"{where}: expected a finite number, got {value}")
        return float(value)
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    if annotation is list or origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return value
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        return value
    if isinstance(annotation, type) and typing.get_origin(annotation) is None and annotation is not Any:
        if not isinstance(value, annotation):
            raise ConfigError(f"{where}: expected {annotation.__name__}, got {value!r}")
    return value


def unknown_key_error(where: str, key: str, valid: list[str]) -> ConfigError:
    hint = difflib.get_close_matches(key, valid, n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ConfigError(f"{where}unknown key {key!r}{suggestion}; valid keys: {', '.join(sorted(valid))}")


def build_dataclass(cls, values: dict | None, where: str):
    """Instantiate an options dataclass from a mapping, checking every key and type; errors read
    ``<where>.<key>: ...``."""
    if values is None:
        values = {}
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a mapping of hyper-parameters, got {values!r}")
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
            raise ConfigError(f"{where} {item!r}: expected key=value")
        try:
            out[key.strip()] = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            raise ConfigError(f"{where} {key.strip()}: cannot parse value {raw!r}") from None
    return out
