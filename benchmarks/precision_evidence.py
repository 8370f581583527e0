"""Evidence for the precision default: the same short runs in fp32 and in bf16 (a benchmark-style
script that prints a table, not a test).

    python benchmarks/precision_evidence.py [--data-dir DIR] [--output-dir runs/precision-evidence]

Trains, on the offline default backbone (all-minilm-l6) and the mirror's wiki1m head, each of

* ``quickstart`` (SimCSE, pooler cls, 60 steps),
* MixCSE and GS-InfoNCE with the quickstart settings (30 steps),
* ClusterNS with the ``clusterns-cpu`` preset (30 steps; clustering starts at step 3),
* APINCSE with the ``apincse-quickstart`` preset (layer_attention + augmented_positive +
  interlayer_negative, 24 steps),

once with ``precision: fp32`` and once with ``precision: bf16``, with the 7-task STS table of each
best checkpoint. Evaluation runs in ``--eval-precision`` for both (default fp32: what ``auto``
means on a CPU without AMX, and it isolates the effect of training in bf16); ``--eval-precision
same`` evaluates each run in its training precision. Then it
scores the plain backbone (``avg`` pooler) in fp32 and in bf16. It prints the two tables and the
decision rules of docs/performance.md: |Δ| ≤ 0.3 on STS-B dev and the 7-task average for every run,
|Δ| ≤ 0.05 on each of the backbone's 7 STS scores.

``--eval-weights`` measures instead what evaluation in bf16 *weights* (a bf16 copy of the backbone,
no autocast, pooling and cosines in fp32: what ``eval_precision: bf16`` runs) does to the scores:
STS-B dev (``--dev-pairs N``: its first N pairs) for every pooler on the default backbone and for
the best model of every run directory given with ``--runs``, fp32 against bf16 weights, each
within 0.05 or not. On a CPU without native bf16 the bf16 passes are emulated and slow, so keep N
small there.

Finished runs are reused (their results.json) and unfinished ones resumed, so an interrupted
invocation continues where it stopped. Everything runs in this one process, one run after the other.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tabulate import tabulate

from cselab.model.config import load_config
from cselab.model.data import STS_TASKS, load_sts_task
from cselab.model.data.sts import STSPairs
from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder.pooling import POOLERS
from cselab.model.evaluate import evaluate_pairs, evaluate_sts
from cselab.model.evaluate.sts import TASK_LABELS
from cselab.model.train import train
from cselab.model.utils import cpu_supports_bf16, native_bf16

RUNS = {  # label: (preset, overrides)
    "SimCSE (quickstart)": ("quickstart", {"max_steps": 60}),
    "MixCSE": ("quickstart", {"max_steps": 30, "method": ["mixcse"]}),
    "GS-InfoNCE": ("quickstart", {"max_steps": 30, "method": ["gs_infonce"]}),
    "ClusterNS (clusterns-cpu)": ("clusterns-cpu", {"max_steps": 30}),
    "APINCSE (apincse-quickstart)": ("apincse-quickstart", {}),
}
PRECISIONS = ("fp32", "bf16")


def run_once(preset: str, overrides: dict, precision: str, eval_precision: str, output_dir: Path, data_dir,
             final_eval: bool = True) -> dict:
    cfg = load_config(preset, {**overrides, "precision": precision,
                               "eval_precision": precision if eval_precision == "same" else eval_precision,
                               "final_eval": final_eval, "output_dir": str(output_dir)})
    run = Path(cfg.output_dir) / cfg.default_run_name()
    if not (run / "results.json").is_file():   # an interrupted run continues from its last checkpoint
        train(cfg, data_dir=data_dir, resume=(run / "config.json").is_file(), progress=False)
    return json.loads((run / "results.json").read_text())


def dev_pairs(data_dir, n: int | None) -> STSPairs:
    dev = load_sts_task("STSBenchmark", data_dir)["dev"]
    if n is None or n >= len(dev):
        return dev
    return STSPairs(f"{dev.name}[:{n}]", dev.sentences1[:n], dev.sentences2[:n], dev.scores[:n])


def eval_weights_evidence(models: dict[str, SentenceEncoder], pairs: STSPairs, batch_size: int) -> list[list]:
    """Per model: STS-B dev Spearman ×100 in fp32 and in bf16 weights, Δ, seconds of each."""
    rows = []
    for label, encoder in models.items():
        scores, seconds = {}, {}
        for precision in PRECISIONS:
            encoder.eval_precision = precision
            start = time.perf_counter()
            scores[precision] = evaluate_pairs(encoder, pairs, batch_size, show_progress_bar=False)
            seconds[precision] = time.perf_counter() - start
        delta = scores["bf16"] - scores["fp32"]
        rows.append([label, scores["fp32"], scores["bf16"], delta, seconds["fp32"], seconds["bf16"],
                     "yes" if abs(delta) <= 0.05 else "NO"])
        print(f"{label}: fp32 {scores['fp32']:.3f}, bf16 weights {scores['bf16']:.3f}", flush=True)
    return rows


def main_eval_weights(args) -> None:
    pairs = dev_pairs(args.data_dir, args.dev_pairs)
    models = {f"all-minilm-l6, pooler {name}": SentenceEncoder.from_pretrained("all-minilm-l6", pooler=name)
              for name in sorted(POOLERS)}
    for run in args.runs or []:
        models[f"run {Path(run).name} (best)"] = SentenceEncoder.from_pretrained(Path(run) / "best")
    print(f"native bf16: {native_bf16()}; {len(pairs)} STS-B dev pairs", flush=True)
    rows = eval_weights_evidence(models, pairs, args.batch_size)
    print(tabulate(rows, headers=["model", "dev fp32", "dev bf16 weights", "Δ", "s fp32", "s bf16", "|Δ| ≤ 0.05"],
                   tablefmt="github", floatfmt=(".0f", ".3f", ".3f", ".3f", ".1f", ".1f")))
    print(f"largest |Δ| {max(abs(r[3]) for r in rows):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output-dir", default="runs/precision-evidence")
    parser.add_argument("--batch-size", type=int, default=128, help="evaluation batch size")
    parser.add_argument("--seven-task", default="all", choices=["all", "quickstart"],
                        help="which runs get the 7-task STS table (quickstart: the others are judged on STS-B dev "
                             "alone, ~8 fewer minutes of evaluation on 2 cores)")
    parser.add_argument("--eval-precision", default="fp32", choices=["fp32", "bf16", "same"],
                        help="evaluation precision of the training runs (same: each run's training precision)")
    parser.add_argument("--eval-weights", action="store_true",
                        help="instead: scores in fp32 vs bf16 weights, every pooler and --runs (see above)")
    parser.add_argument("--dev-pairs", type=int, default=None, help="with --eval-weights: the first N STS-B dev pairs")
    parser.add_argument("--runs", nargs="*", help="with --eval-weights: run directories whose best/ is scored too")
    args = parser.parse_args()
    if args.eval_weights:
        main_eval_weights(args)
        return
    out = Path(args.output_dir)
    print(f"CPU with native bf16: {cpu_supports_bf16()}")

    rows, verdicts = [], []
    for label, (preset, overrides) in RUNS.items():
        res = {}
        seven_task = args.seven_task == "all" or label.startswith("SimCSE (quickstart)")
        for precision in PRECISIONS:
            start = time.perf_counter()
            res[precision] = run_once(preset, overrides, precision, args.eval_precision, out, args.data_dir,
                                      final_eval=seven_task)
            avg = res[precision]["sts"]["avg"] if seven_task else float("nan")
            print(f"{label} {precision}: STS-B dev {res[precision]['best_stsb_dev']:.2f}, 7-task avg "
                  f"{avg:.2f} ({time.perf_counter() - start:.0f} s)", flush=True)
        a, b = res["fp32"], res["bf16"]
        a_avg, b_avg = (r["sts"]["avg"] if seven_task else float("nan") for r in (a, b))
        d_dev, d_avg = b["best_stsb_dev"] - a["best_stsb_dev"], b_avg - a_avg
        ok = abs(d_dev) <= 0.3 and (not seven_task or abs(d_avg) <= 0.3)
        verdicts.append(ok)
        rows.append([label, a["steps"], a["best_stsb_dev"], b["best_stsb_dev"], d_dev, a_avg, b_avg, d_avg, a["train_seconds"], b["train_seconds"], "yes" if ok else "NO"])

    backbone = {}
    for precision in PRECISIONS:
        encoder = SentenceEncoder.from_pretrained("all-minilm-l6", pooler="avg")
        encoder.eval_precision = precision
        backbone[precision] = evaluate_sts(encoder, data_dir=args.data_dir, batch_size=args.batch_size)
    diffs = {t: backbone["bf16"]["scores"][t] - backbone["fp32"]["scores"][t] for t in STS_TASKS}
    backbone_ok = all(abs(d) <= 0.05 for d in diffs.values())

    print(f"\nTraining runs, fp32 vs bf16 training (evaluation: {args.eval_precision}):")
    print(tabulate(rows, headers=["run", "steps", "dev fp32", "dev bf16", "Δ dev", "avg fp32", "avg bf16", "Δ avg",
                                  "train s fp32", "train s bf16", "|Δ| ≤ 0.3"], tablefmt="github", floatfmt=".2f"))
    print("\nDefault backbone all-minilm-l6 (avg), 7 STS tasks:")
    table = [[p, *[backbone[p]["scores"][t] for t in STS_TASKS], backbone[p]["avg"], backbone[p]["seconds"]]
             for p in PRECISIONS]
    table.append(["Δ (bf16 − fp32)", *[diffs[t] for t in STS_TASKS],
                  backbone["bf16"]["avg"] - backbone["fp32"]["avg"], None])
    print(tabulate(table, headers=["precision", *[TASK_LABELS[t] for t in STS_TASKS], "Avg.", "seconds"],
                   tablefmt="github", floatfmt=".2f"))
    print(f"\ntraining runs within 0.3: {all(verdicts)}; backbone scores within 0.05: {backbone_ok} "
          f"(max |Δ| {max(abs(d) for d in diffs.values()):.3f})")


if __name__ == "__main__":
    main()
