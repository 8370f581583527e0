"""A run directory as a model folder: the facts of a run for its model card, and ``cselab export``.

The encoder saves and loads model folders and renders their card from facts it is handed
(:class:`cselab.model.encoder.model_card.RunFacts`); reading those facts out of a run directory (its
config, hash and results) happens here, one layer above the evaluation suites whose STS table the
card shows. Training writes the card of ``best/`` and ``last/`` through :func:`run_facts` too.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from .config import NON_IDENTITY_KEYS
from .encoder.backbone import SAVED_ENCODER, is_saved_encoder
from .encoder.model import SentenceEncoder
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
        select_by=results.get("select_by", "stsb_dev") if results else None,
        lockfile=recorded.get("lockfile") if recorded else None,
        sts_table=format_sts_table({run.path.name: results["sts"]}) if results and "sts" in results else None,
        eval_precision=results.get("eval_precision") if results else None)


def export_model(source: str | os.PathLike, out: str | os.PathLike, pooler: str | None = None,
                 overwrite: bool = False) -> Path:
    """``cselab export``: write ``source`` — a run directory (its ``best/`` model; the card gets the
    run's config and STS table), a saved cselab folder, an alias or a Hugging Face id (``pooler``
    default ``cls_before_pooler``, as ``cselab eval``) — as a new folder ``out`` that
    sentence-transformers, transformers and cselab load (:mod:`cselab.model.encoder.export` says what it
    holds). ``out`` is written whole or not at all; an existing non-empty ``out`` is replaced only
    with ``overwrite`` and only when it is a model folder cselab wrote, never the source, a run or a
    folder inside one (:func:`_check_export_target`)."""
    out = Path(out)
    run, model_path = _export_source(source)
    _check_export_target(out, _protected_folders(source, run, model_path), overwrite)
    saved_file = Path(os.fspath(model_path)) / SAVED_ENCODER
    saved = read_json(saved_file) if saved_file.is_file() else None
    encoder = SentenceEncoder.from_pretrained(model_path, pooler=pooler or (None if saved else "cls_before_pooler"))
    # The saved step and dev score describe the saved pooler only.
    same_model = saved is not None and encoder.pooler_name == saved["pooler"]
    extra = {k: v for k, v in saved.items() if k in ("step", "stsb_dev")} if same_model else {}
    # A different pooler is not the run's evaluated model: no run results in the card.
    card = run_facts(run) if run is not None and same_model else None
    marker: dict = {}   # filled before the swap marks the folder complete: the files this export owns
    with staged_dir(out, marker) as tmp:
        encoder.save(tmp, extra=extra, card=card)
        marker["files"] = _written_files(tmp)
    logger.info("exported %s (pooler %s) to %s", source, encoder.pooler_name, out)
    return out


# ---------------------------------------------------------------------- export guards
# ``cselab export`` writes one new folder and deletes (with --overwrite) only a model folder that an
# earlier export or save wrote: never what it reads, never a run or a part of one, never a user's
# folder. Everything is checked before the model is loaded, so a refusal writes nothing.
class ExportTargetError(ValueError):
    """``cselab export``'s OUT would delete or write into something it does not own."""


def _export_source(source: str | os.PathLike) -> tuple[Path | None, str | os.PathLike]:
    """(the run directory or None, the model folder to load): a run means its ``best/``, and a run
    without one is the same error ``cselab eval`` gives."""
    from .rundir import RunDir

    candidate = RunDir(Path(os.fspath(source)))
    if candidate.is_run():
        return candidate.path, candidate.best_model()
    return None, source


def _enclosing_run(path: Path) -> Path | None:
    """The run directory ``path`` is or lies in (``RUN``, ``RUN/best``, ``RUN/snapshots/step-…``), if any."""
    from .rundir import RunDir

    for candidate in (path, *path.parents):
        if RunDir(candidate).is_run():
            return candidate
    return None


def _protected_folders(source, run: Path | None, model_path) -> dict[Path, str]:
    """What the export reads, resolved: the source model folder and the run holding it."""
    protected: dict[Path, str] = {}
    local = Path(os.fspath(model_path))
    if local.exists():
        model = local.resolve()
        protected[model] = f"the source model {local}"
        holder = run.resolve() if run is not None else _enclosing_run(model)
        if holder is not None:
            protected[holder] = f"the source run {holder}"
    return protected


def _check_export_target(out: Path, protected: dict[Path, str], overwrite: bool) -> None:
    """Refuse (one line, before anything is written) an ``out`` that is a file, is, contains or
    lies inside what the export reads or any run directory, that --overwrite would delete without
    being a cselab model folder, or that cannot be written."""
    from .io import name_max, path_component_problem

    if out.is_symlink():
        raise ExportTargetError(f"{out}: is a symbolic link; export writes a folder of its own (remove the link "
                                "or choose another name)")
    if out.exists() and not out.is_dir():
        raise ExportTargetError(f"{out}: is a file, not a folder; export writes a folder: choose another name")
    target = out.resolve()
    for relation, test in (("is", lambda f: target == f), ("lies inside", target.is_relative_to),
                           ("contains", lambda f: f.is_relative_to(target))):
        for folder, what in protected.items():
            if test(folder):
                raise ExportTargetError(f"{out}: {relation} {what}; export into a new folder"
                                        + ("" if relation == "is" else " outside it"))
    run = _enclosing_run(target)
    if run is not None:
        relation = "is" if run == target else "lies inside"
        raise ExportTargetError(f"{out}: {relation} the run directory {run} (its folders belong to the trainer); "
                                "export into a folder outside any run")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{out}: already exists; choose another folder or pass --overwrite")
        _check_replaceable(out)
    limit = name_max(target.parent) - len(".old")   # the swap writes <out>.tmp and <out>.old beside it
    problem = path_component_problem(out.name, limit) if out.name else None
    if problem is not None:
        raise ExportTargetError(f"{out}: the folder name {problem}")
    _check_writable(out)


def _written_files(folder: Path) -> list[str]:
    """Every file under ``folder``, as sorted relative POSIX paths (what an export wrote)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def _check_replaceable(out: Path) -> None:
    """--overwrite deletes ``out``: only a model folder cselab wrote, holding nothing else. An
    export records its files in its completeness marker; a file not among them (a user's) is kept
    by refusing. A folder without that record must at least be a saved cselab model (cselab.json)
    and not a training checkpoint."""
    from .io import COMPLETE_MARKER

    if (out / "trainer_state.json").exists():
        raise ExportTargetError(f"{out}: is a training checkpoint; --overwrite replaces only a model folder "
                                "`cselab export` wrote: choose another folder")
    if not is_saved_encoder(out):
        raise ExportTargetError(f"{out}: not a cselab model folder (no cselab.json); --overwrite replaces only a "
                                "model folder `cselab export` wrote: choose another folder")
    try:
        recorded = read_json(out / COMPLETE_MARKER).get("files")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if isinstance(recorded, list):
        foreign = [f for f in _written_files(out) if f not in recorded and f != COMPLETE_MARKER]
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise ExportTargetError(f"{out}: holds {foreign[0]}{more}, which `cselab export` did not write; "
                                    "--overwrite would delete it: move it away or choose another folder")


def _check_writable(out: Path) -> None:
    """``out``'s nearest existing ancestor takes a new folder (permissions, read-only file system,
    a file in the way): one error naming ``out`` instead of an errno from the middle of the write."""
    import tempfile

    from .io import WriteError, blocking_file, write_failure

    blocker = blocking_file(out.parent)
    if blocker is not None:
        raise WriteError(f"{out}: cannot write ({blocker} is a file, not a folder)")
    existing = out.parent if out.parent != Path("") else Path(".")
    while not existing.exists():
        existing = existing.parent
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".probe", dir=existing))
    except OSError as e:
        raise WriteError(f"{out}: cannot write ({write_failure(e) or e})", e.errno) from None
