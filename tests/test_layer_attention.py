"""The layer-attention pooler (APINCSE eq. 1–7): shapes, a hand-computed toy, a loop reference,
options, gradients and the save/load round trip."""
from __future__ import annotations

import math

import pytest
import torch
from safetensors.torch import load_file

from cselab.model.encoder import POOLERS, BackboneOutput, SentenceEncoder, build_pooler
from cselab.model.encoder.layer_attention import LayerAttentionPooler
from cselab.model.encoder.model import MODULES_NAME


def random_output(n=3, t=5, h=8, layers=4, seed=0) -> BackboneOutput:
    g = torch.Generator().manual_seed(seed)
    hidden = tuple(torch.randn(n, t, h, generator=g) for _ in range(layers + 1))
    mask = torch.ones(n, t, dtype=torch.long)
    mask[0, 3:] = 0   # padding in the first sentence
    return BackboneOutput(hidden[-1], mask, hidden)


def toy_output() -> BackboneOutput:
    """One sentence, two tokens, H = 2, two layers (plus the embedding output, ignored by default).

    layer 1: [CLS] = [1, 0], token = [3, 0]  → mean a1 = [2, 0]
    layer 2: [CLS] = [0, 1], token = [0, 5]  → mean a2 = [0, 3]
    """
    embeddings = torch.tensor([[[9.0, 9.0], [9.0, 9.0]]])
    layer1 = torch.tensor([[[1.0, 0.0], [3.0, 0.0]]])
    layer2 = torch.tensor([[[0.0, 1.0], [0.0, 5.0]]])
    return BackboneOutput(layer2, torch.ones(1, 2, dtype=torch.long), (embeddings, layer1, layer2))


def identity_pooler(**options) -> LayerAttentionPooler:
    pooler = build_pooler("layer_attention", 2, 2, options)
    with torch.no_grad():
        for layer in (pooler.query, pooler.key, pooler.value):
            layer.weight.copy_(torch.eye(2))
    return pooler


def softmax2(a, b):
    return math.exp(a) / (math.exp(a) + math.exp(b)), math.exp(b) / (math.exp(a) + math.exp(b))


def test_registered_and_built_with_sizes():
    assert POOLERS["layer_attention"] is LayerAttentionPooler
    pooler = build_pooler("layer_attention", 8, 4)
    assert pooler.query.weight.shape == (8, 8) and pooler.output_layer.weight.shape == (8, 16)
    assert pooler.query.bias is None and pooler.key.bias is None and pooler.value.bias is None


@pytest.mark.parametrize("options, weight_shape", [
    ({}, (3, 4, 4)),
    ({"attention": "paired"}, (3, 4)),
    ({"include_embeddings": True}, (3, 5, 5)),
])
def test_shapes(options, weight_shape):
    out = random_output()
    pooler = build_pooler("layer_attention", 8, 4, options)
    cls, means = pooler.layer_summaries(out)
    assert pooler(out).shape == (3, 8)
    weights = pooler.attention_weights(cls, means)
    assert weights.shape == weight_shape
    torch.testing.assert_close(weights.sum(-1), torch.ones(weight_shape[:-1]))


def test_means_respect_the_padding_mask():
    out = random_output()
    _, means = build_pooler("layer_attention", 8, 4).layer_summaries(out)
    torch.testing.assert_close(means[0, 0], out.hidden_states[1][0, :3].mean(0))   # 3 real tokens
    torch.testing.assert_close(means[1, 3], out.hidden_states[4][1].mean(0))


def test_cross_attention_by_hand():
    pooler = identity_pooler()
    cls, means = pooler.layer_summaries(toy_output())
    torch.testing.assert_close(cls[0], torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    torch.testing.assert_close(means[0], torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
    # q1 = [1,0], q2 = [0,1], k1 = [2,0], k2 = [0,3]; scores / √2:
    # q1·k = [2, 0] → p = softmax(√2, 0); q2·k = [0, 3] → r = softmax(0, 3/√2)
    p = softmax2(2 / math.sqrt(2), 0.0)
    r = softmax2(0.0, 3 / math.sqrt(2))
    weights = pooler.attention_weights(cls, means)[0]
    torch.testing.assert_close(weights, torch.tensor([list(p), list(r)]))
    o1 = [2 * p[0], 3 * p[1]]
    o2 = [2 * r[0], 3 * r[1]]
    expected_sum = torch.tensor([[o1[0] + o2[0], o1[1] + o2[1]]])
    torch.testing.assert_close(pooler.aggregate(toy_output()), expected_sum)
    torch.testing.assert_close(identity_pooler(layer_reduce="mean").aggregate(toy_output()), expected_sum / 2)


def test_cross_attention_scaled_by_layer_count():
    p = softmax2(2 / 2, 0.0)        # s = number of layers = 2
    r = softmax2(0.0, 3 / 2)
    expected = torch.tensor([[2 * p[0] + 2 * r[0], 3 * p[1] + 3 * r[1]]])
    torch.testing.assert_close(identity_pooler(score_scale="layers").aggregate(toy_output()), expected)


def test_paired_attention_by_hand():
    # layer i's query only meets layer i's key: scores [q1·k1, q2·k2] / √2 = [2, 3] / √2
    a = softmax2(2 / math.sqrt(2), 3 / math.sqrt(2))
    pooler = identity_pooler(attention="paired")
    cls, means = pooler.layer_summaries(toy_output())
    torch.testing.assert_close(pooler.attention_weights(cls, means), torch.tensor([list(a)]))
    torch.testing.assert_close(pooler.aggregate(toy_output()), torch.tensor([[2 * a[0], 3 * a[1]]]))


@pytest.mark.parametrize("output", ["residual", "mlp"])
def test_output_network_by_hand(output):
    pooler = identity_pooler(output=output)
    with torch.no_grad():
        pooler.output_layer.weight.copy_(torch.tensor([[0.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.5]]))
        pooler.output_layer.bias.copy_(torch.tensor([0.1, -0.1]))
    o = pooler.aggregate(toy_output())[0]
    top_cls = torch.tensor([0.0, 1.0])                           # the last layer's [CLS]
    hidden = torch.tanh(torch.stack([0.5 * top_cls[0] + 0.1, 0.5 * o[1] - 0.1]))
    expected = top_cls + hidden if output == "residual" else hidden
    torch.testing.assert_close(pooler(toy_output())[0], expected)


def reference_pooler(pooler: LayerAttentionPooler, out: BackboneOutput) -> torch.Tensor:
    """Slow loops over sentences and layers, written from the equations."""
    opts = pooler.options
    act = pooler.activation
    layers = out.hidden_states if opts.include_embeddings else out.hidden_states[1:]
    rows = []
    for n in range(out.attention_mask.shape[0]):
        keep = out.attention_mask[n].bool()
        cls = [h[n, 0] for h in layers]
        means = [h[n][keep].mean(0) for h in layers]
        scale = math.sqrt(pooler.hidden_size) if opts.score_scale == "sqrt_dim" else len(layers)
        values = [act(pooler.value(m)) for m in means]
        if opts.attention == "paired":
            scores = torch.stack([act(pooler.query(c)) @ act(pooler.key(m)) for c, m in zip(cls, means)]) / scale
            w = torch.softmax(scores, 0)
            o = sum(w[i] * values[i] for i in range(len(layers)))
        else:
            per_query = []
            for c in cls:
                scores = torch.stack([act(pooler.query(c)) @ act(pooler.key(m)) for m in means]) / scale
                w = torch.softmax(scores, 0)
                per_query.append(sum(w[j] * values[j] for j in range(len(layers))))
            o = sum(per_query) if opts.layer_reduce == "sum" else sum(per_query) / len(per_query)
        top = out.last_hidden_state[n, 0]
        hidden = torch.tanh(pooler.output_layer(torch.cat([top, o])))
        rows.append(top + hidden if opts.output == "residual" else hidden)
    return torch.stack(rows)


@pytest.mark.parametrize("options", [
    {},
    {"attention": "paired"},
    # Oh et al. (COLING 2022) LayerAttPooler, except RReLU (random in training, tested in eval mode)
    {"score_scale": "layers", "layer_reduce": "mean", "output": "mlp", "include_embeddings": True,
     "activation": "rrelu"},
])
def test_matches_loop_reference(options):
    torch.manual_seed(1)
    out = random_output()
    pooler = build_pooler("layer_attention", 8, 4, {"init_std": 0.3, **options}).eval()
    torch.testing.assert_close(pooler(out), reference_pooler(pooler, out))


def test_project_cls_replaces_the_top_cls():
    out = random_output()
    pooler = build_pooler("layer_attention", 8, 4, {"init_std": 0.3})
    torch.testing.assert_close(pooler.project_cls(out.last_hidden_state[:, 0], out), pooler(out))
    other = out.hidden_states[2][:, 0]
    torch.testing.assert_close(pooler.project_cls(other, out), pooler.combine(other, pooler.aggregate(out)))


@pytest.mark.parametrize("options, message", [
    ({"attention": "both"}, "pooler_options: attention must be one of"),
    ({"score_scale": 2}, "pooler_options.score_scale: expected a string"),
    ({"init_std": 0}, "pooler_options: init_std must be a number > 0"),
    ({"include_embeddings": "yes"}, "pooler_options.include_embeddings: expected true/false"),
    ({"atention": "cross"}, "pooler_options: unknown key 'atention' \\(did you mean 'attention'\\?\\)"),
])
def test_bad_options_name_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        build_pooler("layer_attention", 8, 4, options)


def test_needs_every_hidden_state():
    out = random_output()
    with pytest.raises(ValueError, match="needs every hidden state"):
        build_pooler("layer_attention", 8, 4)(BackboneOutput(out.last_hidden_state, out.attention_mask))
    with pytest.raises(ValueError, match="built for 6 layers but got 4"):
        build_pooler("layer_attention", 8, 6)(out)


def test_gradients_reach_every_pooler_parameter(tiny_model):
    enc = SentenceEncoder.from_pretrained(tiny_model, pooler="layer_attention")
    assert enc.head is None
    out = enc(enc.training_inputs(["a first sentence", "and a second one"], 16))
    out.embeddings.pow(2).sum().backward()
    for name, p in enc.pooler.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_save_load_round_trip(tiny_model, tmp_path):
    enc = SentenceEncoder.from_pretrained(tiny_model, pooler="layer_attention",
                                          pooler_options={"attention": "paired", "output": "mlp"})
    with torch.no_grad():
        for p in enc.pooler.parameters():
            p.add_(torch.randn_like(p))   # differ from any fresh initialisation
    sentences = ["the cat sat on the mat", "a completely different sentence"]
    before = enc.encode(sentences)
    enc.save(tmp_path / "model")
    saved = load_file(str(tmp_path / "model" / MODULES_NAME))
    assert {"pooler.query.weight", "pooler.key.weight", "pooler.value.weight", "pooler.output_layer.weight",
            "pooler.output_layer.bias"} <= set(saved)

    loaded = SentenceEncoder.from_pretrained(tmp_path / "model")
    assert loaded.pooler_name == "layer_attention"
    assert loaded.pooler.options.attention == "paired" and loaded.pooler.options.output == "mlp"
    for name, tensor in enc.pooler.state_dict().items():
        torch.testing.assert_close(loaded.pooler.state_dict()[name], tensor, rtol=0, atol=0)
    torch.testing.assert_close(torch.from_numpy(loaded.encode(sentences)), torch.from_numpy(before))
