"""SimCSE's STS protocol: aggregation, cosine scoring, the full suite, and the published MiniLM figures."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from cselab.model.evaluate import aggregate_subsets, cosine_scores, evaluate_sts, format_sts_table


def test_all_vs_mean_aggregation_by_hand():
    preds = {"A": np.array([1.0, 2.0, 3.0]), "B": np.array([4.0, 5.0, 6.0])}
    golds = {"A": np.array([1.0, 2.0, 3.0]), "B": np.array([4.0, 6.0, 5.0])}
    out = aggregate_subsets(preds, golds)
    # A: ρ = 1; B: ranks (1,2,3) vs (1,3,2): ρ = 1 − 6·2/(3·8) = 0.5
    assert out["mean"] == pytest.approx(0.75)
    assert out["wmean"] == pytest.approx(0.75)
    # all: 6 pairs, two swapped neighbours: ρ = 1 − 6·2/(6·35) = 0.942857...
    assert out["all"] == pytest.approx(1 - 12 / 210)


def test_wmean_weights_by_subset_size():
    preds = {"A": np.array([1.0, 2.0, 3.0, 4.0]), "B": np.array([1.0, 2.0, 3.0])}
    golds = {"A": np.array([1.0, 2.0, 3.0, 4.0]), "B": np.array([3.0, 2.0, 1.0])}
    assert aggregate_subsets(preds, golds)["wmean"] == pytest.approx((4 * 1 + 3 * -1) / 7)


def test_cosine_scores():
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[2.0, 0.0], [4.0, -3.0]])
    np.testing.assert_allclose(cosine_scores(a, b), [1.0, 0.0])


class HashedBagOfWords:
    """A deterministic toy encoder: token counts hashed into 512 buckets."""

    def __init__(self):
        self.calls = []

    def encode(self, sentences, batch_size=128):
        self.calls.append(len(sentences))
        out = np.zeros((len(sentences), 512), dtype=np.float32)
        for i, s in enumerate(sentences):
            for tok in s.split():
                out[i, int(hashlib.md5(tok.encode()).hexdigest(), 16) % 512] += 1
        return out + 1e-3


def test_suite_on_real_data_with_a_toy_encoder(data_dir, tmp_path):
    model = HashedBagOfWords()
    res = evaluate_sts(model, data_dir=data_dir, output=tmp_path / "sts.json")
    assert len(model.calls) == 1  # every sentence of every task encoded in one deduplicated call
    assert res["sentences_encoded"] == model.calls[0]
    assert list(res["scores"]) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
    assert {t: res["details"][t]["pairs"] for t in res["details"]} == {
        "STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186,
        "STSBenchmark": 1379, "SICKRelatedness": 4927}
    assert res["avg"] == pytest.approx(np.mean(list(res["scores"].values())))
    for t in ("STS12", "STS13", "STS14", "STS15", "STS16"):
        assert res["scores"][t] == res["details"][t]["all"]
        assert res["details"][t]["mean"] == pytest.approx(np.mean(list(res["details"][t]["subsets"].values())))
    assert 20 < res["avg"] < 80  # word overlap correlates with STS, far from perfectly
    assert (tmp_path / "sts.json").is_file()
    mean = evaluate_sts(model, tasks=["STS12"], data_dir=data_dir, aggregate="mean")
    assert mean["scores"]["STS12"] == pytest.approx(res["details"]["STS12"]["mean"])
    table = format_sts_table({"bow": res})
    assert "STS-B" in table and "SICK-R" in table and f"{res['avg']:.2f}" in table


def test_pairs_give_each_task_score_back(data_dir):
    """per_pair=True keeps every pair's cosine beside its gold, in the order each task's Spearman is
    taken over, so the scores can be recomputed (and bootstrapped) from them."""
    from scipy.stats import spearmanr

    res = evaluate_sts(HashedBagOfWords(), tasks=["STS13", "SICKRelatedness"], data_dir=data_dir, per_pair=True)
    assert list(res["per_pair"]) == ["STS13", "SICKRelatedness"]
    for task, pairs in res["per_pair"].items():
        assert len(pairs["pred"]) == len(pairs["gold"]) == res["details"][task]["pairs"]
        assert 100 * spearmanr(pairs["pred"], pairs["gold"]).statistic == pytest.approx(res["scores"][task], abs=1e-9)
    assert "per_pair" not in evaluate_sts(HashedBagOfWords(), tasks=["STS13"], data_dir=data_dir)


def test_bad_arguments(data_dir):
    with pytest.raises(ValueError, match="aggregate"):
        evaluate_sts(HashedBagOfWords(), data_dir=data_dir, aggregate="median")
    with pytest.raises(ValueError, match="STS17"):
        evaluate_sts(HashedBagOfWords(), tasks=["STS17"], data_dir=data_dir)


# all-minilm-l6-v2 with avg pooling, as published (sentence-transformers' MTEB/SentEval figures)
PUBLISHED_MINILM = {"STS12": 72.4, "STS13": 80.6, "STS14": 75.6, "STS15": 85.4, "STS16": 79.0,
                    "STSBenchmark": 82.0, "SICKRelatedness": 77.15}


def _published_minilm_scores(data_dir, tasks):
    from cselab.model.encoder import SentenceEncoder

    model = SentenceEncoder.from_pretrained("all-minilm-l6", pooler="avg")
    res = evaluate_sts(model, tasks=tasks, data_dir=data_dir, batch_size=128)
    for task in tasks:
        assert res["scores"][task] == pytest.approx(PUBLISHED_MINILM[task], abs=0.3), task


def test_published_all_minilm_l6_v2_sts_b(data_dir):
    """The default backbone reproduces its published STS-B test number (±0.3); every task: slow test."""
    _published_minilm_scores(data_dir, ["STSBenchmark"])


@pytest.mark.slow   # 29k sentences through the real backbone: 2.5-5 minutes on 2 cores
def test_published_all_minilm_l6_v2_figures(data_dir):
    """Acceptance: the default backbone with avg pooling reproduces the published numbers (±0.3)."""
    _published_minilm_scores(data_dir, list(PUBLISHED_MINILM))
