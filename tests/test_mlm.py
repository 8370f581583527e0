"""SimCSE's auxiliary MLM term: BERT masking rules, the loss against a direct computation, head
initialisation, and use next to other methods in a training run."""
from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from cselab.model.config import ConfigError, load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.methods import build_components
from cselab.model.methods.mlm import IGNORE, MaskedLMTerm, MLMParams, mask_tokens
from cselab.model.train import train
from cselab.model.rundir import load_state


def test_masking_follows_bert_rules():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 2000, (400, 250), generator=g)
    maskable = torch.ones_like(ids, dtype=torch.bool)
    maskable[:, :5] = False                                   # e.g. special tokens / padding
    masked, labels = mask_tokens(ids, maskable, mask_id=103, vocab_size=30522, probability=0.15, generator=g)
    chosen = labels != IGNORE
    assert not chosen[:, :5].any() and torch.equal(masked[~chosen], ids[~chosen])
    assert torch.equal(labels[chosen], ids[chosen])
    assert chosen[:, 5:].float().mean().item() == pytest.approx(0.15, abs=0.005)
    n = chosen.sum().item()
    as_mask = (masked[chosen] == 103).sum().item() / n
    kept = (masked[chosen] == ids[chosen]).sum().item() / n
    assert as_mask == pytest.approx(0.8, abs=0.01)
    assert kept == pytest.approx(0.1, abs=0.01)               # random replacements almost never hit the original
    assert 1 - as_mask - kept == pytest.approx(0.1, abs=0.01)


@pytest.fixture(scope="module")
def encoder(tiny_model):
    return SentenceEncoder.from_pretrained(tiny_model, dropout=0.0).train()


def test_loss_matches_a_direct_computation(encoder):
    term = MaskedLMTerm(MLMParams(weight=0.1, probability=0.5))
    term.setup(encoder)
    inputs = encoder.training_inputs(["a cat sat on the mat", "dogs bark"], 32)
    z = torch.randn(2, 32)
    torch.manual_seed(5)
    out = term.contribute(ContrastiveBatch(z, z, inputs=inputs), z @ z.T, 0.05)
    torch.manual_seed(5)
    ids, attention = inputs["input_ids"], inputs["attention_mask"]
    special = torch.isin(ids, torch.tensor(encoder.tokenizer.all_special_ids))
    masked, labels = mask_tokens(ids, attention.bool() & ~special, encoder.tokenizer.mask_token_id,
                                 len(encoder.tokenizer), 0.5)
    assert (labels[special | ~attention.bool()] == IGNORE).all()  # [CLS], [SEP], [PAD] never predicted
    hidden = encoder.backbone(input_ids=masked, attention_mask=attention,
                              token_type_ids=inputs.get("token_type_ids")).last_hidden_state
    logits = term.head(hidden)
    expected = 0.1 * F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=IGNORE)
    assert out.terms["mlm"].item() == pytest.approx(expected.item(), rel=1e-5)
    out.terms["mlm"].backward()
    assert encoder.backbone.embeddings.word_embeddings.weight.grad is not None
    assert all(p.grad is not None for p in term.head.parameters() if p.requires_grad)
    assert 0.0 <= float(out.stats["accuracy"]) <= 1.0
    encoder.zero_grad()


def test_head_initialisation(tiny_model, encoder, tmp_path):
    with pytest.raises(ValueError, match="head_init: random"):
        MaskedLMTerm(MLMParams(head_init="pretrained")).setup(encoder)   # a plain encoder checkpoint
    from transformers import AutoTokenizer, BertForMaskedLM

    torch.manual_seed(1)
    mlm_model = BertForMaskedLM(encoder.backbone.config)
    mlm_model.save_pretrained(tmp_path / "mlm")
    AutoTokenizer.from_pretrained(tiny_model).save_pretrained(tmp_path / "mlm")
    with_head = SentenceEncoder.from_pretrained(tmp_path / "mlm")
    term = MaskedLMTerm(MLMParams(head_init="pretrained"))
    term.setup(with_head)
    assert torch.equal(term.head.predictions.transform.dense.weight, mlm_model.cls.predictions.transform.dense.weight)
    fresh = MaskedLMTerm(MLMParams())
    fresh.setup(with_head)
    assert not torch.equal(fresh.head.predictions.transform.dense.weight,
                           mlm_model.cls.predictions.transform.dense.weight)


def test_params_are_validated():
    with pytest.raises(ConfigError, match="mlm.*probability"):
        load_config(None, {"method": ["simcse", "mlm"], "mlm.probability": 1.5})
    with pytest.raises(ConfigError, match="head_init"):
        load_config(None, {"method": ["mlm"], "mlm.head_init": "bert"})
    assert load_config(None, {"method": ["clusterns", "mlm"], "batch_size": 128}).method_params["mlm"].weight == 0.1


def test_composes_with_other_methods(encoder):
    params = load_config(None, {"method": ["clusterns", "mlm"], "clusterns.num_clusters": 2}).method_params
    components = build_components(["clusterns", "mlm"], params)
    loss = ContrastiveLoss(0.05, components)
    loss.setup(encoder, ["a", "b"])
    inputs = encoder.training_inputs(["a cat", "a dog", "the sun", "rain"], 32)
    out = encoder(inputs)
    batch = ContrastiveBatch(out.embeddings[:4], out.embeddings[4:], inputs=inputs)
    result = loss(batch)
    assert set(result.parts) == {"info_nce", "mlm.mlm"} and "mlm.accuracy" in result.stats
    assert result.loss.item() == pytest.approx(result.parts["info_nce"].item() + result.parts["mlm.mlm"].item())


def test_training_run_with_prompt_clusterns_and_mlm(tiny_config, data_dir):
    cfg = {**tiny_config, "max_steps": 2, "eval_every": 2, "log_every": 1, "pooler": "prompt",
           "method": ["clusterns", "mlm"], "clusterns": {"num_clusters": 4, "start_threshold": 1.0}}
    run = train(cfg, data_dir=str(data_dir), progress=False)
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    second = [r for r in records if r["kind"] == "train"][-1]
    assert second["step"] == 2 and second["loss/mlm.mlm"] > 0 and "sim/mlm.accuracy" in second
    assert "loss/clusterns.bml" in second and second["sim/clusterns.start_step"] == 1.0
    saved = load_state(run / "last")["loss"]
    assert any(k.startswith("components.1.head.") for k in saved)   # the LM head is checkpointed
    assert json.loads((run / "best" / "cselab.json").read_text())["pooler"] == "prompt"
