"""The record-to-page path (`make findings`, cselab/workbench/paper_tables/record_report.py) reads each
study once per version of its file, through the light reader (read_study_plan: claims, power plan,
labels, groups; no run config validated) and never through load_study; the only configs it resolves
are those the stale-line check compares the record's hashes with, each run's once. The light reader
plans what load_study plans; one helper says which profile a list entry belongs to."""
from __future__ import annotations

import collections
import copy
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO

from cselab.workbench.paper_tables import record_report
from cselab.workbench.studies import run_grid, spec
from cselab.workbench.studies.spec import StudyError, available_studies, load_study, read_study_plan

PAGE = REPO / "docs" / "cpu-compare.md"   # cpu-compare's five blocks; four of its claims decided by paper studies


class Calls:
    """Counts what the path calls: the readers of a study and load_config (split by who asked)."""

    def __init__(self, monkeypatch):
        self.plans = collections.Counter()      # study file → read_study_plan calls
        self.configs = collections.Counter()    # load_config calls: "plan" (inside a reader), "stale check" (after)
        self.load_study = 0
        self._in_reader = False
        plan, load_config = spec.read_study_plan, run_grid.load_config

        def counted_plan(source, *args, **kwargs):
            self.plans[Path(source).stem] += 1
            self._in_reader = True
            try:
                return plan(source, *args, **kwargs)
            finally:
                self._in_reader = False

        def counted_config(*args, **kwargs):
            self.configs["plan" if self._in_reader else "stale check"] += 1
            return load_config(*args, **kwargs)

        def no_load_study(*args, **kwargs):
            self.load_study += 1
            raise AssertionError("the record-to-page path validates no study (load_study)")

        monkeypatch.setattr(record_report, "read_study_plan", counted_plan)
        monkeypatch.setattr(run_grid, "load_config", counted_config)
        monkeypatch.setattr(spec, "load_study", no_load_study)
        monkeypatch.setattr(record_report, "load_study", no_load_study, raising=False)
        record_report._plan.cache_clear()
        record_report._deciding_table.cache_clear()


def _planned_runs(*studies: str) -> int:
    return sum(len(read_study_plan(s).runs) for s in studies)


def test_one_page_reads_each_study_once_and_validates_no_run_config(tmp_path, monkeypatch):
    page = tmp_path / PAGE.name
    page.write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    deciding = ["paper-mixcse", "paper-gs-infonce", "paper-clusterns", "paper-apincse"]   # cpu-compare's decided_in studies
    expected_configs = _planned_runs("cpu-compare", *deciding)
    calls = Calls(monkeypatch)
    record_report.update_docs([page], root=REPO, write=True)      # make findings, for this one page
    assert calls.load_study == 0
    # five blocks of cpu-compare, and three studies deciding its shared claims: each study read once
    assert calls.plans == {"cpu-compare": 1, **{s: 1 for s in deciding}}, calls.plans
    # no config resolved to read claims, plan, labels and groups; the stale check resolves each run's once
    # (at most once each: only the runs its record's lines name, and a re-plan's groups)
    assert set(calls.configs) == {"stale check"} and 0 < calls.configs["stale check"] <= expected_configs, calls.configs
    assert "<!-- record: claims cpu-compare -->" in page.read_text(encoding="utf-8")

    # the next run (the next page, or make findings' second file): nothing read or resolved again
    before = copy.deepcopy((calls.plans, calls.configs))
    assert record_report.update_docs([page], root=REPO, write=False) == {}
    assert (calls.plans, calls.configs) == before


def test_a_plan_block_resolves_no_config_and_a_new_study_file_version_is_read_again(tmp_path, monkeypatch):
    studies = tmp_path / "studies"
    shutil.copytree(Path(spec.__file__).parent, studies, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(spec, "STUDY_DIR", studies)
    page = tmp_path / "page.md"
    page.write_text("<!-- record: plan paper-mixcse -->\n<!-- /record -->\n"
                    "<!-- record: plan paper-mixcse -->\n<!-- /record -->\n")
    calls = Calls(monkeypatch)
    record_report.update_docs([page], root=REPO, write=True)
    assert calls.plans == {"paper-mixcse": 1} and calls.configs == {}, (calls.plans, calls.configs)
    study = studies / "paper-mixcse.yaml"
    stat = study.stat()
    os.utime(study, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))   # a new version of the file
    record_report.update_docs([page], root=REPO, write=False)
    assert calls.plans == {"paper-mixcse": 2} and calls.configs == {}


@pytest.mark.parametrize("study", available_studies())
def test_the_light_reader_plans_what_load_study_plans(study):
    full = load_study(study, "cpu", notebooks=False)
    light = read_study_plan(study, "cpu")
    assert (light.name, light.path, light.profile, light.profiles, light.figures_dir, light.smoke) == \
           (full.name, full.path, full.profile, full.profiles, full.figures_dir, full.smoke)
    assert [(r.label, r.group) for r in light.runs] == [(r.label, r.group) for r in full.runs]
    assert light.claims.claims == full.claims.claims and light.claims.rule == full.claims.rule
    assert [(f.name, f.kind, f.spec) for f in light.claims.figures] == [(f.name, f.kind, f.spec) for f in full.claims.figures]
    plan, full_plan = light.claims.plan(), full.claims.plan()
    assert (plan is None) == (full_plan is None) and (plan is None or plan.equals(full_plan))
    # resolved when asked for: the same configs and run folders
    assert [(r.config.config_hash(), r.run_dir) for r in light.runs] == \
           [(r.config.config_hash(), r.run_dir) for r in full.runs]


def test_the_smoke_profile_plans_the_same_tiny_runs():
    full = load_study("cpu-demo", "smoke", notebooks=False)
    light = read_study_plan("cpu-demo", "smoke")
    assert light.smoke and [(r.label, r.config, r.run_dir, r.spec().stand_in_for) for r in light.runs] == \
           [(r.label, r.config, r.run_dir, r.stand_in_for) for r in full.runs]


@pytest.mark.parametrize("key", ["runs", "claims", "record_figures"])
def test_every_list_names_an_unknown_profile_in_one_way(tmp_path, key):
    studies = tmp_path / "studies"
    shutil.copytree(Path(spec.__file__).parent, studies, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = studies / "paper-mixcse.yaml"
    data = yaml.safe_load(path.read_text())
    entry = next(e for e in data[key] if e.get("profiles") == ["cpu"])
    entry["profiles"] = ["cpu", "tpu"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for reader in (load_study, read_study_plan):
        with pytest.raises(StudyError, match=r"profiles: unknown profile 'tpu' \(the study's profiles: gpu, cpu\)$"):
            reader(str(path), "cpu")


def test_scores_take_the_suites_columns_and_the_shared_mean_sd_text():
    from cselab.model.evaluate.suites import task_labels

    assert record_report.sts_columns() == [*task_labels("sts"), "avg"]
    frame = pd.DataFrame({"variant": ["a", "a", "b"], "seed": [1, 2, 1], "avg": [70.0, 71.0, 72.5],
                          "STS12": [60.0, 61.5, None]})
    table = record_report.scores_table(frame, ["a", "b", "c"])
    assert table.loc["a", "avg"] == "70.50 ± 0.71" and table.loc["b", "avg"] == "72.50"   # one seed: its score
    assert table.loc["b", "STS12"] == "–" and table.loc["a", "STS13"] == "–"            # none: –
    assert list(table.index) == ["a", "b"]


def test_a_tally_names_the_plans_its_runs_came_from():
    """The runs of a tally by plan: the first plan, then each day's re-plan, joined as a reader would."""
    from cselab.workbench.paper_tables.record_report import runs_words

    def line(plan, seconds=3600.0):
        return {"plan": plan, "train_seconds": seconds, "execution": {"device": "cpu"}}

    first = {"name": "first"}
    assert runs_words([line(first), line(first)]) == "2 runs: 2 of the first plan; 2.0 h of training on CPUs"
    day = [line({"name": "re-plan", "made": d}) for d in ("2026-12-05", "2026-12-04", "2026-12-04")]
    assert runs_words([line(first), *day[1:]]) == \
        "3 runs: 1 of the first plan, 2 of the re-plan of 2026-12-04; 3.0 h of training on CPUs"
    assert runs_words([line(first), *day]) == \
        "4 runs: 1 of the first plan, 3 of the re-plans of 2026-12-04 and 2026-12-05; 4.0 h of training on CPUs"
