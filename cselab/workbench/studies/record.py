"""A study's record: one JSON line per run, the committed evidence behind its tables, figures and verdicts.

Run folders hold weights and are never committed; a study's record is what a referee re-checks. It is
written by ``cselab reproduce`` itself next to the study's figures (``<figures>/<study>/record.jsonl``,
:func:`record_path`) as each run finishes or is reused, and rewritten whole and atomically each
time, sorted by label, under a lock (two studies writing one record keep every line), so that a study
stopped mid-way keeps every run it finished and a later continuation (another machine, another CPU
kind: each line says which) trains only what is missing.

One line holds, for one run (``FORMAT`` 2):

* ``label``, ``variant`` (the label without ``-s<seed>``), ``seed``, ``study``, ``profile``;
* ``config``: the whole resolved config (every key, defaults included; ``output_dir``, a path of the
  machine, left out) and ``config_hash`` (the run's identity; :func:`check_config_hash` rebuilds it);
* ``code``: what trained it, from the run's ``config.json`` — a sha256 over the model side's source
  files as they were on disk, the torch and transformers versions, the backbone's name and a sha256
  of its files (None for a run trained before cselab wrote it); ``commit`` and ``versions``;
* ``run`` (the run folder's name), ``cpu`` (torch's CPU capability and what makes bf16 native there)
  and ``execution`` (device, threads, ``precision``, ``eval_precision``);
* ``train_seconds``, ``select_by`` and ``best`` (step and STS-B dev score of the checkpoint scored);
* ``sts``: every task's Spearman × 100 and ``avg``, as training's final evaluation wrote them;
* ``dev``: STS-B dev at every evaluation step; ``train``: the logged statistics (losses,
  similarities, gradient norms, a method's statistics) at every logging step; ``probe``: the probe
  geometry (alignment, uniformity, largest angle, each layer's [CLS] similarity to the last) at every
  probe step — columns of equal length, keyed by name, numbers to 4 significant digits;
* ``extras``: evaluations the study asks for at record time (``record_extras:`` in the study file,
  e.g. the clustering suite), computed by functions the caller passes in;
* ``plan``: which power plan asked for the run — ``{"name": "first"}`` or ``{"name": "re-plan",
  "made": <date>}`` (``cselab reproduce --replan`` re-estimates the seeds from the record's spreads;
  a line written before this key existed was the first plan's).

``FORMAT`` 1 lines (the records committed before) are still read, as *legacy*: their ``config`` holds
only the keys that differed from the defaults of their day and their code is known only by ``commit``.

The reader (:func:`read_record`) refuses, in one line naming the file, the line and the label, whatever
would make a verdict wrong: a line that is not a record, a duplicated (study, profile, variant, seed),
a line of another study or profile, a score that is not a finite number in range, a missing or
inconsistent seed or variant, an ``avg`` that is not the mean of its tasks, deep nesting, a huge
line, invalid UTF-8. :func:`read_study_record` also sets apart the *stale* lines: those whose config
no longer is what the study file plans for their label (the claims must not rest on them).
:func:`computation` is a line's code identity, CPU kind and precision: two runs are one computation
only where it is equal.

:func:`records_frame` turns records into the one-row-per-run frame the claims and figures read
(``variant``, ``seed``, ``avg``, each task, and the derived per-run metrics of :data:`DERIVED`).
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Mapping, NamedTuple

import pandas as pd
from filelock import FileLock

from ...model.config import TrainConfig
from ...model.evaluate.suites import default_suite
from ...model.io import atomic_write_text
from ...model.rundir import RunDir

FORMAT = 2
READ_FORMATS = (1, 2)    # what this cselab reads: 1 is legacy (partial config, code known by its commit)
FINAL = default_suite()   # the suite training scores its selected model with (results.json's key of that name)
RECORD_FILE = "record.jsonl"
SEED_SUFFIX = re.compile(r"-s(\d+)$")
DIGITS = 6          # single numbers (seconds, the best dev score); the STS scores are kept whole
CURVE_DIGITS = 4    # the logged curves: enough for any figure, and a record of ~3 KB a run
# what a record keeps of a run's metrics: train keys by prefix, probe keys by name
TRAIN_PREFIXES = ("loss", "sim/", "grad/")
PROBE_KEYS = ("alignment", "uniformity", "mean_cos", "largest_angle", "layer_cls_sim")
# what the reader accepts of a line (a real one is 3-6 KB, nested 4 deep: probe → layer_cls_sim → step → layer)
MAX_LINE_BYTES = 256 * 1024
MAX_DEPTH = 6
MAX_INT_DIGITS = 20          # a seed, a step, a count: a 5,000-digit "integer" is not a record's
MAX_STS = 100.0              # Spearman × 100
AVG_TOLERANCE = 1e-6         # avg is the mean of the tasks' unrounded scores (record lines keep them whole)
FIRST_PLAN = {"name": "first"}   # the plan a study file gives before any record exists
PLAN_NAMES = ("first", "re-plan")
LOCK_SUFFIX = ".lock"        # the lock beside a record (record.jsonl.lock; ignored by git)

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
    out; a method's section keeps only the hyper-parameters off its own defaults): what a legacy
    (format 1) line holds of its config."""
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


def recorded_config(config: Mapping) -> dict:
    """The whole resolved config a line keeps: every key, defaults included, but ``output_dir`` (a
    path of the machine that trained it, which no run's identity includes)."""
    return {key: value for key, value in config.items() if key != "output_dir"}


def check_config_hash(record: Mapping) -> bool:
    """Whether the record's ``config`` rebuilds its ``config_hash`` with this checkout's defaults (a
    format-2 line names every key, so only a key this checkout no longer knows can make it fail)."""
    from ...model.config import load_config

    try:
        return load_config(None, dict(record["config"])).config_hash() == record["config_hash"]
    except Exception:   # a key this checkout no longer knows: the commit the record names does
        return False


def run_record(run_dir: str | os.PathLike, label: str, study: str, profile: str,
               extras: Mapping[str, dict] | None = None, plan: Mapping[str, str] | None = None) -> dict:
    """The record of one finished run (see the module docstring); ``plan``: which power plan asked
    for it (:data:`FIRST_PLAN` when not said)."""
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
        "config": recorded_config(config), "code": saved.get("code"), "commit": saved.get("git_commit"),
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
        "plan": dict(plan or FIRST_PLAN),
    }


# ------------------------------------------------------------------- the file
class RecordError(ValueError):
    """A record file that cannot be read: the message (one line) names the file, the line and the label."""


_TOP_KEYS = frozenset(["format", "study", "profile", "label", "variant", "seed", "run", "config_hash", "config",
                       "code", "commit", "versions", "cpu", "execution", "train_seconds", "select_by", "best", FINAL,
                       "dev", "train", "probe", "extras", "plan"])


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number a record may hold")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _depth(value, limit: int) -> int:
    """How deep ``value`` nests (a number is 0), counting no further than ``limit`` + 1."""
    if limit < 0 or not isinstance(value, (dict, list)):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(v, limit - 1) for v in children), default=0)


def _number(value) -> bool:
    """A finite JSON number (``true`` is not 1.0)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _line_problem(record: dict, study: str | None, profile: str | None) -> str | None:
    """What is wrong with one parsed line, in words, or None."""
    if record.get("format") not in READ_FORMATS:
        return f"record format {record.get('format')!r}, this cselab reads {' and '.join(map(str, READ_FORMATS))}"
    unknown = sorted(set(record) - _TOP_KEYS)
    if unknown:
        return f"unknown key(s) {', '.join(map(repr, unknown))}"
    if _depth(record, MAX_DEPTH) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    for key in ("study", "profile", "variant"):
        if not isinstance(record.get(key), str) or not record.get(key):
            return f"{key!r} missing or not a string (got {record.get(key)!r})"
    seed = record.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return f"'seed' missing or not an integer (got {seed!r})"
    variant, label_seed = variant_of_label(record["label"])
    if label_seed is not None and (variant, label_seed) != (record["variant"], seed):
        return (f"variant {record['variant']!r} and seed {seed} are not the label's "
                f"({variant!r}, {label_seed})")
    if study is not None and record["study"] != study:
        return f"a line of study {record['study']!r}, read as study {study!r}'s record"
    if profile is not None and record["profile"] != profile:
        return f"a line of profile {record['profile']!r}, read for profile {profile!r}"
    if not isinstance(record.get("config"), dict):
        return "'config' missing or not an object"
    if not isinstance(record.get("config_hash"), str):
        return f"'config_hash' missing or not a string (got {record.get('config_hash')!r})"
    scores = record.get(FINAL)
    if not isinstance(scores, dict) or (scores and "avg" not in scores):   # {}: a run with no final evaluation
        return f"{FINAL!r} missing or without 'avg'"
    for task, value in scores.items():
        if not _number(value) or abs(value) > MAX_STS:
            return f"{FINAL}.{task} = {value!r}: not a finite number within ±{MAX_STS:g}"
    tasks = [v for task, v in scores.items() if task != "avg"]
    if tasks and abs(sum(tasks) / len(tasks) - scores["avg"]) > AVG_TOLERANCE:
        return (f"{FINAL}.avg = {scores['avg']!r} is not the mean of its {len(tasks)} tasks "
                f"({sum(tasks) / len(tasks)!r})")
    best = record.get("best") or {}
    if best.get("stsb_dev") is not None and (not _number(best["stsb_dev"]) or abs(best["stsb_dev"]) > MAX_STS):
        return f"best.stsb_dev = {best['stsb_dev']!r}: not a finite number within ±{MAX_STS:g}"
    seconds = record.get("train_seconds")
    if seconds is not None and (not _number(seconds) or seconds < 0):
        return f"train_seconds = {seconds!r}: not a finite number ≥ 0"
    plan = record.get("plan", FIRST_PLAN)
    if (not isinstance(plan, dict) or plan.get("name") not in PLAN_NAMES
            or not all(isinstance(v, str) for v in plan.values())
            or (plan["name"] == "re-plan" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", plan.get("made", "")))):
        return (f"plan = {plan!r}: expected {{'name': 'first'}} or {{'name': 're-plan', 'made': 'YYYY-MM-DD'}}")
    extras = record.get("extras") or {}
    if not isinstance(extras, dict):
        return "'extras' is not an object"
    for name, numbers in extras.items():
        for key, value in (numbers.items() if isinstance(numbers, dict) else [("", numbers)]):
            if not _number(value):
                return f"extras.{name}{'.' + key if key else ''} = {value!r}: not a finite number"
    return None


_LABEL = re.compile(r'"label"\s*:\s*"([^"\\]{1,200})"')


def _where(path: Path, number: int, text: str) -> str:
    """``file:line: label`` of a line that did not parse (its label found in the text, when it is there)."""
    match = _LABEL.search(text)
    return f"{path}:{number}: {match.group(1)}" if match else f"{path}:{number}"


def _parse_lines(path: Path, study: str | None = None, profile: str | None = None) -> list[tuple[int, dict]]:
    """``[(line number, record)]`` of a record file, each line checked (see :func:`read_record`)."""
    if path.is_symlink():
        raise RecordError(f"{path}: is a symbolic link; a record is read only from a file of its own")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no record (run the study first: cselab reproduce writes it)")
    out, seen = [], {}
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if len(raw) > MAX_LINE_BYTES:
            where = _where(path, number, raw.decode("utf-8", "replace"))
            raise RecordError(f"{where}: a line of {len(raw)} bytes (a record line is at most {MAX_LINE_BYTES})")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            where = _where(path, number, raw.decode("utf-8", "replace"))
            raise RecordError(f"{where}: not UTF-8 (byte {e.start})") from None
        if not line.strip():
            continue
        try:
            record = json.loads(line, parse_int=_parse_int, parse_constant=_refuse_constant)
        except json.JSONDecodeError as e:
            raise RecordError(f"{_where(path, number, line)}: not JSON ({e.msg})") from None
        except RecursionError:
            raise RecordError(f"{_where(path, number, line)}: nested too deeply to be a record line") from None
        except ValueError as e:   # NaN / Infinity, a many-thousand-digit integer
            raise RecordError(f"{_where(path, number, line)}: not a record line ({e})") from None
        if not isinstance(record, dict) or not isinstance(record.get("label"), str):
            raise RecordError(f"{path}:{number}: expected a record object with a label, got {type(record).__name__}")
        problem = _line_problem(record, study, profile)
        if problem:
            raise RecordError(f"{path}:{number}: {record['label']}: {problem}")
        key = (record["study"], record["profile"], record["variant"], record["seed"])
        first = seen.get(key) or seen.get(record["label"])
        if first:   # one run twice: counted twice in every mean and pairing
            raise RecordError(f"{path}:{number}: {record['label']}: a second line for study {key[0]}, profile "
                              f"{key[1]}, variant {key[2]}, seed {key[3]} (the first is line {first})")
        seen[key] = seen[record["label"]] = number
        out.append((number, record))
    return out


def read_record(path: str | os.PathLike, study: str | None = None, profile: str | None = None) -> list[dict]:
    """The records of a record file, in file order. Each line is checked, and the first bad one is a
    :class:`RecordError` of one line naming the file, the line and the label (see the module
    docstring); with ``study`` / ``profile``, a line of another study or profile is one."""
    return [record for _, record in _parse_lines(Path(path), study, profile)]


def write_record(path: str | os.PathLike, records: Iterable[dict]) -> Path:
    """Write records atomically, one line each, sorted by label (so a diff shows what changed).
    Not locked: a read-modify-write goes through :func:`put_records`."""
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


def record_lock(path: str | os.PathLike) -> FileLock:
    """The lock of a record file (``record.jsonl.lock`` beside it): held around every read-modify-write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + LOCK_SUFFIX)


def put_records(path: str | os.PathLike, new: Iterable[dict]) -> Path:
    """Add or replace records (by label) in a record file, keeping the others; under the record's
    lock, so that two processes adding lines at once keep every line."""
    path = Path(path)
    new = list(new)
    with record_lock(path):
        existing = {r["label"]: r for r in read_record(path)} if path.is_file() or path.is_symlink() else {}
        for record in new:
            kept = existing.get(record["label"])
            if kept and (kept.get("study"), kept.get("profile")) != (record.get("study"), record.get("profile")):
                # a second profile run into the same figures folder replaced the first one's lines
                raise RecordError(f"{path}: {record['label']}: the record holds study {kept.get('study')}, profile "
                                  f"{kept.get('profile')}'s run of that label; not replaced by study "
                                  f"{record.get('study')}, profile {record.get('profile')}'s (another --figures-dir)")
            existing[record["label"]] = record
        return write_record(path, existing.values())


def recorded(path: str | os.PathLike) -> dict[str, dict]:
    """``{label: record}`` of a record file (empty when there is none yet)."""
    path = Path(path)
    return {r["label"]: r for r in read_record(path)} if path.is_file() or path.is_symlink() else {}


# ------------------------------------------------------------------- stale lines, one computation
class StaleLine(NamedTuple):
    """A line whose config is no longer what the study file plans for its label."""
    path: str
    line: int
    label: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.label}: stale: {self.why}"


class StudyRecord(NamedTuple):
    """A study's record read against its plan: the ``current`` lines (of the plan's labels, with the
    plan's config) and the ``stale`` ones. ``records`` is every line (what a plan that skips recorded
    runs compares by hash itself)."""
    current: list[dict]
    stale: list[StaleLine]
    records: list[dict]


def _leaves(value, prefix: str = "") -> dict[str, object]:
    """``{"sts.avg": 76.2, "probe.alignment.3": 0.12, ...}``: every leaf of a record line by its path."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _leaves(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): value}


def changed_lines(before: str | os.PathLike, after: str | os.PathLike, shown: int = 3) -> list[str]:
    """What changed from the record ``before`` to ``after``, a line each: ``file:line: label (seed s):
    key old → new`` (the first ``shown`` keys that differ: the STS average, then the scores, first), a
    new line, a label gone. What a failing findings check names: the run, its seed and its line, not only the block."""
    old = {r["label"]: r for _, r in _parse_lines(Path(before))}
    out, seen = [], set()
    for number, record in _parse_lines(Path(after)):
        label = record["label"]
        seen.add(label)
        where = f"{after}:{number}: {label} (seed {record.get('seed')})"
        if label not in old:
            out.append(f"{where}: a new line")
            continue
        a, b = _leaves(old[label]), _leaves(record)
        keys = sorted((k for k in a.keys() | b.keys() if a.get(k) != b.get(k)),
                      key=lambda k: (k != "sts.avg", not k.startswith("sts."), k))   # the average first
        if keys:
            more = f" (and {len(keys) - shown} more)" if len(keys) > shown else ""
            out.append(f"{where}: " + "; ".join(f"{k} {a.get(k)} → {b.get(k)}" for k in keys[:shown]) + more)
    out += [f"{after}: {label}: its line is gone" for label in old if label not in seen]
    return out


def read_study_record(path: str | os.PathLike, study) -> StudyRecord:
    """A loaded study's record (:func:`cselab.workbench.studies.spec.load_study`), every line checked
    for the study's name and profile (:func:`read_record`), split into current and stale lines. A line
    is stale when its label is not in the plan (nor a re-plan's run of a planned group within the seed
    cap) or its ``config_hash`` is not the plan's for that label (a changed study file, or a changed
    default the line's config did not name)."""
    path = Path(path)
    current, stale, records = [], [], []
    for number, record in _parse_lines(path, study.name, study.profile):
        records.append(record)
        config = planned_config(study, record)
        want = config.config_hash() if config is not None else None
        if want is None:
            stale.append(StaleLine(str(path), number, record["label"], "not a run of the study's plan"))
        elif want != record["config_hash"]:
            why = f"config {record['config_hash']}, the study file now plans {want}"
            changed = _changed_keys(record, config)
            stale.append(StaleLine(str(path), number, record["label"], why + (f" ({changed})" if changed else "")))
        else:
            current.append(record)
    return StudyRecord(current, stale, records)


def planned_config(study, record: Mapping) -> TrainConfig | None:
    """The config the study plans for a record line's run: its label's in the study's plan, or, for a
    line a re-plan recorded beyond the first plan's seeds, its group's at that seed — where the group is
    one the power plan sizes and the seed within the rule's seed space (a re-plan's seed count moves with the
    record's spreads; the runs it asked for stay the study's). None: no run of the study."""
    import dataclasses

    planned = next((r.config for r in study.runs if r.label == record["label"]), None)
    if planned is not None:
        return planned
    if (record.get("plan") or {}).get("name") != "re-plan" or study.claims.rule is None:
        return None
    variant, seed = record["variant"], record["seed"]
    if variant not in study.claims.planned_seeds() or not 1 <= seed <= study.claims.rule.seed_space:
        return None
    base = next((r for r in study.runs if variant_of_label(r.label)[0] == variant), None)
    return dataclasses.replace(base.config, seed=seed) if base is not None else None


def planned_hash(study, record: Mapping) -> str | None:
    """The hash of :func:`planned_config` (None: the line is no run of the study)."""
    config = planned_config(study, record)
    return config.config_hash() if config is not None else None


def _changed_keys(record: Mapping, config: TrainConfig) -> str:
    """The identity keys whose value differs between a line's config and the plan's, as
    ``lr 3e-05 → 5e-05`` (a legacy line names only its keys off the defaults: its others are read as
    today's defaults). Scalars only: a method's section is named by the hash alone."""
    planned = config.identity()
    mine = dict(record.get("config") or {})
    if record.get("format") == 1:
        mine = {**TrainConfig().to_dict(), **mine}
    scalar = (int, float, str, bool, type(None))
    keys = sorted(k for k, v in planned.items() if isinstance(v, scalar) and mine.get(k) != v)
    return ", ".join(f"{k} {mine.get(k)!r} → {planned[k]!r}" for k in keys[:4])


class Computation(NamedTuple):
    """What makes two runs' numbers one computation: the code that ran, the CPU kind, the precisions."""
    code: str           # "sha256:<hex>" of the model side's source, or "commit:<git commit>" for a legacy line
    cpu: str            # torch's CPU capability / what makes bf16 native ("AVX512/amx")
    precision: str      # training / evaluation precision ("bf16/bf16")
    legacy: bool        # the code is known only by its commit (a format-1 line, or a run before ``code``)


def computation(record: Mapping) -> Computation:
    """A record line's code identity, CPU kind and precision: the one function that says whether two
    runs may be paired (equal :class:`Computation`) — the claims code pairs seeds with it."""
    code = record.get("code") or {}
    if isinstance(code, Mapping) and code.get("sha256"):
        backbone = code.get("backbone") or {}
        identity = "+".join(str(x) for x in (code["sha256"], code.get("torch"), code.get("transformers"),
                                              backbone.get("name"), backbone.get("sha256")))
        code_id, legacy = f"sha256:{identity}", False
    else:
        code_id, legacy = f"commit:{record.get('commit')}", True
    cpu = record.get("cpu") or {}
    execution = record.get("execution") or {}
    return Computation(code_id, f"{cpu.get('capability')}/{cpu.get('native_bf16')}",
                       f"{execution.get('precision')}/{execution.get('eval_precision')}", legacy)



def computation_columns(record: Mapping) -> dict[str, str | bool]:
    """:func:`computation` as the columns the claims' pairing compares (``code``, ``cpu``, ``precision``)."""
    return computation(record)._asdict()


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
    :data:`DERIVED` metrics, each numeric extra as ``<extra>/<key>``, ``train_seconds``, and
    ``computation`` (:func:`computation` as one string: two rows may be paired only where it is equal)."""
    rows = []
    for r in records:
        row = {"label": r["label"], "variant": r["variant"], "seed": r["seed"], "train_seconds": r.get("train_seconds"),
               "computation": " | ".join(map(str, computation(r)[:3]))}
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
    return ["format", "study", "profile", "label", "variant", "seed", "run", "config_hash", "config", "code", "commit",
            "versions", "cpu", "execution", "train_seconds", "select_by", "best", FINAL, "dev", "train", "probe",
            "extras", "plan"]


__all__ = ["DERIVED", "FIRST_PLAN", "FORMAT", "READ_FORMATS", "RECORD_FILE", "Computation", "RecordError", "changed_lines", "computation_columns", "StaleLine", "StudyRecord",
           "check_config_hash", "computation", "config_difference", "planned_config", "planned_hash", "put_records", "read_record", "read_study_record",
           "record_fields", "record_lock", "record_path", "recorded_config", "records_frame", "records_series",
           "recorded", "run_record", "variant_of_label", "write_record"]
