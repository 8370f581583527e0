"""The run directory: ``config.json`` (resolved config, hash, versions, git commit),
``metrics.jsonl`` (one record per log/eval step), ``best/`` (model), ``last/`` (checkpoint),
``results.json``. A run is never overwritten unless asked."""
from __future__ import annotations

import datetime
import json
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import torch

from ..config import TrainConfig
from ..io import atomic_write_json, atomic_write_text, read_json, read_jsonl
from .state import load_state

PACKAGES = ("cselab", "torch", "transformers", "tokenizers", "safetensors", "numpy", "scipy", "scikit-learn")


class RunExistsError(FileExistsError):
    pass


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
    """Commit of the cselab source tree, with ``-dirty`` when it has uncommitted changes."""
    src = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=src,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


class RunDir:
    def __init__(self, path: Path):
        self.path = Path(path)

    config_file = property(lambda self: self.path / "config.json")
    metrics_file = property(lambda self: self.path / "metrics.jsonl")
    results_file = property(lambda self: self.path / "results.json")
    best_dir = property(lambda self: self.path / "best")
    last_dir = property(lambda self: self.path / "last")
    snapshots_dir = property(lambda self: self.path / "snapshots")

    def snapshot_dir(self, step: int) -> Path:
        return self.snapshots_dir / f"step-{step:06d}"

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

    def prepare(self, cfg: TrainConfig, resume: bool = False, overwrite: bool = False) -> bool:
        """Create the folder (or check it for resuming). Returns True when resuming."""
        if resume and overwrite:
            raise ValueError("choose either resume or overwrite, not both")
        if self.path.exists() and any(self.path.iterdir()):
            if overwrite:
                shutil.rmtree(self.path)
            elif resume:
                saved = read_json(self.config_file)["config_hash"]
                if saved != cfg.config_hash():
                    raise RunExistsError(f"{self.path}: cannot resume, its config (hash {saved}) differs from "
                                         f"this one ({cfg.config_hash()})")
                if not self.last_dir.is_dir():  # killed before its first checkpoint: start over cleanly
                    self.truncate_metrics(0)
                    return False
                return True
            else:
                state = "finished" if self.results_file.exists() else "unfinished"
                raise RunExistsError(f"{self.path}: an {state} run is already there; pass --resume to continue it "
                                     "or --overwrite to replace it")
        elif resume:
            raise FileNotFoundError(f"{self.path}: no run to resume")
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.config_file, {
            "config": cfg.to_dict(),
            "config_hash": cfg.config_hash(),
            "versions": package_versions(),
            "git_commit": git_commit(),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
        return False

    def read_config(self) -> dict:
        """The resolved training config the run was started with (``config.json``'s ``config``)."""
        return read_json(self.config_file)["config"]

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
