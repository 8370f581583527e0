"""SentEval transfer tasks: loaders against the mirror (README counts), SentEval's parsing quirks,
the three classifier protocols on separable toy tasks (100 %), bad input."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from toy_encoders import HashedBagOfWords

from cselab.model.data import DataError
from cselab.model.data.transfer import (TRANSFER_TASKS, LabelledPairs, LabelledSentences, TransferData,
                                  load_transfer_task)
from cselab.model.evaluate.transfer import (evaluate_transfer, evaluate_transfer_data, inner_kfold_accuracy,
                                      sentevals_order)

# Rows per split and per label. Rows: shared/data/README.md; per-label splits of SST-2, TREC and
# MRPC counted independently with awk/cut on the files.
EXPECTED = {
    "MR": {"all": {1: 5331, 0: 5331}},
    "CR": {"all": {1: 2407, 0: 1368}},
    "SUBJ": {"all": {1: 5000, 0: 5000}},
    "MPQA": {"all": {1: 3312, 0: 7294}},
    "SST2": {"train": {1: 37569, 0: 29780}, "dev": {1: 444, 0: 428}, "test": {1: 909, 0: 912}},
    "TREC": {"train": {0: 86, 1: 1162, 2: 1250, 3: 1223, 4: 835, 5: 896},
             "test": {0: 9, 1: 138, 2: 94, 3: 65, 4: 81, 5: 113}},
    "MRPC": {"train": {1: 2753, 0: 1323}, "test": {1: 1147, 0: 578}},
}
README_ROWS = {"MR": {"all": 10662}, "CR": {"all": 3775}, "SUBJ": {"all": 10000}, "MPQA": {"all": 10606},
               "SST2": {"train": 67349, "dev": 872, "test": 1821}, "TREC": {"train": 5452, "test": 500},
               "MRPC": {"train": 4076, "test": 1725}}


@pytest.mark.parametrize("task", TRANSFER_TASKS)
def test_loader_counts_match_the_readme(data_dir, task):
    data = load_transfer_task(task, data_dir)
    assert {name: len(split) for name, split in data.splits.items()} == README_ROWS[task]
    for name, split in data.splits.items():
        labels, counts = np.unique(split.labels, return_counts=True)
        assert dict(zip(labels.tolist(), counts.tolist())) == EXPECTED[task][name]
    assert data.n_classes == (6 if task == "TREC" else 2)
    assert all(isinstance(split, LabelledPairs) == (task == "MRPC") for split in data.splits.values())


def test_sentevals_parsing_details(data_dir):
    mr = load_transfer_task("MR", data_dir).splits["all"]
    # Positive file first (label 1), then the negative file, as SentEval concatenates them.
    assert mr.sentences[0].startswith("the rock is destined to be the 21st century 's new")
    assert mr.labels[0] == 1 and mr.labels[5331] == 0
    assert mr.sentences[5331] == "simplistic , silly and tedious ."
    subj = load_transfer_task("SUBJ", data_dir).splits["all"]
    assert subj.sentences[0].startswith("the movie begins in the past")   # subj.objective is SentEval's class 1
    cr = load_transfer_task("CR", data_dir).splits["all"]
    assert sum(s == "" for s in cr.sentences) == 4                          # blank lines kept, as SentEval does
    trec = load_transfer_task("TREC", data_dir)
    assert trec.splits["train"].sentences[0] == "How did serfdom develop in and then leave Russia ?"
    assert trec.splits["train"].labels[0] == 1                             # DESC
    assert trec.splits["test"].sentences[0] == "How far is it from Denver to Aspen ?"
    assert sum("\u00f0" in s for s in trec.splits["train"].sentences) == 1  # the file's one latin-1 byte 0xF0
    assert "celebrities real names" in trec.splits["train"].sentences[2]  # whitespace normalised
    mrpc = load_transfer_task("MRPC", data_dir).splits["train"]
    assert mrpc.labels[0] == 1
    assert mrpc.sentences1[0].startswith("Amrozi accused his brother , whom he called")
    assert mrpc.sentences2[0].startswith("Referring to him as only")
    sst = load_transfer_task("SST2", data_dir).splits["train"]
    assert sst.sentences[0] == "hide new secretions from the parental units" and sst.labels[0] == 0
    assert not any(s != s.strip() for s in sst.sentences[:1000])


def test_sentevals_sort_order_is_tokens_then_label_stable():
    split = LabelledSentences("t", ("a b c", "x", "p q", "y", "z"), np.array([0, 1, 0, 0, 1]))
    # lengths 3,1,2,1,1 → (1,0):"y"; (1,1):"x","z" in file order; (2,0):"p q"; (3,0):"a b c"
    assert sentevals_order(split).tolist() == [3, 1, 4, 2, 0]
    pairs = LabelledPairs("p", ("a b", "a", "a"), ("x", "x y", "x"), np.array([0, 0, 1]))
    assert sentevals_order(pairs).tolist() == [2, 1, 0]


# ------------------------------------------------------------------ protocols on toy tasks
FILLER = ["the", "a", "film", "plot", "story", "was", "is", "very", "quite", "really", "and", "but"]


def _toy_sentences(words: list[str], n: int, rng: np.random.Generator) -> list[str]:
    """n sentences: the class word plus 3–6 filler words shared by every class."""
    return [" ".join([rng.choice(words), *rng.choice(FILLER, size=rng.integers(3, 7))]) for _ in range(n)]


def _toy_split(name: str, class_words: list[list[str]], n_per_class: int, seed: int) -> LabelledSentences:
    rng = np.random.default_rng(seed)
    sentences, labels = [], []
    for label, words in enumerate(class_words):
        sentences += _toy_sentences(words, n_per_class, rng)
        labels += [label] * n_per_class
    return LabelledSentences(name, tuple(sentences), np.array(labels))


CLASSES = [["great", "superb"], ["awful", "dreadful"], ["why", "how"]]


def test_nested_cross_validation_reaches_100_on_a_separable_task():
    data = TransferData("toy", 2, {"all": _toy_split("toy/all", CLASSES[:2], 40, seed=0)})
    result = evaluate_transfer_data(HashedBagOfWords(), data, kfold=3)
    assert result["acc"] == 100.0 and result["devacc"] == 100.0
    assert result["ndev"] == result["ntest"] == 80
    assert len(result["fold_acc"]) == 3 and len(result["C"]) == 3


def test_kfold_on_train_and_split_protocols_reach_100():
    train_test = TransferData("toy3", 3, {"train": _toy_split("train", CLASSES, 30, 1),
                                          "test": _toy_split("test", CLASSES, 10, 2)})
    result = evaluate_transfer_data(HashedBagOfWords(), train_test, kfold=3)
    assert result["acc"] == 100.0 and (result["ndev"], result["ntest"]) == (90, 30)
    assert result["C"] in [2.0 ** t for t in range(-1, 6)]
    split = TransferData("toy-split", 2, {"train": _toy_split("train", CLASSES[:2], 30, 3),
                                          "dev": _toy_split("dev", CLASSES[:2], 10, 4),
                                          "test": _toy_split("test", CLASSES[:2], 10, 5)})
    result = evaluate_transfer_data(HashedBagOfWords(), split)
    assert result["acc"] == 100.0 and result["devacc"] == 100.0 and result["C"] in [2.0 ** t for t in range(-2, 4)]


def test_pair_task_features_separate_paraphrases():
    rng = np.random.default_rng(0)

    def pairs(n: int) -> LabelledPairs:
        s1, s2, labels = [], [], []
        for i in range(n):
            a = " ".join(rng.choice(FILLER[:6], size=4)) + f" w{i}"
            same = i % 2 == 0
            s1.append(a)
            s2.append(a if same else " ".join(rng.choice(FILLER[6:], size=4)) + f" v{i}")
            labels.append(int(same))
        return LabelledPairs("pairs", tuple(s1), tuple(s2), np.array(labels))

    data = TransferData("toy-mrpc", 2, {"train": pairs(60), "test": pairs(20)})
    result = evaluate_transfer_data(HashedBagOfWords(), data, kfold=3)
    assert result["acc"] == 100.0 and result["f1"] == 100.0


def test_random_labels_stay_near_chance():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((120, 8))
    y = rng.integers(0, 2, 120)
    result = inner_kfold_accuracy(x, y, kfold=3)
    assert 25.0 < result["acc"] < 75.0


def _write_fake_root(root: Path) -> None:
    """A data root in SentEval's layout with small separable MR, SST2, TREC and MRPC files."""
    rng = np.random.default_rng(7)
    d = root / "downstream"
    (d / "MR").mkdir(parents=True)
    (d / "MR" / "rt-polarity.pos").write_text("\n".join(_toy_sentences(CLASSES[0], 30, rng)) + "\n")
    (d / "MR" / "rt-polarity.neg").write_text("\n".join(_toy_sentences(CLASSES[1], 30, rng)) + "\n")
    (d / "SST" / "binary").mkdir(parents=True)
    for split, n in (("train", 30), ("dev", 8), ("test", 8)):
        lines = [f"{s} \t1" for s in _toy_sentences(CLASSES[0], n, rng)] + \
                [f"{s} \t0" for s in _toy_sentences(CLASSES[1], n, rng)]
        (d / "SST" / "binary" / f"sentiment-{split}").write_text("\n".join(lines) + "\n")
    (d / "TREC").mkdir()
    for name, n in (("train_5500.label", 20), ("TREC_10.label", 6)):
        lines = [f"DESC:manner {s}" for s in _toy_sentences(["howto"], n, rng)] + \
                [f"NUM:count {s}" for s in _toy_sentences(["many"], n, rng)]
        (d / "TREC" / name).write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    (d / "MRPC").mkdir()
    for name, n in (("msr_paraphrase_train.txt", 30), ("msr_paraphrase_test.txt", 10)):
        rows = ["\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        for i in range(n):
            a = f"alpha{i} beta{i} gamma"
            rows.append(f"1\t{i}\t{i}\t{a}\t{a}" if i % 2 else f"0\t{i}\t{i}\t{a}\tdelta{i} epsilon{i}")
        (d / "MRPC" / name).write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_evaluate_transfer_end_to_end_writes_json(tmp_path):
    _write_fake_root(tmp_path / "data")
    out = tmp_path / "transfer.json"
    result = evaluate_transfer(HashedBagOfWords(), ["MR", "SST2", "TREC", "MRPC"], tmp_path / "data",
                               fast=True, output=out)
    assert result["kfold"] == 5 and result["fast"] is True
    assert result["scores"] == {"MR": 100.0, "SST2": 100.0, "TREC": 100.0, "MRPC": 100.0}
    assert result["avg"] == 100.0
    assert json.loads(out.read_text())["scores"] == result["scores"]
    assert result["details"]["TREC"]["ntest"] == 12 and result["details"]["MRPC"]["ndev"] == 30


# ------------------------------------------------------------------ bad input
def test_bad_task_names_and_kfold(tmp_path):
    with pytest.raises(ValueError, match="unknown transfer task"):
        load_transfer_task("SST5", tmp_path)
    with pytest.raises(ValueError, match=r"unknown transfer task\(s\) \['QQP'\]"):
        evaluate_transfer(HashedBagOfWords(), ["QQP"], tmp_path)
    with pytest.raises(ValueError, match="kfold must be >= 2"):
        evaluate_transfer(HashedBagOfWords(), ["MR"], tmp_path, kfold=1)
    with pytest.raises(DataError, match=r"downstream/MR.*not found"):
        load_transfer_task("MR", tmp_path)


def test_malformed_lines_name_file_and_line(tmp_path):
    _write_fake_root(tmp_path)
    trec = tmp_path / "downstream" / "TREC" / "TREC_10.label"
    trec.write_text("NUM:count How many ?\nWHAT how is this\n")
    with pytest.raises(DataError, match=r"TREC_10\.label:2: expected 'COARSE:fine question'"):
        load_transfer_task("TREC", tmp_path)
    sst = tmp_path / "downstream" / "SST" / "binary" / "sentiment-dev"
    sst.write_text("fine film\t1\nbad film\t2\n")
    with pytest.raises(DataError, match=r"sentiment-dev:2: expected 'sentence<TAB>0\|1'"):
        load_transfer_task("SST2", tmp_path)
    sst.write_bytes(b"fine film\t1\nbad \xff film\t0\n")
    with pytest.raises(DataError, match=r"sentiment-dev:2: not valid utf-8"):
        load_transfer_task("SST2", tmp_path)
    mrpc = tmp_path / "downstream" / "MRPC" / "msr_paraphrase_test.txt"
    mrpc.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tonly one sentence\n")
    with pytest.raises(DataError, match=r"msr_paraphrase_test\.txt:2: expected 5 tab-separated columns"):
        load_transfer_task("MRPC", tmp_path)
    mrpc.write_text("1\t1\t2\ta\tb\n")
    with pytest.raises(DataError, match=r"msr_paraphrase_test\.txt:1: expected a header line"):
        load_transfer_task("MRPC", tmp_path)


def test_unknown_split_layout_is_rejected():
    data = TransferData("odd", 2, {"train": _toy_split("train", CLASSES[:2], 5, 0)})
    with pytest.raises(ValueError, match=r"odd: splits \['train'\] match no SentEval protocol"):
        evaluate_transfer_data(HashedBagOfWords(), data)


def test_cli_transfer_suite(tiny_model, tmp_path, capsys):
    from cselab.cli import main

    _write_fake_root(tmp_path / "data")
    out = tmp_path / "cli.json"
    code = main(["eval", str(tiny_model), "--suite", "transfer", "--tasks", "MR", "TREC", "--fast",
                 "--data-dir", str(tmp_path / "data"), "--output", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "acc (5-fold)" in printed and "| MR " in printed and "| Avg." in printed
    assert set(json.loads(out.read_text())["scores"]) == {"MR", "TREC"}
    assert main(["eval", str(tiny_model), "--suite", "transfer", "--tasks", "QQP", "--data-dir", str(tmp_path)]) == 2


def test_progress_bar_counts_every_classifier_fit(tmp_path, capsys, monkeypatch):
    from cselab.model.evaluate.transfer import protocol_fits

    _write_fake_root(tmp_path / "data")
    loaded = {t: load_transfer_task(t, tmp_path / "data") for t in ("MR", "SST2", "TREC", "MRPC")}
    # MR: 5 outer folds × (6 C × 5 inner folds + 1 refit); SST2: 6 C + 1; TREC, MRPC: 7 C × 5 folds + 1
    assert [protocol_fits(d, 5) for d in loaded.values()] == [155, 7, 36, 36]
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    evaluate_transfer(HashedBagOfWords(), list(loaded), tmp_path / "data", fast=True)
    err = capsys.readouterr().err
    assert "transfer" in err and "234/234" in err        # the bar ends at the number of fits
    monkeypatch.setenv("TQDM_DISABLE", "1")
    evaluate_transfer(HashedBagOfWords(), ["SST2"], tmp_path / "data", fast=True)
    assert capsys.readouterr().err == ""
