"""SentEval's transfer tasks with a logistic-regression classifier on frozen sentence embeddings.

Protocol (SentEval ``senteval/tools/validation.py``, its scikit-learn path):

* MR, CR, SUBJ, MPQA — ``InnerKFoldClassifier``: outer stratified k-fold; in every outer training
  part an inner stratified k-fold picks the L2 strength C ∈ {2⁻², …, 2³}; the classifier refit with
  that C is scored on the outer test fold; the accuracy is the mean over outer folds.
* TREC, MRPC — ``KFoldClassifier``: stratified k-fold on train picks C ∈ {2⁻¹, …, 2⁵}; refit on all
  of train, scored on test. MRPC's features are ``[|u − v|, u ∗ v]`` (SentEval concatenates
  neither u nor v); its F1 is reported too.
* SST-2 — ``SplitClassifier``: C ∈ {2⁻², …, 2³} chosen on dev, scored on test.

Like SentEval, samples are ordered by (number of tokens, label) before the folds are drawn, the
folds use ``StratifiedKFold(shuffle=True, random_state=seed)`` with seed 1111, and the mean fold
scores are rounded to 2 decimals (×100) before the argmax that picks C. Full mode is SimCSE's
``--mode test`` (k = 10), fast mode its ``fasttest`` (k = 5). Differences from SimCSE's numbers —
SimCSE runs SentEval's PyTorch classifier, not scikit-learn's — are listed in docs/evaluation.md.
"""
from __future__ import annotations

import logging
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

from ..data.transfer import TRANSFER_TASKS, LabelledPairs, LabelledSentences, TransferData, load_transfer_task
from ..io import atomic_write_json
from ..progress import progress_bar
from .sts import Encodes
from .torch_probe import FAST, FULL, L2_GRID, TorchLogReg

logger = logging.getLogger(__name__)
Tick = Callable[[], None] | None   # called after every classifier fit (the suite's progress bar)

SEED = 1111                                   # SentEval's default seed
FULL_KFOLD, FAST_KFOLD = 10, 5               # SimCSE's --mode test / fasttest
INNER_KFOLD_CS = tuple(2.0 ** t for t in range(-2, 4))   # InnerKFoldClassifier and SplitClassifier
KFOLD_CS = tuple(2.0 ** t for t in range(-1, 6))         # KFoldClassifier (TREC, MRPC)
MAX_ITER = 1000
# Each fit is small (at most 67k × 768); multi-threaded BLAS on it is slower, and on a busy machine
# much slower (TREC, one C: 1.2 s with one thread, 34 s with two competing for 2 loaded cores).
BLAS_THREADS = 1


PROBES = ("sklearn", "pytorch")   # pytorch: SentEval's PyTorch classifier (cselab.model.evaluate.torch_probe), as SimCSE


@dataclass(frozen=True)
class Probe:
    """The classifier of the protocol: ``sklearn`` (C grids below) or ``pytorch`` (SentEval's
    PyTorch logistic regression with SimCSE's settings; its L2 grid 10⁻⁵ … 10⁻² everywhere)."""
    name: str = "sklearn"
    fast: bool = False

    def grid(self, kind: str) -> Sequence[float]:
        if self.name == "pytorch":
            return L2_GRID
        return KFOLD_CS if kind == "kfold" else INNER_KFOLD_CS


SKLEARN = Probe()


def _classifier(c: float, seed: int) -> LogisticRegression:
    return LogisticRegression(C=c, random_state=seed, max_iter=MAX_ITER)


def _fit_score(x_train, y_train, x_test, y_test, c: float, seed: int, tick: Tick = None, probe: Probe = SKLEARN,
               validation: str | tuple = "scored") -> tuple[float, object]:
    """Fit with hyper-parameter ``c`` (C, or the L2 strength of the PyTorch probe) and score on the
    test part. ``validation`` (PyTorch probe only): early stopping on the scored part itself
    (``"scored"``: SentEval's inner folds and dev selection), on 5 % of the training part
    (``"split"``: the final refits) or on given ``(x, y)``."""
    if probe.name == "pytorch":
        clf = TorchLogReg(x_train.shape[1], int(max(y_train.max(), y_test.max())) + 1, c,
                          FAST if probe.fast else FULL, seed)
        clf.fit(x_train, y_train, (x_test, y_test) if validation == "scored" else
                None if validation == "split" else validation)
    else:
        with warnings.catch_warnings():
            # A fold that stops at MAX_ITER is still a valid (slightly under-fitted) probe; SentEval
            # ran with scikit-learn's 100-iteration default and never looked.
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf = _classifier(c, seed).fit(x_train, y_train)
    if tick is not None:
        tick()
    return float(clf.score(x_test, y_test)), clf


def _cv_score(x, y, c: float, kfold: int, seed: int, tick: Tick = None, probe: Probe = SKLEARN) -> float:
    """Mean validation accuracy (×100, rounded like SentEval) of C over a stratified k-fold."""
    folds = StratifiedKFold(n_splits=kfold, shuffle=True, random_state=seed).split(x, y)
    return round(100 * float(np.mean([_fit_score(x[tr], y[tr], x[te], y[te], c, seed, tick, probe)[0]
                                      for tr, te in folds])), 2)


def _select_c(x, y, cs: Sequence[float], kfold: int, seed: int, tick: Tick = None,
              probe: Probe = SKLEARN) -> tuple[float, float]:
    scores = [_cv_score(x, y, c, kfold, seed, tick, probe) for c in cs]
    best = int(np.argmax(scores))   # first maximum = smallest C (or L2), as SentEval's np.argmax
    return cs[best], scores[best]


def inner_kfold_accuracy(x: np.ndarray, y: np.ndarray, kfold: int = FULL_KFOLD, seed: int = SEED,
                         cs: Sequence[float] | None = None, tick: Tick = None, probe: Probe = SKLEARN) -> dict:
    """SentEval's InnerKFoldClassifier: nested k-fold (C chosen inside every outer training part)."""
    cs = probe.grid("inner") if cs is None else cs
    outer = StratifiedKFold(n_splits=kfold, shuffle=True, random_state=seed)
    dev, test, chosen = [], [], []
    for train_idx, test_idx in outer.split(x, y):
        c, dev_acc = _select_c(x[train_idx], y[train_idx], cs, kfold, seed, tick, probe)
        acc, _ = _fit_score(x[train_idx], y[train_idx], x[test_idx], y[test_idx], c, seed, tick, probe, "split")
        dev.append(dev_acc)
        test.append(round(100 * acc, 2))
        chosen.append(c)
    return {"acc": float(np.mean(test)), "devacc": float(np.mean(dev)), "fold_acc": test, "C": chosen}


def kfold_accuracy(x_train, y_train, x_test, y_test, kfold: int = FULL_KFOLD, seed: int = SEED,
                   cs: Sequence[float] | None = None, tick: Tick = None, probe: Probe = SKLEARN) -> dict:
    """SentEval's KFoldClassifier: C by k-fold on train, refit on train, scored on test."""
    cs = probe.grid("kfold") if cs is None else cs
    c, dev_acc = _select_c(x_train, y_train, cs, kfold, seed, tick, probe)
    acc, clf = _fit_score(x_train, y_train, x_test, y_test, c, seed, tick, probe, "split")
    return {"acc": 100 * acc, "devacc": dev_acc, "C": c, "predictions": clf.predict(x_test)}


def split_accuracy(x_train, y_train, x_dev, y_dev, x_test, y_test, seed: int = SEED,
                   cs: Sequence[float] | None = None, tick: Tick = None, probe: Probe = SKLEARN) -> dict:
    """SentEval's SplitClassifier: C chosen on dev, scored on test."""
    cs = probe.grid("inner") if cs is None else cs
    dev_scores = [round(100 * _fit_score(x_train, y_train, x_dev, y_dev, c, seed, tick, probe)[0], 2) for c in cs]
    best = int(np.argmax(dev_scores))
    acc, _ = _fit_score(x_train, y_train, x_test, y_test, cs[best], seed, tick, probe, (x_dev, y_dev))
    return {"acc": 100 * acc, "devacc": dev_scores[best], "C": cs[best]}


def _n_tokens(s: str) -> int:
    return len(s.split())


def sentevals_order(split: LabelledSentences | LabelledPairs) -> np.ndarray:
    """The order in which SentEval feeds samples to its classifiers: sorted by (tokens, label),
    pairs by (tokens of A, tokens of B, label); Python's stable sort keeps file order on ties."""
    if isinstance(split, LabelledPairs):
        key = lambda i: (_n_tokens(split.sentences1[i]), _n_tokens(split.sentences2[i]), split.labels[i])  # noqa: E731
    else:
        key = lambda i: (_n_tokens(split.sentences[i]), split.labels[i])  # noqa: E731
    return np.array(sorted(range(len(split)), key=key), dtype=np.int64)


def _features(split, vectors: np.ndarray, row: dict[str, int]) -> np.ndarray:
    if isinstance(split, LabelledPairs):
        u = vectors[[row[s] for s in split.sentences1]]
        v = vectors[[row[s] for s in split.sentences2]]
        return np.concatenate([np.abs(u - v), u * v], axis=1)
    return vectors[[row[s] for s in split.sentences]]


def _split_sentences(split) -> list[str]:
    return list(split.sentences1) + list(split.sentences2) if isinstance(split, LabelledPairs) else list(split.sentences)


def protocol_fits(data: TransferData, kfold: int, probe: Probe = SKLEARN) -> int:
    """How many classifiers SentEval's protocol fits for ``data`` (the progress bar's total)."""
    names = set(data.splits)
    if names == {"all"}:
        return kfold * (len(probe.grid("inner")) * kfold + 1)
    if names == {"train", "test"}:
        return len(probe.grid("kfold")) * kfold + 1
    return len(probe.grid("inner")) + 1


def evaluate_transfer_data(model: Encodes, data: TransferData, kfold: int = FULL_KFOLD, seed: int = SEED,
                           batch_size: int = 128, tick: Tick = None, probe: Probe = SKLEARN) -> dict:
    """One task (loaded or built by hand): encode every sentence once, then SentEval's protocol
    for the task's splits. Returns ``acc`` and ``devacc`` (×100), the chosen C, sizes, seconds."""
    start = time.perf_counter()
    sentences = sorted({s for split in data.splits.values() for s in _split_sentences(split)})
    vectors = np.asarray(model.encode(sentences, batch_size=batch_size), dtype=np.float64)
    encoded = time.perf_counter()
    row = {s: i for i, s in enumerate(sentences)}
    prepared = {}
    for name, split in data.splits.items():
        order = sentevals_order(split)
        prepared[name] = (_features(split, vectors, row)[order], split.labels[order])

    with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
        out = _run_protocol(data, prepared, kfold, seed, tick, probe)
    out.update(encode_seconds=encoded - start, seconds=time.perf_counter() - start)
    return out


def _run_protocol(data: TransferData, prepared: dict, kfold: int, seed: int, tick: Tick = None,
                  probe: Probe = SKLEARN) -> dict:
    names = set(data.splits)
    if names == {"all"}:
        x, y = prepared["all"]
        out = inner_kfold_accuracy(x, y, kfold, seed, tick=tick, probe=probe)
        out.update(ndev=len(y), ntest=len(y))
    elif names == {"train", "test"}:
        (x_tr, y_tr), (x_te, y_te) = prepared["train"], prepared["test"]
        out = kfold_accuracy(x_tr, y_tr, x_te, y_te, kfold, seed, tick=tick, probe=probe)
        if data.n_classes == 2:
            out["f1"] = 100 * float(f1_score(y_te, out["predictions"]))
        out.update(ndev=len(y_tr), ntest=len(y_te))
        del out["predictions"]
    elif names == {"train", "dev", "test"}:
        out = split_accuracy(*prepared["train"], *prepared["dev"], *prepared["test"], seed=seed, tick=tick, probe=probe)
        out.update(ndev=len(prepared["dev"][1]), ntest=len(prepared["test"][1]))
    else:
        raise ValueError(f"{data.name}: splits {sorted(names)} match no SentEval protocol "
                         "(expected all | train+test | train+dev+test)")
    return out


def evaluate_transfer(model: Encodes, tasks: Sequence[str] = TRANSFER_TASKS, data_dir: str | os.PathLike | None = None,
                      fast: bool = False, kfold: int | None = None, seed: int = SEED, batch_size: int = 128,
                      output: str | os.PathLike | None = None, show_progress_bar: bool = True,
                      probe: str = "sklearn") -> dict:
    """Accuracy (×100) of a logistic-regression probe on each transfer task, SentEval's protocol.

    ``probe``: ``sklearn`` (scikit-learn's logistic regression, SentEval's sklearn path) or
    ``pytorch`` (SentEval's PyTorch classifier with SimCSE's settings: Adam, batch 64, tenacity 5,
    epoch size 4; with ``fast`` RMSprop, 128, 3, 2 — what the papers' transfer tables used).

    ``fast`` uses k = 5 folds (SimCSE's fasttest) instead of 10; ``kfold`` overrides both.
    ``show_progress_bar``: one bar over every classifier fit of every task (tasks × folds × C
    candidates; ``TQDM_DISABLE`` silences it).
    Returns ``{"scores": {task: acc}, "avg", "details": {task: {...}}, "kfold", "seconds"}``.
    """
    unknown = [t for t in tasks if t not in TRANSFER_TASKS]
    if unknown:
        raise ValueError(f"unknown transfer task(s) {unknown}; choose from {list(TRANSFER_TASKS)}")
    if probe not in PROBES:
        raise ValueError(f"probe must be one of {PROBES}, got {probe!r}")
    chosen = Probe(probe, fast)
    k = kfold if kfold is not None else (FAST_KFOLD if fast else FULL_KFOLD)
    if k < 2:
        raise ValueError(f"kfold must be >= 2, got {k}")
    start = time.perf_counter()
    loaded = {task: load_transfer_task(task, data_dir) for task in tasks}
    details = {}
    with progress_bar(total=sum(protocol_fits(d, k, chosen) for d in loaded.values()), desc="transfer", unit="fit",
                      enabled=show_progress_bar) as bar:
        for task, data in loaded.items():
            bar.set_postfix_str(task)
            details[task] = evaluate_transfer_data(model, data, k, seed, batch_size, tick=lambda: bar.update(1),
                                                   probe=chosen)
            logger.info("transfer %s: accuracy %.2f (%d-fold, %.0f s)", task, details[task]["acc"], k,
                        details[task]["seconds"])
    scores = {task: d["acc"] for task, d in details.items()}
    result = {"scores": scores, "avg": float(np.mean(list(scores.values()))), "kfold": k, "fast": fast, "probe": probe,
              "seed": seed, "details": details, "seconds": time.perf_counter() - start}
    if output is not None:
        atomic_write_json(Path(output), result)
    return result
