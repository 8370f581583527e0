"""Your own evaluation data: a TSV of scored pairs (the STS protocol) and one of labelled texts (clustering);
bad files refused."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cselab.cli import main
from cselab.model.data.custom import load_pairs_file, load_texts_file, pair_files, text_files
from cselab.model.data.errors import DataError
from cselab.model.evaluate import evaluate_sts
from cselab.model.evaluate.clustering import evaluate_clustering
from cselab.model.evaluate.cache import evaluation_frame
from toy_encoders import LookupEncoder

# cosines 1, 0.7071, 0, -0.7071 (ranks 4 3 2 1) against gold 5, 3, 4, 1 (ranks 4 2 3 1):
# Σd² = 2, Spearman = 1 − 6·2 / (4·(16 − 1)) = 0.8
TOY = {"a": [1, 0], "a2": [1, 0], "b": [1, 0], "b2": [1, 1], "c": [1, 0], "c2": [0, 1], "d": [1, 0], "d2": [-1, 1]}


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_pairs_file_is_scored_with_the_sts_protocol(tmp_path):
    with_header = write(tmp_path, "mine.tsv", "sentence1\tsentence2\tscore\na\ta2\t5\nb\tb2\t3\n\nc\tc2\t4\nd\td2\t1\n")
    no_header = write(tmp_path, "plain.tsv", "a\ta2\t5\nb\tb2\t3\nc\tc2\t4\nd\td2\t1\n")
    result = evaluate_sts(LookupEncoder(TOY), tasks=[], pairs=[with_header, no_header])
    assert result["custom"]["scores"] == {"mine": pytest.approx(80.0), "plain": pytest.approx(80.0)}
    assert result["custom"]["details"]["mine"] == {"file": str(with_header), "pairs": 4}
    assert result["scores"] == {} and np.isnan(result["avg"])   # the standard average is never mixed with yours
    frame = evaluation_frame({"run": result})
    assert frame.loc[0, "mine"] == pytest.approx(80.0)
    pairs = load_pairs_file(with_header)
    assert pairs.sentences1 == ("a", "b", "c", "d") and list(pairs.scores) == [5, 3, 4, 1]


@pytest.mark.parametrize("text, message", [
    ("a\ta2\t5\nb\tb2\n", r"bad\.tsv:2: expected 3 tab-separated columns, found 2"),
    ("s1\ts2\tscore\na\ta2\t5\nb\tb2\thigh\n", r"bad\.tsv:3: gold score 'high' is not a number"),
    ("a\ta2\t5\n\tb2\t3\n", r"bad\.tsv:2: a sentence is empty"),
    ("a\ta2\t5\nb\tb2\t5\n", r"bad\.tsv: every gold score is 5\.0"),
    ("s1\ts2\tscore\na\ta2\t5\n", r"bad\.tsv: 1 scored pair\(s\)"),
])
def test_a_bad_pairs_file_is_refused_naming_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        load_pairs_file(write(tmp_path, "bad.tsv", text))


def test_names_must_be_distinct_and_not_a_standard_task(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(ValueError, match="two files are named 'p'"):
        pair_files([tmp_path / "p.tsv", tmp_path / "x" / "p.tsv"])
    with pytest.raises(ValueError, match="'STS12' is a standard STS task"):
        pair_files([tmp_path / "STS12.tsv"])


def test_cli_scores_pairs_beside_the_standard_tasks_and_refuses_a_bad_file(tiny_model, data_dir, tmp_path, capsys):
    good = write(tmp_path, "domain.tsv", "a man plays a guitar\tsomeone plays music\t4\nthe cat sleeps\tstocks fell\t0\n"
                 "a dog runs\ta dog is running\t5\n")
    out = tmp_path / "result.json"
    assert main(["eval", str(tiny_model), "--tasks", "STS13", "--pairs", str(good), "--data-dir", str(data_dir),
                 "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "STS13 |" in printed and "| your pairs " in printed and "| domain " in printed
    saved = json.loads(out.read_text())
    assert set(saved["scores"]) == {"STS13"} and -100 <= saved["custom"]["scores"]["domain"] <= 100
    bad = write(tmp_path, "broken.tsv", "a\tb\t1\nc\td\n")
    assert main(["eval", str(tiny_model), "--pairs", str(bad), "--data-dir", str(data_dir)]) == 2
    assert f"{bad}:2: expected 3 tab-separated columns, found 2" in capsys.readouterr().err


# Two well-separated blobs; the fourth "sport" text sits in the first blob with the three "politics"
# texts. K = 2 (two labels) puts t1–t4 in one cluster and t5, t6 in the other; the best one-to-one
# matching maps them to politics (3 right) and sport (2 right): accuracy 5/6.
BLOBS = {"t1": [0, 0], "t2": [0, 1], "t3": [1, 0], "t4": [1, 1], "t5": [10, 10], "t6": [10, 11]}
TEXTS = "label\ttext\npolitics\tt1\npolitics\tt2\npolitics\tt3\nsport\tt4\n\nsport\tt5\nsport\tt6\n"


def test_a_texts_file_is_clustered_with_k_its_labels_beside_the_standard_sets(tmp_path):
    from sklearn.metrics import normalized_mutual_info_score

    path = write(tmp_path, "news.tsv", TEXTS)
    data = load_texts_file(path)
    assert data.texts == ("t1", "t2", "t3", "t4", "t5", "t6") and data.n_clusters == 2
    assert list(data.labels) == [0, 0, 0, 1, 1, 1] and data.label_names == {0: "politics", 1: "sport"}
    result = evaluate_clustering(LookupEncoder(BLOBS), tasks=[], seeds=[0, 1], texts=[path], show_progress_bar=False)
    own = result["custom"]
    assert own["scores"] == {"news": pytest.approx(100 * 5 / 6)} and own["metric"] == "acc"
    nmi = normalized_mutual_info_score([0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 1, 1])
    assert own["details"]["news"]["nmi"]["runs"] == pytest.approx([nmi, nmi])
    assert own["details"]["news"]["file"] == str(path) and own["details"]["news"]["n_clusters"] == 2
    assert result["scores"] == {} and "short_text_avg" not in result   # never inside the standard average
    assert evaluation_frame({"run": result}).loc[0, "news"] == pytest.approx(100 * 5 / 6)


@pytest.mark.parametrize("text, message", [
    ("a\tx\nb\n", r"bad\.tsv:2: expected 2 tab-separated columns, found 1"),
    ("a\tx\n\ty\nb\tz\n", r"bad\.tsv:2: the label is empty"),
    ("a\tx\nb\t \n", r"bad\.tsv:2: the text is empty"),
    ("label\ttext\na\tx\na\ty\n", r"bad\.tsv: 1 distinct label\(s\)"),
    ("a\tx\nb\ty\n", r"bad\.tsv: 2 texts for 2 labels"),
])
def test_a_bad_texts_file_is_refused_naming_file_and_line(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        load_texts_file(write(tmp_path, "bad.tsv", text))
    with pytest.raises(ValueError, match="'Tweet' is a standard clustering set"):
        text_files([tmp_path / "Tweet.tsv"])


def test_cli_clusters_texts_and_refuses_them_with_another_suite(tiny_model, tmp_path, capsys):
    good = write(tmp_path, "domain.tsv", "".join(f"{label}\t{label} text number {i}\n"
                                                 for label in ("cat", "dog", "fish") for i in range(4)))
    out = tmp_path / "result.json"
    assert main(["eval", str(tiny_model), "--suite", "clustering", "--texts", str(good), "--seeds", "0",
                 "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| your texts " in printed and "| domain " in printed
    saved = json.loads(out.read_text())
    assert saved["scores"] == {} and saved["custom"]["details"]["domain"]["n_clusters"] == 3
    # the best one-to-one matching of 3 clusters to 3 classes of 4 matches at least a third of the texts
    assert 100 / 3 - 1e-9 <= saved["custom"]["scores"]["domain"] <= 100
    assert main(["eval", str(tiny_model), "--texts", str(good)]) == 2
    assert "--texts: does not apply to --suite sts" in capsys.readouterr().err
