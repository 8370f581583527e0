"""Clustering: loaders against the mirror (README counts), Hungarian accuracy / NMI / AMI on toy
labellings with known answers (AMI also against a direct evaluation of its defining formula),
K-means over seeds, the end-to-end evaluation, bad input."""
from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from toy_encoders import HashedBagOfWords

from cselab.model.data import DataError
from cselab.model.data.clustering import SHORT_TEXT_SETS, load_clustering_task, load_dbpedia, load_short_text
from cselab.model.evaluate.clustering import (CLUSTERING_TASKS, cluster_embeddings, cluster_scores, evaluate_clustering,
                                        hungarian_accuracy)

# shared/data/README.md: rows (labels).
README = {"AgNews": (8000, 4), "SearchSnippets": (12340, 8), "StackOverflow": (20000, 20),
          "Biomedical": (20000, 20), "GoogleNews-TS": (11109, 152), "GoogleNews-T": (11108, 152),
          "GoogleNews-S": (11108, 152), "Tweet": (2472, 89)}


@pytest.mark.parametrize("name", list(SHORT_TEXT_SETS))
def test_short_text_counts_match_the_readme(data_dir, name):
    data = load_short_text(name, data_dir)
    assert (len(data), data.n_clusters) == README[name]
    assert len(data.texts) == len(data.labels)
    assert not any("\r" in t or "\t" in t for t in data.texts)   # CRLF and the label column are gone


def test_short_text_first_rows_and_quirks(data_dir):
    assert load_short_text("AgNews", data_dir).texts[0].startswith("bhp billiton approves chile copper project")
    bio = load_short_text("Biomedical", data_dir)   # CRLF file without a final newline
    assert bio.texts[-1].startswith("improved efficiency of mouse guinea pig") and bio.labels[-1] == 20
    so = load_short_text("StackOverflow", data_dir)
    assert so.texts[0] == "How do I fill a DataSet or a DataTable from a LINQ query resultset ?"
    assert so.texts[10343] == 'Phonon VideoWidget error: "the video widget could not be'   # ClusterNS cuts at the tab
    tweet = load_short_text("Tweet", data_dir)
    assert tweet.labels.min() == 1 and tweet.labels.max() == 110   # 89 labels, not contiguous


def test_dbpedia_counts_and_names(data_dir):
    test, val, both = (load_dbpedia(s, data_dir) for s in ("test", "val", "all"))
    assert (len(test), len(val), len(both)) == (5000, 5000, 10000)
    assert test.n_clusters == val.n_clusters == 14
    assert test.label_names[1] == "Artist" and test.label_names[14] == "Film"
    assert test.texts[0].startswith("Thomas E. Breitenbach (born July 29 1951 in Queens New York)")
    assert Counter(test.labels.tolist())[1] == 362 and Counter(val.labels.tolist())[10] == 337
    assert load_clustering_task("DBpedia", data_dir).texts == test.texts


# ------------------------------------------------------------------ metrics with known answers
def test_hungarian_accuracy_by_hand():
    assert hungarian_accuracy([0, 0, 1, 1, 2], [2, 2, 0, 0, 1]) == 1.0            # a relabelling
    # clusters {1:[0,0], 0:[0,1,1], 2:[2]}: best map 1→0, 0→1, 2→2 gets 2 + 2 + 1 of 6
    assert hungarian_accuracy([0, 0, 0, 1, 1, 2], [1, 1, 0, 0, 0, 2]) == pytest.approx(5 / 6)
    assert hungarian_accuracy([0, 0, 1, 1], [0, 1, 2, 3]) == 0.5                  # more clusters than classes
    assert hungarian_accuracy([5, 5, 9, 9], [0, 0, 0, 0]) == 0.5                  # one cluster, labels not 0..k
    with pytest.raises(ValueError, match="two label vectors of equal length"):
        hungarian_accuracy([0, 1], [0])


def _expected_mutual_information(a: np.ndarray, b: np.ndarray, n: int) -> float:
    """E[MI] under the hypergeometric model (Vinh, Epps & Bailey 2010, eq. 24a), term by term."""
    total = 0.0
    for ai in a:
        for bj in b:
            for nij in range(max(1, ai + bj - n), min(ai, bj) + 1):
                log_p = (math.lgamma(ai + 1) + math.lgamma(bj + 1) + math.lgamma(n - ai + 1) + math.lgamma(n - bj + 1)
                         - math.lgamma(n + 1) - math.lgamma(nij + 1) - math.lgamma(ai - nij + 1)
                         - math.lgamma(bj - nij + 1) - math.lgamma(n - ai - bj + nij + 1))
                total += nij / n * math.log(n * nij / (ai * bj)) * math.exp(log_p)
    return total


def _direct_ami(u: list[int], v: list[int]) -> float:
    n = len(u)
    table = Counter(zip(u, v))
    a, b = Counter(u), Counter(v)
    mi = sum(c / n * math.log(n * c / (a[i] * b[j])) for (i, j), c in table.items())
    h = lambda counts: -sum(c / n * math.log(c / n) for c in counts.values())  # noqa: E731
    emi = _expected_mutual_information(np.array(list(a.values())), np.array(list(b.values())), n)
    return (mi - emi) / ((h(a) + h(b)) / 2 - emi)


def test_nmi_and_ami_by_hand():
    # H(true) = ln 2, H(pred) = 1.5 ln 2, MI = ln 2 (pred refines true): NMI = ln2 / (1.25 ln2) = 0.8
    scores = cluster_scores(np.array([0, 0, 1, 1]), np.array([0, 0, 1, 2]))
    assert scores["nmi"] == pytest.approx(0.8)
    assert scores["acc"] == 0.75
    u = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    v = [0, 0, 1, 1, 1, 2, 2, 2, 0, 2]
    assert cluster_scores(np.array(u), np.array(v))["ami"] == pytest.approx(_direct_ami(u, v), abs=1e-12)
    assert cluster_scores(np.array(u), np.array(u))["ami"] == pytest.approx(1.0)


def test_kmeans_recovers_separated_blobs_for_every_seed():
    rng = np.random.default_rng(0)
    centres = np.eye(3, 16) * 10
    labels = np.repeat([7, 8, 9], 30)
    x = centres[labels - 7] + rng.normal(scale=0.1, size=(90, 16))
    result = cluster_embeddings(x, labels, seeds=(0, 1, 2))
    assert result["n_clusters"] == 3 and result["seeds"] == [0, 1, 2]
    for metric in ("acc", "nmi", "ami"):
        assert result[metric]["mean"] == pytest.approx(1.0) and result[metric]["std"] == pytest.approx(0.0)
        assert result[metric]["runs"] == pytest.approx([1.0, 1.0, 1.0])


def test_seeds_give_mean_and_sample_std():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 4))           # no structure: each seed finds a different partition
    labels = rng.integers(0, 3, 60)
    result = cluster_embeddings(x, labels, seeds=(0, 1, 2, 3))
    runs = result["acc"]["runs"]
    assert result["acc"]["mean"] == pytest.approx(np.mean(runs))
    assert result["acc"]["std"] == pytest.approx(np.std(runs, ddof=1))
    assert len(set(runs)) > 1
    again = cluster_embeddings(x, labels, seeds=(0, 1, 2, 3))
    assert again["acc"]["runs"] == runs   # seeded: reproducible


def _write_fake_root(root):
    st = root / "clustering" / "short-text"
    (st / "stackoverflow").mkdir(parents=True)
    # each class word three times: K-means (one init per seed, as the protocol runs it) separates the
    # classes whatever scikit-learn version draws the starting centroids
    lines = [f"{k + 1}\t{w} {w} {w} {w}{i} text\t" for k, w in enumerate(["linq", "matlab", "drupal"]) for i in range(10)]
    (st / "stackoverflow" / "stackoverflow_true_text").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    (st / "T").write_text("\n".join(f"{k * 3 + 1}\t{w} news {i}" for k, w in enumerate(["swift", "nasa"])
                                    for i in range(10)) + "\n")
    db = root / "clustering" / "dbpedia"
    db.mkdir(parents=True)
    (db / "meta.txt").write_text("1: Artist\n2: Company\n#train: 0\n")
    (db / "test.csv").write_text("\n".join(f'"{k}","{w} ""quoted"", item {i}"' for k, w in ((1, "painter"), (2, "firm"))
                                           for i in range(12)) + "\n")


def test_evaluate_clustering_end_to_end(tmp_path):
    _write_fake_root(tmp_path)
    out = tmp_path / "clustering.json"
    result = evaluate_clustering(HashedBagOfWords(), ["DBpedia", "StackOverflow", "GoogleNews-T"], tmp_path,
                                 seeds=(0, 1), output=out)
    assert result["scores"] == pytest.approx({"DBpedia": 100.0, "StackOverflow": 100.0, "GoogleNews-T": 100.0})
    assert result["metric"] == {"DBpedia": "ami", "StackOverflow": "acc", "GoogleNews-T": "acc"}
    assert result["short_text_avg"] == pytest.approx(100.0)
    assert result["details"]["StackOverflow"]["n_clusters"] == 3 and result["details"]["DBpedia"]["n"] == 24
    assert json.loads(out.read_text())["metric"]["DBpedia"] == "ami"
    assert load_dbpedia("test", tmp_path).texts[0] == 'painter "quoted", item 0'


def test_every_task_name_is_known():
    assert CLUSTERING_TASKS == ("DBpedia", *SHORT_TEXT_SETS) and len(CLUSTERING_TASKS) == 9


# ------------------------------------------------------------------ bad input
def test_bad_input_names_file_and_line(tmp_path):
    _write_fake_root(tmp_path)
    with pytest.raises(ValueError, match="unknown short-text set 'News'"):
        load_short_text("News", tmp_path)
    with pytest.raises(ValueError, match=r"unknown clustering task\(s\) \['MNIST'\]"):
        evaluate_clustering(HashedBagOfWords(), ["MNIST"], tmp_path)
    with pytest.raises(ValueError, match="split must be one of"):
        load_dbpedia("train", tmp_path)
    t = tmp_path / "clustering" / "short-text" / "T"
    t.write_text("1\tfine\nx\tbad label\n")
    with pytest.raises(DataError, match=r"short-text/T:2: label 'x' is not an integer"):
        load_short_text("GoogleNews-T", tmp_path)
    t.write_text("1\tfine\nno tab here\n")
    with pytest.raises(DataError, match=r"short-text/T:2: expected 'label<TAB>text'"):
        load_short_text("GoogleNews-T", tmp_path)
    (tmp_path / "clustering" / "dbpedia" / "test.csv").write_text('"1","ok"\n"15","unknown class"\n')
    with pytest.raises(DataError, match=r"test\.csv:2: label '15' is not one of the ids in meta\.txt"):
        load_dbpedia("test", tmp_path)
    with pytest.raises(DataError, match=r"short-text/tweet-original-order\.txt: .*not found"):
        load_short_text("Tweet", tmp_path)
    with pytest.raises(ValueError, match=r"n_clusters must be in \[1, 3\]"):
        cluster_embeddings(np.zeros((3, 2)), np.array([0, 1, 2]), n_clusters=5)


def test_cli_clustering_suite(tiny_model, tmp_path, capsys):
    from cselab.cli import main

    _write_fake_root(tmp_path)
    code = main(["eval", str(tiny_model), "--suite", "clustering", "--tasks", "DBpedia", "GoogleNews-T",
                 "--seeds", "0", "1", "--data-dir", str(tmp_path)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "| DBpedia " in printed and "| ami " in printed and "std (2 seeds)" in printed


def test_progress_bar_over_sets_and_seeds(tmp_path, capsys, monkeypatch):
    _write_fake_root(tmp_path)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    evaluate_clustering(HashedBagOfWords(), ["DBpedia", "StackOverflow", "GoogleNews-T"], tmp_path, seeds=(0, 1))
    err = capsys.readouterr().err
    assert "clustering" in err and "6/6" in err          # 3 sets × 2 seeds
    evaluate_clustering(HashedBagOfWords(), ["StackOverflow"], tmp_path, seeds=(0, 1), show_progress_bar=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TQDM_DISABLE", "true")
    evaluate_clustering(HashedBagOfWords(), ["StackOverflow"], tmp_path, seeds=(0, 1))
    assert capsys.readouterr().err == ""
