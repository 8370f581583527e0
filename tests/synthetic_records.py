"""Study records with known numbers, for tests of the record → claims → figures path (no training).

:func:`study_records` gives every run of a loaded study a record line whose 7-task average is
``base + effects.get(variant, 0) + seed_shift(seed) + noise``: the seed shift is shared by every
variant of a seed (what pairing removes), the noise is the variant's own. Curves (train, probe, dev)
have the shape a real run's have.
"""
from __future__ import annotations

import numpy as np

from cselab.workbench.studies.record import FORMAT, recorded_config, variant_of_label

TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]


def record(label: str, study: str, avg: float, seed: int, config_hash: str = "0123456789", steps=(0, 40, 80),
           extras: dict | None = None, rng=None, config: dict | None = None, profile: str = "cpu") -> dict:
    rng = rng or np.random.default_rng(seed)
    variant, _ = variant_of_label(label)
    offsets = rng.normal(0, 2, len(TASKS))
    offsets -= offsets.mean()
    sts = {task: float(avg + o) for task, o in zip(TASKS, offsets)}
    sts["avg"] = float(np.mean([sts[t] for t in TASKS]))
    logged = [1, 10, 20, 30, 40, 50, 60, 70, 80]
    probes = [0, 10, 20, 30, 40, 50, 60, 70, 80]
    return {
        "format": FORMAT, "study": study, "profile": profile, "label": label, "variant": variant, "seed": seed,
        "run": f"{variant}-{config_hash}", "config_hash": config_hash, "config": config or {"seed": seed},
        "code": {"sha256": "c" * 64, "files": 86, "torch": "2.13.0+cpu", "transformers": "5.24.0",
                 "backbone": {"name": "all-minilm-l6", "sha256": "b" * 64}}, "commit": "0" * 40,
        "versions": {"torch": "2.13.0+cpu"}, "cpu": {"native_bf16": "amx", "capability": "AVX512"},
        "execution": {"device": "cpu", "threads": 1, "precision": "bf16", "eval_precision": "bf16"},
        "train_seconds": 150.0,
        "select_by": "stsb_dev", "best": {"step": 80, "stsb_dev": 84.0}, "sts": sts,
        "dev": {"step": list(steps), "stsb_dev": [79.66, 83.5 + rng.normal(0, .2), 84.0 + rng.normal(0, .2)]},
        "train": {"step": logged, "loss": [float(0.3 / s) for s in logged],
                  "grad/z1_norm": [float(0.01 / s + rng.normal(0, 1e-5)) for s in logged],
                  "sim/pos_cos": [0.8] * len(logged), "sim/neg_cos": [float(0.6 / s ** 0.5) for s in logged]},
        "probe": {"step": probes, "largest_angle": [float(75 + 0.15 * s + rng.normal(0, .3)) for s in probes],
                  "layer_cls_sim": [[0.6, 0.65, 0.66, 0.66, 0.67, 0.66, 1.0] for _ in probes]},
        "extras": extras or {},
    }


def study_records(study, effects: dict[str, float], base: float = 76.0, noise: float = 0.05,
                  seed_sd: float = 0.15, generator_seed: int = 0) -> list[dict]:
    """A record line for every run of ``study`` (see the module docstring)."""
    rng = np.random.default_rng(generator_seed)
    seed_shift: dict[int, float] = {}
    out = []
    for run in study.runs:
        variant, seed = variant_of_label(run.label)
        shift = seed_shift.setdefault(seed, float(rng.normal(0, seed_sd)))
        avg = base + effects.get(variant, 0.0) + shift + float(rng.normal(0, noise))
        extras = {"clustering": {"DBpedia": 60.0 + shift, "short_text_avg": 55.0 + shift}}
        out.append(record(run.label, study.name, avg, seed, run.config.config_hash(), extras=extras,
                          rng=np.random.default_rng([generator_seed, seed, len(out)]),
                          config=recorded_config(run.config.to_dict()), profile=study.profile))
    return out
