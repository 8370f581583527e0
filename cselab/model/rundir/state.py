"""Saving nested training state (optimizer, scheduler, RNG, counters) without pickle.

Tensors go into a safetensors file; the structure and every non-tensor value go into JSON.
Loading therefore never unpickles anything.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save_file

from ..io import atomic_write_text, read_json, read_safetensors


def to_skeleton(obj: Any, tensors: dict[str, torch.Tensor], prefix: str = "t") -> Any:
    """Replace tensors/arrays by references into ``tensors``; keep dict key types and tuples."""
    if isinstance(obj, torch.Tensor):
        key = f"{prefix}"
        tensors[key] = obj.detach().cpu().contiguous()
        return {"__tensor__": key}
    if isinstance(obj, np.ndarray):
        key = f"{prefix}"
        tensors[key] = torch.from_numpy(np.ascontiguousarray(obj))
        return {"__ndarray__": key, "dtype": str(obj.dtype)}
    if isinstance(obj, dict):
        return {"__dict__": [[_key(k), to_skeleton(v, tensors, f"{prefix}.{i}")] for i, (k, v) in enumerate(obj.items())]}
    if isinstance(obj, tuple):
        return {"__tuple__": [to_skeleton(v, tensors, f"{prefix}.{i}") for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [to_skeleton(v, tensors, f"{prefix}.{i}") for i, v in enumerate(obj)]
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot save a {type(obj).__name__} in a checkpoint")


def _key(k: Any) -> Any:
    if isinstance(k, (str, int, float, bool)) or k is None:
        return k
    raise TypeError(f"checkpoint dict keys must be plain values, got {type(k).__name__}")


def from_skeleton(obj: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if isinstance(obj, dict):
        if "__tensor__" in obj:
            return tensors[obj["__tensor__"]]
        if "__ndarray__" in obj:
            return tensors[obj["__ndarray__"]].numpy().astype(obj["dtype"], copy=True)
        if "__tuple__" in obj:
            return tuple(from_skeleton(v, tensors) for v in obj["__tuple__"])
        if "__dict__" in obj:
            return {k: from_skeleton(v, tensors) for k, v in obj["__dict__"]}
        raise ValueError(f"unexpected entry in checkpoint structure: {sorted(obj)}")
    if isinstance(obj, list):
        return [from_skeleton(v, tensors) for v in obj]
    return obj


def save_state(state: dict, folder: str | os.PathLike, name: str = "trainer_state") -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, torch.Tensor] = {}
    skeleton = to_skeleton(state, tensors)
    # safetensors refuses tensors that share memory; cloning makes each entry independent.
    save_file({k: v.clone() for k, v in tensors.items()}, str(folder / f"{name}.safetensors"))
    atomic_write_text(folder / f"{name}.json", json.dumps(skeleton))


def state_json(folder: str | os.PathLike, name: str = "trainer_state") -> Path:
    """The JSON half of a saved state (the structure; the tensors are beside it)."""
    return Path(folder) / f"{name}.json"


def _read_skeleton(path: Path) -> dict:
    """The JSON structure :func:`save_state` writes (``{"__dict__": [[key, value], ...]}``), checked:
    anything else (a list, a string, entries that are not pairs) is one error naming the file."""
    skeleton = read_json(path)
    entries = skeleton.get("__dict__") if isinstance(skeleton, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, list) and len(e) == 2 for e in entries):
        got = json.dumps(skeleton)
        raise ValueError(f"{path}: not a cselab checkpoint structure (expected an object {{\"__dict__\": [[key, "
                         f"value], ...]}}, got {got[:40]}{'…' if len(got) > 40 else ''})")
    return skeleton


def load_state(folder: str | os.PathLike, name: str = "trainer_state", required: tuple[str, ...] = ()) -> dict:
    """The state :func:`save_state` wrote in ``folder``; ``required``: entries it must hold (a missing
    one is an error naming the file, not a KeyError in the reader)."""
    folder = Path(folder)
    for suffix in (".json", ".safetensors"):
        if not (folder / f"{name}{suffix}").is_file():
            raise FileNotFoundError(f"{folder / (name + suffix)}: checkpoint file missing")
    path = folder / f"{name}.json"
    skeleton = _read_skeleton(path)
    tensors = read_safetensors(folder / f"{name}.safetensors")
    try:
        state = from_skeleton(skeleton, tensors)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not a cselab checkpoint structure ({e})") from None
    missing = [key for key in required if key not in state]
    if missing:
        raise ValueError(f"{path}: not a cselab checkpoint (no {', '.join(repr(k) for k in missing)} entry)")
    return state


def load_plain_entry(folder: str | os.PathLike, key: str, name: str = "trainer_state") -> Any:
    """One tensor-free top-level entry of a saved state (e.g. ``train_state``: step, epoch, best score),
    read from the JSON alone without loading the tensors; for a cheap look at a run's progress."""
    path = Path(folder) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: checkpoint file missing")
    entries = dict(_read_skeleton(path)["__dict__"])
    if key not in entries:
        raise KeyError(f"{path}: no entry {key!r} (entries: {', '.join(map(str, entries))})")
    try:
        return from_skeleton(entries[key], {})
    except KeyError:
        raise ValueError(f"{path}: entry {key!r} holds tensors; use load_state") from None
