"""cselab's CPU dropout masks against torch's in the SimCSE training step (a benchmark that prints a
table, not a test).

    python benchmarks/cpu_dropout.py [--model all-minilm-l6] [--steps 12] [--precision auto] [--data-dir DIR]

Two encoders with the same weights, one drawing its dropout masks with cselab.model.encoder.cpu_dropout
(``cpu_dropout: fast``, the default) and one with torch's ``bernoulli_`` (``cpu_dropout: torch``),
each with its own fused AdamW and the same step as training (benchmarks/speed.py's ``cselab_step``:
batch 64, max_len 32, SimCSE's loss, clipping), in ``--precision`` (``auto``: bf16 autocast where bf16
is native). After one untimed step each, ``--steps`` batches go through both in alternating order;
the first table gives the medians, the second one dropout site alone (forward and backward of the
batch's activations, 2·64 rows × 32 tokens × the hidden size), the third the share of the step's
CPU time torch's profiler puts in drawing the masks (``bernoulli_`` against ``random_``).
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
from speed import interleaved_seconds, simcse_step, training_sentences  # noqa: E402

from cselab.model.encoder.cpu_dropout import cpu_dropout  # noqa: E402
from cselab.model.utils import precision_name, resolve_precision  # noqa: E402

BATCH = 64
MASK_OPS = ("aten::bernoulli_", "aten::random_")


def mask_share(step, batch: list[str]) -> float:
    """The share of one step's CPU time (torch's profiler, self time) in drawing dropout masks."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step(batch)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    return sum(e.self_cpu_time_total for e in events if e.key in MASK_OPS) / total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--steps", type=int, default=12, help="timed steps of each (default 12)")
    parser.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"])
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)

    amp_dtype = resolve_precision(args.precision, torch.device("cpu"))
    sentences = training_sentences(args.data_dir, BATCH * (args.steps + 1))
    batches = [sentences[i * BATCH:(i + 1) * BATCH] for i in range(args.steps + 1)]
    torch_masks, encoder = simcse_step(args.model, amp_dtype, BATCH, lambda e: setattr(e, "fast_cpu_dropout", False))
    steps = {"torch (bernoulli_)": torch_masks, "cselab (cpu_dropout: fast)": simcse_step(args.model, amp_dtype, BATCH)[0]}
    hidden = encoder.embedding_dim()
    for step in steps.values():
        step(batches[0])   # untimed: first-call costs
    times = interleaved_seconds(steps, batches[1:])
    reference = statistics.median(times["torch (bernoulli_)"])
    print(f"{time.strftime('%Y-%m-%d')}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{precision_name(amp_dtype)} step (batch {BATCH}, max_len 32), {args.steps} interleaved steps each")
    print(tabulate([[name, statistics.median(t), min(t), max(t), reference / statistics.median(t)]
                    for name, t in times.items()],
                   headers=["SimCSE step, dropout masks", "median s", "min s", "max s", "speed-up"],
                   tablefmt="github", floatfmt=".3f"))

    dtype = amp_dtype or torch.float32
    x = torch.randn(2 * BATCH, 32, hidden, dtype=dtype, requires_grad=True)
    sites = {"torch (F.dropout)": lambda: torch.nn.functional.dropout(x, 0.1, training=True).sum().backward(),
             "cselab (cpu_dropout)": lambda: cpu_dropout(x, 0.1).sum().backward()}
    site_times = interleaved_seconds({name: lambda _, site=site: site() for name, site in sites.items()}, [[]] * 20)
    print()
    print(tabulate([[name, 1e3 * statistics.median(t)] for name, t in site_times.items()],
                   headers=[f"one dropout site, {tuple(x.shape)} {precision_name(amp_dtype)}, forward + backward",
                            "median ms"], tablefmt="github", floatfmt=".2f"))
    print()
    print(tabulate([[name, 100 * mask_share(step, batches[1])] for name, step in steps.items()],
                   headers=["SimCSE step, dropout masks", "% of the step's CPU time drawing masks"],
                   tablefmt="github", floatfmt=".1f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
