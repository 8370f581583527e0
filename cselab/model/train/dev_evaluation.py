"""The evaluation every ``eval_every`` steps: STS-B dev, the ``select_by`` score, ``best/`` and
early stopping; and STS-B dev of the model before its first step (:func:`start_record`).

STS-B dev is scored by the ``sts`` suite of the registry (:mod:`cselab.model.evaluate.suites`: its
``score_pairs``, Spearman ×100 of cosines on the evaluation path), on the run's sample of dev pairs;
it is logged at every evaluation whatever ``select_by`` is. Nothing is written from a diverged
model: non-finite weights or a non-finite score stop the run before ``best/`` or ``last/`` changes.
In a ``torchrun`` run process 0 scores and broadcasts, and every process does the same bookkeeping.
"""
from __future__ import annotations

import logging

from ..config import TrainConfig
from ..data.sts import STSPairs
from ..encoder import SentenceEncoder
from ..evaluate.suites import get_suite
from ..rundir import RunDir
from . import ddp
from .checkpoints import save_best
from .guards import check_dev_score, check_weights, checkpoint_tensors
from .selection import heldout_infonce, selection_score
from .training import Training

logger = logging.getLogger(__name__)

DEV_SUITE = "sts"   # the suite whose score_pairs is training's dev score (STS-B dev, as SimCSE selects on)


def stsb_dev_score(encoder: SentenceEncoder, pairs: STSPairs, batch_size: int) -> float:
    return get_suite(DEV_SUITE).score_pairs(encoder, pairs, batch_size=batch_size, show_progress_bar=False)


def start_record(t: Training, cfg: TrainConfig, dev_pairs: STSPairs) -> dict:
    """The ``eval`` record of step 0: STS-B dev of the model before training (the backbone with the
    run's pooler as initialised), the first point of every dev curve, scored as every later
    evaluation is (the run's dev sample, the evaluation path: no dropout, no random draw). It is a
    reference only: not a candidate for ``best/``, and early stopping does not count it. Process 0
    calls it (nothing is broadcast: no other process needs the number)."""
    score = stsb_dev_score(t.encoder, dev_pairs, cfg.eval_batch_size)
    logger.info("step 0 (before training): STS-B dev %.2f", score)
    return {"kind": "eval", "step": 0, "stsb_dev": score, "before_training": True}


def evaluate_dev(t: Training, cfg: TrainConfig, run: RunDir, dev_pairs: STSPairs, heldout: list[str],
                 processes: ddp.Processes) -> dict:
    """Scores the model at the current step, updates the best/early-stopping counters of ``t.state``
    (and ``best/`` when the ``select_by`` score improved) and returns the ``eval`` metrics record."""
    state = t.state
    check_weights(checkpoint_tensors(t.encoder, t.loss_fn, optimizer=t.optimizer), state.step, run.last_dir,
                  t.checkpoint_step)
    score = stsb_dev_score(t.encoder, dev_pairs, cfg.eval_batch_size) if processes.is_main else 0.0
    score = processes.broadcast(score)
    check_dev_score(score, state.step, run.last_dir, t.checkpoint_step)
    extra = {}   # the select_by score when it is not STS-B dev (cselab.model.train.selection)
    if heldout:
        loss = heldout_infonce(t.encoder, heldout, cfg.batch_size, cfg.temperature, cfg.max_len) \
            if processes.is_main else 0.0
        extra["heldout_infonce"] = processes.broadcast(loss)
    selected = selection_score(cfg.select_by, state.step, score, extra.get("heldout_infonce"))
    improved = selected > state.best_score
    scores = "".join(f", {k} {v:.4f}" for k, v in extra.items())
    if improved:
        state.best_score, state.best_step, state.evals_without_improvement = selected, state.step, 0
        state.best_stsb_dev = score
        if processes.is_main:
            save_best(run, t.encoder, state.step, score, cfg.select_by, extra)
            logger.info("step %d: STS-B dev %.2f%s, the best by %s so far: saved to %s", state.step, score,
                        scores, cfg.select_by, run.best_dir)
    else:
        state.evals_without_improvement += 1
        patience = cfg.early_stopping_patience
        state.stopped_early = patience is not None and state.evals_without_improvement >= patience
        logger.info("step %d: STS-B dev %.2f%s (best by %s at step %d)%s", state.step, score, scores,
                    cfg.select_by, state.best_step, "; stopping early" if state.stopped_early else "")
    return {"kind": "eval", "step": state.step, "stsb_dev": score, **extra, "best_stsb_dev": state.best_stsb_dev,
            "improved": improved}
