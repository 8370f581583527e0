"""Dropout masks on CPU (cselab.model.encoder.cpu_dropout): their rate, scale, gradient and replay, the
attention that applies them to attention probabilities, and that nothing else changes (evaluation
passes are torch's, bit for bit; a saved model loads with transformers' own attention)."""
import json

import pytest
import torch
from scipy.stats import binomtest, chisquare
from torch import nn

from cselab.model.config import ConfigError, load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder import cpu_dropout as cd


def test_drop_probability_is_p_rounded_to_a_multiple_of_2_to_the_minus_15():
    assert cd.drop_threshold(0.1) == 3277
    assert cd.effective_p(0.1) == 3277 / 32768 == pytest.approx(0.1000061, abs=1e-7)
    assert cd.effective_p(0.5) == 0.5
    assert cd.effective_p(0.0) == 0.0


def test_masks_drop_at_the_stated_rate_in_every_position_of_a_word():
    torch.manual_seed(0)
    n = 400_000
    keep = cd.keep_mask((n,), 0.1)
    assert keep.dtype == torch.bool and keep.shape == (n,)
    dropped = int((~keep).sum())
    # two-sided exact binomial test against the effective probability (α = 0.001, one fixed seed)
    assert binomtest(dropped, n, cd.effective_p(0.1)).pvalue > 1e-3
    # each of the four 16-bit pieces of a 64-bit draw (the top one has a constant sign bit) drops alike
    per_piece = (~keep).view(-1, 4).sum(0).numpy()
    assert chisquare(per_piece).pvalue > 1e-3
    assert abs(per_piece / (n / 4) - 0.1).max() < 0.004
    # neighbouring elements are independent: P(both dropped) = p² (a shared draw would make it p)
    pairs = (~keep[0::2] & ~keep[1::2]).sum()
    assert binomtest(int(pairs), n // 2, cd.effective_p(0.1) ** 2).pvalue > 1e-3


def test_the_same_seed_or_a_restored_rng_state_gives_the_same_mask():
    torch.manual_seed(3)
    a = cd.keep_mask((64, 33), 0.2)
    state = torch.get_rng_state()
    b = cd.keep_mask((64, 33), 0.2)
    torch.set_rng_state(state)   # what gradient caching does to replay a chunk's masks
    assert torch.equal(cd.keep_mask((64, 33), 0.2), b)
    assert not torch.equal(a, b)
    torch.manual_seed(3)
    assert torch.equal(cd.keep_mask((64, 33), 0.2), a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dropout_scales_kept_values_and_its_gradient_is_the_mask_times_the_scale(dtype):
    torch.manual_seed(1)
    x = torch.randn(8, 16, 24).to(dtype).requires_grad_()
    y = cd.cpu_dropout(x, 0.25)
    scale = 1 / (1 - cd.effective_p(0.25))
    kept = y != 0
    assert y.dtype == dtype
    assert torch.equal(y[kept], (x[kept].float() * scale).to(dtype))
    y.backward(torch.full_like(y, 3.0))
    expected = (kept.to(torch.float32) * 3.0 * scale).to(dtype)
    assert torch.equal(x.grad, expected)
    # unbiased: the kept share times the scale is 1 in expectation
    ones = cd.cpu_dropout(torch.ones(1_000_000), 0.1)
    assert float(ones.mean()) == pytest.approx(1.0, abs=3e-3)


def test_the_module_is_torchs_dropout_in_eval_mode_at_p_0_or_switched_off():
    x = torch.randn(4, 10)
    module = nn.Dropout(0.3)
    module.__class__ = cd.CpuDropout
    assert torch.equal(module.eval()(x), x)
    assert torch.equal(cd.CpuDropout(0.0).train()(x), x)
    module.train()
    module.enabled = False
    torch.manual_seed(5)
    off = module(x)
    torch.manual_seed(5)
    assert torch.equal(off, torch.nn.functional.dropout(x, 0.3, training=True))   # torch's own masks
    module.enabled = True
    torch.manual_seed(5)
    on = module(x)
    torch.manual_seed(5)
    keep = cd.keep_mask(x.shape, 0.3)
    assert torch.equal(on, torch.where(keep, x * (1 / (1 - cd.effective_p(0.3))), torch.zeros(())))


def test_every_dropout_of_the_backbone_is_converted_and_attention_goes_through_cselab(tiny_model):
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls")
    kinds = {type(m) for m in encoder.backbone.modules() if isinstance(m, nn.Dropout)}
    assert kinds == {cd.CpuDropout}
    # embeddings, and per layer: attention probabilities (read for SDPA), attention output, FFN output
    assert sum(isinstance(m, cd.CpuDropout) for m in encoder.backbone.modules()) == 1 + 3 * 2
    assert encoder.backbone.config._attn_implementation == cd.ATTENTION
    assert encoder.fast_cpu_dropout
    encoder.fast_cpu_dropout = False
    assert not encoder.fast_cpu_dropout


def test_evaluation_passes_are_bit_identical_to_transformers_sdpa(tiny_model):
    from transformers import AutoModel

    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg").eval()
    torch_model = AutoModel.from_pretrained(tiny_model).eval()   # transformers' sdpa, torch's dropout
    assert torch_model.config._attn_implementation == "sdpa"
    inputs = encoder.tokenize(["a short one", "a much longer sentence with padding for the other row"])
    with torch.no_grad():
        ours = encoder.backbone(**inputs).last_hidden_state
        theirs = torch_model(**inputs).last_hidden_state
    assert torch.equal(ours, theirs)


def test_training_attention_applies_the_mask_to_the_softmax_probabilities():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))
    mask = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    mask[1, :, :, 3:] = False                       # the second row's last two tokens are padding
    module = nn.Module()
    module.dropout = cd.CpuDropout(0.2)
    torch.manual_seed(7)
    out, _ = cd.cpu_sdpa_attention(module, q, k, v, mask, dropout=0.2, scaling=0.5)
    torch.manual_seed(7)
    keep = cd.keep_mask((2, 3, 5, 5), 0.2)
    scores = (q @ k.transpose(-1, -2) * 0.5).masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores, -1) * keep / (1 - cd.effective_p(0.2))
    assert out.shape == (2, 5, 3, 4)
    torch.testing.assert_close(out, (probs @ v).transpose(1, 2), rtol=1e-6, atol=1e-6)
    # padding keys get no weight: their values do not reach the output
    v2 = v.clone()
    v2[1, :, 3:] = 1e6
    torch.manual_seed(7)
    again, _ = cd.cpu_sdpa_attention(module, q, k, v2, mask, dropout=0.2, scaling=0.5)
    assert torch.equal(again, out)
    # switched off, or without dropout: transformers' SDPA function
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    module.dropout.enabled = False
    module.is_causal = False
    torch.manual_seed(7)
    off, _ = cd.cpu_sdpa_attention(module, q, k, v, mask, dropout=0.0, scaling=0.5)
    expected, _ = sdpa_attention_forward(module, q, k, v, mask, dropout=0.0, scaling=0.5)
    assert torch.equal(off, expected)


def test_a_training_pass_draws_the_cheap_masks_and_replays_them(tiny_model):
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls").train()
    inputs = encoder.training_inputs(["one sentence", "another sentence here"], 16)
    torch.manual_seed(11)
    first = encoder(inputs).embeddings
    torch.manual_seed(11)
    assert torch.equal(encoder(inputs).embeddings, first)   # same seed, same masks
    view1, view2 = first.split(2)
    assert not torch.allclose(view1, view2)               # the two views differ by dropout only
    encoder.fast_cpu_dropout = False
    torch.manual_seed(11)
    assert not torch.equal(encoder(inputs).embeddings, first)   # torch's bernoulli_ draws other masks


def test_saved_model_loads_with_transformers_own_attention(tiny_model, tmp_path):
    from transformers import AutoModel

    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls")
    encoder.save(tmp_path / "saved")
    config = json.loads((tmp_path / "saved" / "config.json").read_text())
    assert not any("attn" in key for key in config)
    assert AutoModel.from_pretrained(tmp_path / "saved").config._attn_implementation == "sdpa"


def test_config_key_switches_it_and_rejects_other_values(tiny_config):
    assert load_config({**tiny_config}).cpu_dropout == "fast"
    assert load_config({**tiny_config, "cpu_dropout": "torch"}).cpu_dropout == "torch"
    with pytest.raises(ConfigError, match=r"cpu_dropout: must be one of \('fast', 'torch'\), got 'philox'"):
        load_config({**tiny_config, "cpu_dropout": "philox"})


def test_a_run_with_cpu_dropout_torch_trains_with_torchs_masks(tiny_config):
    from cselab.model.train.training import build_training
    from cselab.model.train.ddp import Processes
    from cselab.model.rundir import RunDir

    for value, expected in (("fast", True), ("torch", False)):
        cfg = load_config({**tiny_config, "cpu_dropout": value})
        t = build_training(cfg, RunDir.for_config(cfg), False, ["a b c", "d e f"], 2, None,
                           Processes(device=torch.device("cpu")))
        assert t.encoder.fast_cpu_dropout is expected
