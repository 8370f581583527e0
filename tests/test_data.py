"""Loaders against the real mirror (counts from shared/data/README.md) and every bad input."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from cselab.model.data import DataError, load_corpus, load_sick, load_sts_task, load_sts_year, load_stsb
from cselab.model.data.fetch import copy_mirror, fetch

# Scored pair counts from the mirror's README (SentEval/SimCSE counts).
STS_YEAR_PAIRS = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186}
STS_SUBSET_PAIRS = {
    "STS12": {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750, "surprise.SMTnews": 399},
    "STS13": {"FNWN": 189, "headlines": 750, "OnWN": 561},
    "STS14": {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750, "tweet-news": 750},
    "STS15": {"answers-forums": 375, "answers-students": 750, "belief": 375, "headlines": 750, "images": 750},
    "STS16": {"answer-answer": 254, "headlines": 249, "plagiarism": 230, "postediting": 244, "question-question": 209},
}


@pytest.mark.parametrize("task", sorted(STS_YEAR_PAIRS))
def test_sts_year_counts(data_dir, task):
    subsets = load_sts_year(task, data_dir)
    assert {k: len(v) for k, v in subsets.items()} == STS_SUBSET_PAIRS[task]
    assert sum(len(v) for v in subsets.values()) == STS_YEAR_PAIRS[task]
    for pairs in subsets.values():
        assert len(pairs.sentences1) == len(pairs.sentences2) == len(pairs.scores)
        assert pairs.scores.min() >= 0 and pairs.scores.max() <= 5


def test_stsb_and_sick_counts(data_dir):
    assert {k: len(v) for k, v in load_stsb(data_dir).items()} == {"train": 5749, "dev": 1500, "test": 1379}
    assert {k: len(v) for k, v in load_sick(data_dir).items()} == {"train": 4500, "trial": 500, "test": 4927}


def test_sts_first_pair_is_read_exactly(data_dir):
    stsb = load_stsb(data_dir)["train"]
    assert stsb.sentences1[0] == "a plane is taking off ."
    assert stsb.sentences2[0] == "an air plane is taking off ."
    assert stsb.scores[0] == 5.0
    sick = load_sick(data_dir)["test"]  # CRLF file: no stray '\r' may survive
    assert sick.sentences1[0] == "There is no boy playing outdoors and there is no man smiling"
    assert sick.scores[0] == pytest.approx(3.3)
    assert not any("\r" in s for s in sick.sentences2)


def test_load_sts_task_dispatch(data_dir):
    assert set(load_sts_task("STSBenchmark", data_dir)) == {"train", "dev", "test"}
    with pytest.raises(ValueError, match="unknown STS task"):
        load_sts_task("STS17", data_dir)


def test_corpus(data_dir):
    head = load_corpus("wiki1m-head", data_dir=data_dir)
    # The README says 11,913 lines; the file holds 11,914 newline-terminated, non-blank lines.
    assert len(head) == 11914
    assert head[0] == "YMCA in South Australia"
    assert load_corpus("wiki1m-head", max_sentences=5, data_dir=data_dir) == head[:5]
    assert len(load_corpus("enwiki", max_sentences=1000, data_dir=data_dir)) == 1000


def test_corpus_skips_blank_lines(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("first\n\n   \nsecond\r\n")
    assert load_corpus(path) == ["first", "second"]


# ---------------------------------------------------------------- bad input
def test_missing_corpus_names_the_file(tmp_path):
    with pytest.raises(DataError, match=r"nope\.txt: .*not found"):
        load_corpus(tmp_path / "nope.txt")


def test_empty_corpus(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n  \n")
    with pytest.raises(DataError, match=r"empty\.txt: the corpus is empty"):
        load_corpus(path)


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nalso fine\nbroken \xff here\n")
    with pytest.raises(DataError, match=r"bad\.txt:3: not valid utf-8"):
        load_corpus(path)


def _copy_sts(data_dir, tmp_path, year="STS13"):
    root = tmp_path / "root"
    src = data_dir / "downstream" / "STS" / f"{year}-en-test"
    dst = root / "downstream" / "STS" / f"{year}-en-test"
    shutil.copytree(src, dst)
    for f in dst.iterdir():
        f.chmod(0o644)
    return root, dst


def test_missing_sts_folder(tmp_path):
    with pytest.raises(DataError, match=r"STS12-en-test: STS12 folder not found"):
        load_sts_year("STS12", tmp_path)


def test_missing_sts_file(data_dir, tmp_path):
    root, dst = _copy_sts(data_dir, tmp_path)
    (dst / "STS.gs.FNWN.txt").unlink()
    with pytest.raises(DataError, match=r"STS\.gs\.FNWN\.txt: file not found"):
        load_sts_year("STS13", root)


def test_wrong_column_count(data_dir, tmp_path):
    root, dst = _copy_sts(data_dir, tmp_path)
    path = dst / "STS.input.FNWN.txt"
    lines = path.read_text().splitlines()
    lines[6] = lines[6].replace("\t", " ")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"STS\.input\.FNWN\.txt:7: expected 2 tab-separated columns, found 1"):
        load_sts_year("STS13", root)


def test_gold_not_a_number(data_dir, tmp_path):
    root, dst = _copy_sts(data_dir, tmp_path)
    path = dst / "STS.gs.headlines.txt"
    lines = path.read_text().splitlines()
    lines[9] = "four"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"STS\.gs\.headlines\.txt:10: gold score 'four' is not a number"):
        load_sts_year("STS13", root)


def test_blank_gold_is_unscored(data_dir, tmp_path):
    root, dst = _copy_sts(data_dir, tmp_path)
    path = dst / "STS.gs.FNWN.txt"
    lines = path.read_text().splitlines()
    lines[0] = ""
    path.write_text("\n".join(lines) + "\n")
    assert len(load_sts_year("STS13", root)["FNWN"]) == 188


def test_stsb_bad_score_and_columns(data_dir, tmp_path):
    folder = tmp_path / "downstream" / "STS" / "STSBenchmark"
    folder.mkdir(parents=True)
    good = "g\tf\t2012\t1\t3.0\ta b\tc d"
    for split in ("train", "dev"):
        (folder / f"sts-{split}.csv").write_text(good + "\n")
    (folder / "sts-test.csv").write_text(good + "\n" + "g\tf\t2012\t2\tx\ta\tb\n")
    with pytest.raises(DataError, match=r"sts-test\.csv:2: gold score 'x' is not a number"):
        load_stsb(tmp_path)
    (folder / "sts-test.csv").write_text("g\tf\t2012\t2\t1.0\tonly one sentence\n")
    with pytest.raises(DataError, match=r"sts-test\.csv:1: expected at least 7 tab-separated columns, found 6"):
        load_stsb(tmp_path)


def test_an_empty_stsb_split_names_its_file(tmp_path):
    """An empty sts-dev.csv gave numpy's "zero-size array" from the dev evaluation, naming no file."""
    folder = tmp_path / "downstream" / "STS" / "STSBenchmark"
    folder.mkdir(parents=True)
    for split in ("train", "test"):
        (folder / f"sts-{split}.csv").write_text("g\tf\t2012\t1\t3.0\ta b\tc d\n")
    for empty in ("", "\n\n"):
        (folder / "sts-dev.csv").write_text(empty)
        with pytest.raises(DataError) as err:
            load_stsb(tmp_path)
        assert str(err.value) == (f"{folder / 'sts-dev.csv'}: no scored sentence pairs (the file is empty or every "
                                  "pair is unscored)")


def test_sick_needs_header(tmp_path):
    folder = tmp_path / "downstream" / "SICK"
    folder.mkdir(parents=True)
    for name in ("SICK_train.txt", "SICK_trial.txt", "SICK_test_annotated.txt"):
        (folder / name).write_text("1\ta\tb\t3.0\tNEUTRAL\n")
    with pytest.raises(DataError, match=r"SICK_train\.txt:1: expected a header line"):
        load_sick(tmp_path)


# ---------------------------------------------------------------- fetch
def test_fetch_from_mirror(data_dir, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(data_dir / "downstream" / "STS" / "STS13-en-test", mirror / "downstream" / "STS" / "STS13-en-test")
    (mirror / "corpus").mkdir()
    (mirror / "corpus" / "wiki1m-head.txt").write_text("one\ntwo\n")
    root = fetch(tmp_path / "data", mirror=mirror)
    assert sum(len(v) for v in load_sts_year("STS13", root).values()) == 1500
    assert load_corpus("wiki1m-head", data_dir=root) == ["one", "two"]
    assert copy_mirror(mirror, root) == 0  # second fetch: nothing to copy
    assert not list(root.rglob("*.part"))


def test_fetch_rejects_non_mirror(tmp_path):
    (tmp_path / "m").mkdir()
    with pytest.raises(DataError, match="not a data mirror"):
        fetch(tmp_path / "data", mirror=tmp_path / "m")


def _tar_with(path, name: str, kind=None):
    import io
    import tarfile

    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo(name)
        if kind is not None:
            info.type, info.linkname = kind, "/etc/passwd"
            tar.addfile(info)
        else:
            info.size = 4
            tar.addfile(info, io.BytesIO(b"evil"))


@pytest.mark.parametrize("name, kind, message", [("../evil.txt", None, "would be written outside"),
                                                 ("/abs/evil.txt", None, "would be written outside"),
                                                 ("data/link", "2", "is a link")])
def test_archive_members_cannot_escape_the_data_root(tmp_path, name, kind, message):
    import tarfile

    from cselab.model.data.fetch import _safe_extract

    archive = tmp_path / "senteval.tar"
    _tar_with(archive, name, kind.encode() if kind else None)
    target = tmp_path / "root" / "unpacked"
    target.mkdir(parents=True)
    with tarfile.open(archive) as tar, pytest.raises(DataError, match=message):
        _safe_extract(tar, target.resolve())
    assert not (tmp_path / "evil.txt").exists() and not list(target.iterdir())


def test_data_root_precedence(monkeypatch, tmp_path):
    from cselab.model.data import data_root

    monkeypatch.delenv("CSELAB_DATA", raising=False)
    assert str(data_root()) == "data"
    monkeypatch.setenv("CSELAB_DATA", str(tmp_path))
    assert data_root() == tmp_path
    assert data_root(tmp_path / "x") == tmp_path / "x"


def test_scores_are_float_arrays(data_dir):
    pairs = load_sts_year("STS16", data_dir)["headlines"]
    assert pairs.scores.dtype == np.float64
