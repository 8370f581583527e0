"""Evaluations a study keeps in its record beside what training wrote (``record_extras:``): each names a
registered suite, run on a finished run's ``best/``; its numbers (a flat mapping) are stored under the
suite's name in the run's record line and read back as ``<name>/<key>`` columns (cselab/workbench/studies/record.py).

Only what needs the run's weights belongs here — it is computed once, when the run finishes, so
that the committed record can answer the claims about it without the weights.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ...model.evaluate.cache import evaluate_run
from ...model.evaluate.suites import SUITES, get_suite


def suite_numbers(suite: str, run_dir: Path, data_dir: str | None, **options) -> dict:
    """One suite on ``best/`` (e.g. the clustering suite for ClusterNS Tables 5-6): each task's score
    and the suite's own summary numbers (the clustering suite's ``short_text_avg``)."""
    result = evaluate_run(run_dir, suite, data_dir=data_dir, **options)
    out = {task: float(score) for task, score in result["scores"].items()}
    out.update({key: float(result[key]) for key in get_suite(suite).numbers() if key in result})
    return out


def compute_extras(extras: Iterable, variant: str, run_dir: Path, data_dir: str | None) -> dict:
    """``{name: numbers}`` of the study's extras that ask for this variant."""
    out = {}
    for extra in extras:
        if variant not in extra.variants:
            continue
        if extra.extra not in SUITES:
            raise ValueError(f"record extra {extra.extra!r}: not a suite (known: {', '.join(SUITES)})")
        out[extra.extra] = suite_numbers(extra.extra, run_dir, data_dir, **extra.options)
    return out
