"""ESimCSE: word-repetition positives and a momentum-encoder queue of negatives (``method: esimcse``).

Wu, Gao, Zang, Han, Wang & Hu, "ESimCSE: Enhanced Sample Building Method for Contrastive Learning
of Unsupervised Sentence Embedding", COLING 2022 (arXiv 2109.04380). Two changes to SimCSE, one on
each side of the loss:

* **word repetition** (Sec. 3.1) — the positive is the sentence with some subwords doubled, so that
  the two views of a pair differ in length. For the subword sequence x_1 … x_N of a sentence
  (special tokens excluded),

      dup_len ∈ [0, max(2, int(dup_rate · N))]        drawn uniformly (an integer, ends included)
      dup_set = uniform(range = [1, N], num = dup_len) drawn without replacement

  and every x_i in dup_set is followed by a copy of itself (``dup_rate``; BERT-base 0.32). Done
  in :meth:`ESimCSE.build_views` on view 2; view 1 is the sentence as it is.
* **momentum contrast** (Sec. 3.2) — a queue of the last M (``queue_size``) sentence embeddings,
  encoded by a momentum copy of the encoder θ_m ← λ·θ_m + (1 − λ)·θ_e (``momentum`` λ = 0.995)
  with dropout off, joins every anchor's denominator:

      ℓ_i = −log  e^{sim(h_i, h_i⁺)/τ} / ( Σ_j e^{sim(h_i, h_j⁺)/τ} + Σ_{m=1}^{M} e^{sim(h_i, h_m⁺)/τ} )

  (the ESimCSE loss, Sec. 3.2). The queue holds the momentum embeddings of earlier batches' input
  sentences (view 1), the oldest dropped first; this step's are enqueued after its loss, so a
  sentence is never its own queued negative. The momentum encoder is updated after each optimizer
  step (``after_optimizer_step``), which gives the same weights as the released code's update at
  the start of the next forward pass.

Equation numbers: the paper's displayed equations (dup_len, dup_set, the momentum update, the loss)
are cited by section (3.1, 3.2), not by number: its full text could not be reached when this was
written (only the title page and abstract of arXiv 2109.04380), and a guessed number would be worse
than none.

Paper defaults for BERT-base: dup_rate 0.32, M = 160 (2.5 × batch 64), λ = 0.995, τ 0.05, lr 3e-5.
Where the released code (caskcsg/sentemb, ESimCSE/) differs, an option reproduces it (see
docs/methods/esimcse.md and docs/differences.md): ``repetition: official`` and
``momentum_head: online``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..distributed import all_gather, is_distributed
from ..encoder.batching import pad_rows
from ..encoder.pooling import rewrites_inputs
from ..losses.base import Component, ContrastiveBatch, Contribution, NegativeBlock
from ..losses.infonce import cosine_matrix
from ..losses.momentum import MomentumEncoder
from ..losses.queue import EmbeddingQueue, check_queue_size
from ..utils import autocast
from .registry import register_method

REPETITION_RULES = ("paper", "official")
MOMENTUM_HEADS = ("momentum", "online")
OFFICIAL_MAX_REPEATS = 10   # the released code never repeats more than 10 subwords (randrange(min(10, …)))


@dataclass
class ESimCSEParams:
    """ESimCSE hyper-parameters (``esimcse:`` section). Defaults: the paper's BERT-base settings.

    dup_rate: the maximal repetition rate (paper: 0.32 for BERT-base, 0.30 RoBERTa-base).
    queue_size: M, momentum-encoded negatives kept (paper: 160 for batch 64); 0 switches momentum
        contrast off (word repetition alone, the paper's ablation).
    momentum: λ of the momentum encoder's update (paper: 0.995).
    repeat: false switches word repetition off (momentum contrast alone, the paper's ablation).
    repetition: ``paper`` — dup_len uniform on [0, max(2, int(dup_rate·N))], N the sentence's
        subwords; ``official`` — the released code's rule (see :func:`repetition_bounds`).
    momentum_head: ``momentum`` — the whole encoder (backbone, pooler, MLP head) is averaged;
        ``online`` — the released code: only the backbone is a momentum copy, the MLP head is the
        online one (its ``momentum_model`` is a bare BertModel).
    """

    dup_rate: float = 0.32
    queue_size: int = 160
    momentum: float = 0.995
    repeat: bool = True
    repetition: str = "paper"
    momentum_head: str = "momentum"

    def __post_init__(self):
        if not 0.0 <= self.dup_rate <= 1.0:
            raise ValueError(f"dup_rate must be in [0, 1], got {self.dup_rate}")
        if self.queue_size < 0:
            raise ValueError(f"queue_size must be >= 0 (0: no momentum contrast), got {self.queue_size}")
        check_queue_size(self.queue_size)
        if self.queue_size == 0 and not self.repeat:
            raise ValueError("queue_size: 0 with repeat: false switches off both of ESimCSE's changes, which trains "
                             "plain SimCSE under ESimCSE's name; keep one of them, or use method: simcse")
        if not 0.0 <= self.momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1], got {self.momentum}")
        if self.repetition not in REPETITION_RULES:
            raise ValueError(f"repetition must be one of {REPETITION_RULES}, got {self.repetition!r}")
        if self.momentum_head not in MOMENTUM_HEADS:
            raise ValueError(f"momentum_head must be one of {MOMENTUM_HEADS}, got {self.momentum_head!r}")


# --------------------------------------------------------------------------- word repetition
def repetition_bounds(n_subwords: int, dup_rate: float, rule: str = "paper") -> tuple[int, int]:
    """``(low, high)``, both included: the range dup_len is drawn from uniformly, for a sentence of
    ``n_subwords`` subwords (special tokens excluded).

    * ``paper`` (Sec. 3.1): [0, max(2, int(dup_rate·N))], never more than the N subwords there are;
    * ``official``: ``random.randrange(min(10, int(dup_rate·L)))`` with L = N + 2 the length with
      [CLS] and [SEP], so [0, min(10, int(dup_rate·L)) − 1]; no repetition when int(dup_rate·L) = 0.
    """
    if rule == "paper":
        return 0, min(n_subwords, max(2, int(dup_rate * n_subwords)))
    limit = min(OFFICIAL_MAX_REPEATS, int(dup_rate * (n_subwords + 2)))
    return 0, max(0, limit - 1)


def draw_repeated_positions(n_subwords: int, dup_rate: float, rule: str = "paper",
                            generator: torch.Generator | None = None) -> list[int]:
    """dup_set: the (sorted) indices, among the sentence's N subwords, that are doubled: dup_len
    drawn uniformly from :func:`repetition_bounds`, then dup_len distinct indices uniformly."""
    low, high = repetition_bounds(n_subwords, dup_rate, rule)
    dup_len = int(torch.randint(low, high + 1, (), generator=generator))
    return sorted(torch.randperm(n_subwords, generator=generator)[:dup_len].tolist())


def repeat_tokens(ids: list[int], positions: list[int] | set[int]) -> list[int]:
    """``ids`` with every entry at ``positions`` followed by a copy of itself:
    ``repeat_tokens([a, b, c], {0, 2}) == [a, a, b, c, c]``."""
    chosen = set(positions)
    out = []
    for i, token in enumerate(ids):
        out.append(token)
        if i in chosen:
            out.append(token)
    return out


def word_repetition(input_ids: torch.Tensor, attention_mask: torch.Tensor, special_ids: set[int], dup_rate: float,
                    rule: str = "paper", generator: torch.Generator | None = None) -> list[list[int]]:
    """Each row's real tokens with some subwords doubled (special tokens never are): one list of
    ids per row, unpadded."""
    rows = []
    for ids, mask in zip(input_ids.tolist(), attention_mask.tolist()):
        ids = [t for t, m in zip(ids, mask) if m]
        subwords = [i for i, t in enumerate(ids) if t not in special_ids]
        chosen = draw_repeated_positions(len(subwords), dup_rate, rule, generator)
        rows.append(repeat_tokens(ids, {subwords[k] for k in chosen}))
    return rows


# --------------------------------------------------------------------------- component
@register_method("esimcse", ESimCSEParams,
                 "ESimCSE: word-repetition positives, momentum-encoder queue of negatives")
class ESimCSE(Component):
    """Word repetition on view 2 (:meth:`build_views`) and the momentum-encoded queue as one extra
    negative block of the view-1 anchors (:meth:`contribute`).

    Statistics: ``queue_fill`` (fraction of the M slots holding embeddings), ``queue_cos`` (mean
    cosine of anchors and queued negatives), ``extra_tokens`` (mean subwords added per positive).

    Example::

        loss_fn = ContrastiveLoss(0.05, [ESimCSE(ESimCSEParams())]); loss_fn.setup(encoder)
        inputs = loss_fn.training_inputs(encoder, sentences, 32)   # view 2 repeated
    """

    display_name = "ESimCSE"
    # Equation numbers: not given. Only the paper's title page and abstract could be reached (arXiv
    # 2109.04380, its arXiv-vanity and paperswithcode pages; none of the project's paper copies), so its
    # displayed equations are cited by the section that holds them, not by a number we would guess.
    citation = ('Wu, Gao, Zang, Han, Wang & Hu, "ESimCSE: Enhanced Sample Building Method for Contrastive '
                'Learning of Unsupervised Sentence Embedding", COLING 2022 (arXiv 2109.04380), Sec. 3.1 '
                '(word repetition), Sec. 3.2 (momentum update and loss); equation numbers not checked')
    color_slot = 7
    cost_factor = 0.05        # longer positives (≈ +dup_rate/2 tokens) and M extra logits; plus the momentum pass
    momentum_encoder = True
    stat_labels = {"queue_fill": "queue fill", "queue_cos": "momentum-queue negatives",
                   "extra_tokens": "repeated subwords per positive"}
    stat_kinds = {"queue_cos": "queue negative"}
    key_labels = {"dup_rate": "repetition rate", "queue_size": "queue size M", "momentum": "momentum λ"}

    @classmethod
    def check_config(cls, params: ESimCSEParams, *, batch_size: int, pooler: str) -> None:
        if 0 < params.queue_size < batch_size:
            raise ValueError(f"esimcse.queue_size={params.queue_size} is smaller than batch_size={batch_size}: "
                             "the queue must hold at least one batch (or 0: no momentum contrast)")
        if params.repeat and rewrites_inputs(pooler):   # found at load time, not after the step-0 evaluation
            raise ValueError(f"word repetition (repeat: true) doubles subwords of plain token rows, and pooler "
                             f"{pooler!r} rewrites its input rows itself; use another pooler or repeat: false")

    def __init__(self, params: ESimCSEParams | None = None, generator: torch.Generator | None = None):
        super().__init__()
        self.params = params if params is not None else ESimCSEParams()
        # None: the global CPU stream, which the trainer checkpoints, so a resumed run repeats the same subwords
        self.__dict__["generator"] = generator
        self.__dict__["extra_tokens"] = 0.0

    def setup(self, encoder, corpus=None) -> None:
        super().setup(encoder, corpus)
        if self.params.queue_size:
            # Created here, from the encoder it is given; on resume the trainer loads the saved
            # momentum weights and queue over them right after setup.
            online_head = self.params.momentum_head == "online"
            # The backbone's own pooler (BERT's pooler.dense) is read by no cselab pooler; a saved
            # last/ holds SimCSE's head there (encoder/export.py), so a resumed online encoder has other
            # weights in it than an uninterrupted one. Averaging them in would make the resumed
            # momentum copy's saved state differ (by up to 1e-2) while nothing it computes does.
            self.momentum = MomentumEncoder(encoder, self.params.momentum,
                                            follow_online=(lambda name: name.startswith("head.")) if online_head
                                            else None,
                                            unused=lambda name: name.startswith("backbone.pooler."))
            self.queue = EmbeddingQueue(self.params.queue_size, encoder.embedding_dim()).to(encoder.device)

    # hook 1: the views
    def build_views(self, inputs: dict, n: int) -> dict:
        if not self.params.repeat:
            return inputs
        if not hasattr(self, "encoder"):
            raise RuntimeError("esimcse: call setup(encoder) before building views (it needs the tokenizer)")
        unknown = set(inputs) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise ValueError(f"esimcse repeats plain token rows; this pooler's inputs also carry {sorted(unknown)}")
        tokenizer = self.encoder.tokenizer
        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        repeated = word_repetition(ids[n:], mask[n:], set(tokenizer.all_special_ids), self.params.dup_rate,
                                   self.params.repetition, self.generator)
        originals = [[t for t, m in zip(r, k) if m] for r, k in zip(ids[:n].tolist(), mask[:n].tolist())]
        self.__dict__["extra_tokens"] = sum(len(r) - len(o) for r, o in zip(repeated, originals)) / max(n, 1)
        padded = pad_rows(originals + repeated, tokenizer.pad_token_id)
        return {**padded, "token_type_ids": torch.zeros_like(padded["input_ids"])}

    # hook 3: the loss's extra negatives
    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        stats: dict = {"extra_tokens": self.extra_tokens} if self.params.repeat else {}
        if not self.params.queue_size:
            return Contribution(stats=stats)
        if not hasattr(self, "queue"):
            raise RuntimeError("esimcse: call setup(encoder) before training (it creates the momentum encoder)")
        if batch.inputs is None:
            raise ValueError("esimcse needs the step's tokenised inputs (batch.inputs) for its momentum encoder")
        # A copy: the push below rewrites the buffer that the block's graph would otherwise hold.
        queued = self.queue.filled().clone()
        negatives = []
        if len(queued):
            block = cosine_matrix(batch.anchors(1), queued) / temperature
            negatives.append(NegativeBlock(block, "momentum_queue", direction="forward"))
            stats["queue_cos"] = block.detach().mean() * temperature
        self.queue.push(self._momentum_keys(batch))   # after the loss: this step's sentences are not its negatives
        stats["queue_fill"] = self.queue.fill
        return Contribution(negatives=negatives, stats=stats)

    def _momentum_keys(self, batch: ContrastiveBatch) -> torch.Tensor:
        """The momentum encoder's embeddings (dropout off, no graph) of this step's input sentences
        (view 1 rows), from every process in a multi-process run, in process order."""
        rows = batch.inputs["input_ids"].shape[0] // 2
        view1 = {k: v[:rows] for k, v in batch.inputs.items()}
        with torch.no_grad(), autocast(self.queue.entries.device, batch.amp_dtype):
            keys = self.momentum(view1).embeddings.float()
        return torch.cat(all_gather(keys)) if is_distributed() else keys

    # hook 5: after the optimizer step
    def after_optimizer_step(self) -> None:
        if self.params.queue_size:
            self.momentum.update()


__all__ = ["ESimCSE", "ESimCSEParams", "draw_repeated_positions", "repeat_tokens", "repetition_bounds",
           "word_repetition"]
