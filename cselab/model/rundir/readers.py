"""Read run directories into pandas DataFrames (the input of every plot and table).

A run directory holds ``config.json`` (``{"config": {...}, "config_hash", ...}``), ``metrics.jsonl``
(records ``kind`` = ``train`` — ``loss``, ``loss/<part>``, ``sim/<stat>`` —, ``eval`` — ``stsb_dev`` —
and ``probe`` — see :mod:`cselab.model.train.probes`) and, once finished, ``results.json``.

``runs`` arguments accept one path, a list of paths (labelled by folder name) or a mapping
``{label: path}``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, Union

import pandas as pd

from ..io import read_jsonl
from .layout import RunDir

Runs = Union[str, os.PathLike, Iterable[Union[str, os.PathLike]], Mapping[str, Union[str, os.PathLike]]]
RECORD_KINDS = ("train", "eval", "probe")   # the kinds of metrics.jsonl records


def labelled_runs(runs: Runs) -> dict[str, Path]:
    """``{label: run directory}``, checking each is a run directory (:meth:`RunDir.is_run`)."""
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    pairs = runs.items() if isinstance(runs, Mapping) else ((Path(r).name, r) for r in runs)
    out = {}
    for label, path in pairs:
        path = RunDir(Path(path)).check_is_run().path
        if label in out:
            raise ValueError(f"two runs are labelled {label!r}; pass a mapping {{label: path}}")
        out[label] = path
    if not out:
        raise ValueError("runs: no run directory given")
    return out


def read_config(run_dir: str | os.PathLike) -> dict:
    """The resolved training config of a run."""
    return RunDir(Path(run_dir)).read_config()


def read_metrics(runs: Runs, kind: str | None = "train") -> pd.DataFrame:
    """The ``kind`` records of the runs' ``metrics.jsonl`` (every kind if None), one row per
    record, with a ``run`` column; runs in the order given, each sorted by step."""
    if kind is not None and kind not in RECORD_KINDS:
        raise ValueError(f"kind must be one of {RECORD_KINDS} or None, got {kind!r}")
    frames = []
    for label, path in labelled_runs(runs).items():
        records = [r for r in read_jsonl(RunDir(path).metrics_file) if kind is None or r.get("kind") == kind]
        frame = pd.DataFrame(records)
        if "step" in frame:
            frame = frame.sort_values("step", kind="stable")
        frame.insert(0, "run", label)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def config_difference(a: Mapping, b: Mapping, prefix: str = "") -> str:
    """The first key (sorted, dotted into sections) in which two configs differ, with both values
    (``mixcse.mix_lambda (0.2 vs 0.1)``); ``""`` when they are equal."""
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                return config_difference(a[key], b[key], f"{prefix}{key}.")
            return f"{prefix}{key} ({a.get(key)!r} vs {b.get(key)!r})"
    return ""


def run_select_by(path, results: dict | None = None, config: dict | None = None) -> str:
    """How a run's ``best/`` was chosen: ``results.json`` → ``select_by``, else the config's, else
    ``stsb_dev`` (every run made before the option existed)."""
    run = RunDir(Path(path))
    if results is None:
        results = run.results()
    if config is None and run.config_file.is_file():
        config = run.read_config()
    return (results or {}).get("select_by") or (config or {}).get("select_by") or "stsb_dev"


def read_config_value(config: Mapping, key: str):
    """A config value by key (None when absent): ``section.key`` reads a method's section
    (``clusterns.num_clusters``), a list (a method list) reads as its items joined by ``+``."""
    section, _, name = key.partition(".")
    value = (config.get(section) or {}).get(name) if name else config.get(key)
    return "+".join(map(str, value)) if isinstance(value, list) else value


def read_results(runs: Runs, config_keys: Iterable[str] = ("method", "seed", "batch_size")) -> pd.DataFrame:
    """One row per finished run: ``run``, the chosen config keys (a method list joined by ``+``,
    a method's hyper-parameter as ``section.key``), ``select_by`` (how ``best/`` was chosen), ``best_stsb_dev``, ``best_step`` and every
    suite result of ``results.json`` (an object with ``scores``, e.g. the final STS table): its task
    scores and ``avg`` as ``<suite>/<task>`` and ``<suite>/avg`` (``sts/STSBenchmark``)."""
    rows = []
    for label, path in labelled_runs(runs).items():
        run = RunDir(path)
        if not run.results_file.is_file():
            raise FileNotFoundError(f"{path}: unfinished run (no {run.results_file.name})")
        results, config = run.results(), run.read_config()   # both checked: a damaged file is one line naming it
        row = {"run": label}
        row.update({key: read_config_value(config, key) for key in config_keys})
        row["select_by"] = run_select_by(path, results, config)
        row["best_stsb_dev"] = results.get("best_stsb_dev")
        row["best_step"] = results.get("best_step")
        for suite, result in results.items():   # the suites' results training wrote (final_eval)
            if isinstance(result, dict) and isinstance(result.get("scores"), dict):
                row.update({f"{suite}/{task}": v for task, v in result["scores"].items()})
                if "avg" in result:
                    row[f"{suite}/avg"] = result["avg"]
        rows.append(row)
    return pd.DataFrame(rows)
