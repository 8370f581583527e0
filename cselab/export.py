"""A run directory as a model folder: the facts of a run for its model card, and ``cselab export``.

The encoder saves and loads model folders and renders their card from facts it is handed
(:class:`cselab.encoder.model_card.RunFacts`); reading those facts out of a run directory (its
config, hash and results) happens here, one layer above the evaluation suites whose STS table the
card shows. Training writes the card of ``best/`` and ``last/`` through :func:`run_facts` too.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from .config import NON_IDENTITY_KEYS
from .encoder.model import CONFIG_NAME, SentenceEncoder
from .encoder.model_card import RunFacts
from .evaluate.sts import format_sts_table
from .io import read_json, staged_dir
from .rundir import RunDir

logger = logging.getLogger(__name__)


def _read_optional(path: Path) -> dict | None:
    return read_json(path) if path.is_file() else None


def run_facts(run_dir: str | os.PathLike) -> RunFacts:
    """What the model card of a model of ``run_dir`` says about the run, as recorded so far (its
    config and hash from ``config.json``; steps and the STS table once ``results.json`` exists)."""
    run = RunDir(Path(run_dir))
    recorded = _read_optional(run.config_file)
    results = _read_optional(run.results_file)
    config = recorded["config"] if recorded else None
    return RunFacts(
        name=run.path.name, config=config,
        config_hash=recorded.get("config_hash", "?") if recorded else "?",
        # The keys that determine the result (no output folders or devices of the training machine).
        identity={k: v for k, v in config.items() if k not in NON_IDENTITY_KEYS} if config else None,
        has_results=bool(results),
        steps=results.get("steps") if results else None,
        best_step=results.get("best_step") if results else None,
        sts_table=format_sts_table({run.path.name: results["sts"]}) if results and "sts" in results else None)


def run_directory(path: str | os.PathLike) -> RunDir | None:
    """The run at ``path`` when it is a run directory (config.json, metrics.jsonl and best/), else None."""
    run = RunDir(Path(path))
    if run.config_file.is_file() and run.metrics_file.exists() and run.best_dir.is_dir():
        return run
    return None


def export_model(source: str | os.PathLike, out: str | os.PathLike, pooler: str | None = None,
                 overwrite: bool = False) -> Path:
    """``cselab export``: write ``source`` — a run directory (its ``best/`` model; the card gets the
    run's config and STS table), a saved cselab folder, an alias or a Hugging Face id (``pooler``
    default ``cls_before_pooler``, as ``cselab eval``) — as a new folder ``out`` that
    sentence-transformers, transformers and cselab load (:mod:`cselab.encoder.export` says what it
    holds). ``out`` is written whole or not at all and an existing non-empty ``out`` is replaced
    only with ``overwrite``."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not overwrite:
        raise FileExistsError(f"{out}: already exists; choose another folder or pass --overwrite")
    run = run_directory(source)
    model_path = run.best_dir if run is not None else source
    saved_file = Path(os.fspath(model_path)) / CONFIG_NAME
    saved = read_json(saved_file) if saved_file.is_file() else None
    encoder = SentenceEncoder.from_pretrained(model_path, pooler=pooler or (None if saved else "cls_before_pooler"))
    # The saved step and dev score describe the saved pooler only.
    same_model = saved is not None and encoder.pooler_name == saved["pooler"]
    extra = {k: v for k, v in saved.items() if k in ("step", "stsb_dev")} if same_model else {}
    # A different pooler is not the run's evaluated model: no run results in the card.
    card = run_facts(run.path) if run is not None and same_model else None
    with staged_dir(out) as tmp:
        encoder.save(tmp, extra=extra, card=card)
    logger.info("exported %s (pooler %s) to %s", source, encoder.pooler_name, out)
    return out
