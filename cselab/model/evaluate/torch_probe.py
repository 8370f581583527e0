"""SentEval's PyTorch logistic regression, the classifier SimCSE and the four papers ran for the
transfer tables (SentEval ``tools/classifier.py``, ``PyTorchClassifier`` with ``nhid: 0``; written
here from its procedure, not copied).

One fit: a linear layer (PyTorch's default initialisation from ``torch.manual_seed(seed)``), the
cross-entropy averaged over the mini-batch, the optimiser with its default learning
rate and ``weight_decay`` = the L2 strength, minibatches of ``batch_size`` in a fresh permutation
every pass. After every ``epoch_size`` passes the accuracy on the validation data is measured; the
best model so far is kept; training stops once the accuracy has not improved at ``tenacity``
checks in a row (or after 200 passes), and the best model is restored. The validation data are
given (SentEval's inner folds: the fold being scored; SST-2: dev) or the first 5 % of a seeded
permutation of the training data (the final refits).

SimCSE's settings: ``--mode test`` = 10 folds, Adam, batch 64, tenacity 5, epoch size 4;
``fasttest`` = 5 folds, RMSprop, batch 128, tenacity 3, epoch size 2. The L2 grid is SentEval's
PyTorch one, 10⁻⁵ … 10⁻², for every task.

The mean, not the sum: SentEval writes ``loss_fn.size_average = False`` *after* building
``nn.CrossEntropyLoss()``, and since PyTorch 0.4.1 the reduction is fixed when the loss is built
(``reduction='mean'``), so that line changes nothing — on SimCSE's PyTorch 1.7.1 as on today's. With
Adam/RMSprop the sum would make the data gradient ``batch_size`` times larger beside the same
weight decay, i.e. a 64–128× weaker L2 at every grid point (checked: SentEval's own classes on CPU
and this probe choose the same weight decay and give the same accuracies fit by fit only with the mean).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

L2_GRID = tuple(10.0 ** t for t in range(-5, -1))
MAX_EPOCH = 200
VALIDATION_SPLIT = 0.05


@dataclass(frozen=True)
class TorchSettings:
    optim: str
    batch_size: int
    tenacity: int
    epoch_size: int


FULL = TorchSettings("adam", 64, 5, 4)       # SimCSE --mode test
FAST = TorchSettings("rmsprop", 128, 3, 2)   # SimCSE --mode fasttest


class TorchLogReg:
    def __init__(self, dim: int, n_classes: int, l2reg: float, settings: TorchSettings, seed: int = 1111):
        self.settings = settings
        self.rng = np.random.RandomState(seed)   # SentEval seeds numpy's global stream here
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model = nn.Linear(dim, n_classes)
        optimiser = {"adam": torch.optim.Adam, "rmsprop": torch.optim.RMSprop}[settings.optim]
        self.optimizer = optimiser(self.model.parameters(), weight_decay=l2reg)   # default learning rates
        self.loss = nn.CrossEntropyLoss()   # mean over the batch: what SentEval's loss computes (module docstring)
        self.passes = 0
        self.steps = 0

    def _split(self, x, y, validation):
        if validation is not None:
            return x, y, validation[0], validation[1]
        order = self.rng.permutation(len(x))
        n_dev = int(VALIDATION_SPLIT * len(x))
        return x[order[n_dev:]], y[order[n_dev:]], x[order[:n_dev]], y[order[:n_dev]]

    def fit(self, x: np.ndarray, y: np.ndarray, validation: tuple | None = None) -> float:
        """Train with early stopping on ``validation`` (``(x, y)``; None: 5 % of the training
        data); returns the best validation accuracy (a fraction)."""
        x_tr, y_tr, x_dev, y_dev = self._split(x, y, validation)
        x_tr, y_tr = torch.as_tensor(x_tr, dtype=torch.float32), torch.as_tensor(y_tr, dtype=torch.long)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)   # one small linear layer: more threads only add overhead (and on a busy machine, a lot)
        try:
            return self._fit(x_tr, y_tr, x_dev, y_dev)
        finally:
            torch.set_num_threads(threads)

    def _fit(self, x_tr, y_tr, x_dev, y_dev) -> float:
        best, best_state, misses = -1.0, None, 0
        while self.passes <= MAX_EPOCH:
            self._train(x_tr, y_tr)
            accuracy = self.score(x_dev, y_dev)
            if accuracy > best:
                best, best_state = accuracy, copy.deepcopy(self.model.state_dict())
            else:
                if misses >= self.settings.tenacity:
                    break
                misses += 1
        self.model.load_state_dict(best_state)
        return best

    def _train(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.model.train()
        for _ in range(self.settings.epoch_size):
            order = torch.as_tensor(self.rng.permutation(len(x)))
            for start in range(0, len(x), self.settings.batch_size):
                rows = order[start:start + self.settings.batch_size]
                loss = self.loss(self.model(x[rows]), y[rows])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.steps += 1
        self.passes += self.settings.epoch_size

    @torch.no_grad()
    def predict(self, x: np.ndarray) -> np.ndarray:
        self.model.eval()
        return self.model(torch.as_tensor(x, dtype=torch.float32)).argmax(1).numpy()

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(x) == np.asarray(y)))
