"""The hooks a method may use besides ``contribute``: building the views, after the optimizer step,
a momentum (EMA) encoder, and the losses layer's embedding queue. Hand-computed values."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from cselab.model.losses import ContrastiveLoss
from cselab.model.losses.base import Component, Contribution
from cselab.model.losses.momentum import MomentumEncoder
from cselab.model.losses.queue import EmbeddingQueue


class _Tagging(Component):
    """Rewrites view 2's first token to its tag, and counts after-step calls."""

    def __init__(self, name: str, tag: int):
        super().__init__()
        self.tag, self.steps = tag, 0
        self.__dict__["name"] = name   # two instances need two names in one loss

    def build_views(self, inputs, n):
        ids = inputs["input_ids"].clone()
        ids[n:, 0] = ids[n:, 0] * 10 + self.tag
        return {**inputs, "input_ids": ids}

    def after_optimizer_step(self):
        self.steps += 1

    def contribute(self, batch, cos, temperature):
        return Contribution()


class _Encoder:
    def training_inputs(self, sentences, max_length):
        ids = torch.tensor([[len(s)] for s in sentences])
        return {"input_ids": torch.cat([ids, ids]), "attention_mask": torch.ones(2 * len(sentences), 1)}


def test_views_go_through_every_component_in_order_and_after_step_reaches_each():
    first, second = _Tagging("first", 1), _Tagging("second", 2)
    loss_fn = ContrastiveLoss(0.05, [first, second])
    inputs = loss_fn.training_inputs(_Encoder(), ["ab", "abc"], 32)
    # view 1 untouched; view 2: (len·10 + 1)·10 + 2
    assert inputs["input_ids"][:, 0].tolist() == [2, 3, 212, 312]
    loss_fn.after_optimizer_step()
    loss_fn.after_optimizer_step()
    assert (first.steps, second.steps) == (2, 2)


def test_momentum_encoder_ema_by_hand_and_no_gradient():
    online = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        online.weight.copy_(torch.tensor([[1.0, 2.0]]))
    ema = MomentumEncoder(online, 0.9)
    with torch.no_grad():
        online.weight.copy_(torch.tensor([[3.0, -2.0]]))
    ema.update()   # 0.9·[1, 2] + 0.1·[3, −2] = [1.2, 1.6]
    assert ema.copy.weight.flatten().tolist() == pytest.approx([1.2, 1.6])
    ema.update()   # 0.9·[1.2, 1.6] + 0.1·[3, −2] = [1.38, 1.24]
    assert ema.copy.weight.flatten().tolist() == pytest.approx([1.38, 1.24])
    out = ema(torch.tensor([[1.0, 1.0]]))
    assert out.item() == pytest.approx(2.62) and not out.requires_grad
    assert [name for name, _ in ema.named_parameters()] == ["copy.weight"]   # the online encoder is not a submodule
    assert not any(p.requires_grad for p in ema.parameters())


def test_momentum_encoder_followed_parameters_copy_the_online_ones():
    online = nn.Sequential(nn.Linear(1, 1, bias=False), nn.Linear(1, 1, bias=False))
    ema = MomentumEncoder(online, 0.5, follow_online=lambda name: name.startswith("1."))
    with torch.no_grad():
        start = [float(online[0].weight), float(online[1].weight)]
        online[0].weight.add_(2.0)
        online[1].weight.add_(2.0)
    ema.update()
    assert float(ema.copy[0].weight) == pytest.approx(start[0] + 1.0)   # averaged
    assert float(ema.copy[1].weight) == pytest.approx(start[1] + 2.0)   # followed


def test_queue_order_size_and_filled_rows():
    q = EmbeddingQueue(3, 1)
    assert q.filled().shape == (0, 1)
    q.push(torch.tensor([[1.0], [2.0]]))
    assert q.filled().flatten().tolist() == [1.0, 2.0]           # oldest first
    q.push(torch.tensor([[3.0], [4.0]]))
    assert q.filled().flatten().tolist() == [2.0, 3.0, 4.0]      # 1 dropped: the size is 3
    assert q.is_full and int(q.count) == 3
    with pytest.raises(ValueError, match="at least"):
        q.push(torch.zeros(4, 1))
