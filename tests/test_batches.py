"""The epoch's batches: the plain seeded order, and ``no_duplicates`` (no sentence twice in a batch)."""
from __future__ import annotations

import random

import pytest

from cselab.model.config import load_config
from cselab.model.train import batches as batches_mod
from cselab.model.train.batches import batches_per_epoch, epoch_batches, no_duplicate_batches


def planted_corpus(seed: int = 0) -> list[str]:
    """300 sentences: 150 unique and 30 strings 5 times each (half the corpus is copies)."""
    rng = random.Random(seed)
    corpus = [f"unique sentence {i}" for i in range(150)] + [f"repeated sentence {j}" for j in range(30)] * 5
    rng.shuffle(corpus)
    return corpus


def has_duplicate(corpus, batch) -> bool:
    return len({corpus[i] for i in batch}) < len(batch)


def test_hand_checked_greedy_case():
    # a is taken, its copy waits for the next batch, b and c fill batch 1; batch 2 takes the waiting
    # a, its next copy waits again, d; the last copy of a has no batch left and sits out the epoch.
    texts = ["a", "a", "b", "c", "a", "d"]
    assert no_duplicate_batches(range(6), texts, [3, 3]) == [[0, 2, 3], [1, 5]]
    # a batch left with one sentence (no in-batch negative) is dropped
    assert no_duplicate_batches(range(4), ["x", "y", "x", "x"], [2, 2]) == [[0, 1]]


def test_no_batch_holds_a_sentence_twice():
    corpus = planted_corpus()
    plain_with_copies = 0
    for seed in range(4):
        for epoch in range(3):
            plain = epoch_batches(corpus, seed, epoch, 16)
            plain_with_copies += sum(has_duplicate(corpus, b) for b in plain)
            batches = epoch_batches(corpus, seed, epoch, 16, no_duplicates=True)
            assert not any(has_duplicate(corpus, b) for b in batches), (seed, epoch)
            assert len(batches) == batches_per_epoch(len(corpus), 16, False) == 19   # same steps per epoch
            used = [i for b in batches for i in b]
            assert len(used) == len(set(used))   # no sentence twice in an epoch
            # only copies of a sentence already in the last batch may sit out the epoch (tail effect)
            left_out = set(range(len(corpus))) - set(used)
            assert len(left_out) <= 5 and all(corpus[i] in {corpus[j] for j in batches[-1]} for i in left_out)
            assert batches == epoch_batches(corpus, seed, epoch, 16, no_duplicates=True)   # deterministic
    assert plain_with_copies > 100   # the planted copies do land together without the sampler


def test_a_corpus_without_copies_gets_the_plain_batches():
    corpus = [f"s{i}" for i in range(100)]
    for drop_last in (False, True):
        assert epoch_batches(corpus, 3, 1, 16, drop_last=drop_last, no_duplicates=True) == \
            epoch_batches(corpus, 3, 1, 16, drop_last=drop_last)
    assert [len(b) for b in epoch_batches(corpus, 3, 1, 16)] == [16] * 6 + [4]
    assert epoch_batches(corpus, 3, 0, 16, no_duplicates=True) != epoch_batches(corpus, 3, 1, 16, no_duplicates=True)


def test_default_keeps_the_hash_of_earlier_configs():
    # the hash of the default config before no_duplicates existed (commit 2cbb2e7), which drew torch's
    # dropout masks: cselab's CPU masks (cpu_dropout: fast, the default since) train another run
    earlier = ["cpu_dropout=torch"]
    assert load_config(None, earlier).config_hash() == "1669ad3a92"
    assert load_config(None, earlier + ["no_duplicates=false"]).config_hash() == "1669ad3a92"
    assert load_config(None, earlier + ["no_duplicates=true"]).config_hash() != "1669ad3a92"
    assert load_config(None).config_hash() == load_config(None, ["cpu_dropout=fast"]).config_hash() != "1669ad3a92"


class Crash(Exception):
    pass


def test_training_honours_no_duplicates_and_resumes_to_the_same_batches(tiny_config, data_dir, tmp_path,
                                                                       monkeypatch):
    from cselab.model.train import loop, train

    corpus_file = tmp_path / "planted.txt"
    corpus_file.write_text("\n".join(planted_corpus()[:96]) + "\n")
    base = {**tiny_config, "corpus": str(corpus_file), "max_sentences": None, "epochs": 2, "eval_every": 3,
            "no_duplicates": True}
    seen: list[list[str]] = []
    real = loop.training_loss

    def recording(model, encoder, loss_fn, sentences, **kw):
        seen.append(list(sentences))
        return real(model, encoder, loss_fn, sentences, **kw)

    monkeypatch.setattr(loop, "training_loss", recording)
    train(load_config({**base, "output_dir": str(tmp_path / "a")}), data_dir=data_dir, progress=False)
    straight, seen[:] = list(seen), []
    assert len(straight) == 12 and not any(len(set(b)) < len(b) for b in straight)
    assert any(len(set(b)) < len(b) for b in epoch_batches_text(base, off=True))   # the corpus has copies

    def kill_at_step_8(state, record):
        if state.step == 8:
            raise Crash

    cfg = load_config({**base, "output_dir": str(tmp_path / "b")})
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, callbacks=[kill_at_step_8], progress=False)
    killed, seen[:] = list(seen), []
    train(cfg, data_dir=data_dir, resume=True, progress=False)
    # the checkpoint at step 6 (the end of epoch 0): the resumed run continues with batch 7
    assert killed == straight[:8] and seen == straight[6:]


def epoch_batches_text(base: dict, off: bool) -> list[list[str]]:
    corpus = open(base["corpus"]).read().split("\n")[:96]
    return [[corpus[i] for i in b] for epoch in range(2)
            for b in batches_mod.epoch_batches(corpus, 42, epoch, 16, no_duplicates=not off)]
