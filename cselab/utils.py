"""Seeding, devices and precision."""
from __future__ import annotations

import contextlib
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds every CUDA device too


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    return device


def resolve_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype, or None for plain fp32. ``auto``: fp32 on CPU, bf16 (else fp16) on CUDA."""
    if precision == "fp32":
        return None
    if precision == "auto":
        if device.type != "cuda":
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if precision == "fp16" and device.type != "cuda":
        raise ValueError("precision fp16 needs a CUDA device (use fp32 or bf16 on CPU)")
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def autocast(device: torch.device, dtype: torch.dtype | None):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    np.random.set_state(tuple(state["numpy"]))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
