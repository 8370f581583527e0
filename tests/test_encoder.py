"""Poolers on known inputs, the two SimCSE paths, encode(), save/load."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from cselab.model.encoder import BackboneOutput, SentenceEncoder, build_pooler, resolve_backbone

# Two sentences, three positions, 2-d hidden states; the second sentence has one padding token.
MASK = torch.tensor([[1, 1, 1], [1, 1, 0]])
EMB = torch.zeros(2, 3, 2)
L1 = torch.tensor([[[1.0, 0.0], [3.0, 0.0], [5.0, 3.0]], [[2.0, 2.0], [4.0, 0.0], [100.0, 100.0]]])
L2 = torch.tensor([[[0.0, 1.0], [0.0, 3.0], [3.0, 5.0]], [[0.0, 6.0], [2.0, 0.0], [-50.0, 50.0]]])
OUT = BackboneOutput(last_hidden_state=L2, attention_mask=MASK, hidden_states=(EMB, L1, L2))


def pool(name):
    return build_pooler(name, hidden_size=2, num_layers=2)(OUT)


def test_cls_poolers_take_the_first_token():
    assert pool("cls").tolist() == [[0.0, 1.0], [0.0, 6.0]]
    assert pool("cls_before_pooler").tolist() == [[0.0, 1.0], [0.0, 6.0]]


def test_avg_ignores_padding():
    assert pool("avg").tolist() == [[1.0, 3.0], [1.0, 3.0]]


def test_avg_first_last_uses_first_transformer_layer_not_embeddings():
    # mean over tokens of (L1 + L2) / 2: sentence 0 → L1 mean (3, 1), L2 mean (1, 3) → (2, 2)
    # sentence 1 → L1 mean (3, 1), L2 mean (1, 3) → (2, 2)
    assert pool("avg_first_last").tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_avg_top2_uses_last_two_layers():
    assert pool("avg_top2").tolist() == pool("avg_first_last").tolist()  # here the last two are L1, L2
    three = BackboneOutput(L2, MASK, (L1, EMB, L2))
    assert build_pooler("avg_top2", 2, 2)(three).tolist() == [[0.5, 1.5], [0.5, 1.5]]


def test_unknown_pooler():
    with pytest.raises(ValueError, match="pooler: must be one of .*got 'max'"):
        build_pooler("max", 2, 2)
    with pytest.raises(ValueError, match="pooler_options: pooler 'avg' takes no options"):
        build_pooler("avg", 2, 2, {"layer": 3})


def test_alias_and_bad_paths(tmp_path):
    path, local = resolve_backbone("all-minilm-l6")
    assert local and path.endswith("model")
    assert resolve_backbone("bert-base-uncased") == ("bert-base-uncased", False)
    with pytest.raises(FileNotFoundError, match="config.json"):
        resolve_backbone(tmp_path)
    with pytest.raises(FileNotFoundError, match="no such model folder"):
        resolve_backbone(str(tmp_path / "missing"))


@pytest.fixture
def encoder(tiny_model):
    torch.manual_seed(0)
    return SentenceEncoder.from_pretrained(tiny_model, pooler="cls", dropout=0.1)


def test_head_in_training_only_with_mlp_only_train(encoder):
    inputs = encoder.tokenize(["a cat sat on the mat ."])
    encoder.eval()
    with torch.no_grad():
        train_path = encoder(inputs)
        eval_path = encoder.embed(inputs)
    assert torch.allclose(train_path.embeddings, encoder.head(train_path.pooled))
    assert torch.allclose(eval_path, train_path.pooled)  # eval drops the head: cls_before_pooler
    encoder.mlp_only_train = False       # a fresh encoder per test: the change does not leak
    with torch.no_grad():
        assert torch.allclose(encoder.embed(inputs), train_path.embeddings)


def test_training_inputs_repeat_each_sentence(encoder):
    batch = encoder.training_inputs(["one two", "three four five six seven"], max_length=4)
    assert batch["input_ids"].shape == (4, 4)  # 2B rows, truncated to max_len in training
    assert torch.equal(batch["input_ids"][:2], batch["input_ids"][2:])


def test_dropout_makes_two_views_differ(encoder):
    encoder.train()
    out = encoder(encoder.training_inputs(["the same sentence twice ."], 32))
    assert not torch.allclose(out.embeddings[0], out.embeddings[1])
    encoder.eval()


def test_encode_dedups_and_restores_order(encoder):
    sentences = ["b short", "a much longer sentence than the others here", "b short", "c"]
    together = encoder.encode(sentences, batch_size=2)
    alone = np.stack([encoder.encode([s])[0] for s in sentences])
    assert together.shape == (4, 32) and together.dtype == np.float32
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_array_equal(together[0], together[2])
    assert encoder.encode([]).shape == (0, 32)


def test_evaluation_does_not_truncate_to_training_max_len(encoder):
    long = " ".join(["word"] * 60)
    full = encoder.encode([long])
    assert encoder.tokenize([long])["input_ids"].shape[1] == 62
    assert not np.allclose(full, encoder.encode([long], max_length=32))


def test_save_and_load_round_trip(encoder, tmp_path):
    from transformers import AutoModel

    encoder.save(tmp_path / "m")
    files = {p.name for p in (tmp_path / "m").iterdir()}
    assert {"model.safetensors", "cselab.json", "cselab_modules.safetensors", "tokenizer.json"} <= files
    assert not any(name.endswith((".bin", ".pt", ".pkl")) for name in files)
    again = SentenceEncoder.from_pretrained(tmp_path / "m")
    assert again.pooler_name == "cls" and again.mlp_only_train
    loaded = again.state_dict()
    for key, value in encoder.state_dict().items():
        if key.startswith("backbone.pooler.dense."):   # the saved BERT pooler holds SimCSE's head (its export)
            value = encoder.state_dict()[key.replace("backbone.pooler.", "head.")]
        assert torch.equal(value, loaded[key]), key
    assert not torch.equal(encoder.backbone.pooler.dense.weight, encoder.head.dense.weight)  # memory untouched
    plain = AutoModel.from_pretrained(tmp_path / "m")  # a standard Hugging Face folder
    assert torch.equal(plain.embeddings.word_embeddings.weight, encoder.backbone.embeddings.word_embeddings.weight)
    sentences = ["a test sentence .", "another one"]
    np.testing.assert_allclose(again.encode(sentences), encoder.encode(sentences), atol=1e-6)


def test_dropout_is_set_on_the_backbone(tiny_model):
    enc = SentenceEncoder.from_pretrained(tiny_model, pooler="avg", dropout=0.25)
    assert enc.backbone.config.hidden_dropout_prob == 0.25
    assert enc.backbone.config.attention_probs_dropout_prob == 0.25
    assert enc.head is None
    with pytest.raises(ValueError, match="dropout"):
        SentenceEncoder.from_pretrained(tiny_model, dropout=1.5)


def test_split_views_and_per_layer_cls(encoder):
    inputs = encoder.training_inputs(["one two three", "four"], 8)
    out = encoder(inputs, output_hidden_states=True)
    view1, view2 = out.split(2)
    assert torch.equal(view1.embeddings, out.embeddings[:2]) and torch.equal(view2.pooled, out.pooled[2:])
    assert torch.equal(view2.backbone.attention_mask, inputs["attention_mask"][2:])
    assert all(torch.equal(a, b[:2]) for a, b in zip(view1.backbone.hidden_states, out.backbone.hidden_states))
    cls = view1.layer_cls()
    assert cls.shape == (2, 3, 32) and cls.dtype == torch.float32     # embeddings + 2 layers
    assert torch.equal(cls[:, 2], view1.backbone.last_hidden_state[:, 0])
    with pytest.raises(ValueError, match="every hidden state"):
        encoder(inputs).layer_cls()


def test_iter_batches_paths_modes_and_random_stream(encoder):
    sentences = ["a b c", "d e", "f", "g h i j"]
    encoder.train()
    evaluated = torch.cat([out.embeddings for _, out in encoder.iter_batches(sentences, 3)])
    assert encoder.training                                               # mode restored
    assert np.allclose(evaluated.numpy(), encoder.encode(sentences), atol=1e-6)
    rng = torch.get_rng_state()
    first = [out.embeddings for _, out in encoder.iter_batches(sentences, 2, path="train", dropout=True, seed=7)]
    again = [out.embeddings for _, out in encoder.iter_batches(sentences, 2, path="train", dropout=True, seed=7)]
    assert torch.equal(torch.get_rng_state(), rng)                         # a private stream
    assert all(torch.equal(a, b) for a, b in zip(first, again)) and first[0].shape == (4, 32)
    assert not torch.allclose(first[0][:2], first[0][2:])                 # two dropout views
    (_, one_view), = encoder.iter_batches(sentences[:2], 2, path="train", views=1)
    assert one_view.embeddings.shape == (2, 32) and not one_view.embeddings.requires_grad
    with pytest.raises(ValueError, match="path must be"):
        next(encoder.iter_batches(sentences, 2, path="test"))
