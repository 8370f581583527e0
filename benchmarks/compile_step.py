"""Does ``torch.compile`` speed up cselab's SimCSE training step on this CPU? (a benchmark that prints
a table, not a test).

    python benchmarks/compile_step.py [--model all-minilm-l6] [--steps 12] [--data-dir DIR]

Two encoders with the same weights, one eager and one whose backbone is wrapped in
``torch.compile(dynamic=True)`` (inductor; the batches are padded to their own longest sentence, so
shapes vary), each with its own fused AdamW and the same step as training (benchmarks/speed.py's
``cselab_step``: batch 64, max_len 32, SimCSE's loss, clipping), in the precision ``auto`` resolves
to here (bf16 autocast where bf16 is native). The first compiled step, which compiles, is timed on
its own; then ``--steps`` batches go through both, in alternating order, and the table gives the
medians: whether fusing the element-wise work moves the bf16 step towards the CPU's limit
(docs/performance.md).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import interleaved_seconds, seconds, simcse_step, training_sentences  # noqa: E402

from cselab.model.utils import precision_name, resolve_precision  # noqa: E402

BATCH = 64


def build_step(model: str, amp_dtype, compiled: bool):
    def compile_backbone(encoder) -> None:
        encoder.backbone = torch.compile(encoder.backbone, dynamic=True)

    return simcse_step(model, amp_dtype, BATCH, compile_backbone if compiled else lambda encoder: None)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--steps", type=int, default=12, help="timed steps of each (default 12)")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)

    amp_dtype = resolve_precision("auto", torch.device("cpu"))
    sentences = training_sentences(args.data_dir, BATCH * (args.steps + 2))
    batches = [sentences[i * BATCH:(i + 1) * BATCH] for i in range(args.steps + 2)]
    steps = {"eager": build_step(args.model, amp_dtype, False), "torch.compile": build_step(args.model, amp_dtype, True)}
    first = seconds(lambda: steps["torch.compile"](batches[0]))   # compiles
    steps["eager"](batches[0])                                      # warm-up
    times = interleaved_seconds(steps, batches[2:])
    eager = statistics.median(times["eager"])
    print(f"{time.strftime('%Y-%m-%d')}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{precision_name(amp_dtype)} step (batch {BATCH}, max_len 32), {args.steps} interleaved steps each")
    print(tabulate([[name, statistics.median(t), min(t), max(t), statistics.median(t) / eager]
                    for name, t in times.items()],
                   headers=["SimCSE step", "median s", "min s", "max s", "× eager"], tablefmt="github",
                   floatfmt=".3f"))
    print(f"first torch.compile step (compiling): {first:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
