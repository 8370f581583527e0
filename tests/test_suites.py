"""Evaluation suites as a registry (cselab.evaluate.suites): the CLI and the evaluation cache read it,
so a suite registered there is at once a `cselab eval --suite` and an `evaluate_run` suite."""
from __future__ import annotations

import json

import pytest

from cselab.cli import build_parser, check_suite_options, main
from cselab.data.transfer import TRANSFER_TASKS
from cselab.evaluate.clustering import DEFAULT_SEEDS
from cselab.evaluate.cache import evaluate_run
from cselab.evaluate.sts import evaluate_pairs
from cselab.evaluate.suites import SUITES, Suite, get_suite


def test_the_four_suites_and_what_cselab_eval_hands_each():
    assert list(SUITES) == ["sts", "transfer", "clustering", "geometry"]

    def options(*argv):
        args = build_parser().parse_args(["eval", "model", *argv])
        check_suite_options(args)          # as cmd_eval: refuse inapplicable options, fill the defaults
        return get_suite(args.suite).cli_options(args)

    assert options()["aggregate"] == "all" and len(options()["tasks"]) == 7 and options()["pairs"] is None
    assert options("--suite", "transfer", "--fast") == {"tasks": TRANSFER_TASKS, "fast": True, "probe": "sklearn"}
    assert options("--suite", "clustering", "--tasks", "DBpedia") == {"tasks": ["DBpedia"], "seeds": list(DEFAULT_SEEDS)}
    # --texts alone clusters only the user's file; with --tasks the standard sets as well
    assert options("--suite", "clustering", "--texts", "my.tsv") == {"tasks": [], "seeds": list(DEFAULT_SEEDS),
                                                                     "texts": ["my.tsv"]}
    assert options("--suite", "clustering", "--texts", "my.tsv", "--tasks", "Tweet")["tasks"] == ["Tweet"]
    assert options("--suite", "geometry", "--split", "dev") == {"split": "dev"}
    assert [SUITES[s].primary for s in SUITES] == ["avg", "avg", "short_text_avg", "uniformity"]
    # the one suite that scores a given set of pairs: training's dev evaluation asks it for STS-B dev
    assert [s for s in SUITES if SUITES[s].score_pairs is not None] == ["sts"]
    assert SUITES["sts"].score_pairs is evaluate_pairs
    with pytest.raises(ValueError, match=r"suite must be one of \('sts', 'transfer', 'clustering', 'geometry'\), got 'x'"):
        get_suite("x")


def test_a_registered_suite_is_a_cli_suite_and_a_cached_run_suite(tiny_model, tmp_path, monkeypatch, capsys):
    calls = []

    def count_words(model, data_dir=None, batch_size=128, words=("a", "b")):
        calls.append(words)
        vectors = model.encode(list(words), batch_size=batch_size)
        return {"n": len(words), "dim": int(vectors.shape[1])}

    toy = Suite("toy", count_words, "a toy suite", "n", True, lambda args: {}, lambda r, label: f"{label}: {r['n']}")
    monkeypatch.setitem(SUITES, "toy", toy)
    assert main(["eval", str(tiny_model), "--suite", "toy", "--output", str(tmp_path / "out.json")]) == 0
    assert capsys.readouterr().out.strip() == f"{tiny_model} (cls_before_pooler): 2"
    assert json.loads((tmp_path / "out.json").read_text())["dim"] == 32

    from cselab.encoder import SentenceEncoder

    run = tmp_path / "run"
    SentenceEncoder.from_pretrained(tiny_model).save(run / "best")
    first = evaluate_run(run, "toy", words=["x", "y", "z"])
    again = evaluate_run(run, "toy", words=["x", "y", "z"])
    assert first == again
    expected = {"n": 3, "dim": 32, "options": {"words": ["x", "y", "z"]}, "model": "best"}
    assert {k: v for k, v in first.items() if k != "data_root"} == expected   # data_root: where it was computed
    assert len(calls) == 2 and len(list((run / "evaluations").glob("toy-best-*.json"))) == 1   # once by the CLI


def test_an_unknown_suite_is_one_line_before_any_model_loads(capsys):
    assert main(["eval", "no/such/model", "--suite", "bogus"]) == 2
    assert capsys.readouterr().err.strip() == ("cselab eval: error: suite must be one of ('sts', 'transfer', "
                                               "'clustering', 'geometry'), got 'bogus'")
