"""A k-th-record sample of the data root (cselab/model/data/sample.py, the smoke profile's data): every
loader reads it, record files keep lines 0, k, 2k, … byte for byte (headers, pairs split over two
files and every label survive), other files are links to the originals; built once per source and rate."""
from __future__ import annotations

import os

import numpy as np
import pytest

from cselab.model.data import load_sick, load_stsb
from cselab.model.data.clustering import load_dbpedia, load_short_text
from cselab.model.data.sample import is_record_file, sample_data_root
from cselab.model.data.sts import load_sts_year
from cselab.model.data.transfer import load_transfer_task


@pytest.fixture(scope="module")
def sample(data_dir, tmp_path_factory):
    return sample_data_root(data_dir, tmp_path_factory.mktemp("sample") / "every-20", 20)


def test_record_files_keep_every_kth_line_byte_for_byte(data_dir, sample):
    for name in ("downstream/TREC/train_5500.label",                  # latin-1: bytes, not text
                 "downstream/STS/STS16-en-test/STS.gs.answer-answer.txt",
                 "clustering/short-text/stackoverflow/stackoverflow_true_text"):
        original = (data_dir / name).read_bytes().split(b"\n")
        kept = (sample / name).read_bytes().split(b"\n")
        assert b"\n".join(kept) == b"\n".join(original[:-1][::20]) + b"\n", name   # every file ends with \n


def test_other_files_are_links_to_the_originals(data_dir, sample):
    meta = sample / "clustering/dbpedia/meta.txt"           # the label names: whole, not sampled
    assert meta.is_symlink() and meta.resolve() == (data_dir / "clustering/dbpedia/meta.txt").resolve()
    corpus = sample / "corpus/wiki1m-head.txt"               # read by its first N lines: nothing to thin
    assert corpus.is_symlink() and not is_record_file("corpus/wiki1m-head.txt")
    assert not is_record_file("clustering/dbpedia/meta.txt") and is_record_file("clustering/dbpedia/test.csv")
    assert not is_record_file("downstream/SICK/readme.txt") and is_record_file("downstream/SICK/SICK_train.txt")


def test_every_loader_reads_the_sample(data_dir, sample):
    full, thin = load_stsb(data_dir)["test"], load_stsb(sample)["test"]
    assert thin.sentences1 == full.sentences1[::20] and np.array_equal(thin.scores, full.scores[::20])
    assert len(load_sick(sample)["test"]) == 4927 // 20          # line 0 is the header: records 20, 40, …
    # STS16's input and gold files stay aligned: each kept pair is the original pair of its line
    full16, thin16 = load_sts_year("STS16", data_dir), load_sts_year("STS16", sample)
    for subset, pairs in thin16.items():
        originals = set(zip(full16[subset].sentences1, full16[subset].sentences2, full16[subset].scores))
        assert len(pairs) > 0 and set(zip(pairs.sentences1, pairs.sentences2, pairs.scores)) <= originals, subset
    assert load_transfer_task("TREC", sample).splits["train"].labels.size == 273        # ⌈5,452 / 20⌉
    assert {len(load_transfer_task("MR", sample).splits["all"])} == {534}
    assert load_dbpedia("test", sample).n_clusters == 14         # sorted by label: every label kept
    assert load_short_text("SearchSnippets", sample).n_clusters == 8


def test_built_once_per_source_and_rate(data_dir, sample, tmp_path):
    marker = sample / "downstream/STS/STSBenchmark/sts-test.csv"
    before = marker.stat().st_mtime_ns
    assert sample_data_root(data_dir, sample, 20) == sample and marker.stat().st_mtime_ns == before
    other = sample_data_root(data_dir, tmp_path / "every-50", 50)
    assert len(load_stsb(other)["test"]) == -(-1379 // 50)
    with pytest.raises(ValueError, match="every: expected at least 1"):
        sample_data_root(data_dir, tmp_path / "zero", 0)
    assert not os.path.exists(tmp_path / "zero")
