"""Seconds per training step of each method and of STS-B dev evaluation on this machine: the
measurements behind the cost model of ``cselab reproduce --dry-run`` (cselab/workbench/studies/cost.py).

    python benchmarks/study_cost.py [--model all-minilm-l6] [--steps 6] [--data-dir DIR]

Each row trains a few steps with :func:`cselab.model.train.train` (batch 64, max_len 32 unless given)
and takes the median time of the steps between a warm-up and the last step (which evaluates and
checkpoints); the median keeps a busy shared machine's spikes out. The STS-B dev row times one
evaluation of the 1,500 dev pairs. Prints a table and the load average; nothing is kept.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch
from tabulate import tabulate

from cselab.model.config import load_config
from cselab.model.data import load_stsb
from cselab.model.encoder import SentenceEncoder
from cselab.model.evaluate.sts import evaluate_pairs
from cselab.model.train import train

WARMUP = 2
# name → (config overrides, precision); every method at its defaults except where a short run needs
# the method's term active from the first steps (ClusterNS' start threshold, APINCSE's queue).
SETUPS = {
    "simcse fp32": ({"method": "simcse"}, "fp32"),
    "simcse bf16": ({"method": "simcse"}, "bf16"),
    "mixcse": ({"method": "mixcse"}, "fp32"),
    "gs_infonce": ({"method": "gs_infonce"}, "fp32"),
    "clusterns": ({"method": "clusterns", "clusterns.num_clusters": 16, "clusterns.start_threshold": 1.0}, "fp32"),
    "apincse": ({"method": ["augmented_positive", "interlayer_negative"], "pooler": "layer_attention",
                 "augmented_positive.queue_size": 128}, "fp32"),
    "simcse + mlm": ({"method": ["simcse", "mlm"]}, "fp32"),
}


def seconds_per_step(model: str, overrides: dict, precision: str, steps: int, batch_size: int, max_len: int,
                     data_dir) -> float:
    stamps: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(None, {"model": model, "corpus": "wiki1m-head", "batch_size": batch_size,
                                 "max_len": max_len, "max_steps": WARMUP + steps + 1, "eval_every": 10_000,
                                 "final_eval": False, "precision": precision, "output_dir": tmp, **overrides})
        train(cfg, data_dir=data_dir, progress=False, callbacks=[lambda state, record: stamps.append(time.perf_counter())])
    # stamps[i] is taken after step i+1; the last step also evaluates and checkpoints.
    durations = [stamps[i] - stamps[i - 1] for i in range(WARMUP, WARMUP + steps)]
    return statistics.median(durations)


def dev_eval_seconds(model: str, data_dir, batch_size: int = 128) -> float:
    encoder = SentenceEncoder.from_pretrained(model, pooler="cls")
    pairs = load_stsb(data_dir)["dev"]
    evaluate_pairs(encoder, pairs, batch_size, show_progress_bar=False)  # warm-up
    start = time.perf_counter()
    evaluate_pairs(encoder, pairs, batch_size, show_progress_bar=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=32)
    parser.add_argument("--only", nargs="+", default=None, choices=list(SETUPS), help="measure these rows only")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    print(f"model: {args.model}   batch {args.batch_size}, max_len {args.max_len}   "
          f"torch threads: {torch.get_num_threads()}   torch {torch.__version__}", flush=True)
    rows = []
    base = None
    for name in args.only or SETUPS:
        overrides, precision = SETUPS[name]
        s = seconds_per_step(args.model, overrides, precision, args.steps, args.batch_size, args.max_len, args.data_dir)
        base = s if name == "simcse fp32" else base
        rows.append([name, precision, f"{s:.2f}", f"{s / base:.2f}" if base else ""])
        print(f"  measured {name}: {s:.2f} s/step", flush=True)
    rows.append(["STS-B dev evaluation (1,500 pairs)", "fp32", f"{dev_eval_seconds(args.model, args.data_dir):.1f}", ""])
    print(tabulate(rows, headers=["setup", "precision", "seconds (per step / per evaluation)", "× simcse fp32"],
                   tablefmt="github"))
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
