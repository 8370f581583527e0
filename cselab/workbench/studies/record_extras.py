"""Evaluations a study keeps in its record beside what training wrote (``record_extras:``): each is a
function of a finished run's folder that returns a flat mapping of numbers, stored under its name in
the run's record line and read back as ``<name>/<key>`` columns (cselab/workbench/studies/record.py).

Only what needs the run's weights belongs here — it is computed once, when the run finishes, so
that the committed record can answer the claims about it without the weights.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ...model.evaluate.cache import evaluate_run


def clustering(run_dir: Path, data_dir: str | None, **options) -> dict:
    """The clustering suite on ``best/`` (ClusterNS Tables 5-6): each set's score ×100 (DBpedia's AMI,
    the short-text sets' Hungarian accuracy, means over the K-means seeds) and ``short_text_avg``."""
    result = evaluate_run(run_dir, "clustering", data_dir=data_dir, **options)
    out = {task: float(score) for task, score in result["scores"].items()}
    if "short_text_avg" in result:
        out["short_text_avg"] = float(result["short_text_avg"])
    return out


EXTRAS: dict[str, Callable[..., dict]] = {"clustering": clustering}


def compute_extras(extras: Iterable, variant: str, run_dir: Path, data_dir: str | None) -> dict:
    """``{name: numbers}`` of the study's extras that ask for this variant."""
    out = {}
    for extra in extras:
        if variant not in extra.variants:
            continue
        if extra.extra not in EXTRAS:
            raise ValueError(f"record extra {extra.extra!r}: unknown (known: {', '.join(EXTRAS)})")
        out[extra.extra] = EXTRAS[extra.extra](run_dir, data_dir, **extra.options)
    return out
