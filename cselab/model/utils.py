"""Seeding, devices and precision."""
from __future__ import annotations

import contextlib
import os
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


# What a run takes this CPU to have, for testing every CPU kind on one machine: ``auto`` (what torch
# reports), ``on`` (as if bf16 were native: ``auto`` precision means bf16, emulated where the CPU lacks
# it, so a developer on an AVX2 machine runs the paths a bf16 machine runs), ``off`` (as if it were not:
# fp32, the paths an AVX2 machine runs). The tests' ``--native-bf16`` option sets it (tests/conftest.py).
NATIVE_BF16_ENV = "CSELAB_NATIVE_BF16"


def native_bf16_override() -> str:
    """``auto``, ``on`` or ``off`` from :data:`NATIVE_BF16_ENV` (unset or empty: ``auto``)."""
    value = os.environ.get(NATIVE_BF16_ENV, "").strip().lower() or "auto"
    if value not in ("auto", "on", "off"):
        raise ValueError(f"{NATIVE_BF16_ENV}={os.environ[NATIVE_BF16_ENV]!r}: expected auto, on or off")
    return value


def cpu_supports_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX-512 BF16 or AMX tiles, through oneDNN), as torch
    reports it, unless :data:`NATIVE_BF16_ENV` says otherwise. Elsewhere bf16 on the CPU is emulated
    and slower than fp32."""
    override = native_bf16_override()
    return override == "on" if override != "auto" else _hardware_bf16()


def cpu_has_amx() -> bool:
    """Whether this CPU has AMX tiles (Intel Sapphire Rapids and later), which multiply bf16 matrices
    several times faster than fp32; AVX-512 BF16 alone gains much less (docs/performance.md).
    False when :data:`NATIVE_BF16_ENV` is ``off``."""
    if native_bf16_override() == "off":
        return False
    return torch.backends.mkldnn.is_available() and bool(getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)())


def _hardware_bf16() -> bool:
    """What torch reports, whatever :data:`NATIVE_BF16_ENV` says."""
    return torch.backends.mkldnn.is_available() and bool(
        getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()
        or getattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)())


PRECISION_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def native_bf16() -> str:
    """What makes bf16 fast here, as torch reports it (never ``/proc``): ``cuda``, ``amx``,
    ``avx512_bf16``, ``none`` (bf16 on this CPU is emulated, slower than fp32), or ``emulated``
    (:data:`NATIVE_BF16_ENV` is ``on`` on a CPU without it: bf16 paths run, slowly)."""
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return "cuda"
    if cpu_has_amx():
        return "amx"
    if not cpu_supports_bf16():
        return "none"
    if native_bf16_override() == "on" and not _hardware_bf16():
        return "emulated"
    return "avx512_bf16"


def resolve_precision(precision: str, device: torch.device, evaluation: bool = False) -> torch.dtype | None:
    """The low-precision dtype, or None for plain fp32.

    Training runs under ``torch.autocast`` in that dtype; evaluation (``evaluation=True``) runs a
    copy of the backbone whose *weights* are in that dtype, without autocast
    (:meth:`cselab.model.encoder.SentenceEncoder.eval_weights`): no casts between fp32 and bf16
    activations, which made autocast inference slower than fp32 on AVX-512-BF16 CPUs
    (docs/performance.md). The rule is therefore the same for both: ``auto`` is bf16 (else fp16)
    on CUDA, bf16 on a CPU with native bf16 (:func:`cpu_supports_bf16`: AVX-512 BF16 or AMX), fp32
    elsewhere (other CPUs, MPS). ``fp16`` needs CUDA; ``bf16`` runs anywhere (emulated, slowly, on
    CPUs without native support). ``evaluation`` is kept so that the two can diverge again.
    """
    if precision == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        if device.type != "cpu":
            return None
        return torch.bfloat16 if cpu_supports_bf16() else None
    if precision not in PRECISION_DTYPES:
        raise ValueError(f"precision must be auto, fp32, bf16 or fp16, got {precision!r}")
    if precision == "fp16" and device.type != "cuda":
        raise ValueError("precision fp16 needs a CUDA device (use fp32 or bf16 on CPU)")
    return PRECISION_DTYPES[precision]


def precision_name(dtype: torch.dtype | None) -> str:
    """``fp32`` / ``bf16`` / ``fp16`` for an autocast dtype from :func:`resolve_precision`."""
    return {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[dtype]


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


def device_rng_state(device: torch.device) -> dict:
    """The generators that dropout draws from on ``device``: the CPU generator, and the device's own
    generator on CUDA (for replaying a forward pass with the same dropout masks)."""
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_device_rng_state(state: dict, device: torch.device) -> None:
    torch.set_rng_state(state["cpu"])
    if "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)
