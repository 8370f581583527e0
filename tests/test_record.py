"""A study's record (cselab/workbench/studies/record.py): one line per run, written by the study engine as
runs finish, read back into the claims' frame; what it keeps of a run folder; bad files named; the
plan skips recorded runs; --from-record rebuilds the claims, tables and figures without run folders."""
from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from synthetic_records import record as synthetic_record
from synthetic_records import study_records
from synthetic_runs import make_run

from cselab.model.config import load_config
from cselab.workbench.studies.record import (RecordError, check_config_hash, config_difference, put_records, read_record,
                                   record_path, records_frame, records_series, run_record, variant_of_label,
                                   write_record)
from cselab.workbench.studies.spec import load_study


def test_variant_and_seed_from_a_label():
    assert variant_of_label("mixcse-single-s3") == ("mixcse-single", 3)
    assert variant_of_label("apincse-layer-interlayer=2-s1") == ("apincse-layer-interlayer=2", 1)
    assert variant_of_label("simcse") == ("simcse", None)


def test_a_run_folder_becomes_one_record_line(tmp_path):
    cfg = load_config(None, {"method": ["mixcse"], "seed": 3, "mixcse": {"mix_lambda": 0.5}, "max_steps": 40})
    run = make_run(tmp_path / "run", ["mixcse"], seed=3)
    saved = json.loads((run / "config.json").read_text())
    code = {"sha256": "d" * 64, "files": 86, "torch": "2.13.0+cpu", "transformers": "5.24.0",
            "backbone": {"name": "all-minilm-l6", "sha256": "e" * 64}}
    saved.update(config=cfg.to_dict(), config_hash=cfg.config_hash(), git_commit="a" * 40,
                 versions={"torch": "2.13.0+cpu", "cuda": None}, code=code)
    (run / "config.json").write_text(json.dumps(saved))
    results = json.loads((run / "results.json").read_text())
    results.update(native_bf16="amx", cpu_capability="AVX512", train_seconds=12.3456789,
                   execution={"device": "cpu", "threads": 1})
    (run / "results.json").write_text(json.dumps(results))
    record = run_record(run, "mixcse-lambda0.5-s3", "paper-mixcse", "cpu")
    assert record["variant"] == "mixcse-lambda0.5" and record["seed"] == 3 and record["run"] == "run"
    whole = cfg.to_dict()
    assert whole.pop("output_dir") and record["config"] == whole   # every key, defaults included; no machine path
    assert record["config"]["lr"] == 3e-05 and record["config"]["mixcse"]["mix_lambda"] == 0.5
    assert record["format"] == 2 and record["code"] == code   # what trained it, from config.json
    assert check_config_hash(record)                      # the config rebuilds the identity
    assert record["commit"] == "a" * 40 and record["versions"] == {"torch": "2.13.0+cpu"}
    assert record["cpu"] == {"native_bf16": "amx", "capability": "AVX512"}
    assert record["train_seconds"] == 12.3457               # 6 significant digits
    assert record["sts"]["avg"] == results["sts"]["avg"]  # the scores kept whole
    metrics = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    train = [r for r in metrics if r["kind"] == "train"]
    assert record["train"]["step"] == [r["step"] for r in train]
    assert record["train"]["loss"] == [float(f"{r['loss']:.4g}") for r in train]
    probes = [r for r in metrics if r["kind"] == "probe"]
    assert record["probe"]["step"] == [r["step"] for r in probes] and "largest_angle" in record["probe"]
    assert record["dev"]["step"] == [r["step"] for r in metrics if r["kind"] == "eval"]
    with pytest.raises(FileNotFoundError, match="unfinished run"):
        (run / "results.json").unlink()
        run_record(run, "x-s1", "s", "cpu")
    record["config"]["mixcse"]["mix_lambda"] = 0.3        # a planted change of the config
    assert not check_config_hash(record)


def test_config_difference_keeps_only_what_is_off_the_defaults():
    cfg = load_config(None, {"method": ["clusterns"], "clusterns": {"num_clusters": 32}})
    assert config_difference(cfg.to_dict()) == {"method": ["clusterns"], "clusterns": {"num_clusters": 32}}


def test_record_files_are_written_whole_sorted_and_read_back(tmp_path):
    path = tmp_path / "fig" / "study" / "record.jsonl"
    assert record_path(tmp_path / "fig", "study") == path
    lines = [synthetic_record(label, "study", 76.0, int(label[-1])) for label in ("b-s1", "a-s2", "a-s1")]
    path.parent.mkdir(parents=True)
    write_record(path, lines)
    assert [r["label"] for r in read_record(path)] == ["a-s1", "a-s2", "b-s1"]
    put_records(path, [{**lines[0], "train_seconds": 9.0}, synthetic_record("c-s1", "study", 76.0, 1)])
    assert [(r["label"], r["train_seconds"]) for r in read_record(path)] == [
        ("a-s1", 150.0), ("a-s2", 150.0), ("b-s1", 9.0), ("c-s1", 150.0)]
    with pytest.raises(RecordError, match="two records for label"):
        write_record(path, [lines[0], lines[0]])
    text = path.read_text().splitlines()
    path.write_text("\n".join([text[0], "{not json", *text[1:]]) + "\n")
    with pytest.raises(RecordError, match=r"record.jsonl:2: not JSON"):
        read_record(path)
    path.write_text('[1, 2]\n')
    with pytest.raises(RecordError, match=r"record.jsonl:1: expected a record object"):
        read_record(path)
    path.write_text('{"label": "x", "format": 99}\n')
    with pytest.raises(RecordError, match="record format 99"):
        read_record(path)
    with pytest.raises(FileNotFoundError, match="no record"):
        read_record(tmp_path / "none.jsonl")
    link = tmp_path / "link.jsonl"
    target = tmp_path / "outside.txt"
    target.write_text("keep")
    link.symlink_to(target)
    with pytest.raises(RecordError, match="symbolic link"):
        write_record(link, lines[:1])
    assert target.read_text() == "keep"


def test_records_frame_and_series_derive_the_per_run_metrics():
    study = load_study("paper-mixcse", "cpu", notebooks=False)
    records = study_records(study, {"mixcse": 0.5})
    frame = records_frame(records)
    assert len(frame) == len(study.runs) and set(frame["variant"]) == {r.label.rsplit("-s", 1)[0] for r in study.runs}
    first = records[0]
    row = frame.iloc[0]
    assert row["avg"] == first["sts"]["avg"]
    assert row["largest_angle_final"] == first["probe"]["largest_angle"][-1]
    late = [v for s, v in zip(first["train"]["step"], first["train"]["grad/z1_norm"]) if s > 40]
    assert row["grad_norm_late"] == pytest.approx(1000 * sum(late) / len(late))
    assert row["clustering/DBpedia"] == first["extras"]["clustering"]["DBpedia"]
    series = records_series(records[:2], "probe", "largest_angle")
    assert len(series) == 18 and series["value"].iloc[0] == first["probe"]["largest_angle"][0]


def test_the_plan_skips_runs_the_record_holds(tmp_path):
    from cselab.workbench.studies.runner import make_plan

    study = load_study("paper-mixcse", "cpu", runs_root=tmp_path / "runs", notebooks=False)
    records = {r["label"]: r for r in study_records(study, {})}
    plan = make_plan(study, record=records)
    assert {p.status.kind for p in plan} == {"recorded"}
    changed = dict(records)
    first = study.runs[0].label
    changed[first] = {**records[first], "config_hash": "another"}   # a record of another config is not this run
    plan = {p.spec.label: p.status.kind for p in make_plan(study, record=changed)}
    assert plan[first] == "new" and list(plan.values()).count("new") == 1


@pytest.mark.parametrize("study", ["paper-mixcse", "paper-gs-infonce", "paper-clusterns", "paper-apincse",
                                   "cpu-compare"])
def test_from_record_rebuilds_claims_tables_and_figures_without_run_folders(study, tmp_path):
    from cselab.workbench.paper_tables.record_report import rebuild_from_record

    spec = load_study(study, "cpu", notebooks=False)
    write_record(record_path(tmp_path / "figures", study), study_records(spec, {"mixcse": 0.5, "clusterns": 0.2}))
    out = io.StringIO()
    assert rebuild_from_record(study, "cpu", tmp_path / "figures", tmp_path / "reports", stream=out) == 0
    tables = tmp_path / "reports" / study / "record"
    claims = pd.read_csv(tables / "claims.csv")
    assert claims["claim"].tolist() == [c.claim for c in spec.claims.claims]
    assert (tables / "power_plan.md").is_file() and (tables / "scores.md").is_file()
    figures = tmp_path / "figures" / study / "record"
    assert (figures / "claims.png").is_file()
    for figure in spec.claims.figures:
        assert (figures / f"{figure.name}.png").is_file() or f"{figure.name}:" in out.getvalue(), figure.name
    assert not (tmp_path / "runs").exists()


def test_record_figures_say_what_they_draw():
    from cselab.workbench.claims import Claim, claims_table
    from cselab.workbench.plots.claims import most_similar_words, plot_claims

    # Fig. 3's reading: the intermediate layer closest to the last, counted over seeds
    seeds = [[0.5, 0.6, 0.7, 0.9, 1.0], [0.5, 0.6, 0.95, 0.9, 1.0], [0.5, 0.6, 0.7, 0.8, 1.0]]
    assert most_similar_words(seeds) == "layer 3 in 2 of 3 seeds, layer 2 in 1"
    frame = pd.DataFrame({"variant": ["a"] * 4 + ["b"] * 4, "seed": [1, 2, 3, 4] * 2,
                          "avg": [1.0, 2.0, 3.0, 4.0, 1.5, 2.4, 3.6, 4.5]})
    table = claims_table(frame, [Claim("b beats a", "b", "a", paper_effect=3.0), Claim("a beats b", "a", "b")])
    fig = plot_claims(table, {"b beats a": [0.5, 0.4, 0.6, 0.5], "a beats b": [-0.5, -0.4, -0.6, -0.5]})
    (ax,) = [a for a in fig.axes]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b beats a", "a beats b"]
    assert {t.get_text() for t in ax.texts} == set(table["verdict"])
    offsets = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections if len(c.get_offsets()) == 4])
    assert sorted(offsets.tolist()) == sorted([0.5, 0.4, 0.6, 0.5, -0.5, -0.4, -0.6, -0.5])   # every seed drawn
    # a paper effect far off the data (ClusterNS's scaled 5.92 against differences of tenths) is named at
    # the axis edge instead of stretching the axis until every seed's difference is one point
    from cselab.workbench.claims import PowerRule

    far = claims_table(frame, [Claim("b beats a", "b", "a", paper_effect=30.0), Claim("a beats b", "a", "b")],
                       PowerRule(scale=1.0))
    (ax,) = plot_claims(far, {"b beats a": [0.5, 0.4, 0.6, 0.5], "a beats b": [-0.5, -0.4, -0.6, -0.5]}).axes
    assert "◇ +30.00 →" in {t.get_text() for t in ax.texts} and ax.get_xlim()[1] < 1.0


def test_a_log_axis_curve_takes_the_geometric_mean_and_a_positive_interval():
    """A gradient norm drawn on a log axis: the t-interval of the raw values reached below zero (the
    band ran off the axis); on the log scale it is the geometric mean and stays positive."""
    from cselab.workbench.plots.claims import _interval
    from scipy import stats

    mean, low, high, n = _interval([1e-4, 1e-3, 1e-2], log=True)
    assert n == 3 and mean == pytest.approx(1e-3)
    half = stats.t.ppf(0.975, 2) * np.std(np.log([1e-4, 1e-3, 1e-2]), ddof=1) / np.sqrt(3)
    assert (low, high) == pytest.approx((1e-3 * np.exp(-half), 1e-3 * np.exp(half)))
    assert low > 0
    assert _interval([1e-4, 1e-3, 1e-2])[1] < 0          # the raw interval: what the log axis could not draw


def test_a_replans_runs_beyond_the_first_plan_are_current_within_the_cap(tmp_path):
    """A re-plan asks for seeds the first plan did not (up to the rule's seed space): such a line is current
    (and its claims use it) when its group is planned and its config is the group's at that seed; the
    same line without the re-plan's mark, or past the seed space, is stale."""
    import dataclasses

    from cselab.workbench.paper_tables.record_report import study_frame
    from cselab.workbench.studies.record import planned_hash, read_study_record, write_record
    from cselab.workbench.studies.spec import load_study

    study = load_study("paper-mixcse", "cpu", notebooks=False)
    base = study.run("mixcse-s1").config
    cap = study.claims.rule.seed_space   # twice max_seeds: the numbers a continuation may name

    def line(seed: int, plan: dict) -> dict:
        r = synthetic_record(f"mixcse-s{seed}", "paper-mixcse", 76.0, seed)
        cfg = dataclasses.replace(base, seed=seed)
        return {**r, "config": {**r["config"], "seed": seed}, "config_hash": cfg.config_hash(), "plan": plan}

    replan = {"name": "re-plan", "made": "2026-12-04"}
    records = [line(cap, replan), line(cap + 1, replan), line(cap, {"name": "first"})]
    assert planned_hash(study, records[0]) == records[0]["config_hash"]
    assert planned_hash(study, records[1]) is None and planned_hash(study, records[2]) is None
    for i, r in enumerate(records):
        write_record(tmp_path / f"{i}.jsonl", [r])
    assert [len(read_study_record(tmp_path / f"{i}.jsonl", study).current) for i in range(3)] == [1, 0, 0]
    assert "not a run of the study's plan" in str(read_study_record(tmp_path / "1.jsonl", study).stale[0])
    frame, own = study_frame(study, records[:1])
    assert list(frame["seed"]) == [cap] and own == records[:1]
