"""Checkpoint selection (``select_by``): honoured by the loop, recorded, and marked in the tables."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from cselab.model.config import ConfigError, load_config, uses_sts
from cselab.model.io import read_jsonl
from cselab.workbench.tables import STS_SELECTED_NOTE, format_table, runs_table, to_latex, to_markdown
from cselab.model.train.selection import selection_score, split_heldout
from synthetic_runs import make_run


def test_selection_score_and_which_choices_read_sts():
    assert selection_score("stsb_dev", 10, 71.5, None) == 71.5
    assert selection_score("last", 10, 71.5, None) == 10.0
    assert selection_score("heldout_infonce", 10, 71.5, 2.25) == -2.25   # lower loss = better
    with pytest.raises(FloatingPointError):
        selection_score("heldout_infonce", 10, 71.5, float("nan"))
    assert uses_sts("stsb_dev") and uses_sts(None) and not uses_sts("last") and not uses_sts("heldout_infonce")


def test_config_validates_select_by():
    with pytest.raises(ConfigError, match="select_by: must be one of"):
        load_config(None, ["select_by=best"])
    with pytest.raises(ConfigError, match="early_stopping_patience: stops on a score that select_by: last"):
        load_config(None, ["select_by=last", "early_stopping_patience=2"])
    default = load_config(None).config_hash()
    assert load_config(None, ["select_by=stsb_dev", "heldout_sentences=1024"]).config_hash() == default
    assert load_config(None, ["select_by=last"]).config_hash() != default


def test_heldout_split_is_fixed_disjoint_and_keeps_file_order():
    corpus = [f"s{i}" for i in range(50)]
    train, heldout = split_heldout(corpus, 8)
    assert (train, heldout) == split_heldout(corpus, 8) and len(train) == 42 and len(heldout) == 8
    assert set(train).isdisjoint(heldout) and set(train) | set(heldout) == set(corpus)
    assert train == sorted(train, key=lambda s: int(s[1:])) and heldout == sorted(heldout, key=lambda s: int(s[1:]))
    with pytest.raises(ValueError, match="heldout_sentences=49"):
        split_heldout(corpus, 49)


def test_dev_sample_is_fixed_in_file_order_and_out_of_the_hash_when_unset():
    import numpy as np

    from cselab.model.data import STSPairs
    from cselab.model.train.guards import dev_sample

    dev = STSPairs("dev", tuple(f"a{i}" for i in range(40)), tuple(f"b{i}" for i in range(40)),
                   np.arange(40, dtype=float))
    sample = dev_sample(dev, 12)
    assert len(sample) == 12 and sample.sentences1 == dev_sample(dev, 12).sentences1
    kept = [int(s[1:]) for s in sample.sentences1]
    assert kept == sorted(kept) and len(set(kept)) == 12            # file order, no repeats
    assert [int(s[1:]) for s in sample.sentences2] == kept and sample.scores.tolist() == kept   # pairs kept whole
    assert dev_sample(dev, None) is dev and dev_sample(dev, 40) is dev
    default = load_config(None).config_hash()
    assert load_config(None, ["dev_max_pairs=null"]).config_hash() == default
    assert load_config(None, ["dev_max_pairs=500"]).config_hash() != default
    with pytest.raises(ConfigError, match="dev_max_pairs: must be >= 10"):
        load_config(None, ["dev_max_pairs=5"])


def _evals(run):
    """The evaluations during training (step 0's, of the model before training, is a reference: it
    never becomes best/)."""
    evals = [r for r in read_jsonl(run / "metrics.jsonl") if r["kind"] == "eval"]
    assert evals[0]["step"] == 0 and evals[0]["before_training"]
    return evals[1:]


def test_the_loop_honours_and_records_select_by(tiny_config, data_dir, tmp_path):
    from cselab.model.train import train

    base = {**tiny_config, "max_steps": 6, "eval_every": 2, "lr": 3e-4}
    dev_run = train(load_config(base), data_dir=data_dir, progress=False)
    last_run = train(load_config({**base, "select_by": "last"}), data_dir=data_dir, progress=False)
    held_run = train(load_config({**base, "select_by": "heldout_infonce", "heldout_sentences": 32,
                                  "dev_max_pairs": 100}), data_dir=data_dir, progress=False)

    evals = _evals(dev_run)
    best = max(evals, key=lambda r: r["stsb_dev"])
    results = json.loads((dev_run / "results.json").read_text())
    assert results["select_by"] == "stsb_dev" and results["best_step"] == best["step"]
    assert results["stsb_dev_pairs"] == 200   # tiny_config's sample (null: all 1,500)

    # last: best/ is the final model; selection never touches training (same train records)
    results = json.loads((last_run / "results.json").read_text())
    assert results["select_by"] == "last" and results["best_step"] == 6
    assert results["best_stsb_dev"] == _evals(last_run)[-1]["stsb_dev"]
    assert [r for r in read_jsonl(last_run / "metrics.jsonl") if r["kind"] == "train"] == \
        [r for r in read_jsonl(dev_run / "metrics.jsonl") if r["kind"] == "train"]
    assert json.loads((last_run / "best" / "cselab.json").read_text())["select_by"] == "last"

    # heldout_infonce: the lowest held-out loss wins, and STS-B dev of that step is reported
    evals = _evals(held_run)
    assert len(evals) == 3 and all(r["heldout_infonce"] > 0 for r in evals)
    best = min(evals, key=lambda r: r["heldout_infonce"])
    results = json.loads((held_run / "results.json").read_text())
    assert results["select_by"] == "heldout_infonce" and results["best_step"] == best["step"]
    assert results["stsb_dev_pairs"] == 100
    assert results["best_stsb_dev"] == best["stsb_dev"] and results["best_heldout_infonce"] == best["heldout_infonce"]
    saved = json.loads((held_run / "best" / "cselab.json").read_text())
    assert saved["step"] == best["step"] and saved["heldout_infonce"] == best["heldout_infonce"]
    card = (held_run / "best" / "README.md").read_text()
    assert "| checkpoint chosen by | `heldout_infonce`" in card and "chosen by `heldout_infonce`" in card


def test_tables_mark_rows_chosen_on_sts(tmp_path):
    runs = {"a": make_run(tmp_path / "a", ["simcse"], seed=1), "b": make_run(tmp_path / "b", ["simcse"], seed=2),
            "c": make_run(tmp_path / "c", ["mixcse"], seed=1)}
    # the MixCSE run chose its checkpoint without STS data; the SimCSE runs predate select_by (= stsb_dev)
    results = json.loads((runs["c"] / "results.json").read_text())
    (runs["c"] / "results.json").write_text(json.dumps({**results, "select_by": "heldout_infonce"}))
    table = runs_table(runs, by="method")
    assert list(table.index) == ["simcse", "mixcse"] and table.attrs["sts_selected"] == ["simcse"]
    assert list(format_table(table).index) == ["simcse†", "mixcse"]
    text = to_markdown(format_table(table))
    assert text.endswith(STS_SELECTED_NOTE) and "| simcse† " in text and "| mixcse " in text
    assert r"simcse\dag{}" in to_latex(format_table(table))
    (runs["a"] / "results.json").write_text(json.dumps({**results, "select_by": "last"}))
    (runs["b"] / "results.json").write_text(json.dumps({**results, "select_by": "last"}))
    clean = runs_table(runs, by="method")
    assert list(format_table(clean).index) == ["simcse", "mixcse"] and "†" not in to_markdown(format_table(clean))


def test_paper_comparison_table_marks_the_source(tmp_path):
    from cselab.workbench import paper_tables as pt

    runs = {f"SimCSE-s{s}": make_run(tmp_path / f"simcse-s{s}", ["simcse"], seed=s) for s in (1, 2)}
    runs["MixCSE-s1"] = make_run(tmp_path / "mixcse-s1", ["mixcse"], seed=1)
    results = json.loads((runs["MixCSE-s1"] / "results.json").read_text())
    (runs["MixCSE-s1"] / "results.json").write_text(json.dumps({**results, "select_by": "last"}))
    groups = {"SimCSE": {k: v for k, v in runs.items() if k.startswith("SimCSE")},
              "MixCSE": {"MixCSE-s1": runs["MixCSE-s1"]}}
    sts = {label: json.loads((path / "results.json").read_text())["sts"] for label, path in runs.items()}
    table = pt.comparison_table(pt.suite_summary(sts, groups, "sts", pt.STS_TASKS), pd.DataFrame({"Avg.": ["76.25"]}, index=["SimCSE"]))
    assert table.loc["SimCSE", "source"].tolist() == ["cselab (2 seeds)†", "published, paper"]
    assert table.loc["MixCSE", "source"] == "cselab (1 seed)" and table.attrs["note"] == STS_SELECTED_NOTE


def test_the_select_by_study_trains_each_method_once_per_selection(tmp_path):
    """cselab/workbench/studies/select-by.yaml: every method of cpu-compare twice, chosen on STS-B dev and on
    the held-out InfoNCE, otherwise the same config (docs/select_by.py scores best/ and last/)."""
    from cselab.workbench.studies import load_study

    study = load_study("select-by", "cpu", tmp_path / "runs")
    pairs = {}
    for spec in study.runs:
        pairs.setdefault(spec.label.split("-select_by=")[0], []).append(spec.config)
    assert list(pairs) == ["simcse", "mixcse", "gs_infonce", "clusterns", "apincse"]
    for configs in pairs.values():
        assert [c.select_by for c in configs] == ["stsb_dev", "heldout_infonce"]
        a, b = (c.to_dict() for c in configs)
        assert {k for k in a if a[k] != b[k]} == {"select_by"}   # the selection is the only difference
    assert [nb.name for nb in study.notebooks] == ["compare"]
    assert study.notebooks[0].parameters["baseline"] == "simcse, select_by=stsb_dev"
