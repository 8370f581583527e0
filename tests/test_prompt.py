"""The PromptBERT pooler: template construction, [MASK] pooling on known inputs, template
denoising with its position-id shift, evaluation inputs, options and save/load."""
from __future__ import annotations

import pytest
import torch

from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder, build_pooler
from cselab.model.encoder.prompt import (TEMPLATE_SETS, PromptOptions, PromptPooler, evaluation_text, last_mask_positions,
                                   parse_template, template_position_ids)

BERT_1, BERT_2 = TEMPLATE_SETS["bert"]


@pytest.fixture(scope="module")
def encoder(tiny_model):
    """The tiny BERT without dropout, so that training-mode passes are deterministic."""
    return SentenceEncoder.from_pretrained(tiny_model, pooler="prompt", dropout=0.0)


def tokens(enc, ids):
    return enc.tokenizer.convert_ids_to_tokens(list(ids))


def template_alone(t):
    """(1 × template length) ids of the template without a sentence."""
    return torch.tensor([list(t.prefix_ids) + list(t.suffix_ids)])


def full_attention(ids):
    """An explicit all-ones mask: without one, transformers >= 5.25 reads a jump in the position ids as the
    boundary of two packed sequences and blocks attention across it (the prefix would not see the suffix)."""
    return torch.ones_like(ids)


def test_bert_templates_parse_like_the_authors_script(encoder):
    first, second = encoder.pooler.templates
    assert tokens(encoder, first.prefix_ids) == ["[CLS]", "this", "sentence", "of", '"']
    assert tokens(encoder, first.suffix_ids) == ['"', "means", "[MASK]", ".", "[SEP]"]
    assert tokens(encoder, second.prefix_ids) == ["[CLS]", "this", "sentence", ":", '"']
    assert first.mask_index == 2 and first.length == 10


def test_training_inputs_wrap_each_view_in_its_template(encoder):
    batch = encoder.training_inputs(["A cat sat", "hello world , how are you"], 3)
    rows = [tokens(encoder, r) for r in batch["input_ids"]]
    assert rows[0] == ["[CLS]", "this", "sentence", "of", '"', "a", "cat", "sat", '"', "means", "[MASK]", ".",
                       "[SEP]"]
    # sentence tokens are truncated to max_len (3), the template is not counted
    assert rows[1] == ["[CLS]", "this", "sentence", "of", '"', "hello", "world", ",", '"', "means", "[MASK]", ".",
                       "[SEP]"]
    assert rows[2][:5] == ["[CLS]", "this", "sentence", ":", '"'] and rows[2][5:8] == ["a", "cat", "sat"]
    assert batch["attention_mask"].sum(1).tolist() == [13, 13, 13, 13]
    short = encoder.training_inputs(["a", "b c d e"], 32)
    assert short["attention_mask"].tolist()[0] == [1] * 11 + [0] * 3
    assert short["input_ids"][0, 11:].tolist() == [encoder.tokenizer.pad_token_id] * 3


def test_template_errors_name_the_option(encoder):
    tok = encoder.tokenizer
    with pytest.raises(ValueError, match="pooler_options.templates.*space"):
        parse_template("*cls* This *sent_0* means*mask*.", tok)
    with pytest.raises(ValueError, match="exactly one"):
        parse_template("*cls*_This_*sent_0*_means.", tok)
    with pytest.raises(ValueError, match="after"):
        parse_template("*cls*_*mask*_is_*sent_0*.", tok)
    with pytest.raises(ValueError, match="pooler_options: unknown key 'template'"):
        build_pooler("prompt", 32, 2, {"template": "bert"})
    with pytest.raises(ValueError, match="pooler_options: templates must be"):
        build_pooler("prompt", 32, 2, {"templates": "gpt"})
    with pytest.raises(ValueError, match="pooler_options.denoise: expected true/false"):
        load_config(None, {"pooler": "prompt", "pooler_options": {"denoise": "no"}})


def test_mask_pooling_on_a_known_input(encoder):
    pooler = PromptPooler(PromptOptions(denoise=False))
    pooler.bind(encoder)
    batch = encoder.training_inputs(["a cat sat", "dogs bark loudly at night"], 32)
    out = encoder.run_backbone(batch)
    # [MASK] sits at prefix (5) + sentence length + 2
    positions = last_mask_positions(batch["input_ids"], encoder.tokenizer.mask_token_id)
    assert positions.tolist() == [10, 12, 10, 12]
    expected = out.last_hidden_state[torch.arange(4), positions]
    assert torch.equal(pooler(out), expected)


def test_template_position_ids_shift_everything_after_the_prefix(encoder):
    template = encoder.pooler.templates[0]            # prefix 5 tokens, suffix 5 tokens
    ids = template_position_ids(template, torch.tensor([0, 3]))
    assert ids.tolist() == [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0, 1, 2, 3, 4, 8, 9, 10, 11, 12]]
    assert template_position_ids(template, torch.tensor([3]), offset=2).tolist() == [[2, 3, 4, 5, 6, 10, 11, 12,
                                                                                       13, 14]]


def test_denoising_subtracts_the_shifted_template_bias(encoder):
    encoder.train()
    batch = encoder.training_inputs(["a cat sat", "dogs bark loudly at night"], 32)
    out = encoder.run_backbone(batch)
    pooled = encoder.pooler(out)
    hidden = out.last_hidden_state[torch.arange(4), torch.tensor([10, 12, 10, 12])]
    bb = encoder.backbone
    for row, (template, length) in enumerate([(0, 3), (0, 5), (1, 3), (1, 5)]):
        t = encoder.pooler.templates[template]
        alone = template_alone(t)
        # the template alone, its tokens after the prefix moved by the sentence length
        positions = torch.tensor([[0, 1, 2, 3, 4] + [5 + length + k for k in range(5)]])
        bias = bb(input_ids=alone, attention_mask=full_attention(alone),
                  position_ids=positions).last_hidden_state[0, 5 + 2]
        assert torch.allclose(pooled[row], hidden[row] - bias, atol=1e-5), row
    assert encoder.pooler.template_bias(batch["input_ids"], batch["attention_mask"],
                                        torch.tensor([0, 0, 1, 1])).requires_grad   # trained with gradients
    encoder.eval()
    assert torch.allclose(encoder.pooler(encoder.run_backbone(batch)), hidden, atol=1e-5)  # no denoising at eval


def test_rows_are_matched_to_their_template(encoder):
    batch = encoder.training_inputs(["x y", "z"], 32)
    out = encoder.run_backbone(batch)
    assert encoder.pooler.row_templates(out).tolist() == [0, 0, 1, 1]
    plain = encoder.tokenizer(["plain [MASK] text"], return_tensors="pt")
    with pytest.raises(ValueError, match="follows none of the templates"):
        encoder.pooler.row_templates(encoder.run_backbone(dict(plain)))
    with pytest.raises(ValueError, match="no mask token"):
        last_mask_positions(encoder.tokenizer(["no mask"], return_tensors="pt")["input_ids"], 103)


def test_evaluation_inputs_follow_the_authors_script(encoder):
    assert evaluation_text(BERT_1, "a cat sat", "[MASK]") == 'This sentence of "a cat sat." means[MASK].'
    assert evaluation_text(BERT_1, "is it ?", "[MASK]") == 'This sentence of "is it ?" means[MASK].'
    assert evaluation_text(BERT_1, "a cat sat", "[MASK]", add_period=False) == \
        'This sentence of "a cat sat" means[MASK].'
    batch = encoder.tokenize(["a cat sat"])
    assert tokens(encoder, batch["input_ids"][0]) == ["[CLS]", "this", "sentence", "of", '"', "a", "cat", "sat", ".",
                                                      '"', "means", "[MASK]", ".", "[SEP]"]
    encoder.eval()
    out = encoder.run_backbone(batch)
    assert torch.equal(encoder.embed(batch), out.last_hidden_state[0, 11].unsqueeze(0))  # no head at eval


def test_eval_denoise_option(tiny_model):
    enc = SentenceEncoder.from_pretrained(tiny_model, pooler="prompt", dropout=0.0,
                                          pooler_options={"eval_denoise": True}).eval()
    batch = enc.tokenize(["a cat sat"])                    # 14 tokens: sentence length 4 ("a cat sat .")
    out = enc.run_backbone(batch)
    t = enc.pooler.templates[0]
    alone = template_alone(t)
    bias = enc.backbone(input_ids=alone, attention_mask=full_attention(alone),
                        position_ids=torch.tensor([[0, 1, 2, 3, 4, 9, 10, 11, 12, 13]]))
    expected = out.last_hidden_state[0, 11] - bias.last_hidden_state[0, 7]
    assert torch.allclose(enc.embed(batch)[0], expected, atol=1e-5)


def test_roberta_backbones_get_roberta_templates_and_shifted_positions(tiny_model):
    from transformers import AutoTokenizer, RobertaConfig, RobertaModel

    torch.manual_seed(0)
    backbone = RobertaModel(RobertaConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                          intermediate_size=64, max_position_embeddings=130, hidden_dropout_prob=0.0,
                                          attention_probs_dropout_prob=0.0))
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    enc = SentenceEncoder(backbone, tokenizer, pooler="prompt")
    assert [t.text for t in enc.pooler.templates] == list(TEMPLATE_SETS["roberta"])
    assert enc.pooler.position_offset == 2                      # RoBERTa positions start at padding_idx + 1
    official = SentenceEncoder(backbone, tokenizer, pooler="prompt",
                               pooler_options={"delta_positions_from_zero": True})
    assert official.pooler.position_offset == 0
    enc.train()
    batch = enc.training_inputs(["a cat"], 32)
    out = enc.run_backbone(batch)
    t = enc.pooler.templates[0]
    n_pre = len(t.prefix_ids)
    alone = template_alone(t)
    positions = torch.tensor([[2 + k for k in range(n_pre)] + [2 + n_pre + 2 + k for k in range(len(t.suffix_ids))]])
    bias = backbone(input_ids=alone, attention_mask=full_attention(alone),
                    position_ids=positions).last_hidden_state[0, n_pre + t.mask_index]
    mask_at = n_pre + 2 + t.mask_index
    assert torch.allclose(enc.pooler(out)[0], out.last_hidden_state[0, mask_at] - bias, atol=1e-5)


def test_prompt_encoder_saves_and_loads(encoder, tmp_path):
    assert encoder.head is not None                            # SimCSE's MLP head is used in training
    encoder.eval()
    before = encoder.encode(["a cat sat", "dogs bark"])
    encoder.save(tmp_path / "m")
    loaded = SentenceEncoder.from_pretrained(tmp_path / "m")
    assert loaded.pooler_name == "prompt" and loaded.head is not None
    assert torch.allclose(torch.as_tensor(loaded.encode(["a cat sat", "dogs bark"])), torch.as_tensor(before),
                          atol=1e-6)
