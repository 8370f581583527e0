"""What a warm worker saves a study's run: a fresh process per run against one worker process that
trains run after run (the local launcher's cselab.workbench.studies.launchers.RunWorkers), interleaved in one
process so that both see the same machine (a benchmark that prints a table, not a test).

    python benchmarks/run_workers.py [--pairs 3] [--steps 2] [--data-dir DIR]

Each pair trains two 2-step runs of a tiny random BERT (the smoke profile's stand-in: 2 layers, 32
wide), one in a fresh worker process, one in the warm worker, alternating which goes first. The
warm worker's first run pays the start-up like a fresh one and is reported apart. What is left per
run in the warm worker is the training itself plus the run's set-up; the difference is the process
start and the imports of torch, transformers and cselab.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from cselab.model.config import load_config
from cselab.workbench.studies.execute import RunTask
from cselab.workbench.studies.launchers import RunWorkers
from cselab.workbench.studies.smoke import tiny_backbone


def task(root: Path, seed: int, steps: int, data_dir: str | None) -> RunTask:
    cfg = load_config(None, {"model": str(tiny_backbone("bert-base-uncased")), "corpus": "wiki1m-head",
                             "max_sentences": 32, "batch_size": 8, "max_steps": steps, "eval_every": steps,
                             "dev_max_pairs": 100, "final_eval": False, "seed": seed, "output_dir": str(root)})
    return RunTask(f"seed{seed}", str(root / cfg.default_run_name()), cfg.to_dict(), False,
                   str(root / "logs" / f"seed{seed}.log"), data_dir, str(root), threads=0)


def timed(workers: RunWorkers, run: RunTask) -> float:
    start = time.perf_counter()
    outcome = workers.submit(run).result()
    assert outcome.ok, outcome.error
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="cselab-workers-"))
    cold, warm = [], []
    with RunWorkers(1) as worker:
        first = timed(worker, task(root / "warm", 1000, args.steps, args.data_dir))
        for i in range(args.pairs):
            for name in (("cold", "warm") if i % 2 == 0 else ("warm", "cold")):
                if name == "warm":
                    warm.append(timed(worker, task(root / "warm", i, args.steps, args.data_dir)))
                else:
                    with RunWorkers(1) as fresh:
                        cold.append(timed(fresh, task(root / "cold", i, args.steps, args.data_dir)))
    rows = [["fresh process per run", len(cold), statistics.median(cold), min(cold), max(cold)],
            ["warm worker (after its first run)", len(warm), statistics.median(warm), min(warm), max(warm)],
            ["warm worker, its first run", 1, first, first, first]]
    print(tabulate(rows, headers=["run", "runs", "median s", "min s", "max s"], tablefmt="github", floatfmt=".1f"))
    print(f"saved per run: {statistics.median(cold) - statistics.median(warm):.1f} s "
          f"(median fresh / median warm = {statistics.median(cold) / statistics.median(warm):.2f}×)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
