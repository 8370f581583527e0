"""Measure the evaluation toolkit on one model: SentEval transfer tasks, DBpedia AMI, the 8 short-text
clustering sets and STS-B alignment/uniformity, with the time each took. Prints a table.

    python benchmarks/eval_toolkit.py --data-dir ../shared/data                 # default backbone, avg pooler
    python benchmarks/eval_toolkit.py --suites transfer --transfer-tasks MR CR  # a part

Times are wall-clock seconds on whatever the machine is doing at the time: on a shared 2-core box
they are noisy (other processes compete for the cores), so treat them as orders of magnitude.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(argv: list[str] | None = None) -> int:
    from cselab.model.data.transfer import TRANSFER_TASKS
    from cselab.model.evaluate.clustering import CLUSTERING_TASKS, DEFAULT_SEEDS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="all-minilm-l6")
    p.add_argument("--pooler", default="avg")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--suites", nargs="+", default=["transfer", "clustering", "geometry"],
                   choices=["transfer", "clustering", "geometry"])
    p.add_argument("--transfer-tasks", nargs="+", default=list(TRANSFER_TASKS))
    p.add_argument("--clustering-tasks", nargs="+", default=list(CLUSTERING_TASKS))
    p.add_argument("--full", action="store_true", help="10-fold transfer protocol instead of fast mode (5 folds)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS), help="K-means seeds")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--output", default=None, help="also write every result as JSON here")
    args = p.parse_args(argv)

    import torch
    from tabulate import tabulate

    from cselab.model.encoder import SentenceEncoder
    from cselab.model.evaluate import evaluate_alignment_uniformity, evaluate_clustering, evaluate_transfer

    encoder = SentenceEncoder.from_pretrained(args.model, pooler=args.pooler)
    print(f"model {args.model} (pooler {args.pooler}); torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{os.cpu_count()} CPUs, {platform.machine()}", flush=True)
    rows, results = [], {}
    if "transfer" in args.suites:
        r = evaluate_transfer(encoder, args.transfer_tasks, args.data_dir, fast=not args.full,
                              batch_size=args.batch_size)
        results["transfer"] = r
        for task, d in r["details"].items():
            rows.append(["transfer", task, f"acc (k={r['kfold']})", d["acc"], "", d["encode_seconds"], d["seconds"]])
        rows.append(["transfer", "avg", "acc", r["avg"], "", "", r["seconds"]])
        print(f"transfer done in {r['seconds']:.0f}s", flush=True)
    if "clustering" in args.suites:
        r = evaluate_clustering(encoder, args.clustering_tasks, args.data_dir, seeds=args.seeds,
                                batch_size=args.batch_size)
        results["clustering"] = r
        for task, d in r["details"].items():
            metric = r["metric"][task]
            rows.append(["clustering", task, f"{metric} (K={d['n_clusters']})", 100 * d[metric]["mean"],
                         100 * d[metric]["std"], d["encode_seconds"], d["seconds"]])
        if "short_text_avg" in r:
            rows.append(["clustering", "short-text avg", "acc", r["short_text_avg"], "", "", ""])
        print(f"clustering done in {r['seconds']:.0f}s", flush=True)
    if "geometry" in args.suites:
        r = evaluate_alignment_uniformity(encoder, "all", args.data_dir, batch_size=args.batch_size)
        results["geometry"] = r
        for key in ("alignment", "uniformity", "mean_cos", "largest_angle"):
            rows.append(["geometry", f"STS-B all ({r['positive_pairs']} pos.)", key, r[key], "", "",
                         r["seconds"] if key == "alignment" else ""])
    print(tabulate(rows, headers=["suite", "task", "metric", "value", "± std (seeds)", "encode s", "total s"],
                   tablefmt="github", floatfmt=".2f"))
    if args.output:
        from cselab.model.io import atomic_write_json

        atomic_write_json(args.output, {"model": args.model, "pooler": args.pooler, "argv": sys.argv[1:],
                                        "finished": time.strftime("%Y-%m-%d %H:%M:%S"), **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
