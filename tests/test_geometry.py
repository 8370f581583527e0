"""Alignment, uniformity, anisotropy and largest angle: hand-computed values, the reference
implementation of Wang & Isola (torch.pdist), the blocked computation, STS-B split handling."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from toy_encoders import HashedBagOfWords

from cselab.model.data import load_stsb
from cselab.model.evaluate.geometry import (alignment, evaluate_alignment_uniformity, geometry_summary, largest_angle,
                                      mean_pairwise_cosine, uniformity)


def test_alignment_by_hand():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([[0.0, 1.0], [0.0, 1.0]])
    # ‖(1,−1)‖² = 2 and 0 → mean 1
    assert alignment(x, y) == pytest.approx(1.0)
    assert alignment(x, y, alpha=1) == pytest.approx(math.sqrt(2) / 2)
    assert alignment(3 * x, 0.5 * y) == pytest.approx(1.0)          # embeddings are normalised first
    assert alignment(x, x) == 0.0


def test_uniformity_anisotropy_largest_angle_by_hand():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [-5.0, 0.0]])
    # squared distances of the unit vectors: (1,2) 2, (1,3) 4, (2,3) 2
    assert uniformity(x) == pytest.approx(math.log((math.exp(-4) + math.exp(-8) + math.exp(-4)) / 3))
    assert uniformity(x, t=1) == pytest.approx(math.log((math.exp(-2) + math.exp(-4) + math.exp(-2)) / 3))
    assert mean_pairwise_cosine(x) == pytest.approx(-1 / 3)       # cosines 0, −1, 0
    assert largest_angle(x) == pytest.approx(180.0)
    assert largest_angle(x[:2]) == pytest.approx(90.0)
    assert uniformity(np.ones((4, 3))) == pytest.approx(0.0)      # collapsed: log e^0
    assert mean_pairwise_cosine(np.ones((4, 3))) == pytest.approx(1.0)


def test_against_wang_and_isola_reference_and_blocks():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2500, 8))          # more rows than one block of 2048
    y = x + 0.3 * rng.normal(size=x.shape)
    tx = torch.nn.functional.normalize(torch.tensor(x), dim=1)
    ty = torch.nn.functional.normalize(torch.tensor(y), dim=1)
    # Wang & Isola's published code: align = (x−y).norm(dim=1).pow(2).mean(); uniform = pdist².mul(−2).exp().mean().log()
    assert alignment(x, y) == pytest.approx(float((tx - ty).norm(dim=1).pow(2).mean()), rel=1e-10)
    assert uniformity(x) == pytest.approx(float(torch.pdist(tx, p=2).pow(2).mul(-2).exp().mean().log()), rel=1e-10)
    cos = (tx @ tx.T).numpy()
    off = ~np.eye(len(x), dtype=bool)
    assert mean_pairwise_cosine(x) == pytest.approx(cos[off].mean(), rel=1e-10)
    assert largest_angle(x) == pytest.approx(np.degrees(np.arccos(np.clip(cos[off].min(), -1, 1))), rel=1e-10)


def test_geometry_summary_keys():
    x = np.eye(3)
    assert set(geometry_summary(x)) == {"uniformity", "mean_cos", "largest_angle"}
    assert list(geometry_summary(x, (x, x))) == ["alignment", "uniformity", "mean_cos", "largest_angle"]


def test_stsb_protocol_split_choice(data_dir, tmp_path):
    model = HashedBagOfWords(dim=64)   # small: uniformity over all of STS-B is ~10⁸ pairs
    out = tmp_path / "au.json"
    dev = evaluate_alignment_uniformity(model, "dev", data_dir, output=out)
    pairs = load_stsb(data_dir)["dev"]
    positive = pairs.scores > 4
    assert dev["positive_pairs"] == int(positive.sum())
    sentences = sorted(set(pairs.sentences1) | set(pairs.sentences2))
    assert dev["sentences"] == len(sentences)
    # Same numbers as the functions on directly encoded data.
    a = model.encode([s for s, p in zip(pairs.sentences1, positive) if p])
    b = model.encode([s for s, p in zip(pairs.sentences2, positive) if p])
    assert dev["alignment"] == pytest.approx(alignment(a, b))
    assert dev["uniformity"] == pytest.approx(uniformity(model.encode(sentences)))
    assert json.loads(out.read_text())["split"] == "dev"
    every = evaluate_alignment_uniformity(model, "all", data_dir)
    stsb = load_stsb(data_dir)
    assert every["positive_pairs"] == sum(int((p.scores > 4).sum()) for p in stsb.values())


def test_bad_input():
    with pytest.raises(ValueError, match="equal shapes"):
        alignment(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="at least one positive pair"):
        alignment(np.ones((0, 3)), np.ones((0, 3)))
    with pytest.raises(ValueError, match="at least two embeddings"):
        uniformity(np.ones((1, 3)))
    with pytest.raises(ValueError, match="2-D array"):
        mean_pairwise_cosine(np.ones(3))
    with pytest.raises(ValueError, match="split must be one of"):
        evaluate_alignment_uniformity(HashedBagOfWords(), "validation")
