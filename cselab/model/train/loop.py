"""The training loop, readable top to bottom.

One step: take B sentences → tokenise them as 2B rows (two dropout views) → one forward pass →
the InfoNCE core plus the method's components → backward, clip, AdamW, linear schedule. Every
``log_every`` steps a record with the loss parts and similarity statistics goes to
``metrics.jsonl``; every ``eval_every`` steps STS-B dev is scored (the evaluation pooler path),
the best model is kept in ``best/`` and a full checkpoint in ``last/``. Before the first step of a
fresh run, STS-B dev is scored once as a reference (step 0: the untuned backbone, never ``best/``).

:func:`train` prepares and locks the run directory; :func:`_train_run` is the loop. What it calls
has a module per subject: :mod:`cselab.model.train.training` (the encoder, loss, optimiser, schedule and
counters, built fresh or on ``last/``'s model), :mod:`cselab.model.train.checkpoints` (``last/``,
``best/`` and snapshots written, and resuming from ``last/``), :mod:`cselab.model.train.dev_evaluation`
(STS-B dev through the suite registry, the ``select_by`` score, early stopping) and
:mod:`cselab.model.train.guards` (the checks that stop a diverged run before it saves anything).

The step itself (plain, or gradient-cached in chunks with ``mini_batch_size``) is
:func:`cselab.model.train.step.training_loss`; multi-process runs under ``torchrun`` (each process its
slice of the global batch, the loss over the gathered batch, process 0 writing) are
:mod:`cselab.model.train.ddp`.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import torch
from tqdm.auto import tqdm

from ..config import TrainConfig, load_config
from ..encoder import SentenceEncoder
from ..encoder.model_card import write_model_card
from ..evaluate.sts import evaluate_sts
from ..export import run_facts
from ..io import atomic_write_json, check_writable, ensure_folder, remove_dir, replace_dir
from ..progress import progress_bar
from ..rundir import RunDir
from ..utils import native_bf16, precision_name, resolve_precision, seed_everything
from . import ddp, execution
from .batches import batches_per_epoch, epoch_batches, epoch_order  # noqa: F401 (epoch_order: API)
from .checkpoints import resume_from_checkpoint, save_checkpoint, save_snapshot
from .dev_evaluation import evaluate_dev, start_record
from .guards import TrainingData, check_loss, dev_sample, load_training_data
from .probes import embedding_grad_norms, probe_record, stsb_probe_set
from .reporting import RunReporter
from .step import StepLoss, training_loss
from .training import Training, TrainState, build_training

# Names this module held before the set-up, the dev evaluation and the checkpoints had modules of their own.
from .checkpoints import check_resumed_setting  # noqa: E402,F401
from .guards import NonFiniteLossError  # noqa: E402,F401
from .training import adamw, trainable_parameters  # noqa: E402,F401

logger = logging.getLogger(__name__)


def train(config: TrainConfig | dict | str, resume: bool = False, overwrite: bool = False,
          data_dir: str | None = None, callbacks: Iterable[Callable[[TrainState, dict | None], None]] = (),
          progress: bool = True) -> Path:
    """Train one run; returns its run directory. ``callbacks(state, record)`` run after every step
    (on every process of a ``torchrun`` run; only process 0 writes the run directory).

    The run is locked for its lifetime (another process on the same run gets :class:`RunLockedError`
    at once). The data are loaded before the run directory is created, and a start that fails before
    producing anything removes what it created. With ``overwrite``, an existing run is replaced only
    once the new one has finished: the new run trains in ``<run>.overwrite/`` and is swapped in at the
    end; if it fails, the existing run is untouched.
    """
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    if resume and overwrite:
        raise ValueError("choose either resume or overwrite, not both")
    processes = ddp.setup_processes(cfg.device)   # torchrun's process group, or this process alone
    processes.check_config(cfg)
    final = RunDir.for_config(cfg)
    if processes.is_main:
        ensure_folder(cfg.output_dir, "output_dir")   # a file there is one line, not an errno
        check_writable(cfg.output_dir, "output_dir")   # read-only: named here, not as the run lock's errno
    # Process 0 owns the run directory (lock, recovery, staging); the others only train.
    with final.locked() if processes.is_main else contextlib.nullcontext():
        if processes.is_main:
            final.recover_overwrite()
            final.check_trainable(overwrite)   # never into (or over) a folder cselab did not write
        data = load_training_data(cfg, data_dir)
        replacing = bool(processes.run_on_main(lambda: overwrite and final.has_content()))
        run = final.overwrite_staging() if replacing else final
        resuming = bool(processes.run_on_main(lambda: run.prepare(cfg, resume=resume, overwrite=overwrite)))
        if processes.is_main:
            _say_environment(run, resuming)
        try:
            _train_run(cfg, run, resuming, data, data_dir, callbacks, progress, processes)
        except BaseException:
            if processes.is_main and not resuming and not run.has_content():
                remove_dir(run.path)  # a start that produced nothing leaves nothing (a plain re-run works)
            elif processes.is_main and replacing:  # tqdm.write: a line of its own under the progress bar
                tqdm.write(f"note: the existing run {final.path} is untouched; the failed replacement is in "
                           f"{run.path} (cleared by the next overwrite)", file=sys.stderr)
            raise
        if replacing and processes.is_main:
            replace_dir(run.path, final.path)
    return final.path


def _say_environment(run: RunDir, resuming: bool) -> None:
    """Say what config.json records silently: a resume under other package versions than the run
    started with (its numbers are then not one history), a fresh start outside the tested lockfile."""
    if resuming:
        changed = run.version_differences()
        if changed:
            logger.warning("%s: resuming under other package versions than the run was started with (%s): the "
                           "resumed run is not byte-identical to an uninterrupted one", run.path, ", ".join(changed))
        return
    lockfile = run.saved_config().get("lockfile")
    if isinstance(lockfile, dict) and lockfile.get("matches") is False:
        logger.info("%s: note: this environment differs from the tested lockfile %s in %s package(s) (%s); "
                    "config.json records it, and numbers may differ from a run under the lockfile", run.path,
                    lockfile.get("file"), lockfile.get("differences"), "; ".join(lockfile.get("first_differences", [])))


def _train_run(cfg: TrainConfig, run: RunDir, resuming: bool, data: TrainingData, data_dir: str | None,
               callbacks: Iterable[Callable[[TrainState, dict | None], None]], progress: bool,
               processes: ddp.Processes) -> None:
    """The training itself, in a prepared (and locked) run directory."""
    device = processes.device
    amp_dtype, precisions = _precisions(cfg, device)
    settings = execution.execution_settings(device, processes.world_size, precisions)
    seed_everything(cfg.seed)   # the same seed on every process (what must agree is broadcast)

    # ---- data, then the model, loss and optimiser (fresh, or as last/ left them)
    corpus, dev_pairs = data.corpus, dev_sample(data.dev_pairs, cfg.dev_max_pairs)
    probe_set = stsb_probe_set(data.dev_pairs, cfg.probe_sentences) if cfg.probe_every else None
    per_epoch = batches_per_epoch(len(corpus), cfg.batch_size, cfg.drop_last)
    total_steps = cfg.max_steps or cfg.epochs * per_epoch
    t = build_training(cfg, run, resuming, corpus, total_steps, amp_dtype, processes)
    if resuming:
        resume_from_checkpoint(t, run, processes, precisions, settings)
    state, main = t.state, processes.is_main
    reporter = RunReporter(run.path, run.metrics_file, cfg.report_to if main else (),
                           resume_step=state.step)   # the other processes never call log()
    logger.info("%s %s: %d steps of %d sentences (%d per epoch), device %s", "resuming" if resuming else "training",
                run.path, total_steps, cfg.batch_size, per_epoch, device)

    # ---- the loop
    bar = progress_bar(total=total_steps, initial=state.step, desc="training", unit="step",
                       enabled=progress and main, mininterval=1.0)
    started = time.perf_counter() - state.train_seconds
    if state.step == 0 and main:   # the model before training: the first frame of every snapshot series and
        if cfg.snapshot_every:     # the first point of every probe trajectory and dev curve (eval mode, no RNG drawn)
            save_snapshot(run, t.encoder, 0)
        if probe_set is not None:
            reporter.log(probe_record(t.encoder, probe_set, 0, cfg.eval_batch_size))
        reporter.log(start_record(t, cfg, dev_pairs))   # a reference: not a candidate for best/
    for b, sentences in _batches(corpus, cfg, state, total_steps):
        log_now = (state.step + 1) % cfg.log_every == 0 or state.step == 0 or state.step + 1 == total_steps
        log_grad_norm = cfg.log_embedding_grad_norm and log_now  # ∂L/∂z of both views (MixCSE's dynamics)
        step = training_loss(t.model, t.encoder, t.loss_fn, processes.local_slice(sentences), step=state.step,
                             max_len=cfg.max_len, amp_dtype=amp_dtype, processes=processes,
                             compute_stats=log_now, mini_batch_size=cfg.mini_batch_size,
                             retain_embedding_grad=log_grad_norm)
        check_loss(step.result.loss, step.result.parts, state.step + 1, run.last_dir, t.checkpoint_step)
        grad_norms = _update(t, step, cfg.max_grad_norm, processes.world_size, log_grad_norm)
        state.step += 1
        state.batch_in_epoch = b + 1
        state.train_seconds = time.perf_counter() - started

        record = None
        if log_now and main:
            record = _train_record(t, step.result, grad_norms)
            reporter.log(record)
            bar.set_postfix(loss=f"{record['loss']:.4f}", dev=f"{state.best_stsb_dev:.2f}", refresh=False)
        if probe_set is not None and state.step % cfg.probe_every == 0 and main:
            reporter.log(probe_record(t.encoder, probe_set, state.step, cfg.eval_batch_size))
        if cfg.snapshot_every and state.step % cfg.snapshot_every == 0 and main:
            save_snapshot(run, t.encoder, state.step)
        if state.step % cfg.eval_every == 0 or state.step == total_steps:
            eval_record = evaluate_dev(t, cfg, run, dev_pairs, data.heldout, processes)
            if main:
                reporter.log(eval_record)
            bar.set_postfix(loss=f"{step.result.loss.item():.4f}", dev=f"{eval_record['stsb_dev']:.2f}",
                            refresh=False)
            save_checkpoint(t, run, processes, precisions, settings)
        bar.update(1)
        for callback in callbacks:
            callback(state, record)
    bar.close()
    reporter.close()
    processes.close()
    if main:
        _write_results(cfg, run, state, data_dir, total_steps, len(dev_pairs), bool(data.heldout), precisions,
                       settings, processes.world_size, device)


def _precisions(cfg: TrainConfig, device: torch.device) -> tuple[torch.dtype | None, dict[str, str]]:
    """The training autocast dtype and both resolved precisions by name (written to the checkpoint:
    ``auto`` may resolve otherwise on another machine, and a resumed run must match)."""
    amp_dtype = resolve_precision(cfg.precision, device)
    return amp_dtype, {"precision": precision_name(amp_dtype),
                       "eval_precision": precision_name(resolve_precision(cfg.eval_precision, device, evaluation=True))}


def _batches(corpus: list[str], cfg: TrainConfig, state: TrainState,
             total_steps: int) -> Iterator[tuple[int, list[str]]]:
    """``(b, sentences)``: batch ``b`` of ``state.epoch`` from ``state.batch_in_epoch`` on (where a
    resumed run left off), epoch after epoch, until ``total_steps`` steps are done or the run stops
    early (checked after each step, so the epoch of the last step is not advanced past). The caller
    counts ``state.step`` and records ``batch_in_epoch`` after each step."""
    while state.step < total_steps and not state.stopped_early:
        batches = epoch_batches(corpus, cfg.seed, state.epoch, cfg.batch_size, cfg.shuffle, cfg.drop_last,
                                cfg.no_duplicates)
        if not batches:   # every later epoch would be as empty: stop rather than wait for a batch that cannot come
            raise RuntimeError(f"epoch {state.epoch} has no batch of 2 or more sentences (corpus of {len(corpus)} "
                               f"lines, batch_size {cfg.batch_size}, no_duplicates {cfg.no_duplicates}); "
                               "training cannot take a step")
        for b in range(state.batch_in_epoch, len(batches)):
            yield b, [corpus[i] for i in batches[b]]
            if state.step >= total_steps or state.stopped_early:
                return
        state.epoch += 1
        state.batch_in_epoch = 0


def _update(t: Training, step: StepLoss, max_grad_norm: float | None, world_size: int,
            log_grad_norm: bool) -> dict[str, float]:
    """Backward, clipping, AdamW and the schedule for one step; returns the norms of the loss's
    gradients with respect to both views' embeddings when ``log_grad_norm`` (else nothing)."""
    scaler = t.scaler
    # × world size: DDP averages the processes' gradients, each already that of the global loss
    step.backward(lambda loss: scaler.scale(loss * world_size))
    grad_norms = {}
    if log_grad_norm:
        loss_scale = (scaler.get_scale() if scaler.is_enabled() else 1.0) * world_size
        grad_norms = embedding_grad_norms(step.batch.z1, step.batch.z2, loss_scale)
    if max_grad_norm is not None:
        scaler.unscale_(t.optimizer)
        torch.nn.utils.clip_grad_norm_(t.params, max_grad_norm)
    scaler.step(t.optimizer)
    scaler.update()
    t.encoder.weights_changed()   # a fused AdamW leaves the version counters: drop the bf16 evaluation copy
    t.loss_fn.after_optimizer_step()   # e.g. a momentum encoder's EMA, from the updated weights
    t.scheduler.step()
    t.optimizer.zero_grad(set_to_none=True)
    return grad_norms


def _train_record(t: Training, result, grad_norms: dict[str, float]) -> dict:
    """The ``train`` metrics record of the step just taken: learning rate, loss and its parts,
    similarity statistics, embedding-gradient norms."""
    return {"kind": "train", "step": t.state.step, "epoch": t.state.epoch,
            "lr": t.scheduler.get_last_lr()[0], "loss": result.loss.item(),
            **{f"loss/{k}": v.item() for k, v in result.parts.items()},
            **{f"sim/{k}": v for k, v in result.stats.items()}, **grad_norms}


def _write_results(cfg: TrainConfig, run: RunDir, state: TrainState, data_dir: str | None, total_steps: int,
                   dev_pairs: int, heldout: bool, precisions: dict, settings: dict, world_size: int,
                   device: torch.device) -> None:
    """``results.json`` (with the full STS table of best/ when ``final_eval``) and best/'s model card."""
    results = {"steps": state.step, "total_steps": total_steps, "best_step": state.best_step,
               "select_by": cfg.select_by, "best_stsb_dev": state.best_stsb_dev, "stsb_dev_pairs": dev_pairs,
               "stopped_early": state.stopped_early, "train_seconds": state.train_seconds, **precisions,
               "native_bf16": native_bf16(),
               "cpu_capability": torch.backends.cpu.get_cpu_capability(), "world_size": world_size, "mini_batch_size": cfg.mini_batch_size,
               execution.KEY: settings}
    if heldout:
        results["best_heldout_infonce"] = -state.best_score
    if cfg.final_eval and run.best_dir.is_dir():
        best = SentenceEncoder.from_pretrained(run.best_dir).to(device)
        best.eval_precision = cfg.eval_precision
        sts = evaluate_sts(best, data_dir=data_dir, batch_size=cfg.eval_batch_size)
        results["sts"] = {"scores": sts["scores"], "avg": sts["avg"], "details": sts["details"]}
    atomic_write_json(run.results_file, results)
    if run.best_dir.is_dir():
        write_model_card(run.best_dir, run_facts(run.path))   # now with the STS table
    logger.info("finished %s: best/ by %s at step %d (STS-B dev %.2f)%s", run.path, cfg.select_by, state.best_step,
                state.best_stsb_dev,
                f"; STS avg {results['sts']['avg']:.2f}" if "sts" in results else "")
