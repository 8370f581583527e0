"""Synthetic run directories in the trainer's layout, for the plotting, table and reader tests: every
test that needs a run folder without training one builds it with :func:`write_run`, which writes
through :class:`cselab.model.rundir.RunDir` (the owner of the layout's names)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable

from cselab.model.rundir import RunDir

STS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")


def write_run(path: Path, config: dict, records: Iterable[dict], results: dict | None = None, **saved) -> Path:
    """A run folder at ``path``: ``config.json`` (``{"config": config, **saved}``), the ``records`` as
    ``metrics.jsonl`` and, for a finished run, ``results``."""
    run = RunDir(path)
    path.mkdir(parents=True)
    run.config_file.write_text(json.dumps({"config": config, **saved}))
    run.metrics_file.write_text("".join(json.dumps(r) + "\n" for r in records))
    if results is not None:
        run.results_file.write_text(json.dumps(results))
    return path


def sts_results(scores: dict[str, float], **results) -> dict:
    """A ``results.json`` holding an STS table (``avg`` the mean of ``scores``)."""
    return {**results, "sts": {"scores": scores, "avg": sum(scores.values()) / len(scores)}}


def make_run(path: Path, method: list[str], seed: int = 42, temperature: float = 0.05, steps: int = 40,
             offset: float = 0.0, batch_size: int = 64) -> Path:
    """A finished run: train records every 5 steps (with MixCSE/ClusterNS stats and gradient norms),
    eval every 10, probe records every 10 (with a 3-layer profile), results.json with STS scores."""
    config = {"method": method, "seed": seed, "temperature": temperature, "batch_size": batch_size,
              "mixcse": {"mix_lambda": 0.2}}
    lines = []
    for step in range(5, steps + 1, 5):
        decay = math.exp(-step / 20)
        lines.append({"kind": "train", "step": step, "loss": 2 * decay + offset, "loss/info_nce": 2 * decay,
                      "sim/pos_cos": 0.9 - 0.1 * decay, "sim/neg_cos": 0.3 * decay + offset,
                      "sim/mixcse.mixed_cos": 0.5 * decay, "sim/clusterns.hard_neg_cos": 0.6 - 0.2 * decay,
                      "grad/z1_norm": 3 * decay + 0.1, "grad/z2_norm": 2 * decay + 0.1})
        if step % 10 == 0:
            lines.append({"kind": "probe", "step": step, "alignment": 0.3 + 0.1 * decay,
                          "uniformity": -2.0 - decay - offset, "mean_cos": 0.2 * decay + offset,
                          "largest_angle": 90 + 20 * (1 - decay) + 10 * offset, "layer_cls_sim": [0.2 + offset, 0.6, 1.0],
                          "sentences": 16, "positive_pairs": 3, "seconds": 0.1})
            lines.append({"kind": "eval", "step": step, "stsb_dev": 70 + step / 4 + 10 * offset,
                          "best_stsb_dev": 70 + step / 4, "improved": True})
    scores = {task: 70.0 + i + 10 * offset + seed / 100 for i, task in enumerate(STS)}
    return write_run(path, config, lines,
                     sts_results(scores, steps=steps, best_step=steps, best_stsb_dev=80.0 + offset),
                     config_hash="0123456789")


def make_runs(root: Path) -> dict[str, Path]:
    """Two methods × two seeds."""
    return {
        "simcse-s1": make_run(root / "simcse-s1", ["simcse"], seed=1),
        "simcse-s2": make_run(root / "simcse-s2", ["simcse"], seed=2),
        "mixcse-s1": make_run(root / "mixcse-s1", ["mixcse"], seed=1, offset=0.1),
        "mixcse-s2": make_run(root / "mixcse-s2", ["mixcse"], seed=2, offset=0.1),
    }


METHODS = (["simcse"], ["mixcse"], ["gs_infonce"], ["clusterns"], ["augmented_positive", "interlayer_negative"])


def make_many_runs(root: Path, seeds: int = 3, long_labels: bool = False) -> dict[str, Path]:
    """The five methods × ``seeds`` seeds (15 runs for 3), each method on its own curve
    (``offset``); with ``long_labels`` the labels read like a study's long run names."""
    runs = {}
    for m, method in enumerate(METHODS):
        for seed in range(1, seeds + 1):
            name = "-".join(method).replace("_", "")
            label = (f"{name}-batch-size-64-temperature-0.05-lr-3e-5-seed-{seed}" if long_labels
                     else f"{name}-s{seed}")
            runs[label] = make_run(root / label, method, seed=seed, offset=0.05 * m + 0.002 * seed)
    return runs


def linked_runs(runs: dict[str, Path], root: Path) -> dict[str, Path]:
    """``runs`` seen through folders of links under ``root/runs``: a notebook's evaluations are
    cached in these folders (one test's), not in the shared run directories."""
    copies = {}
    for label, path in runs.items():
        copy = root / "runs" / label
        copy.mkdir(parents=True)
        for entry in path.iterdir():
            if entry.name != "evaluations":
                (copy / entry.name).symlink_to(entry)
        copies[label] = copy
    return copies
