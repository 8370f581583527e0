"""How much the checkpoint selection moves each method's numbers: the select-by study's runs re-scored.

For every method of ``cselab reproduce select-by`` (cselab/workbench/studies/select-by.yaml) three
checkpoints are scored on STS-B test and SICK-R (Spearman ×100, SimCSE's protocol; the same cached
evaluation the study's compare notebook wrote):

* ``stsb_dev``: best/ of the run that chose it on STS-B dev (the papers' protocol; † in tables);
* ``last``: last/ of that same run (nothing chosen);
* ``heldout_infonce``: best/ of the run that chose it on the held-out InfoNCE (no STS data; that run
  trained without its 1,024 held-out sentences).

Each difference from ``stsb_dev`` comes with the 95 % percentile interval of a **paired bootstrap
over the test pairs** (2,000 resamples, ``cselab.workbench.results.bootstrap_spearman_difference``): test-set
uncertainty of one seed, not training-seed variance. Run from the repository root after the study::

    python docs/select_by.py [--runs-dir runs] [--data-dir DIR]    # prints the Markdown table
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from cselab.model.evaluate.cache import evaluate_run
from cselab.model.io import read_json
from cselab.model.rundir import RunDir
from cselab.workbench.results import bootstrap_spearman_difference
from cselab.workbench.studies import load_study

TASKS = ["STSBenchmark", "SICKRelatedness"]


def scores(run_dir, model: str, data_dir) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    result = evaluate_run(run_dir, "sts", model, data_dir, tasks=TASKS, per_pair=True)
    return {t: (result["scores"][t], np.asarray(result["per_pair"][t]["pred"]), np.asarray(result["per_pair"][t]["gold"]))
            for t in TASKS}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs-dir", default="runs")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    study = load_study("select-by", "cpu", args.runs_dir, notebooks=False)
    by_method: dict[str, dict[str, object]] = {}
    for spec in study.runs:
        method = spec.label.split("-select_by=")[0]
        by_method.setdefault(method, {})[spec.config.select_by] = spec.run_dir
    rows, missing = [], []
    for method, runs in by_method.items():
        if not all(RunDir(run).results_file.is_file() for run in runs.values()):
            missing.append(method)   # the study has not finished both of its runs yet
            continue
        checkpoints = {"stsb_dev": (runs["stsb_dev"], "best"), "last": (runs["stsb_dev"], "last"),
                       "heldout_infonce": (runs["heldout_infonce"], "best")}
        scored = {name: scores(run, model, args.data_dir) for name, (run, model) in checkpoints.items()}
        for name, (run, model) in checkpoints.items():
            results = read_json(RunDir(run).results_file)
            step = results["steps"] if model == "last" else results["best_step"]
            row = {"method": method, "select_by": name, "step": step}
            for task in TASKS:
                value, pred, gold = scored[name][task]
                row[task] = f"{value:.2f}"
                if name != "stsb_dev":
                    _, ref, _ = scored["stsb_dev"][task]
                    d = bootstrap_spearman_difference(pred, ref, gold)
                    row[f"Δ {task}"] = f"{d['diff']:+.2f} [{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]"
                else:
                    row[f"Δ {task}"] = "(reference)"
            rows.append(row)
    if missing:
        print(f"not finished yet, left out: {', '.join(missing)}\n")
    print(pd.DataFrame(rows).to_markdown(index=False))
    print("\nΔ: difference from the stsb_dev checkpoint, 95 % paired-bootstrap interval over the test pairs "
          "(2,000 resamples; one seed, so test-set uncertainty only)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
