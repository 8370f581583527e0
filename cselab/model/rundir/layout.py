"""The run directory: ``config.json`` (resolved config, hash, versions, git commit, the code's fingerprint),
``metrics.jsonl`` (one record per log/eval step), ``best/`` (model), ``last/`` (checkpoint),
``snapshots/step-N/`` (models), ``results.json``, ``evaluations/`` (the evaluation cache). A run is
never overwritten unless asked.

This module is the one place that spells those names: everything else asks :class:`RunDir`
(tests/test_layout_owners.py greps the package for them)."""
from __future__ import annotations

import contextlib
import datetime
import functools
import hashlib
import json
import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Iterator

import torch
from filelock import FileLock, Timeout

from ..config import TrainConfig
from ..io import atomic_write_json, atomic_write_text, check_not_link, read_json, read_jsonl, recover_dir, remove_dir
from ..lockfile import lockfile_info
from .state import load_state

OVERWRITE_SUFFIX = ".overwrite"

# The files and folders of a run directory.
CONFIG = "config.json"
METRICS = "metrics.jsonl"
RESULTS = "results.json"
BEST = "best"
LAST = "last"
SNAPSHOTS = "snapshots"
EVALUATIONS = "evaluations"
MODELS = (BEST, LAST)   # the model folders by name; "step-<N>" names the snapshot of step N

PACKAGES = ("cselab", "torch", "transformers", "tokenizers", "safetensors", "numpy", "scipy", "scikit-learn")


class RunExistsError(FileExistsError):
    pass


class RunLockedError(BlockingIOError):
    """Another process holds the run's lock (it is training, resuming or replacing that run)."""


def package_versions() -> dict[str, str | None]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["cuda"] = torch.version.cuda
    return out


def git_commit() -> str | None:
    """Commit of the cselab source tree, with ``-dirty`` when its source (the package, setup.py,
    pyproject.toml) has uncommitted changes — a study's record or figures written in the checkout since
    are outputs, not what trained the run, and do not make it dirty."""
    src = Path(__file__).resolve().parents[3]   # cselab/model/rundir/layout.py → the checkout
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "cselab", "setup.py",
                                "pyproject.toml"], cwd=src,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _sha256_files(root: Path, files: list[Path]) -> str:
    """One sha256 over the files' paths (relative to ``root``) and bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=8)
def _backbone_digest(folder: str, stamp: tuple) -> str:
    # keyed by the files' sizes and times: a process hashes a 90 MB backbone once, not once per run
    root = Path(folder)
    return _sha256_files(root, [p for p in root.iterdir() if p.is_file()])


def code_fingerprint(model: str | None = None) -> dict:
    """What trains and evaluates a run, as it is on disk when the run starts (config.json's ``code``):
    ``sha256`` over every ``.py`` file of ``cselab/model`` (the model side: data, encoder, losses,
    methods, training, evaluation; a tree with uncommitted changes gets the hash of what it holds,
    which ``git_commit``'s ``-dirty`` cannot say), the torch and transformers versions, and the
    backbone: its name and a sha256 over the files of its folder (None for a Hub id not on disk)."""
    root = Path(__file__).resolve().parents[1]   # cselab/model
    sources = [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]
    backbone = None
    if model is not None:
        from ..encoder.backbone import resolve_backbone

        try:
            path, local = resolve_backbone(model)
        except (OSError, ImportError):
            path, local = str(model), False
        digest = None
        if local:
            files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in Path(path).iterdir() if p.is_file())
            digest = _backbone_digest(str(Path(path).resolve()), tuple(files))
        backbone = {"name": str(model), "sha256": digest}
    versions = package_versions()
    return {"sha256": _sha256_files(root, sources), "files": len(sources), "torch": versions.get("torch"),
            "transformers": versions.get("transformers"), "backbone": backbone}


# What cselab appends to a name, and nothing else: a study's grid points (``-key=value``, one per
# grid key) and seed (``-s<seed>``) after a study's label (cselab.workbench.studies.run_grid), or the config
# hash after a run folder's method names (TrainConfig.default_run_name).
_GRID_POINT = r"-[A-Za-z0-9._+]+=[A-Za-z0-9._+=-]*?"
_CONFIG_HASH = r"-[0-9a-f]{10}"   # TrainConfig.config_hash's length
_APPENDED = re.compile(rf"(?:{_GRID_POINT})*(?:-s\d+)?|{_CONFIG_HASH}")


def without_config_hash(name: str) -> str:
    """A run folder's name without its config hash (``simcse-f8fbb5c8ad`` → ``simcse``); any other
    name as it is."""
    return re.sub(rf"{_CONFIG_HASH}$", "", name) or name


def label_matches(label: str, prefix: str) -> bool:
    """The rule by which a label prefix selects runs (a study's ``runs:``, a notebook's variants):
    the label itself, or the label followed only by what cselab appends to a name — a study's grid
    points and seed (``simcse`` selects ``simcse-s1`` and ``apincse-topk`` selects
    ``apincse-topk-top_k=8-s2``), a run folder's config hash (``simcse`` selects
    ``simcse-f8fbb5c8ad``). A longer label is another label, never one of the prefix's runs:
    ``apincse`` does not select ``apincse-pooler`` or ``apincse-pooler-s1`` (nor ``simcse``
    ``simcse-large-s1``; name such labels in a list of prefixes), and not ``apincse2-s1``."""
    return label.startswith(prefix) and _APPENDED.fullmatch(label[len(prefix):]) is not None


def _flat(mapping: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in mapping.items():
        if isinstance(value, dict) and value and key != "pooler_options":
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _identity_differences(saved, cfg: TrainConfig, shown: int = 3) -> str:
    """``" in esimcse.queue_size (32 → 64)"``: the identity keys in which a run's recorded config
    (``config.json``'s ``config``) and ``cfg`` differ, for a refused resume; empty when it cannot say."""
    from ..config import LATER_KEYS, NON_IDENTITY_KEYS

    if not isinstance(saved, dict):
        return ""
    before, now = _flat(saved), _flat(cfg.to_dict())
    skip = set(NON_IDENTITY_KEYS)
    keys = [k for k in dict.fromkeys([*now, *before]) if k.split(".")[0] not in skip]
    changed = [f"{k} ({json.dumps(before.get(k, LATER_KEYS.get(k)))} → {json.dumps(now.get(k, LATER_KEYS.get(k)))})"
               for k in keys if before.get(k, LATER_KEYS.get(k)) != now.get(k, LATER_KEYS.get(k))]
    if not changed:
        return ""
    more = f" and {len(changed) - shown} more" if len(changed) > shown else ""
    return f" in {', '.join(changed[:shown])}{more}; resume with the run's own config, or train a new run"


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    config_file = property(lambda self: self.path / CONFIG)
    metrics_file = property(lambda self: self.path / METRICS)
    results_file = property(lambda self: self.path / RESULTS)
    best_dir = property(lambda self: self.path / BEST)
    last_dir = property(lambda self: self.path / LAST)
    snapshots_dir = property(lambda self: self.path / SNAPSHOTS)
    evaluations_dir = property(lambda self: self.path / EVALUATIONS)

    def snapshot_dir(self, step: int) -> Path:
        return self.snapshots_dir / f"step-{step:06d}"

    def model_dir(self, model: str) -> Path:
        """The folder of ``model``: ``best``, ``last`` or ``step-<N>`` (the snapshot of step N;
        ``step-0`` is the model before training). The folder may not exist yet."""
        if model in MODELS:
            return self.path / model
        step = model.removeprefix("step-")
        if model.startswith("step-") and step.isdigit():
            return self.snapshot_dir(int(step))
        raise ValueError(f"model must be one of {MODELS} or step-<N> (a snapshot), got {model!r}")

    def saved_models(self) -> dict[str, Path]:
        """``{"best": folder, "last": folder}``: those of the two that hold a saved model."""
        from ..encoder.backbone import is_model_folder

        return {name: self.path / name for name in MODELS if is_model_folder(self.path / name)}

    def evaluation_file(self, suite: str, model: str, options_key: str) -> Path:
        """Where the evaluation cache keeps the ``suite`` result of ``model`` under ``options_key``."""
        return self.evaluations_dir / f"{suite}-{model}-{options_key}.json"

    def evaluation_lock(self, entry: Path) -> Path:
        """The lock a process holds while it computes the cache entry ``entry``: a second process
        asking for the same entry (two notebooks of a study at once) waits for it, then reads it."""
        return entry.with_name(f".{entry.name}.lock")

    def results(self) -> dict | None:
        """The run's ``results.json`` (written when training finishes), None before; a file that is
        not a JSON object is one error naming it (its readers call ``.get``)."""
        if not self.results_file.is_file():
            return None
        results = read_json(self.results_file)
        if not isinstance(results, dict):
            raise ValueError(f"{self.results_file}: not a cselab results file (expected a JSON object; got "
                             f"{json.dumps(results)[:40]})")
        return results

    def snapshots(self) -> dict[int, Path]:
        """``{step: model folder}`` of the model-only snapshots (``snapshot_every``), by step."""
        if not self.snapshots_dir.is_dir():
            return {}
        found = {int(p.name.removeprefix("step-")): p for p in self.snapshots_dir.glob("step-*")
                 if p.is_dir() and p.name.removeprefix("step-").isdigit()}
        return dict(sorted(found.items()))

    @classmethod
    def for_config(cls, cfg: TrainConfig) -> "RunDir":
        return cls(Path(cfg.output_dir) / (cfg.run_name or cfg.default_run_name()))

    # ------------------------------------------------------------------ lock and overwrite
    @property
    def lock_file(self) -> Path:
        # Beside the run, not inside: it also covers the run's overwrite staging and its swap.
        return self.path.with_name(f".{self.path.name}.lock")

    @contextlib.contextmanager
    def locked(self) -> Iterator["RunDir"]:
        """Hold an exclusive lock on this run for the block (an OS file lock: released when the
        process ends, even by kill -9). Another holder makes this fail at once, without waiting."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        check_not_link(self.lock_file, f"the lock of run {self.path.name}")   # a lock opens (and may truncate) its file
        lock = FileLock(self.lock_file, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise RunLockedError(f"{self.path}: another process is using this run (it holds the lock "
                                 f"{self.lock_file}); wait for it to finish or stop it") from None
        try:
            yield self
        finally:
            # A start that left no run of cselab's (no folder, a link, a user's or a model's folder
            # that was refused) leaves no lock file either. Unlinked while still held: filelock refuses
            # a lock it got on an unlinked file (a process that opened it meanwhile), so two holders
            # never coexist.
            if not self._is_cselab_run_folder():
                self.lock_file.unlink(missing_ok=True)
            lock.release()

    def _is_cselab_run_folder(self) -> bool:
        """A folder (not a link) with the config.json cselab's trainer writes (its config_hash)."""
        if self.path.is_symlink() or not self.config_file.is_file():
            return False
        try:
            self.saved_config()
        except (OSError, ValueError):
            return False
        return True

    def overwrite_staging(self) -> "RunDir":
        """Where a replacement of this run trains until it finishes (then swapped in by ``replace_dir``)."""
        return RunDir(self.path.with_name(self.path.name + OVERWRITE_SUFFIX))

    def recover_overwrite(self) -> None:
        """Finish a replacement whose final swap a crash interrupted (see :func:`cselab.model.io.recover_dir`)."""
        recover_dir(self.path, OVERWRITE_SUFFIX)

    def check_trainable(self, overwrite: bool = False) -> None:
        """Raise :class:`RunExistsError` unless ``cselab train`` may write here: a new folder, a start
        that never trained, or a run it started (its ``config.json``); never a user's folder or a
        saved model. ``overwrite`` replaces only a run folder itself (readable ``config.json``),
        never a link to one: the swap would replace the link and strand the target."""
        from ..encoder.backbone import is_saved_encoder

        if overwrite and self.path.is_symlink():
            raise RunExistsError(f"{self.path}: is a symbolic link (to {self.path.resolve()}); --overwrite replaces "
                                 "only a run folder itself: overwrite the run where it lies")
        if self.path.is_symlink():   # training would write into the link's target, a folder cselab did not create
            raise RunExistsError(f"{self.path}: is a symbolic link (to {os.readlink(self.path)}); train writes a run "
                                 "only into a folder it creates: train (or resume) the run where it lies (output_dir)")
        if not self.has_content():
            return
        reason = (f"no {CONFIG}" if not self.config_file.is_file()
                  else "a saved model, not a run" if is_saved_encoder(self.path) else None)
        if reason is not None:
            raise RunExistsError(f"{self.path}: not a cselab run ({reason}); train writes only into a new folder or "
                                 "a run it started: choose another run_name")
        if overwrite:
            self.saved_config()   # a config.json that is not a run's: one error naming it, nothing deleted

    def not_a_run(self) -> str | None:
        """Why the folder is not a run directory, in a few words (None when it is one): a run has
        its ``config.json`` (a saved model has one too, beside ``cselab.json``) and metrics,
        ``best/`` or ``last/``."""
        from ..encoder.backbone import is_saved_encoder

        if not self.config_file.is_file():
            return f"no {CONFIG}"
        if is_saved_encoder(self.path):
            return "a saved model, not a run"
        if not (self.metrics_file.exists() or self.best_dir.is_dir() or self.last_dir.is_dir()):
            return f"no {METRICS}, {BEST}/ or {LAST}/"
        return None

    def is_run(self) -> bool:
        """Whether the folder is a run directory (the one test every reader of runs uses)."""
        return self.not_a_run() is None

    def check_is_run(self) -> "RunDir":
        """This run directory, or FileNotFoundError saying why the folder is not one."""
        reason = self.not_a_run()
        if reason is not None:
            raise FileNotFoundError(f"{self.path}: not a run directory ({reason})")
        return self

    def best_model(self) -> Path:
        """The run's ``best/`` model, or an error saying what the run has instead (and how to use it)."""
        from ..io import recorded_step

        if self.best_dir.is_dir():
            return self.best_dir
        if self.last_dir.is_dir():
            step = recorded_step(self.last_dir)
            at = f" of step {step}" if step != float("-inf") else ""
            hint = f"it has last/, the checkpoint{at}: evaluate that with `cselab eval {self.last_dir}`"
        else:
            hint = "nor a last/ checkpoint: it has not reached its first evaluation"
        raise FileNotFoundError(f"{self.path}: this run has no best/ model yet ({hint})")

    def has_content(self) -> bool:
        """Whether the folder holds anything a run produced: more than its config.json and what a
        fresh start writes before its first step (the step-0 records: the untuned model's STS-B dev
        and probe, and its step-0 snapshot). A folder with nothing more is a start that never
        trained."""
        if not self.path.is_dir():
            return False
        for entry in self.path.iterdir():
            if entry.name == CONFIG:
                continue
            if entry.name == METRICS and self._only_step_zero_records(entry):
                continue
            if entry.name == SNAPSHOTS and entry.is_dir() and \
                    {p.name for p in entry.iterdir()} <= {self.snapshot_dir(0).name}:
                continue
            return True
        return False

    @staticmethod
    def _only_step_zero_records(path: Path) -> bool:
        """Whether a metrics file holds nothing but step-0 records (or nothing); a damaged one counts
        as content (it is not this check's to judge)."""
        if path.stat().st_size == 0:
            return True
        try:
            return all(isinstance(r, dict) and r.get("step") == 0 for r in read_jsonl(path))
        except (ValueError, OSError):
            return False

    def version_differences(self) -> list[str]:
        """``"torch 2.1.0 → 2.2.0"`` for each package (and Python, CUDA) whose version this
        environment has otherwise than the run recorded in ``config.json`` when it started; empty
        when they agree or the run recorded none (a damaged config.json is said by its readers)."""
        try:
            saved = read_json(self.config_file).get("versions")
        except (OSError, ValueError, AttributeError):
            return []
        if not isinstance(saved, dict):
            return []
        now = package_versions()
        return [f"{name} {saved[name]} → {now[name]}" for name in now if name in saved and saved[name] != now[name]]

    def saved_config(self, need_hash: bool = True) -> dict:
        """The run's ``config.json``, checked (one error naming the file when it is damaged).
        ``need_hash``: it must also carry the ``config_hash`` the trainer writes — what tells a run
        that cselab started (and may resume or replace) from any folder with a config.json; readers
        of a run's settings need only the object."""
        saved = read_json(self.config_file)
        if not isinstance(saved, dict) or (need_hash and not isinstance(saved.get("config_hash"), str)):
            with_hash = " with 'config_hash'" if need_hash else ""
            raise ValueError(f"{self.config_file}: not a cselab run config (expected a JSON object{with_hash}; "
                             f"got {json.dumps(saved)[:40]})")
        return saved

    # ------------------------------------------------------------------ creation
    def prepare(self, cfg: TrainConfig, resume: bool = False, overwrite: bool = False) -> bool:
        """Create the folder (or check it for resuming). Returns True when resuming. ``overwrite``
        deletes what is there: :func:`cselab.model.train.train` calls it only on a fresh folder or on the
        overwrite staging folder, never on a finished run."""
        if resume and overwrite:
            raise ValueError("choose either resume or overwrite, not both")
        if self.has_content():
            if overwrite:
                remove_dir(self.path)
            elif resume:
                saved = self.saved_config()["config_hash"]
                if saved != cfg.config_hash():
                    changed = _identity_differences(self.saved_config().get("config"), cfg)
                    raise RunExistsError(f"{self.path}: cannot resume, its config (hash {saved}) differs from "
                                         f"this one ({cfg.config_hash()}){changed}")
                recover_dir(self.last_dir)  # a crash between the two renames of a checkpoint swap
                recover_dir(self.best_dir)
                if not self.last_dir.is_dir():  # killed before its first checkpoint: start over cleanly
                    self.truncate_metrics(-1)       # the step-0 records too: the fresh start writes them again
                    return False
                return True
            else:
                state = "finished" if self.results_file.exists() else "unfinished"
                raise RunExistsError(f"{self.path}: an {state} run is already there; pass --resume to continue it "
                                     "or --overwrite to replace it")
        elif resume and not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: no run to resume")
        elif self.path.is_dir():   # a start that never trained: its step-0 records and snapshot are written again
            self.metrics_file.unlink(missing_ok=True)
            if self.snapshots_dir.is_dir():
                remove_dir(self.snapshots_dir)
        created = not self.path.exists()
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            atomic_write_json(self.config_file, {
                "config": cfg.to_dict(),
                "config_hash": cfg.config_hash(),
                "versions": package_versions(),
                "lockfile": lockfile_info(),   # the tested environment's pins and whether this one matches
                "git_commit": git_commit(),
                "code": code_fingerprint(cfg.model),   # the files that ran, hashed (the record's code identity)
                "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            })
        except BaseException:
            if created:
                remove_dir(self.path)
            raise
        return False

    def read_config(self) -> dict:
        """The resolved training config the run was started with (``config.json``'s ``config``),
        checked: a damaged file is one error naming it, not a TypeError in a reader."""
        config = self.saved_config(need_hash=False).get("config")
        if not isinstance(config, dict):
            raise ValueError(f"{self.config_file}: not a cselab run config ('config' is not an object)")
        return config

    def load_checkpoint_state(self) -> dict:
        """The trainer state saved with the last checkpoint (``last/``): optimizer, scheduler, the
        loss's state (queues, centroids), counters, RNG. Safetensors + JSON, never unpickled."""
        if not self.last_dir.is_dir():
            raise FileNotFoundError(f"{self.path}: no last/ checkpoint")
        return load_state(self.last_dir)

    def metrics(self) -> list[dict]:
        return read_jsonl(self.metrics_file) if self.metrics_file.exists() else []

    def truncate_metrics(self, step: int) -> None:
        """Drop records written after ``step`` (they are recomputed when a run resumes)."""
        kept = [r for r in self.metrics() if r.get("step", 0) <= step]
        atomic_write_text(self.metrics_file, "".join(json.dumps(r) + "\n" for r in kept))
