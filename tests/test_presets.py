"""Every preset is usable, and the `-official` presets differ from the paper presets exactly by
the options that docs/differences.md lists for the authors' code."""
from __future__ import annotations

import math
import re

import pytest
import torch

from conftest import REPO
from cselab.model.config import load_config, presets
from cselab.model.data import load_corpus
from cselab.model.encoder import SentenceEncoder
from cselab.model.losses import ContrastiveBatch
from cselab.model.methods import build_loss


def _flat(mapping: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in mapping.items():
        if isinstance(value, dict) and key != "pooler_options":
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def test_official_presets_differ_only_by_documented_options():
    documented = set(re.findall(r"`([a-z_]+\.[a-z_]+): ([a-z_]+)`", (REPO / "docs" / "differences.md").read_text()))
    official = [p for p in presets() if p.endswith("-official")]
    assert official
    for name in official:
        paper, code = _flat(load_config(name[:-len("-official")]).to_dict()), _flat(load_config(name).to_dict())
        changed = {(key, str(code[key])) for key in paper if paper[key] != code[key]}
        assert changed and changed <= documented, (name, changed - documented)


@pytest.mark.parametrize("preset", presets())
def test_every_preset_runs_a_training_step(preset, tiny_model, data_dir):
    """The preset's pooler, pooler options and method hyper-parameters, one step at its batch size
    (on the tiny backbone, sentences cut to 8 tokens)."""
    cfg = load_config(preset)
    corpus = load_corpus("wiki1m-head", cfg.batch_size, data_dir)
    torch.manual_seed(0)
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler=cfg.pooler, mlp_only_train=cfg.mlp_only_train,
                                              dropout=cfg.dropout, pooler_options=cfg.pooler_options).train()
    loss_fn = build_loss(cfg)
    loss_fn.setup(encoder, corpus)
    inputs = encoder.training_inputs(corpus, 8)
    view1, view2 = encoder(inputs, output_hidden_states=loss_fn.needs_hidden_states).split(len(corpus))
    result = loss_fn(ContrastiveBatch(view1.embeddings, view2.embeddings, outputs1=view1, outputs2=view2,
                                      inputs=inputs))
    assert math.isfinite(result.loss.item()) and result.loss.item() > 0
    result.loss.backward()
    assert encoder.backbone.embeddings.word_embeddings.weight.grad.abs().sum() > 0
