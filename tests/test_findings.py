"""The findings pages quote the committed records: every generated block of docs/cpu-papers.md,
docs/cpu-compare.md and README.md is what the records give (cselab.workbench.paper_tables.record_report), a
planted change of one per-seed score is caught, and every study rebuilds from its record alone."""
from __future__ import annotations

import io
import json
import shutil

import pytest

from conftest import REPO

from cselab.workbench.paper_tables.record_report import BLOCK, committed_record, rebuild_from_record, update_docs
from cselab.workbench.studies.record import changed_lines, read_record, write_record

PAGES = [REPO / "docs" / "cpu-papers.md", REPO / "docs" / "findings-methods.md", REPO / "docs" / "cpu-compare.md",
         REPO / "README.md"]
STUDIES = ["cpu-compare", "paper-mixcse", "paper-gs-infonce", "paper-clusterns", "paper-apincse"]


def test_every_generated_block_is_what_the_committed_records_give():
    assert update_docs(PAGES, root=REPO, write=False) == {}, "run `make findings` and commit the pages"
    named = {(m["kind"], m["study"]) for page in PAGES for m in BLOCK.finditer(page.read_text(encoding="utf-8"))}
    # each study's claims, its plan and its tally are on the pages
    for study in STUDIES:
        assert {("claims", study), ("plan", study), ("tally", study)} <= named, study


def test_a_planted_change_of_one_per_seed_score_is_caught(tmp_path):
    recorded = [s for s in STUDIES if committed_record(s, REPO).is_file()]
    assert recorded, "no committed record"
    for study in STUDIES:
        source = committed_record(study, REPO)
        if source.is_file():
            target = committed_record(study, tmp_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    study = recorded[0]
    pages = []   # the pages with a block of the planted study (the other pages cannot show its change)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if any(m["study"] == study for m in BLOCK.finditer(text)):
            copy = tmp_path / page.name
            copy.write_text(text, encoding="utf-8")
            pages.append(copy)
    assert pages
    # the copies regenerated from the copied records (the committed pages are the test above's), so
    # that only the planted change can differ below; the second pass reads the records the first read
    memo: dict = {}
    update_docs(pages, root=tmp_path, write=True, memo=memo)
    assert update_docs(pages, root=tmp_path, write=False, memo=memo) == {}
    records = read_record(committed_record(study, tmp_path))
    # one run's scores, one seed, of a comparison this study's family decides (the MixCSE, ClusterNS and
    # APINCSE rows of cpu-compare take their verdicts from the papers' studies); every task moves, so avg
    # stays their mean (the reader refuses an avg that is not)
    planted = next(r for r in records if r["variant"] == "simcse_pp")
    before = tmp_path / "before.jsonl"
    shutil.copy(committed_record(study, tmp_path), before)
    for task in planted["sts"]:
        planted["sts"][task] += 0.5
    write_record(committed_record(study, tmp_path), records)
    changed = update_docs(pages, root=tmp_path, write=False)
    assert any(f"claims {study}" in names for names in changed.values()), changed
    # and the check names the run, its seed and its record line, with the score that moved
    number = 1 + next(i for i, r in enumerate(records) if r is planted)
    (named,) = changed_lines(before, committed_record(study, tmp_path))
    assert named.startswith(f"{committed_record(study, tmp_path)}:{number}: {planted['label']} (seed {planted['seed']}): ")
    old_avg = next(r for r in read_record(before) if r["label"] == planted["label"])["sts"]["avg"]
    new_avg = read_record(committed_record(study, tmp_path))[number - 1]["sts"]["avg"]
    assert f"sts.avg {old_avg} → {new_avg}" in named, named


@pytest.mark.parametrize("study", STUDIES)
def test_every_study_rebuilds_from_its_committed_record_alone(study, tmp_path):
    source = committed_record(study, REPO)
    if not source.is_file():
        pytest.fail(f"{source}: not committed")
    figures = tmp_path / "figures"
    target = figures / study / "record.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(source, target)
    out = io.StringIO()
    assert rebuild_from_record(study, "cpu", figures, tmp_path / "reports", stream=out) == 0
    assert (tmp_path / "reports" / study / "record" / "claims.md").is_file()
    assert (figures / study / "record" / "claims.png").is_file()
    for line in source.read_text().splitlines():
        record = json.loads(line)
        assert record["study"] in STUDIES and len(record["sts"]) == 8, record["label"]


def test_the_paired_spread_quoted_in_prose_is_what_the_cpu_compare_record_gives():
    """The methods page (findings-methods.md) explains from the committed record why paired differences can
    be far tighter than each variant's spread; its numbers are recomputed here."""
    from cselab.workbench.studies.record import records_frame

    frame = records_frame(read_record(committed_record("cpu-compare", REPO)))
    scores = frame.pivot_table(index="seed", columns="variant", values="avg")
    text = " ".join((REPO / "docs" / "findings-methods.md").read_text(encoding="utf-8").split())

    def quoted(variant):
        both = scores[["simcse", variant]].dropna()
        diff = both[variant] - both["simcse"]
        return len(both), both["simcse"].std(), both[variant].std(), diff.std(), both.corr().iloc[0, 1]

    n, sd_ref, sd_var, sd_diff, r = quoted("simcse_pp-dcl_only")
    assert f"over {n} shared seeds has a seed sd of {sd_ref:.3f} and {sd_var:.3f} but an sd of differences of {sd_diff:.3f} (correlation {r:.3f})" in text
    n, sd_ref, sd_var, sd_diff, r = quoted("simcse-sym")
    assert f"{sd_ref:.3f} and {sd_var:.3f} against {sd_diff:.3f} (r = {r:.2f})" in text
    n, sd_ref, sd_var, sd_diff, r = quoted("mixcse")
    assert f"{sd_ref:.3f} and {sd_var:.3f} against {sd_diff:.3f} (r = {r:.2f}:" in text.replace("−", "-")


def test_the_k16_k32_differences_quoted_in_prose_are_what_the_apincse_record_gives():
    """The methods page answers the issue's k = 16 − k = 32 question from the committed paper-apincse record:
    the per-seed differences, their sd, each variant's seed sd and their correlation are recomputed here."""
    from cselab.workbench.studies.record import records_frame

    frame = records_frame(read_record(committed_record("paper-apincse", REPO)))
    scores = frame.pivot_table(index="seed", columns="variant", values="avg")[["apincse", "apincse-k32"]].dropna()
    diff = scores["apincse"] - scores["apincse-k32"]
    text = " ".join((REPO / "docs" / "findings-methods.md").read_text(encoding="utf-8").split())
    shown = ", ".join(f"{d:.3f}" for d in diff)
    assert (f"over the {len(scores)} seeds both variants share, k = 16 − k = 32 is {shown} (an sd of differences of "
            f"{diff.std():.3f})") in text
    assert (f"(sd {scores['apincse'].std():.3f} and {scores['apincse-k32'].std():.3f}, "
            f"r = {scores.corr().iloc[0, 1]:.2f})") in text


@pytest.mark.parametrize("study", STUDIES)
def test_every_claim_pair_over_the_committed_records_is_one_computation(study):
    """The pairing rule over the committed records: each pair a verdict rests on joins two runs of one
    CPU kind, one precision and one known code identity (fingerprint, or a legacy line's clean commit:
    never a -dirty one, whose tree nobody recorded)."""
    from cselab.workbench.studies.record import computation
    from cselab.workbench.paper_tables.record_report import _study, claims_of, study_frame

    spec = _study(study)
    records = read_record(committed_record(study, REPO))
    frame, own = study_frame(spec, records)
    table, _ = claims_of(spec, frame, own)
    line = {(r["variant"], r["seed"]): r for r in own}
    checked = 0
    for _, row in table[table["seeds"] != ""].iterrows():
        for seed in map(int, row["seeds"].split(", ")):
            ours, theirs = computation(line[(row["variant"], seed)]), computation(line[(row["against"], seed)])
            assert ours == theirs and not ours.code.endswith("-dirty"), (row["claim"], seed)
            checked += 1
        assert row["n"] <= row["shared"]
    assert checked


def test_a_study_whose_paper_claims_are_all_untestable_renders_its_blocks(monkeypatch):
    """Issue 55: with every paper claim `testable: false`, `make findings` raised KeyError: 'paper'."""
    from copy import deepcopy
    from dataclasses import replace

    from cselab.workbench.paper_tables import record_report

    spec = deepcopy(record_report._study("paper-mixcse"))   # a copy: the cached plan stays as the file says
    spec.claims.claims = [replace(c, testable=False, reason="planted: cannot act at this scale")
                          if c.kind == "paper" else c for c in spec.claims.claims]
    monkeypatch.setattr(record_report, "_study", lambda study, profile="cpu": spec)
    claims = record_report.render_block("claims", "paper-mixcse", REPO)
    assert "The paper's claims — Holm over the paper's claims (0, α = 0.05)" in claims
    assert claims.count("not testable at this scale (planted: cannot act at this scale)") == 7
    assert "7 not testable here" in record_report.render_block("tally", "paper-mixcse", REPO)
    assert record_report.render_block("example", "paper-mixcse", REPO).startswith("(no paper claim")
