"""Evaluate runs once, keep the result in the run directory.

Notebooks and studies ask for the same evaluations again and again (the STS table of every run,
the transfer tasks, the clustering sets). :func:`evaluate_run` scores a run's model (``best/`` by
default) on one suite and writes the result atomically to
``<run>/evaluations/<suite>-<model>-<options hash>.json``; the next call with the same suite, model
and options reads it back. A suite whose default result training writes (``final_eval``: the STS
table of ``results.json``) reuses it. What the cache needs to know of a suite (the keys a stored
result holds, the outputs it keeps, the keys naming an entry) the suite declares in the registry
(:mod:`cselab.model.evaluate.suites`); nothing here names a suite.

Example::

    results = evaluate_runs(runs, "transfer", tasks=["MR", "CR"], fast=True)   # {label: result}
    frame = evaluation_frame(results)                                        # one row per run
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

import pandas as pd
from tqdm.auto import tqdm

from ..data import data_root
from ..io import atomic_write_json, check_not_link, read_json
from ..rundir import Runs, RunDir, labelled_runs, read_config
from ..rundir.layout import BEST
from ..rundir.readers import read_config_value
from .suites import default_suite, frame_numbers, get_suite

if TYPE_CHECKING:   # the encoder package (torch, transformers) is imported when a model is evaluated
    from ..encoder.memo import EmbeddingMemo

logger = logging.getLogger(__name__)


def options_key(options: Mapping) -> str:
    """A stable short hash of the evaluation options (lists and tuples alike)."""
    blob = json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in sorted(options.items())},
                      sort_keys=True, separators=(",", ":"), default=str)   # default: Path options
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def evaluation_file(run_dir: str | os.PathLike, suite: str, model: str = BEST, **options) -> Path:
    return RunDir(Path(run_dir)).evaluation_file(suite, model, options_key(options))


def final_result(run_dir: str | os.PathLike, suite: str | None = None, model: str = BEST) -> dict | None:
    """The result training's final evaluation wrote into ``results.json`` for ``suite`` (None: the
    default suite), when the suite is one training writes (``final_eval``), ``model`` is the run's
    ``best/`` and there is one; else None: the default evaluation, already done."""
    spec = get_suite(suite or default_suite())
    if model != BEST or not spec.final_eval:
        return None
    results = RunDir(Path(run_dir)).results()
    return None if results is None else results.get(spec.name)


def evaluate_run(run_dir: str | os.PathLike, suite: str | None = None, model: str = BEST,
                 data_dir: str | os.PathLike | None = None, refresh: bool = False, wait: bool = True,
                 **options) -> dict:
    """The ``suite`` result (None: the default suite) of the run's ``model`` folder (``best``,
    ``last`` or the snapshot ``step-<N>``, e.g. ``step-0`` for the model before training), computed once.

    ``options`` go to the suite's function (``tasks``, ``fast``, ``seeds``, ``batch_size``, ...)
    and name the cache entry; ``refresh`` recomputes it. The result carries ``options`` and
    ``model``. While another process computes the same entry this one waits for it and reads it;
    with ``wait=False`` it raises :class:`EvaluationBusy` instead."""
    spec = get_suite(suite or default_suite())
    run_dir = Path(run_dir)
    folder = RunDir(run_dir).model_dir(model)
    if not folder.is_dir() and model == BEST:
        RunDir(run_dir).best_model()   # raises, saying what the run has instead (last/, or nothing yet)
    if not folder.is_dir():
        hint = "(train with snapshot_every)" if model.startswith("step-") else "(has the run finished?)"
        raise FileNotFoundError(f"{run_dir}: no {folder.relative_to(run_dir)}/ model to evaluate {hint}")
    final = final_result(run_dir, spec.name, model) if not options and not refresh else None
    if final is not None:
        return {**final, "options": {}, "model": model}
    cached, wanted, options = _entry(run_dir, spec, model, options)
    # the data the entry was computed on: an entry of another data root (a test subset, another
    # machine's copy) is computed again rather than mixed with this one's pairs
    root = str(data_root(data_dir).resolve())
    result = None if refresh else _read_entry(cached, root, wanted, spec.name, warn=False)   # said under the lock
    if result is not None:
        return result
    # one process computes an entry; the others wait and read it
    check_not_link(cached.parent, "its cached evaluations")   # the entry would land in the link's target
    with _entry_lock(cached, RunDir(run_dir).evaluation_lock(cached), wait):
        result = None if refresh else _read_entry(cached, root, wanted, spec.name)
        if result is None:
            from ..encoder import SentenceEncoder
            from ..utils import resolve_device

            encoder = SentenceEncoder.from_pretrained(folder).to(resolve_device("auto"))
            encoder.embedding_memo = model_memo(folder)   # sentences another suite encoded are not encoded again
            result = spec.run(encoder, data_dir=data_dir, **options, **{extra: True for extra in spec.extras})
            result = {**result, "options": dict(options), "model": model, "data_root": root}
            atomic_write_json(cached, result)
    return result


def _entry(run_dir: Path, spec, model: str, options: Mapping) -> tuple[Path, list[str], dict]:
    """The cache file of an evaluation, the extras asked for, and the options without them."""
    # A suite's extras (STS: the cosine of every pair, a list beside the scores it computes anyway)
    # are always kept, so a notebook that needs them (the paired bootstrap) reads the entry the
    # tables wrote, and the other way round: one encode of each run's test pairs, whoever asks first
    options = dict(options)
    wanted = [extra for extra in spec.extras if options.pop(extra, False)]
    entry_key = spec.entry_key(options) if spec.entry_key is not None else {}
    return evaluation_file(run_dir, spec.name, model, **options, **_file_hashes(options), **entry_key), wanted, options


def is_evaluated(run_dir: str | os.PathLike, suite: str | None = None, model: str = BEST,
                 data_dir: str | os.PathLike | None = None, **options) -> bool:
    """Whether :func:`evaluate_run` with these arguments would read its result (the final table, or
    an entry cached on this data root) rather than encode anything: what a notebook checks before
    saying what a cell will cost."""
    spec = get_suite(suite or default_suite())
    run_dir = Path(run_dir)
    if not options and final_result(run_dir, spec.name, model) is not None:
        return True
    cached, wanted, _ = _entry(run_dir, spec, model, options)
    return _read_entry(cached, str(data_root(data_dir).resolve()), wanted, spec.name, warn=False) is not None


MEMO_BYTES = 512 * 2 ** 20   # the vectors the process keeps over all models (the least recently used go first)
_memos: "OrderedDict[tuple, EmbeddingMemo]" = OrderedDict()


def model_memo(folder: str | os.PathLike) -> "EmbeddingMemo":
    """This process's :class:`~cselab.model.encoder.memo.EmbeddingMemo` of the model saved in ``folder``:
    the same one for every evaluation of those files (a rewritten or replaced model, whose files
    differ in size or time, gets a new one). The STS-B test table and the alignment–uniformity
    point on STS-B test then encode each test sentence once. Memos beyond :data:`MEMO_BYTES`
    in all are dropped, least recently used first."""
    from ..encoder.memo import EmbeddingMemo

    folder = Path(folder).resolve()
    stats = {f.name: f.stat() for f in folder.iterdir() if f.is_file()}
    key = (str(folder), tuple(sorted((name, st.st_size, st.st_mtime_ns) for name, st in stats.items())))
    memo = _memos.pop(key) if key in _memos else EmbeddingMemo()
    _memos[key] = memo   # the most recently used last
    while len(_memos) > 1 and sum(m.nbytes for m in _memos.values()) > MEMO_BYTES:
        _memos.popitem(last=False)
    return memo


class EvaluationBusy(RuntimeError):
    """Another process is computing this cache entry (raised by ``evaluate_run(wait=False)``)."""


def _read_entry(cached: Path, root: str, wanted: list[str], suite: str, warn: bool = True) -> dict | None:
    """The cached result when it is there, whole (see :func:`entry_problem`), of this data root, and
    has the extras asked for (``per_pair``). A damaged entry (a truncated write of an older version, an edit) is
    computed again with a warning naming it, rather than failing every later call."""
    if not cached.is_file():
        return None
    try:
        result = read_json(cached)
        problem = entry_problem(result, suite)
    except (ValueError, UnicodeDecodeError) as e:
        problem = re.sub(rf"^{re.escape(str(cached))}(:\d+)?: ", "", str(e))   # the path is said once, below
    if problem is not None:
        if warn:
            logger.warning("%s: %s; computing it again", cached, problem)
        return None
    same_data = result.get("data_root", root) == root   # entries older than the key: trusted
    return result if same_data and all(extra in result for extra in wanted) else None  # older: no per_pair


def entry_problem(result, suite: str) -> str | None:
    """Why ``result`` is not a cached ``suite`` result (None when it is): a JSON object with the
    suite's results (``scores``, an object; the geometry suite's numbers) and, when it says them,
    its ``options`` as an object."""
    what = f"not a cached {suite} result"
    if not isinstance(result, dict):
        return f"{what} (expected a JSON object, got {_json_kind(result)})"
    needed = get_suite(suite).result_keys   # each suite says what its stored results hold
    missing = [key for key in needed if key not in result]
    if missing:
        return f"{what} (no {', '.join(repr(k) for k in missing)})"
    for key in ("scores", "options"):
        if key in result and not isinstance(result[key], dict):
            return f"{what} ({key!r} is {_json_kind(result[key])}, not an object)"
    spec = get_suite(suite)
    numbers = {f"scores.{task}": v for task, v in result.get("scores", {}).items()}
    numbers.update({key: result[key] for key in (*needed, spec.primary) if key != "scores" and key in result})
    custom = result.get("custom")   # the scores of a user's own pairs or texts
    if isinstance(custom, dict) and isinstance(custom.get("scores"), dict):
        numbers.update({f"custom.scores.{name}": v for name, v in custom["scores"].items()})
    for key, value in numbers.items():
        problem = _number_problem(value)
        if problem is not None:
            return f"{what} ({key!r} {problem})"
    return None


# Every number a suite stores is a score ×100, a cosine, a log-potential or an angle in degrees: none
# lies beyond ±180. A cached number outside it (or NaN, inf, a string) was edited or damaged.
RESULT_LIMIT = 180.0


def _number_problem(value) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is {_json_kind(value)}, not a number"
    if not math.isfinite(value):
        return f"is {value}, not a finite number"
    if abs(value) > RESULT_LIMIT:
        return f"is {value:g}, beyond ±{RESULT_LIMIT:g}, where no score, cosine or angle lies"
    return None


def _json_kind(value) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null", dict: "an object"}.get(
        type(value), "a number")


@contextlib.contextmanager
def _entry_lock(cached: Path, lock_file: Path, wait: bool):
    from filelock import FileLock, Timeout

    lock_file.parent.mkdir(parents=True, exist_ok=True)
    check_not_link(lock_file, "the lock of a cached evaluation")
    lock = FileLock(lock_file, timeout=-1 if wait else 0)
    try:
        lock.acquire()
    except Timeout:
        raise EvaluationBusy(f"{cached}: another process is computing this evaluation") from None
    try:
        yield
    finally:
        lock.release()


def _file_hashes(options: Mapping) -> dict:
    """The content hash of each custom pairs or texts file, so that an edited file is scored again."""
    from ..data.custom import pair_files, text_files
    from ..data.text import require_file

    hashes = {}
    for option, files in (("pairs", pair_files), ("texts", text_files)):
        if options.get(option):   # require_file: a missing file, a folder or a device is one line naming it
            hashes[f"{option}_sha256"] = {
                name: hashlib.sha256(require_file(path, f"{option} file").read_bytes()).hexdigest()
                for name, path in files(options[option]).items()}
    return hashes


def evaluate_runs(runs: Runs, suite: str | None = None, model: str = BEST, data_dir: str | os.PathLike | None = None,
                  refresh: bool = False, progress: bool = True, **options) -> dict[str, dict]:
    """:func:`evaluate_run` for every run: ``{label: result}`` (a progress bar over runs; ``suite``
    None: the default suite). A run
    whose entry another process is computing is taken up after the others, so two notebooks that
    need the same runs' evaluations at once share the work instead of waiting for each other."""
    labelled = labelled_runs(runs)
    results: dict[str, dict] = {}
    pending = list(labelled)
    suite = get_suite(suite or default_suite()).name
    with tqdm(total=len(labelled), desc=f"{suite} evaluations", unit="run",
              disable=not progress or len(labelled) < 2) as bar:
        while pending:
            busy = []
            for label in pending:
                try:
                    results[label] = evaluate_run(labelled[label], suite, model, data_dir, refresh, wait=False,
                                                  **options)
                    bar.update()
                except EvaluationBusy:
                    busy.append(label)
            if busy and len(busy) == len(pending):   # nothing else left to do: wait for the first
                label = busy.pop(0)
                results[label] = evaluate_run(labelled[label], suite, model, data_dir, refresh, **options)
                bar.update()
            pending = busy
    return {label: results[label] for label in labelled}


def evaluation_frame(results: Mapping[str, dict], runs: Runs | None = None,
                     config_keys: tuple[str, ...] = ("method", "seed")) -> pd.DataFrame:
    """One row per run: ``run``, the chosen config keys (when ``runs`` gives the run directories),
    every task score of ``scores`` and the numbers the suites name (:func:`~cselab.model.evaluate.suites.frame_numbers`:
    ``avg``, ``short_text_avg``, the geometry suite's ``alignment``, ``uniformity``, …) that the result has."""
    paths = labelled_runs(runs) if runs is not None else {}
    rows = []
    for label, result in results.items():
        row = {"run": label}
        if label in paths:
            config = read_config(paths[label])
            row.update({key: read_config_value(config, key) for key in config_keys})
        row.update(result.get("scores", {}))
        row.update(result.get("custom", {}).get("scores", {}))   # your own pairs or texts (pairs=, texts=)
        row.update({k: result[k] for k in frame_numbers() if k in result})
        rows.append(row)
    return pd.DataFrame(rows)
