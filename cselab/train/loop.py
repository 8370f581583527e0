"""The training loop, readable top to bottom.

One step: take B sentences → tokenise them as 2B rows (two dropout views) → one forward pass →
the InfoNCE core plus the method's components → backward, clip, AdamW, linear schedule. Every
``log_every`` steps a record with the loss parts and similarity statistics goes to
``metrics.jsonl``; every ``eval_every`` steps STS-B dev is scored (the evaluation pooler path),
the best model is kept in ``best/`` and a full checkpoint in ``last/``.

The step itself (plain, or gradient-cached in chunks with ``mini_batch_size``) is
:func:`cselab.train.step.training_loss`; multi-process runs under ``torchrun`` (each process its
slice of the global batch, the loss over the gathered batch, process 0 writing) are
:mod:`cselab.train.ddp`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import torch
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup

from ..config import TrainConfig, load_config
from ..encoder import SentenceEncoder
from ..encoder.model_card import write_model_card
from ..export import run_facts
from ..evaluate.sts import evaluate_pairs, evaluate_sts
from ..io import atomic_write_json, ensure_folder, remove_dir, replace_dir, staged_dir
from ..methods import build_loss
from ..progress import progress_bar
from ..rundir import RunDir, load_state, save_state
from ..utils import native_bf16, precision_name, resolve_precision, rng_state, seed_everything, set_rng_state
from . import ddp, execution
from .batches import batches_per_epoch, epoch_batches, epoch_order  # noqa: F401 (epoch_order: API)
from .guards import (NonFiniteLossError, TrainingData, check_dev_score, check_weights, checkpoint_tensors,
                     dev_sample, load_training_data, stop_message)
from .probes import embedding_grad_norms, probe_record, stsb_probe_set
from .reporting import RunReporter
from .selection import heldout_infonce, selection_score
from .step import training_loss

logger = logging.getLogger(__name__)


@dataclass
class TrainState:
    step: int = 0                 # optimizer steps done
    epoch: int = 0
    batch_in_epoch: int = 0       # batches of ``epoch`` already consumed
    best_score: float = -math.inf  # the select_by score of best/ (higher is better)
    best_step: int = -1
    best_stsb_dev: float | None = None   # STS-B dev of best/ (None in checkpoints older than select_by)
    evals_without_improvement: int = 0
    stopped_early: bool = False
    train_seconds: float = 0.0

    def __post_init__(self):
        if self.best_stsb_dev is None:   # before select_by, best/ was always chosen on STS-B dev
            self.best_stsb_dev = self.best_score


def trainable_parameters(*modules: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Every trainable parameter once, in a stable order (a component may hold encoder parts)."""
    seen, params = set(), []
    for module in modules:
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    return params


def adamw(params: list[torch.nn.Parameter], cfg: TrainConfig, device: torch.device) -> torch.optim.AdamW:
    """AdamW with the config's settings; fused into one kernel per step on CPU and CUDA (the
    per-tensor loop was a quarter of a CPU training step of MiniLM: its 30k-row embedding table is
    half the parameters and gets a dense gradient every step)."""
    return torch.optim.AdamW(params, lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=cfg.adam_epsilon,
                             weight_decay=cfg.weight_decay, fused=device.type in ("cpu", "cuda"))


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
    processes = ddp.setup(cfg.device)   # torchrun's process group, or this process alone
    processes.check_config(cfg)
    final = RunDir.for_config(cfg)
    if processes.is_main:
        ensure_folder(cfg.output_dir, "output_dir")   # a file there is one line, not an errno
    # Process 0 owns the run directory (lock, recovery, staging); the others only train.
    with final.locked() if processes.is_main else contextlib.nullcontext():
        if processes.is_main:
            final.recover_overwrite()
        data = load_training_data(cfg, data_dir)
        replacing = bool(processes.run_on_main(lambda: overwrite and final.has_content()))
        run = final.overwrite_staging() if replacing else final
        resuming = bool(processes.run_on_main(lambda: run.prepare(cfg, resume=resume, overwrite=overwrite)))
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


def _train_run(cfg: TrainConfig, run: RunDir, resuming: bool, data: TrainingData, data_dir: str | None,
               callbacks: Iterable[Callable[[TrainState, dict | None], None]], progress: bool,
               processes: ddp.Processes) -> None:
    """The training itself, in a prepared (and locked) run directory."""
    device = processes.device
    amp_dtype = resolve_precision(cfg.precision, device)
    precisions = {"precision": precision_name(amp_dtype),
                  "eval_precision": precision_name(resolve_precision(cfg.eval_precision, device, evaluation=True))}
    settings = execution.execution_settings(device, processes.world_size, precisions)
    seed_everything(cfg.seed)   # the same seed on every process (what must agree is broadcast)

    # ---- data
    corpus, dev_pairs = data.corpus, dev_sample(data.dev_pairs, cfg.dev_max_pairs)
    probe_set = stsb_probe_set(data.dev_pairs, cfg.probe_sentences) if cfg.probe_every else None
    per_epoch = batches_per_epoch(len(corpus), cfg.batch_size, cfg.drop_last)
    total_steps = cfg.max_steps or cfg.epochs * per_epoch

    # ---- model, loss, optimiser
    source = run.last_dir if resuming else cfg.model
    encoder = SentenceEncoder.from_pretrained(source, pooler=None if resuming else cfg.pooler,
                                              mlp_only_train=cfg.mlp_only_train, dropout=cfg.dropout,
                                              pooler_options=None if resuming else cfg.pooler_options)
    encoder.backbone_name = cfg.model
    encoder.eval_precision = cfg.eval_precision
    encoder.to(device).train()
    loss_fn = build_loss(cfg).to(device)
    loss_fn.setup(encoder, corpus)
    params = trainable_parameters(encoder, loss_fn)
    optimizer = adamw(params, cfg, device)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup_ratio * total_steps), total_steps)
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    model = processes.wrap(encoder)   # DDP in a torchrun run: gradients averaged over processes

    state = TrainState()
    checkpoint_step: int | None = None  # step of the checkpoint in last/, named in error messages
    if resuming:
        saved = load_state(run.last_dir)
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        scaler.load_state_dict(saved["scaler"])
        loss_fn.load_state_dict(saved["loss"])
        state = TrainState(**saved["train_state"])
        check_resumed_setting(saved, "precision", precisions, run.last_dir)
        check_resumed_setting(saved, "world_size", {"world_size": processes.world_size}, run.last_dir)
        execution.check_resume(saved.get(execution.KEY), settings, run.last_dir)
        set_rng_state(processes.scatter_rng_states(saved["rng_per_process"]) if "rng_per_process" in saved
                      else saved["rng"])
        if processes.is_main:
            run.truncate_metrics(state.step)
        checkpoint_step = state.step
    reporter = RunReporter(run.path, run.metrics_file, cfg.report_to if processes.is_main else (),
                          resume_step=state.step)   # the other processes never call log()
    logger.info("%s %s: %d steps of %d sentences (%d per epoch), device %s", "resuming" if resuming else "training",
                run.path, total_steps, cfg.batch_size, per_epoch, device)

    def save_checkpoint() -> None:
        nonlocal checkpoint_step
        rngs = processes.gather_rng_states(rng_state())   # every process's dropout stream
        checkpoint_step = state.step
        if not processes.is_main:
            return
        with staged_dir(run.last_dir, {"step": state.step}) as tmp:
            encoder.save(tmp, card=run_facts(run.path))
            save_state({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                        "scaler": scaler.state_dict(), "loss": loss_fn.state_dict(),
                        "train_state": dataclasses.asdict(state), "rng": rngs[0], "rng_per_process": rngs,
                        "precision": precisions, "world_size": {"world_size": processes.world_size},
                        execution.KEY: settings}, tmp)

    def save_snapshot() -> None:
        """A model-only folder (no optimizer state) for analyses over training (the explorer)."""
        with staged_dir(run.snapshot_dir(state.step), {"step": state.step}) as tmp:
            encoder.save(tmp, extra={"step": state.step})

    def evaluate_dev() -> dict:
        # Nothing is written from a diverged model: best/ and last/ keep the last good one.
        check_weights(checkpoint_tensors(encoder, loss_fn, optimizer=optimizer), state.step, run.last_dir,
                      checkpoint_step)
        # Process 0 scores; every process applies the same bookkeeping (best, early stopping).
        score = evaluate_pairs(encoder, dev_pairs, batch_size=cfg.eval_batch_size, show_progress_bar=False) \
            if processes.is_main else 0.0
        score = processes.broadcast(score)
        check_dev_score(score, state.step, run.last_dir, checkpoint_step)
        extra = {}   # the select_by score when it is not STS-B dev (cselab.train.selection)
        if data.heldout:
            loss = heldout_infonce(encoder, data.heldout, cfg.batch_size, cfg.temperature, cfg.max_len) \
                if processes.is_main else 0.0
            extra["heldout_infonce"] = processes.broadcast(loss)
        selected = selection_score(cfg.select_by, state.step, score, extra.get("heldout_infonce"))
        improved = selected > state.best_score
        if improved:
            state.best_score, state.best_step, state.evals_without_improvement = selected, state.step, 0
            state.best_stsb_dev = score
            if processes.is_main:
                with staged_dir(run.best_dir, {"step": state.step}) as tmp:
                    encoder.save(tmp, extra={"step": state.step, "stsb_dev": score, "select_by": cfg.select_by,
                                             **extra}, card=run_facts(run.path))
                logger.info("step %d: STS-B dev %.2f%s, the best by %s so far: saved to %s", state.step, score,
                            "".join(f", {k} {v:.4f}" for k, v in extra.items()), cfg.select_by, run.best_dir)
        else:
            state.evals_without_improvement += 1
            patience = cfg.early_stopping_patience
            state.stopped_early = patience is not None and state.evals_without_improvement >= patience
            logger.info("step %d: STS-B dev %.2f%s (best by %s at step %d)%s", state.step, score,
                        "".join(f", {k} {v:.4f}" for k, v in extra.items()), cfg.select_by, state.best_step,
                        "; stopping early" if state.stopped_early else "")
        return {"kind": "eval", "step": state.step, "stsb_dev": score, **extra, "best_stsb_dev": state.best_stsb_dev,
                "improved": improved}

    # ---- the loop
    bar = progress_bar(total=total_steps, initial=state.step, desc="training", unit="step",
                       enabled=progress and processes.is_main, mininterval=1.0)
    started = time.perf_counter() - state.train_seconds
    if cfg.snapshot_every and state.step == 0 and processes.is_main:
        save_snapshot()   # the model before training, the first frame of every snapshot series
    if probe_set is not None and state.step == 0 and processes.is_main:
        # the model before training: the first point of every probe trajectory (eval mode, no RNG drawn)
        reporter.log(probe_record(encoder, probe_set, 0, cfg.eval_batch_size))
    while state.step < total_steps and not state.stopped_early:
        batches = epoch_batches(corpus, cfg.seed, state.epoch, cfg.batch_size, cfg.shuffle, cfg.drop_last,
                                cfg.no_duplicates)
        for b in range(state.batch_in_epoch, len(batches)):
            sentences = [corpus[i] for i in batches[b]]
            log_now = (state.step + 1) % cfg.log_every == 0 or state.step == 0 or state.step + 1 == total_steps
            log_grad_norm = cfg.log_embedding_grad_norm and log_now  # ∂L/∂z of both views (MixCSE's dynamics)
            step = training_loss(model, encoder, loss_fn, processes.local_slice(sentences), step=state.step,
                                 max_len=cfg.max_len, amp_dtype=amp_dtype, processes=processes,
                                 compute_stats=log_now, mini_batch_size=cfg.mini_batch_size,
                                 retain_embedding_grad=log_grad_norm)
            result, batch = step.result, step.batch
            if not torch.isfinite(result.loss):
                parts = {k: round(v.item(), 6) for k, v in result.parts.items()}
                problem = f"the loss is {result.loss.item()} (parts {parts})"
                raise NonFiniteLossError(stop_message(state.step + 1, problem, run.last_dir, checkpoint_step))
            # × world size: DDP averages the processes' gradients, each already that of the global loss
            step.backward(lambda loss: scaler.scale(loss * processes.world_size))
            grad_norms = {}
            if log_grad_norm:
                loss_scale = (scaler.get_scale() if scaler.is_enabled() else 1.0) * processes.world_size
                grad_norms = embedding_grad_norms(batch.z1, batch.z2, loss_scale)
            if cfg.max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            state.step += 1
            state.batch_in_epoch = b + 1
            state.train_seconds = time.perf_counter() - started

            record = None
            if log_now and processes.is_main:
                record = {"kind": "train", "step": state.step, "epoch": state.epoch,
                          "lr": scheduler.get_last_lr()[0], "loss": result.loss.item(),
                          **{f"loss/{k}": v.item() for k, v in result.parts.items()},
                          **{f"sim/{k}": v for k, v in result.stats.items()}, **grad_norms}
                reporter.log(record)
                bar.set_postfix(loss=f"{record['loss']:.4f}", dev=f"{state.best_stsb_dev:.2f}", refresh=False)
            if probe_set is not None and state.step % cfg.probe_every == 0 and processes.is_main:
                reporter.log(probe_record(encoder, probe_set, state.step, cfg.eval_batch_size))
            if cfg.snapshot_every and state.step % cfg.snapshot_every == 0 and processes.is_main:
                save_snapshot()
            if state.step % cfg.eval_every == 0 or state.step == total_steps:
                eval_record = evaluate_dev()
                if processes.is_main:
                    reporter.log(eval_record)
                bar.set_postfix(loss=f"{result.loss.item():.4f}", dev=f"{eval_record['stsb_dev']:.2f}", refresh=False)
                save_checkpoint()
            bar.update(1)
            for callback in callbacks:
                callback(state, record)
            if state.step >= total_steps or state.stopped_early:
                break
        else:
            state.epoch += 1
            state.batch_in_epoch = 0
    bar.close()
    reporter.close()

    # ---- results
    processes.close()
    if not processes.is_main:
        return run.path
    results = {"steps": state.step, "total_steps": total_steps, "best_step": state.best_step,
               "select_by": cfg.select_by, "best_stsb_dev": state.best_stsb_dev, "stsb_dev_pairs": len(dev_pairs),
               "stopped_early": state.stopped_early, "train_seconds": state.train_seconds, **precisions, "native_bf16": native_bf16(),
               "world_size": processes.world_size, "mini_batch_size": cfg.mini_batch_size, execution.KEY: settings}
    if data.heldout:
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


def check_resumed_setting(saved: dict, key: str, now: dict, last_dir: Path) -> None:
    """Resuming is exact only with what the checkpoint was written with: the resolved precisions
    (``precision: auto`` means bf16 on one machine and fp32 on another) and the number of processes
    (each has its own dropout stream). A difference is an error naming both and what to do."""
    before = saved.get(key)
    if before is not None and before != now:
        how = (f"resume it with torchrun --nproc_per_node {before['world_size']}" if key == "world_size" and
               before.get("world_size", 1) > 1 else "resume it in one process" if key == "world_size" else
               "resume it on a machine where the config resolves the same way")
        raise ValueError(f"{last_dir}: the checkpoint was written with {before}, this run would continue with {now}; "
                         f"a resumed run is exact only with the same setting ({how}, or start a new run)")
