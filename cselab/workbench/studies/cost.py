"""A rough cost model for a study's runs (``cselab reproduce --dry-run``): an ESTIMATE, not a promise.

seconds(run) = overhead + steps × s/step + dev evaluations + final STS evaluation, where

* s/step = the reference device's measured (CPU) or assumed (GPU) seconds per step for its
  reference backbone at batch 64, max_len 32, scaled linearly by the backbone's transformer-layer
  parameter count (embeddings cost no FLOPs), by batch × max_len, by the precision and by the
  methods' estimated overhead over SimCSE;
* STS-B dev is scored every ``eval_every`` steps and at the end, the 7-task STS suite once when
  ``final_eval`` is on, both scaled by the same parameter ratio.

The CPU step time and STS suite time were measured on this project's 2-core development machine with
the offline MiniLM backbone (``benchmarks/throughput.py``; docs/testing.md); the dev-evaluation time follows
from its 351 sentences/s; method overheads are estimates (``Component.cost_factor``). The GPU step time was
measured once on one H200 (``benchmarks/gpu_check.sh``, 2026-12-04: 0.041 s for a SimCSE step of a
bert-base-shaped model at batch 64 × 32 tokens in bf16; docs/performance.md, "The GPU check"); its
evaluation and start-up times are still ASSUMPTIONS; on another GPU, or at batch sizes that do not fill
the GPU, expect real times to differ by a factor of two or more.
"""
from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

from ...model.config import TrainConfig
from ...model.methods import cost_factors


def layer_parameters(layers: int, hidden: int, intermediate: int) -> int:
    """Parameters of ``layers`` BERT-style transformer layers (attention, feed-forward, 2 LayerNorms)."""
    attention = 4 * hidden * hidden + 4 * hidden
    feed_forward = 2 * hidden * intermediate + intermediate + hidden
    return layers * (attention + feed_forward + 4 * hidden)


# (layers, hidden, intermediate) of Hub backbones the paper studies use (read offline from this table).
KNOWN_BACKBONES = {
    "bert-base-uncased": (12, 768, 3072), "bert-base-cased": (12, 768, 3072),
    "bert-large-uncased": (24, 1024, 4096), "bert-large-cased": (24, 1024, 4096),
    "roberta-base": (12, 768, 3072), "roberta-large": (24, 1024, 4096),
}
MINILM = (6, 384, 1536)
BERT_BASE = KNOWN_BACKBONES["bert-base-uncased"]


@dataclass(frozen=True)
class Reference:
    """Throughput of one device kind for a reference backbone at batch 64 / max_len 32."""
    device: str
    basis: str                      # "measured", "step measured" or "assumed"
    shape: tuple[int, int, int]     # the reference backbone's (layers, hidden, intermediate)
    precision: str                  # precision of seconds_per_step
    seconds_per_step: float         # SimCSE, batch 64, max_len 32
    dev_eval_seconds: float         # one STS-B dev evaluation (1,500 pairs)
    sts_suite_seconds: float        # the 7-task STS suite (26,083 unique sentences)
    overhead_seconds: float         # per run: notebook kernel, imports, model and corpus loading
    batch_size: int = 64
    max_len: int = 32


REFERENCES = {
    # 2 CPU cores, all-MiniLM-L6 (benchmarks/throughput.py: 0.50 steps/s fp32; the STS suite in 75–85 s;
    # STS-B dev = 1,500 pairs, 2,909 unique sentences at 351 sentences/s ≈ 8 s; bf16 about halves a step)
    "cpu": Reference("2-core CPU (measured on the development machine, offline MiniLM)", "measured", MINILM,
                     "fp32", seconds_per_step=2.0, dev_eval_seconds=8.0, sts_suite_seconds=80.0,
                     overhead_seconds=15.0),
    # one H200, BERT-base in bf16: 0.041 s/step at batch 64 × 32 tokens, measured by benchmarks/gpu_check.sh
    # (2026-12-04; 5 % of the bf16 peak: kernel launches and the loop's Python dominate at this size);
    # evaluation (~4,000 sentences/s) and start-up are assumed
    "cuda": Reference("one H200 GPU (step measured once, evaluation assumed), BERT-base", "step measured", BERT_BASE,
                      "bf16", seconds_per_step=0.041, dev_eval_seconds=1.0, sts_suite_seconds=7.0,
                      overhead_seconds=30.0),
}
# Step time relative to the reference precision of each device kind.
PRECISION_FACTOR = {
    "cpu": {"fp32": 1.0, "bf16": 0.5},
    "cuda": {"bf16": 1.0, "fp16": 1.0, "fp32": 2.5},
}
# Extra step time of each method over SimCSE (0.5 = 50 % slower): ESTIMATES from the work each
# component adds to a step whose cost is the encoder's forward and backward pass, not measurements
# (benchmarks/study_cost.py measures them on an idle machine). Each method declares its own
# (``Component.cost_factor``, plus a momentum encoder's pass when it asks for one).
UNKNOWN_METHOD_OVERHEAD = 0.25
KNOWN_CORPUS_SIZES = {"wiki1m": 1_000_000}


@dataclass
class Estimate:
    steps: int | None                 # None: the corpus size is unknown
    seconds: float | None             # remaining seconds (0 for a finished run)
    device: str
    notes: tuple[str, ...] = ()


def backbone_shape(model: str) -> tuple[tuple[int, int, int], str | None]:
    """``(layers, hidden, intermediate)`` of a backbone and a note when it had to be assumed."""
    if model in KNOWN_BACKBONES:
        return KNOWN_BACKBONES[model], None
    try:
        from ...model.encoder.backbone import read_model_config, resolve_backbone

        path, local = resolve_backbone(model)
        if local:
            config = read_model_config(path)
            return (config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]), None
    except (OSError, KeyError, ValueError):
        pass
    return BERT_BASE, f"backbone {model!r}: size unknown offline, assumed BERT-base"


@functools.lru_cache(maxsize=32)
def _count_sentences(path: str, mtime: float) -> int:
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if line.strip())


def corpus_size(corpus: str, data_dir: str | os.PathLike | None) -> int | None:
    """Non-blank lines of the corpus file, or a known size when the file is not here."""
    from ...model.data.corpus import resolve_corpus

    path = resolve_corpus(corpus, data_dir)
    if path.is_file():
        return _count_sentences(str(path), path.stat().st_mtime)
    return KNOWN_CORPUS_SIZES.get(corpus)


def total_steps(cfg: TrainConfig, data_dir: str | os.PathLike | None = None) -> int | None:
    """The run's optimizer steps (as the trainer computes them), None if the corpus size is unknown."""
    if cfg.max_steps:
        return cfg.max_steps
    n = corpus_size(cfg.corpus, data_dir)
    if n is None:
        return None
    if cfg.max_sentences:
        n = min(n, cfg.max_sentences)
    per_epoch = n // cfg.batch_size if cfg.drop_last else math.ceil(n / cfg.batch_size)
    return cfg.epochs * per_epoch


def device_kind(cfg: TrainConfig, profile: str) -> str:
    """``cpu`` or ``cuda``: the config's device, else the profile's name (``gpu``), else this machine."""
    if cfg.device.startswith("cuda"):
        return "cuda"
    if cfg.device in ("cpu", "mps"):
        return "cpu"
    if profile == "gpu":
        return "cuda"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def auto_precision(kind: str) -> str:
    """What ``precision: auto`` trains in: bf16 on CUDA, and on a CPU where bf16 is native (this
    machine's, as :func:`cselab.model.utils.cpu_supports_bf16` says: an AMX CPU's runs take about half
    the fp32 reference's step), else fp32."""
    from ...model.utils import cpu_supports_bf16

    return "bf16" if kind == "cuda" or cpu_supports_bf16() else "fp32"


def seconds_per_step(cfg: TrainConfig, kind: str, shape: tuple[int, int, int] | None = None) -> tuple[float, list[str]]:
    """``shape``: the backbone's (layers, hidden, intermediate) when known otherwise (a stand-in not built yet)."""
    ref = REFERENCES[kind]
    shape, note = (shape, None) if shape is not None else backbone_shape(cfg.model)
    notes = [note] if note else []
    precision = cfg.precision if cfg.precision != "auto" else auto_precision(kind)
    size = layer_parameters(*shape) / layer_parameters(*ref.shape)
    tokens = (cfg.batch_size * cfg.max_len) / (ref.batch_size * ref.max_len)
    declared = cost_factors()
    unknown = [m for m in cfg.method if m not in declared]
    overhead = sum(declared.get(m, UNKNOWN_METHOD_OVERHEAD) for m in cfg.method)
    if unknown:
        notes.append(f"method overhead of {', '.join(unknown)} assumed {UNKNOWN_METHOD_OVERHEAD:.0%}")
    factor = PRECISION_FACTOR[kind].get(precision, 1.0)
    return ref.seconds_per_step * size * tokens * factor * (1 + overhead), notes


def estimate_run(cfg: TrainConfig, profile: str, steps_done: int = 0, finished: bool = False,
                 data_dir: str | os.PathLike | None = None, shape: tuple[int, int, int] | None = None) -> Estimate:
    """Remaining seconds of one run (0 when finished; the steps after the checkpoint when partial);
    ``shape``: the backbone's, when known otherwise than from ``cfg.model``."""
    kind = device_kind(cfg, profile)
    steps = total_steps(cfg, data_dir)
    if finished:
        return Estimate(steps, 0.0, kind)
    if steps is None:
        return Estimate(None, None, kind, (f"corpus {cfg.corpus!r}: size unknown",))
    ref = REFERENCES[kind]
    per_step, notes = seconds_per_step(cfg, kind, shape)
    size = layer_parameters(*(shape or backbone_shape(cfg.model)[0])) / layer_parameters(*ref.shape)
    remaining = max(0, steps - steps_done)
    evals = len({s for s in range(steps_done + 1, steps + 1) if s % cfg.eval_every == 0 or s == steps})
    evals += steps_done == 0   # a fresh run scores STS-B dev once before its first step
    seconds = ref.overhead_seconds + remaining * per_step + evals * ref.dev_eval_seconds * size
    if cfg.final_eval:
        seconds += ref.sts_suite_seconds * size
    if cfg.probe_every:
        probes = remaining // cfg.probe_every + (steps_done == 0)   # and once before the first step
        seconds += probes * ref.dev_eval_seconds * size * cfg.probe_sentences / 3000
    return Estimate(steps, seconds, kind, tuple(notes))


# The unique sentences the reference's sts_suite_seconds encode: STS12–16 (every pair of a year),
# STS-B test and SICK-R test.
SUITE_SENTENCES = 26_083


def encode_seconds(sentences: int, shape: tuple[int, int, int], kind: str = "cpu") -> float:
    """Seconds to encode ``sentences`` distinct sentences with a backbone of ``shape`` (layers, hidden,
    intermediate) on ``kind``: the reference's STS-suite rate, scaled by transformer-layer parameters."""
    ref = REFERENCES[kind]
    return ref.sts_suite_seconds * sentences / SUITE_SENTENCES * layer_parameters(*shape) / layer_parameters(*ref.shape)


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {s:02d} s"
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m:02d} min"


def assumptions(kinds: set[str]) -> list[str]:
    """One line per device kind used: what its numbers rest on."""
    lines = []
    for kind in sorted(kinds):
        ref = REFERENCES[kind]
        lines.append(f"{kind}: {ref.device}; {ref.seconds_per_step:g} s/step at batch {ref.batch_size}, max_len "
                     f"{ref.max_len}, {ref.precision} ({ref.basis}), scaled by transformer-layer parameters, "
                     f"batch × max_len, precision and method")
    return lines
