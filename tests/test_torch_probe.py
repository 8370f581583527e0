"""SentEval's PyTorch logistic regression (cselab.model.evaluate.torch_probe) and the transfer protocol with it."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from cselab.model.evaluate.torch_probe import FAST, FULL, L2_GRID, TorchLogReg, TorchSettings
from cselab.model.evaluate.transfer import Probe, inner_kfold_accuracy, split_accuracy


def separable(n: int = 40, seed: int = 0):
    """Two classes on either side of x₀ = 0, margin 1: any reasonable linear probe gets 100 %."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 2
    x = rng.normal(size=(n, 3)).astype(np.float32)
    x[:, 0] = np.where(y == 1, 1.0 + np.abs(x[:, 0]), -1.0 - np.abs(x[:, 0]))
    return x, y


@pytest.mark.parametrize("settings, passes", [(FULL, 4 * (5 + 2)), (FAST, 2 * (3 + 2))])
def test_early_stopping_counts_as_senteval(settings, passes):
    # The validation set is one point the model gets right at the first check (or never): the best
    # accuracy is reached at check 1 and never beaten, so training stops at the check where
    # tenacity misses have been counted: 1 + (tenacity + 1) checks of epoch_size passes each.
    x, y = separable()
    clf = TorchLogReg(3, 2, 1e-5, settings, seed=1111)
    best = clf.fit(x, y, validation=(x[:1], y[:1]))
    assert best in (0.0, 1.0) and clf.passes == passes
    batches = -(-len(x) // settings.batch_size)   # ceil: 40 sentences are one batch of 64 or 128
    assert clf.steps == passes * batches


def test_fit_restores_the_best_model_and_is_seeded():
    x, y = separable(1000)
    a, b = TorchLogReg(3, 2, 1e-4, FAST, seed=1111), TorchLogReg(3, 2, 1e-4, FAST, seed=1111)
    assert a.fit(x, y) == b.fit(x, y)   # same seed: same split, same passes, same weights
    assert np.array_equal(a.predict(x), b.predict(x))
    assert a.score(x, y) == 1.0
    # validation_split: SentEval holds out int(0.05 n) = 50 of the 1000 training points
    c = TorchLogReg(3, 2, 1e-4, FULL, seed=1111)
    x_tr, _, x_dev, _ = c._split(x, y, None)
    assert (len(x_tr), len(x_dev)) == (950, 50)


def test_the_protocols_with_the_pytorch_probe():
    x, y = separable(2000)
    out = inner_kfold_accuracy(x, y, kfold=2, probe=Probe("pytorch", fast=True))
    assert L2_GRID == (1e-5, 1e-4, 1e-3, 1e-2) and all(c in L2_GRID for c in out["C"]) and len(out["C"]) == 2
    assert out["acc"] >= 99.0 and len(out["fold_acc"]) == 2
    out = split_accuracy(x[:1200], y[:1200], x[1200:1500], y[1200:1500], x[1500:], y[1500:], probe=Probe("pytorch"))
    assert out["acc"] >= 99.0 and out["devacc"] >= 99.0 and out["C"] in L2_GRID


def test_the_loss_is_the_batch_mean_like_sentevals():
    # SentEval builds nn.CrossEntropyLoss() and then sets loss_fn.size_average = False, an
    # attribute PyTorch ignores since 0.4.1 (the reduction is fixed at construction): its loss is
    # the batch mean. All-zero logits cost ln 2 per sample: mean ln 2, not the sum 10 ln 2.
    sentevals = nn.CrossEntropyLoss()
    sentevals.size_average = False
    logits, y = torch.zeros(10, 2), torch.tensor([0, 1] * 5)
    assert sentevals(logits, y).item() == pytest.approx(math.log(2))
    clf = TorchLogReg(1, 2, 0.0, FAST)
    assert clf.loss(logits, y).item() == pytest.approx(math.log(2))

    # One step on x = (1, 3), y = (0, 1) from a zero model (p = ½ everywhere): the weight gradient
    # is the mean of (p_c − [y = c])·x: class 0: ((½−1)·1 + ½·3)/2 = ½, class 1: −½ (the sum: ±1).
    clf = TorchLogReg(1, 2, 0.0, TorchSettings("rmsprop", 128, 3, 1))
    with torch.no_grad():
        clf.model.weight.zero_()
        clf.model.bias.zero_()
    clf._train(torch.tensor([[1.0], [3.0]]), torch.tensor([0, 1]))
    assert clf.steps == 1
    assert np.allclose(clf.model.weight.grad.numpy(), [[0.5], [-0.5]])
    assert np.allclose(clf.model.bias.grad.numpy(), [0.0, 0.0])
