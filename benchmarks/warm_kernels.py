"""What a warm kernel saves a study's run: the train notebook executed in a fresh kernel per run
against one kernel that executes run after run (cselab.studies.execute.WarmKernel), interleaved in
one process so that both see the same machine (a benchmark that prints a table, not a test).

    python benchmarks/warm_kernels.py [--pairs 3] [--steps 2] [--data-dir DIR]

Each pair trains two 2-step runs of a tiny random BERT (the smoke profile's stand-in: 2 layers, 32
wide), one through a fresh kernel, one through the warm kernel, alternating which goes first. The
warm kernel's first run pays the start-up like a fresh one and is reported apart. What is left per
run in the warm kernel is the training itself plus the notebook's own cells; the difference is the
kernel start, the imports of torch, transformers and cselab, and papermill's start-up per notebook.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from cselab.config import load_config
from cselab.studies.execute import RunTask, WarmKernel, execute_run
from cselab.studies.notebook_specs import NOTEBOOKS_DIR, TRAIN_NOTEBOOK
from cselab.studies.smoke import tiny_backbone


def task(root: Path, seed: int, steps: int, data_dir: str | None) -> RunTask:
    cfg = load_config(None, {"model": str(tiny_backbone("bert-base-uncased")), "corpus": "wiki1m-head",
                             "max_sentences": 32, "batch_size": 8, "max_steps": steps, "eval_every": steps,
                             "dev_max_pairs": 100, "final_eval": False, "seed": seed, "output_dir": str(root)})
    return RunTask(f"seed{seed}", str(root / cfg.default_run_name()), cfg.to_dict(), False,
                   str(NOTEBOOKS_DIR / f"{TRAIN_NOTEBOOK}.py"), str(root / "notebooks" / f"seed{seed}.ipynb"),
                   data_dir, str(root), threads=0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="cselab-warm-"))
    kernel = WarmKernel()
    cold, warm, first = [], [], None
    try:
        start = time.perf_counter()
        outcome = execute_run(task(root / "warm", 1000, args.steps, args.data_dir), kernel)
        first = time.perf_counter() - start
        assert outcome.ok, outcome.error
        for i in range(args.pairs):
            order = [("cold", None), ("warm", kernel)] if i % 2 == 0 else [("warm", kernel), ("cold", None)]
            for name, k in order:
                start = time.perf_counter()
                outcome = execute_run(task(root / name, i, args.steps, args.data_dir), k)
                assert outcome.ok, outcome.error
                (cold if name == "cold" else warm).append(time.perf_counter() - start)
    finally:
        kernel.close()
    rows = [["fresh kernel per run", len(cold), statistics.median(cold), min(cold), max(cold)],
            ["warm kernel (after its first run)", len(warm), statistics.median(warm), min(warm), max(warm)],
            ["warm kernel, its first run", 1, first, first, first]]
    print(tabulate(rows, headers=["train notebook", "runs", "median s", "min s", "max s"], tablefmt="github",
                   floatfmt=".1f"))
    print(f"saved per run: {statistics.median(cold) - statistics.median(warm):.1f} s "
          f"(median fresh / median warm = {statistics.median(cold) / statistics.median(warm):.2f}×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
