"""SimCSE++ (Xu et al., EMNLP 2023): the dimension-wise term on fixed matrices, the off-dropout
InfoNCE by hand, gradients through the dropout-off pass, and training through the CLI."""
from __future__ import annotations

import contextlib
import math
from types import SimpleNamespace

import pytest
import torch
import yaml
from torch import nn

from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.io import read_jsonl
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.methods import METHODS
from cselab.model.methods.simcse_pp import (SimCSEPP, SimCSEPPParams, dimension_wise_loss, off_dropout_logits,
                                      standardise_per_dimension)


# ============================================================================ dimension-wise term
def test_standardise_per_dimension_is_batch_norm_without_affine():
    z = torch.tensor([[0., 1., 5.], [2., 0., 5.]])
    # columns: mean (1, 0.5, 5), biased variance (1, 0.25, 0); a constant column becomes 0
    expected = torch.tensor([[-1., 1., 0.], [1., -1., 0.]])
    assert torch.allclose(standardise_per_dimension(z), expected, atol=1e-4)
    assert torch.allclose(standardise_per_dimension(z), nn.BatchNorm1d(3, affine=False).train()(z), atol=1e-4)


def test_dimension_wise_term_on_a_fixed_matrix():
    z1 = torch.tensor([[0., 1., 5.], [2., 0., 5.]])   # standardised: (−1, 1), (1, −1), (0, 0)
    z2 = torch.tensor([[0., 0., 1.], [1., 1., 0.]])   # standardised: (−1, 1), (−1, 1), (1, −1)
    # C = Z̃₁ᵀ Z̃₂ / (B·τ_d), B = 2, τ_d = 1: [[1, 1, −1], [−1, −1, 1], [0, 0, 0]]
    e = math.e
    rows = [-1 + math.log(e + e + 1 / e),     # dimension 0: positive C_00 = 1
            1 + math.log(1 / e + 1 / e + e),  # dimension 1: positive C_11 = −1
            0 + math.log(3)]                  # the constant dimension: all entries 0
    assert dimension_wise_loss(z1, z2, 1.0).item() == pytest.approx(sum(rows) / 3, rel=1e-4)
    assert sum(rows) / 3 == pytest.approx(1.3656, abs=1e-4)   # (0.7587 + 2.2396 + 1.0986) / 3
    # τ_d scales C: at τ_d = 2 every entry halves
    half = [-0.5 + math.log(2 * math.exp(0.5) + math.exp(-0.5)), 0.5 + math.log(2 * math.exp(-0.5) + math.exp(0.5)),
            math.log(3)]
    assert dimension_wise_loss(z1, z2, 2.0).item() == pytest.approx(sum(half) / 3, rel=1e-4)


# ============================================================================ off-dropout negatives
class ToyEncoder(nn.Module):
    """A 2-vector per token at position 1; "dropout" (training mode) adds (1, 1)."""

    device = torch.device("cpu")

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.tensor([[0., 0.], [0., 0.], [1., 0.], [0., 1.], [1., 1.]]))

    def forward(self, inputs, output_hidden_states=False):
        emb = self.table[inputs["input_ids"][:, 1]]
        return SimpleNamespace(embeddings=emb + 1.0 if self.training else emb)

    @contextlib.contextmanager
    def dropout_mode(self, dropout=False, seed=None):
        was = self.training
        self.train(dropout)
        try:
            yield
        finally:
            self.train(was)


def _loss(params, tau, tokens=(2, 3, 4)):
    encoder = ToyEncoder().train()
    loss_fn = ContrastiveLoss(tau, [SimCSEPP(params)])
    loss_fn.setup(encoder)
    ids = torch.tensor([[1, t] for t in tokens] * 2)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    z = encoder(inputs).embeddings
    n = len(tokens)
    return encoder, loss_fn(ContrastiveBatch(z[:n], z[n:], inputs=inputs))


def test_off_dropout_infonce_by_hand():
    tau = 0.5
    encoder, out = _loss(SimCSEPPParams(dcl_weight=0.0), tau)
    # dropout-off embeddings (1, 0), (0, 1), (1, 1): cos 0 between the first two, r = 1/√2 with the third;
    # the positives (two identical training views) have cos 1
    r = 1 / math.sqrt(2)
    rows = [math.log(1 + math.exp((0 - 1) / tau) + math.exp((r - 1) / tau)),
            math.log(1 + math.exp((0 - 1) / tau) + math.exp((r - 1) / tau)),
            math.log(1 + 2 * math.exp((r - 1) / tau))]
    assert out.loss.item() == pytest.approx(sum(rows) / 3, rel=1e-5)
    assert sum(rows) / 3 == pytest.approx(0.6000, abs=1e-4)   # (2 · 0.5259 + 0.7483) / 3
    assert out.stats["simcse_pp.off_dropout_cos"] == pytest.approx((0 + r + r) * 2 / 6)
    out.loss.backward()   # the negatives' gradient reaches the encoder through the dropout-off pass
    assert encoder.table.grad[2:].abs().sum() > 0
    assert encoder.training   # the pass's dropout mode was restored


def test_in_batch_negatives_are_replaced_not_added():
    logits = off_dropout_logits(torch.eye(3), slice(None), 1.0)
    assert torch.isinf(logits.diagonal()).all() and logits[0, 1].item() == 0.0
    _, with_dcl = _loss(SimCSEPPParams(dcl_weight=0.1, dcl_temperature=5.0), 0.5)
    _, without = _loss(SimCSEPPParams(dcl_weight=0.0), 0.5)
    assert with_dcl.parts["simcse_pp.dcl"].item() == pytest.approx(
        0.1 * dimension_wise_loss(torch.tensor([[2., 1.], [1., 2.], [2., 2.]]),
                                  torch.tensor([[2., 1.], [1., 2.], [2., 2.]]), 5.0).item())
    assert with_dcl.loss.item() == pytest.approx(without.loss.item() + with_dcl.parts["simcse_pp.dcl"].item())


def test_paper_defaults_identity_and_gradient_cache_refusal():
    p = SimCSEPPParams()
    assert (p.off_dropout, p.dcl_weight, p.dcl_temperature) == (True, 0.1, 5.0)
    assert METHODS["simcse_pp"].display_name == "SimCSE++"
    with pytest.raises(ValueError, match="gradient cache"):
        load_config({"method": "simcse_pp", "batch_size": 64, "mini_batch_size": 16})
    load_config({"method": "simcse_pp", "batch_size": 64, "mini_batch_size": 16, "simcse_pp": {"off_dropout": False}})


# ============================================================================ CLI
@pytest.mark.parametrize("method", [["simcse_pp"], ["simcse_pp", "mixcse"]])
def test_trains_through_the_cli(method, tiny_config, tmp_path, data_dir):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**tiny_config, "method": method, "log_every": 1}))
    assert main(["train", str(config), "max_steps=3", "run_name=pp", "--data-dir", str(data_dir)]) == 0
    records = [r for r in read_jsonl(tmp_path / "runs" / "pp" / "metrics.jsonl") if r["kind"] == "train"]
    for r in records:
        assert r["loss"] == pytest.approx(r["loss/info_nce"] + r["loss/simcse_pp.dcl"], rel=1e-5)
        assert math.isfinite(r["sim/simcse_pp.off_dropout_cos"])
