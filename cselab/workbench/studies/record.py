"""A study's record: one JSON line per run, the committed evidence behind its tables, figures and verdicts.

Run folders hold weights and are never committed; a study's record is what a referee re-checks. It is
written by ``cselab reproduce`` itself next to the study's figures (``<figures>/<study>/record.jsonl``,
:func:`record_path`) as each run finishes or is reused, and rewritten whole and atomically each
time, sorted by label, so that a study stopped mid-way keeps every run it finished and a later
continuation (another machine, another CPU kind: each line says which) trains only what is missing.

One line holds, for one run (``FORMAT`` 1):

* ``label``, ``variant`` (the label without ``-s<seed>``), ``seed``, ``study``, ``profile``;
* ``config`` (the keys that differ from :class:`cselab.model.config.TrainConfig`'s defaults at ``commit``)
  and ``config_hash`` (the run's identity; :func:`check_config_hash` rebuilds it), ``run`` (the
  run folder's name), ``commit`` and ``versions`` it trained with, ``cpu`` (torch's CPU capability
  and what makes bf16 native there) and ``execution`` (device, threads, precisions);
* ``train_seconds``, ``select_by`` and ``best`` (step and STS-B dev score of the checkpoint scored);
* ``sts``: every task's Spearman × 100 and ``avg``, as training's final evaluation wrote them;
* ``dev``: STS-B dev at every evaluation step; ``train``: the logged statistics (losses,
  similarities, gradient norms, a method's statistics) at every logging step; ``probe``: the probe
  geometry (alignment, uniformity, largest angle, each layer's [CLS] similarity to the last) at every
  probe step — columns of equal length, keyed by name, numbers to 4 significant digits;
* ``extras``: evaluations the study asks for at record time (``record_extras:`` in the study file,
  e.g. the clustering suite), computed by functions the caller passes in.

:func:`records_frame` turns records into the one-row-per-run frame the claims and figures read
(``variant``, ``seed``, ``avg``, each task, and the derived per-run metrics of :data:`DERIVED`).
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd

from ...model.config import TrainConfig
from ...model.evaluate.suites import default_suite
from ...model.io import atomic_write_text
from ...model.rundir import RunDir

FORMAT = 1
FINAL = default_suite()   # the suite training scores its selected model with (results.json's key of that name)
RECORD_FILE = "record.jsonl"
SEED_SUFFIX = re.compile(r"-s(\d+)$")
DIGITS = 6          # single numbers (seconds, the best dev score); the STS scores are kept whole
CURVE_DIGITS = 4    # the logged curves: enough for any figure, and a record of ~3 KB a run
# what a record keeps of a run's metrics: train keys by prefix, probe keys by name
TRAIN_PREFIXES = ("loss", "sim/", "grad/")
PROBE_KEYS = ("alignment", "uniformity", "mean_cos", "largest_angle", "layer_cls_sim")

Extras = Mapping[str, Callable[[Path, "str | None"], dict]]


def record_path(figures_dir: str | os.PathLike, study: str) -> Path:
    """Where a study's record lives: beside its figures (``<figures>/<study>/record.jsonl``)."""
    return Path(figures_dir) / study / RECORD_FILE


def variant_of_label(label: str) -> tuple[str, int | None]:
    """``("mixcse-single", 3)`` for ``mixcse-single-s3``; a label without a seed suffix is its own variant."""
    match = SEED_SUFFIX.search(label)
    return (label[:match.start()], int(match.group(1))) if match else (label, None)


def _round(value, digits: int = DIGITS):
    if isinstance(value, float):
        if not math.isfinite(value):
            return None                      # JSON has no NaN: a missing statistic
        return float(f"{value:.{digits}g}")
    if isinstance(value, list):
        return [_round(v, digits) for v in value]
    return value


def _columns(records: list[dict], keep: Callable[[str], bool]) -> dict:
    """Records (dicts with a ``step``) as columns: ``{"step": [...], key: [...]}`` for the kept keys,
    None where a record lacks one."""
    keys = sorted({k for r in records for k in r if k != "step" and keep(k)})
    out = {"step": [int(r["step"]) for r in records]}
    for key in keys:
        out[key] = [_round(r.get(key), CURVE_DIGITS) for r in records]
    return out


def config_difference(config: Mapping) -> dict:
    """The keys of a saved config that differ from the defaults (engine and placement keys left
    out; a method's section keeps only the hyper-parameters off its own defaults): with
    ``TrainConfig`` at the record's commit, enough to rebuild the run's identity."""
    from dataclasses import asdict

    from ...model.methods import METHODS

    defaults = TrainConfig().to_dict()
    out = {}
    for key, value in config.items():
        if key in ("output_dir", "run_name") or (key in defaults and defaults[key] == value):
            continue
        if key in METHODS and isinstance(value, Mapping):
            own = asdict(METHODS[key].params())
            value = {k: v for k, v in value.items() if own.get(k, object()) != v}
        out[key] = value
    return out


def check_config_hash(record: Mapping) -> bool:
    """Whether the record's ``config`` rebuilds its ``config_hash`` with this checkout's defaults."""
    from ...model.config import load_config

    try:
        return load_config(None, dict(record["config"])).config_hash() == record["config_hash"]
    except Exception:   # a key this checkout no longer knows: the commit the record names does
        return False


def run_record(run_dir: str | os.PathLike, label: str, study: str, profile: str,
               extras: Mapping[str, dict] | None = None) -> dict:
    """The record of one finished run (see the module docstring)."""
    run = RunDir(Path(run_dir))
    results = run.results()
    if results is None:
        raise FileNotFoundError(f"{run_dir}: unfinished run (no {run.results_file.name}): nothing to record")
    saved = run.saved_config()
    config = saved["config"]
    metrics = run.metrics()
    variant, seed = variant_of_label(label)
    sts = results.get(FINAL) or {}
    train = sorted((r for r in metrics if r.get("kind") == "train"), key=lambda r: r["step"])
    probes = sorted((r for r in metrics if r.get("kind") == "probe"), key=lambda r: r["step"])
    evals = sorted((r for r in metrics if r.get("kind") == "eval" and "stsb_dev" in r), key=lambda r: r["step"])
    return {
        "format": FORMAT, "study": study, "profile": profile, "label": label, "variant": variant,
        "seed": config.get("seed", seed), "run": Path(run_dir).name, "config_hash": saved.get("config_hash"),
        "config": config_difference(config), "commit": saved.get("git_commit"),
        "versions": {k: v for k, v in (saved.get("versions") or {}).items() if v is not None},
        "cpu": {"native_bf16": results.get("native_bf16"), "capability": results.get("cpu_capability")}, "execution": results.get("execution") or {},
        "train_seconds": _round(results.get("train_seconds")), "select_by": results.get("select_by", "stsb_dev"),
        "best": {"step": results.get("best_step"), "stsb_dev": _round(results.get("best_stsb_dev"))},
        FINAL: {**{task: score for task, score in (sts.get("scores") or {}).items()},
                **({"avg": sts["avg"]} if "avg" in sts else {})},
        "dev": {"step": [int(r["step"]) for r in evals], "stsb_dev": [_round(r["stsb_dev"], CURVE_DIGITS) for r in evals]},
        "train": _columns(train, lambda k: k.startswith(TRAIN_PREFIXES)),
        "probe": _columns(probes, lambda k: k in PROBE_KEYS),
        "extras": dict(extras or {}),
    }


# ------------------------------------------------------------------- the file
class RecordError(ValueError):
    """A record file that cannot be read: the message names the file and line."""


def read_record(path: str | os.PathLike) -> list[dict]:
    """The records of a record file, in file order; a line that is not a record object is an error
    naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no record (run the study first: cselab reproduce writes it)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise RecordError(f"{path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(record, dict) or not isinstance(record.get("label"), str):
            raise RecordError(f"{path}:{number}: expected a record object with a label, got {type(record).__name__}")
        if record.get("format") != FORMAT:
            raise RecordError(f"{path}:{number}: record format {record.get('format')!r}, this cselab reads {FORMAT}")
        records.append(record)
    return records


def write_record(path: str | os.PathLike, records: Iterable[dict]) -> Path:
    """Write records atomically, one line each, sorted by label (so a diff shows what changed)."""
    path = Path(path)
    if path.is_symlink():
        raise RecordError(f"{path}: is a symbolic link; cselab does not write through links")
    ordered = sorted(records, key=lambda r: r["label"])
    labels = [r["label"] for r in ordered]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise RecordError(f"{path}: two records for label(s) {', '.join(duplicates)}")
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n" for r in ordered)
    return atomic_write_text(path, text)


def put_records(path: str | os.PathLike, new: Iterable[dict]) -> Path:
    """Add or replace records (by label) in a record file, keeping the others."""
    path = Path(path)
    existing = {r["label"]: r for r in read_record(path)} if path.is_file() else {}
    for record in new:
        existing[record["label"]] = record
    return write_record(path, existing.values())


def recorded(path: str | os.PathLike) -> dict[str, dict]:
    """``{label: record}`` of a record file (empty when there is none yet)."""
    path = Path(path)
    return {r["label"]: r for r in read_record(path)} if path.is_file() else {}


# ------------------------------------------------------------------- records → one row per run
def _last(column: dict, key: str):
    values = [v for v in column.get(key, []) if v is not None]
    return values[-1] if values else math.nan


def _late_mean(column: dict, key: str, fraction: float = 0.5):
    steps, values = column.get("step", []), column.get(key, [])
    if not steps:
        return math.nan
    start = max(steps) * (1 - fraction)
    late = [v for s, v in zip(steps, values) if s > start and v is not None]
    return sum(late) / len(late) if late else math.nan


# Per-run numbers derived from a record's columns (what a claim about training dynamics compares):
DERIVED: dict[str, tuple[str, Callable[[dict], float]]] = {
    "largest_angle_final": ("the probe set's largest angle at the last probe (degrees)",
                            lambda r: _last(r.get("probe", {}), "largest_angle")),
    "grad_norm_late": ("‖∂L/∂z‖ of view 1 × 1000, mean over the logged steps of the run's second half",
                       lambda r: 1000 * _late_mean(r.get("train", {}), "grad/z1_norm")),
}


def _flatten_extras(extras: Mapping) -> dict:
    out = {}
    for name, value in (extras or {}).items():
        if isinstance(value, Mapping):
            for key, number in value.items():
                if isinstance(number, (int, float)) and not isinstance(number, bool):
                    out[f"{name}/{key}"] = float(number)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)
    return out


def records_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per record: ``label``, ``variant``, ``seed``, ``avg`` and every STS task, the
    :data:`DERIVED` metrics, each numeric extra as ``<extra>/<key>``, ``train_seconds``."""
    rows = []
    for r in records:
        row = {"label": r["label"], "variant": r["variant"], "seed": r["seed"], "train_seconds": r.get("train_seconds")}
        row.update({task: (math.nan if v is None else v) for task, v in (r.get(FINAL) or {}).items()})
        row.update({name: derive(r) for name, (_, derive) in DERIVED.items()})
        row.update(_flatten_extras(r.get("extras") or {}))
        rows.append(row)
    return pd.DataFrame(rows)


def records_series(records: Iterable[dict], part: str, key: str) -> pd.DataFrame:
    """One row per (run, step) of a record column: ``variant``, ``seed``, ``step``, ``value`` (e.g.
    ``part="train", key="grad/z1_norm"``; ``part="dev", key="stsb_dev"``)."""
    rows = []
    for r in records:
        column = r.get(part) or {}
        for step, value in zip(column.get("step", []), column.get(key, [])):
            if value is not None and not isinstance(value, list):
                rows.append({"variant": r["variant"], "seed": r["seed"], "label": r["label"], "step": step,
                             "value": float(value)})
    return pd.DataFrame(rows, columns=["variant", "seed", "label", "step", "value"])


def record_fields() -> list[str]:
    """The top-level keys of a record (for the docs and a test)."""
    return ["format", "study", "profile", "label", "variant", "seed", "run", "config_hash", "config", "commit",
            "versions", "cpu", "execution", "train_seconds", "select_by", "best", FINAL, "dev", "train", "probe",
            "extras"]


__all__ = ["DERIVED", "FORMAT", "RECORD_FILE", "RecordError", "check_config_hash", "config_difference",
           "put_records", "read_record", "record_fields", "record_path", "records_frame", "records_series",
           "recorded", "run_record", "variant_of_label", "write_record"]
