"""One encode per model and sentence in a process: the memo ``encode`` consults
(cselab.model.encoder.memo) and the one the evaluation cache gives each saved model."""
from __future__ import annotations

import os

import numpy as np
import pytest

from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder.memo import EmbeddingMemo
from cselab.model.evaluate import cache
from cselab.model.evaluate.cache import evaluate_run, model_memo


def test_the_memo_keeps_vectors_by_setting_and_counts_their_bytes():
    memo = EmbeddingMemo()
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3)
    memo.store(["a", "b"], vectors, (None, "fp32"))
    vectors[:] = -1   # the memo copied them
    assert list(memo.lookup(["b", "c", "a"], (None, "fp32"))) == ["b", "a"]
    assert memo.lookup(["a"], (None, "fp32"))["a"].tolist() == [0.0, 1.0, 2.0]
    assert memo.lookup(["a"], (64, "fp32")) == {}          # another token limit: another vector
    assert memo.nbytes == 2 * 3 * 4 and len(memo) == 2
    memo.store(["a"], np.ones((1, 3)), (None, "fp32"))     # the first vector stays
    assert memo.lookup(["a"], (None, "fp32"))["a"].tolist() == [0.0, 1.0, 2.0] and memo.nbytes == 24
    with pytest.raises(ValueError, match="2 sentences but 1 vectors"):
        memo.store(["x", "y"], np.ones((1, 3)), (None, "fp32"))


def _encoded_sentences(encoder, monkeypatch) -> list[str]:
    """Every sentence the encoder's batches run through, recorded."""
    seen: list[str] = []
    original = type(encoder).iter_batches

    def spy(self, sentences, *args, **kwargs):
        seen.extend(sentences)
        return original(self, sentences, *args, **kwargs)

    monkeypatch.setattr(type(encoder), "iter_batches", spy)
    return seen


def test_encode_computes_only_the_sentences_the_memo_lacks(tiny_model, monkeypatch):
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg").eval()
    sentences = ["the first one", "a second, longer sentence", "third", "the first one", "fourth of them"]
    without = encoder.encode(sentences, show_progress_bar=False)
    encoder.embedding_memo = EmbeddingMemo()
    encoder.encode(sentences[:2], show_progress_bar=False)
    seen = _encoded_sentences(encoder, monkeypatch)
    with_memo = encoder.encode(sentences, show_progress_bar=False)
    assert sorted(seen) == ["fourth of them", "third"]
    np.testing.assert_allclose(with_memo, without, rtol=0, atol=1e-6)   # fp32: batches padded otherwise
    seen.clear()
    again = encoder.encode(list(reversed(sentences)), show_progress_bar=False)
    assert seen == [] and np.array_equal(again, with_memo[::-1])
    seen.clear()
    encoder.encode(sentences[:1], max_length=2, show_progress_bar=False)   # truncated: not the same vector
    assert seen == ["the first one"]


def test_sts_b_test_and_its_geometry_encode_each_sentence_once(tiny_runs, data_dir, monkeypatch):
    run = tiny_runs["gs_infonce-s1"]
    batches: list[int] = []
    original = SentenceEncoder.iter_batches

    def spy(self, sentences, *args, **kwargs):
        batches.append(len(sentences))
        return original(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceEncoder, "iter_batches", spy)
    sts = evaluate_run(run, "sts", tasks=["STSBenchmark"], data_dir=data_dir, refresh=True)
    encoded = sum(batches)
    geometry = evaluate_run(run, "geometry", split="test", data_dir=data_dir, refresh=True)
    assert encoded == geometry["sentences"] and sum(batches) == encoded   # nothing encoded the second time
    # the same numbers as an encoder without a memo computes
    fresh = SentenceEncoder.from_pretrained(os.path.join(run, "best"))
    from cselab.model.evaluate.geometry import evaluate_alignment_uniformity

    direct = evaluate_alignment_uniformity(fresh, split="test", data_dir=data_dir)
    for key in ("alignment", "uniformity", "mean_cos"):
        assert geometry[key] == pytest.approx(direct[key], abs=1e-5)
    from cselab.model.evaluate import evaluate_sts

    assert sts["scores"]["STSBenchmark"] == pytest.approx(
        evaluate_sts(fresh, tasks=["STSBenchmark"], data_dir=data_dir)["scores"]["STSBenchmark"], abs=1e-6)


def test_a_rewritten_model_gets_a_new_memo_and_old_memos_are_dropped(tmp_path, monkeypatch):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    first = model_memo(folder)
    assert model_memo(folder) is first
    os.utime(folder / "model.safetensors", ns=(1, 1))   # rewritten (another time)
    second = model_memo(folder)
    assert second is not first
    # over the byte budget the least recently used memos go
    monkeypatch.setattr(cache, "MEMO_BYTES", 100)
    second.store(["s"], np.zeros((1, 20), dtype=np.float32), None)   # 80 bytes
    other = tmp_path / "other"
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"y")
    model_memo(other).store(["t"], np.zeros((1, 20), dtype=np.float32), None)
    model_memo(other)
    assert model_memo(folder) is not second   # evicted: a new, empty one
