"""What the record reader refuses (cselab/workbench/studies/record.py), each in one line naming the file,
the line and the label; the lock that keeps two writers' lines; stale lines (a config the study file no
longer plans) named by `make findings`, `--check` and `--from-record`, which then make no verdict; a
line's computation (code, CPU kind, precision) and the code fingerprint a run's config.json carries."""
from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import shutil
from pathlib import Path

import pytest

from synthetic_records import record as synthetic_record

from cselab.workbench.studies.record import (MAX_LINE_BYTES, RecordError, computation, put_records, read_record,
                                             read_study_record, write_record)

REPO = Path(__file__).resolve().parents[1]
LABEL = "mixcse-lambda0.5-s2"


def _line(**changes) -> dict:
    line = synthetic_record(LABEL, "paper-mixcse", 76.0, 2)
    line.update(changes)
    return line


def _write(path: Path, *texts: str | bytes) -> Path:
    """A record file of a good first line and the given lines (raw: write_record would not write them)."""
    first = json.dumps(synthetic_record("simcse-s1", "paper-mixcse", 76.0, 1)).encode()
    path.write_bytes(b"\n".join([first, *(t if isinstance(t, bytes) else t.encode() for t in texts)]) + b"\n")
    return path


def _sts(**scores) -> dict:
    """The synthetic line's scores with some replaced, the avg left as it was."""
    return {**_line()["sts"], **scores}


def _refused(path: Path, pattern: str, **where) -> str:
    with pytest.raises(RecordError) as caught:
        read_record(path, **where)
    message = str(caught.value)
    assert "\n" not in message, message                       # one line
    assert message.startswith(f"{path}:2: {LABEL}: "), message  # file, line, label
    assert pattern in message, message
    return message


BAD_VALUES = {
    # what an STS score may not be (each case: the line's change, the words of the refusal)
    "a string": ({"sts": _sts(STS12="76.1")}, "sts.STS12 = '76.1': not a finite number"),
    "a list": ({"sts": _sts(STS12=[76.1])}, "sts.STS12 = [76.1]: not a finite number"),
    "true (not 1.0)": ({"sts": _sts(STS12=True)}, "sts.STS12 = True: not a finite number"),
    "above 100": ({"sts": _sts(STS12=100.5)}, "sts.STS12 = 100.5: not a finite number within ±100"),
    "below -100": ({"sts": _sts(avg=-101.0)}, "sts.avg = -101.0"),
    "a null avg": ({"sts": _sts(avg=None)}, "sts.avg = None"),
    "no avg": ({"sts": {"STS12": 76.0}}, "'sts' missing or without 'avg'"),
    "no scores": ({"sts": None}, "'sts' missing or without 'avg'"),
    "an extra that is a string": ({"extras": {"clustering": {"DBpedia": "60"}}},
                                  "extras.clustering.DBpedia = '60': not a finite number"),
    "a negative training time": ({"train_seconds": -1.0}, "train_seconds = -1.0"),
    "a missing seed": ({"seed": None}, "'seed' missing or not an integer (got None)"),
    "a boolean seed": ({"seed": True}, "'seed' missing or not an integer (got True)"),
    "a seed that is not the label's": ({"seed": 3}, "seed 3 are not the label's ('mixcse-lambda0.5', 2)"),
    "a missing variant": ({"variant": None}, "'variant' missing or not a string"),
    "an unknown key": ({"scores": {}}, "unknown key(s) 'scores'"),
    "nesting 7 deep": ({"extras": {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}}, "nested deeper than 6 levels"),
    "an old format": ({"format": 0}, "record format 0, this cselab reads 1 and 2"),
    "an unknown plan": ({"plan": {"name": "second"}}, "plan = {'name': 'second'}: expected"),
    "a re-plan without its date": ({"plan": {"name": "re-plan"}}, "plan = {'name': 're-plan'}: expected"),
    "a plan that is a string": ({"plan": "re-plan"}, "plan = 're-plan': expected"),
}


@pytest.mark.parametrize("case", BAD_VALUES)
def test_a_bad_value_is_refused_in_one_line_naming_file_line_and_label(case, tmp_path):
    changes, words = BAD_VALUES[case]
    line = _line(**changes)
    if changes.get("seed") is None and "seed" in changes:
        del line["seed"]                                       # missing, not null
    _refused(_write(tmp_path / "record.jsonl", json.dumps(line)), words)


def test_values_json_should_not_hold_are_refused(tmp_path):
    good = json.dumps(_line())
    score = f'"STS12":{_line()["sts"]["STS12"]!r}'
    assert score in good.replace(" ", "")
    text = good.replace(" ", "")
    path = tmp_path / "record.jsonl"
    for value, words in (("Infinity", "Infinity is not a number"), ("NaN", "NaN is not a number"),
                         ("-Infinity", "-Infinity is not a number"),
                         ("1e999", "sts.STS12 = inf: not a finite number")):   # a float that overflows to inf
        _refused(_write(path, text.replace(score, f'"STS12":{value}')), words)
    _refused(_write(path, text.replace('"seed":2', '"seed":' + "9" * 5000)), "an integer of 5000 digits")
    avg = _line()["sts"]["avg"]
    _refused(_write(path, json.dumps(_line(sts=_sts(avg=avg + 0.5)))), "is not the mean of its 7 tasks")
    _refused(_write(path, json.dumps(_line(sts=_sts(avg=avg + 1000)))), "not a finite number within ±100")
    # the avg of the unrounded tasks, as training wrote it, passes (a float's last bit is no difference)
    assert read_record(_write(path, json.dumps(_line(sts=_sts(avg=avg + 1e-12)))))[1]["label"] == LABEL


def test_a_deep_a_huge_and_a_non_utf8_line_are_one_line_each(tmp_path):
    path = tmp_path / "record.jsonl"
    head = json.dumps(_line())[:-1]
    deep = 100_000   # within the size bound: json's own recursion is what stops it
    _refused(_write(path, head + ', "extras": ' + "[" * deep + "]" * deep + "}"), "nested too deeply")
    bomb = head + ', "extras": ' + "[" * 200_000 + "]" * 200_000 + "}"   # the 200,000-deep nesting
    _refused(_write(path, bomb), f"a line of {len(bomb)} bytes (a record line is at most {MAX_LINE_BYTES})")
    big = json.dumps(_line(train={"step": list(range(60_000))}))
    _refused(_write(path, big), f"a line of {len(big)} bytes")
    raw = json.dumps(_line()).encode().replace(b'"variant": "mixcse-lambda0.5"', b'"variant": "mixcse-\xff"')
    _refused(_write(path, raw), "not UTF-8 (byte")


def test_a_duplicated_run_and_a_line_of_another_study_or_profile_are_refused(tmp_path):
    path = tmp_path / "record.jsonl"
    line = json.dumps(_line())
    with pytest.raises(RecordError, match=rf"record.jsonl:3: {LABEL}: a second line for study paper-mixcse, "
                                          rf"profile cpu, variant mixcse-lambda0.5, seed 2 \(the first is line 2\)"):
        read_record(_write(path, line, line))
    # the same run under another label (a hand-edited line) is still one (study, profile, variant, seed)
    other = _line(label="mixcse-lambda0.5-again")
    with pytest.raises(RecordError, match="a second line for study paper-mixcse"):
        read_record(_write(path, line, json.dumps(other)))
    gpu = json.dumps(_line(profile="gpu"))
    assert len(read_record(_write(path, gpu))) == 2           # read for no profile: a record of both
    _refused(_write(path, gpu), "a line of profile 'gpu', read for profile 'cpu'", profile="cpu")
    _refused(_write(path, json.dumps(_line(study="paper-gs-infonce"))),
             "a line of study 'paper-gs-infonce', read as study 'paper-mixcse''s record", study="paper-mixcse")


def test_a_run_of_another_profile_does_not_replace_a_line(tmp_path):
    path = tmp_path / "record.jsonl"
    put_records(path, [_line()])
    with pytest.raises(RecordError, match=rf"record.jsonl: {LABEL}: the record holds study paper-mixcse, profile cpu's "
                                          "run of that label; not replaced by study paper-mixcse, profile gpu's"):
        put_records(path, [_line(profile="gpu", train_seconds=1.0)])
    assert read_record(path) == [_line()]
    put_records(path, [_line(train_seconds=1.0)])               # the same profile's run again: replaced
    assert read_record(path)[0]["train_seconds"] == 1.0


def test_a_linked_record_is_refused(tmp_path):
    target = _write(tmp_path / "elsewhere.jsonl", json.dumps(_line()))
    link = tmp_path / "record.jsonl"
    link.symlink_to(target)
    with pytest.raises(RecordError, match=r"record.jsonl: is a symbolic link"):
        read_record(link)
    with pytest.raises(RecordError, match="symbolic link"):
        put_records(link, [_line()])


def _add_lines(path: str, writer: int, count: int) -> None:
    for i in range(count):
        label = f"w{writer}-{i}-s1"
        put_records(path, [synthetic_record(label, "study", 76.0, 1)])


def test_two_processes_writing_one_record_keep_every_line(tmp_path):
    """Each put_records reads the file, adds a line and writes it back: without the lock, a writer
    that read before the other wrote drops the other's line (61 of 120 survived in the issue's probe)."""
    path = tmp_path / "study" / "record.jsonl"
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_add_lines, args=(str(path), w, 40)) for w in (1, 2)]
    for p in writers:
        p.start()
    for p in writers:
        p.join()
    assert [p.exitcode for p in writers] == [0, 0]
    labels = {r["label"] for r in read_record(path)}
    assert labels == {f"w{w}-{i}-s1" for w in (1, 2) for i in range(40)}


# ------------------------------------------------------------------- stale lines
def _study_copy(tmp_path, monkeypatch, lr: str | None) -> None:
    """The shipped study files in a folder of their own, paper-mixcse's cpu lr changed (``None``: as shipped)."""
    from cselab.workbench.studies import spec

    studies = tmp_path / f"studies-{lr}"
    shutil.copytree(Path(spec.__file__).parent, studies, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    if lr is not None:
        path = studies / "paper-mixcse.yaml"
        text = path.read_text()
        assert text.count("    lr: 3.0e-5\n") == 1
        path.write_text(text.replace("    lr: 3.0e-5\n", f"    lr: {lr}\n"))
    monkeypatch.setattr(spec, "STUDY_DIR", studies)


def _committed_copy(root: Path) -> Path:
    from cselab.workbench.paper_tables.record_report import committed_record

    target = committed_record("paper-mixcse", root)
    target.parent.mkdir(parents=True)
    shutil.copy(committed_record("paper-mixcse", REPO), target)
    return target


def test_a_planted_stale_config_is_named_by_check_and_findings_and_from_record(tmp_path, monkeypatch, capsys):
    from cselab.workbench.paper_tables.record_report import main, rebuild_from_record
    from cselab.workbench.studies.spec import load_study

    _committed_copy(tmp_path)
    record = Path("figures/cpu-papers/paper-mixcse/record.jsonl")   # as make findings names it, from the root
    page = tmp_path / "page.md"
    page.write_text("<!-- record: tally paper-mixcse -->\nas published\n<!-- /record -->\n")
    monkeypatch.chdir(tmp_path)
    _study_copy(tmp_path, monkeypatch, lr=None)
    assert main(["--check", "page.md"]) == 1 and "page.md: differs: tally paper-mixcse" in capsys.readouterr().out
    _study_copy(tmp_path, monkeypatch, lr="5.0e-5")               # the planted change
    study = load_study("paper-mixcse", "cpu", notebooks=False)
    read = read_study_record(record, study)
    lines = record.read_text().splitlines()
    trained_at_3e5 = list(range(1, len(lines) + 1))              # every run of the cpu profile (34 first-plan lines, then a re-plan's)
    assert len(lines) >= 34 and [s.line for s in read.stale] == trained_at_3e5 and read.current == []
    first = read.stale[0]
    assert str(first) == (f"{record}:{first.line}: {first.label}: stale: config {json.loads(lines[first.line - 1])['config_hash']}, "
                          f"the study file now plans {study.run(first.label).config.config_hash()} (lr 3e-05 → 5e-05)")
    for argv in (["--check", "page.md"], ["page.md"]):           # --check, and make findings itself
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert f"{len(trained_at_3e5)} stale line(s)" in err and str(first) in err, err
        assert "differs" not in err
    assert page.read_text() == "<!-- record: tally paper-mixcse -->\nas published\n<!-- /record -->\n"
    out = io.StringIO()
    assert rebuild_from_record("paper-mixcse", "cpu", "figures/cpu-papers", tmp_path / "reports", stream=out) == 1
    assert str(first) in out.getvalue() and not (tmp_path / "reports").exists()
    from cselab.workbench.studies.runner import reproduce

    out = io.StringIO()                                          # the dry run: 34 new runs, and why
    assert reproduce("paper-mixcse", "cpu", dry_run=True, runs_dir=tmp_path / "runs", figures_dir="figures/cpu-papers",
                     stream=out) == 0
    assert [line for line in out.getvalue().splitlines() if ": stale: " in line] == [str(s) for s in read.stale]
    out = io.StringIO()                                          # a record of another profile: said, not a crash
    assert reproduce("paper-mixcse", "gpu", dry_run=True, runs_dir=tmp_path / "runs", figures_dir="figures/cpu-papers",
                     stream=out) == 0
    assert f"record: {record}:1: " in out.getvalue() and "a line of profile 'cpu', read for profile 'gpu'" in out.getvalue()


def test_findings_refuse_a_missing_a_linked_and_a_damaged_record(tmp_path, monkeypatch, capsys):
    from cselab.workbench.paper_tables.record_report import main

    page = tmp_path / "page.md"
    published = "<!-- record: tally paper-mixcse -->\nas published\n<!-- /record -->\n"
    page.write_text(published)
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "figures" / "cpu-papers" / "paper-mixcse" / "record.jsonl"
    assert main(["page.md"]) == 1                                  # missing: never "nothing recorded"
    assert capsys.readouterr().err == f"record_report: {record.relative_to(tmp_path)}: no record (run the study first: cselab reproduce writes it)\n"
    record.parent.mkdir(parents=True)
    record.symlink_to("/etc/passwd")
    assert main(["page.md"]) == 1
    assert capsys.readouterr().err.endswith("record.jsonl: is a symbolic link; a record is read only from a file of its own\n")
    record.unlink()
    text = (REPO / "figures" / "cpu-papers" / "paper-mixcse" / "record.jsonl").read_text()
    record.write_text(text[: len(text) // 2])                      # cut short mid-line
    assert main(["page.md"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": not JSON (" in err, err
    assert page.read_text() == published


# ------------------------------------------------------------------- one computation
def test_computation_says_which_runs_may_be_paired():
    a = _line()
    assert computation(a) == computation(_line(label="mixcse-lambda0.5-s3", seed=3))
    assert computation(a).cpu == "AVX512/amx" and computation(a).precision == "bf16/bf16"
    assert not computation(a).legacy and computation(a).code.startswith("sha256:" + "c" * 64)
    other_cpu = _line(cpu={"native_bf16": "avx512_bf16", "capability": "AVX512"})
    assert computation(other_cpu) != computation(a) and computation(other_cpu).cpu == "AVX512/avx512_bf16"
    fp16 = _line(execution={**a["execution"], "eval_precision": "fp32"})
    assert computation(fp16) != computation(a)
    code = json.loads(json.dumps(a["code"]))
    code["backbone"]["sha256"] = "f" * 64                           # another backbone's files
    assert computation(_line(code=code)).code != computation(a).code
    legacy = _line(format=1, code=None, commit="dcb5-dirty")
    assert computation(legacy).code == "commit:dcb5-dirty" and computation(legacy).legacy
    from cselab.workbench.studies.record import records_frame

    frame = records_frame([legacy, other_cpu])                       # what the claims read, one string a run
    assert frame["computation"].tolist() == ["commit:dcb5-dirty | AVX512/amx | bf16/bf16",
                                             f"{computation(a).code} | AVX512/avx512_bf16 | bf16/bf16"]


def test_the_committed_records_read_as_legacy_lines_with_their_cpu_kinds():
    from collections import Counter

    from cselab.workbench.paper_tables.record_report import committed_record
    from cselab.workbench.studies.spec import load_study

    kinds = {}
    for name in ("paper-mixcse", "paper-gs-infonce", "paper-clusterns", "paper-apincse", "cpu-compare"):
        read = read_study_record(committed_record(name, REPO), load_study(name, "cpu", notebooks=False))
        # the legacy (format 1) lines as committed before the continuation; its lines are format 2, with code
        assert read.stale == [] and all(computation(r).legacy == (r["format"] == 1) for r in read.current), name
        # (the equal-data batch groups run at explicit seeds: their first lines are the first plan's, the
        # seeds a continuation added to the study file the re-plan's)
        assert all(len(r["code"]["sha256"]) == 64
                   and (r["plan"]["name"] == "re-plan" or (r["variant"].endswith("-equal") and r["plan"]["name"] == "first"))
                   for r in read.current if r["format"] == 2), name
        kinds[name] = Counter(computation(r).cpu for r in read.current if computation(r).legacy)
    # the count: APINCSE's and ClusterNS's and GS-InfoNCE's runs on two CPU kinds
    assert kinds["paper-apincse"] == {"AVX512/avx512_bf16": 45, "AVX512/amx": 18}
    assert kinds["paper-clusterns"] == {"AVX512/amx": 34, "AVX512/avx512_bf16": 24}
    assert kinds["paper-gs-infonce"] == {"AVX512/amx": 23, "AVX512/avx512_bf16": 22}
    assert kinds["paper-mixcse"] == {"AVX512/amx": 34}


def test_the_code_fingerprint_hashes_the_model_side_as_it_is_on_disk(tmp_path):
    import cselab.model
    from cselab.model.rundir.layout import _sha256_files, code_fingerprint

    root = Path(cselab.model.__file__).parent
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    for p in files:
        digest.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    code = code_fingerprint(None)
    assert code["sha256"] == digest.hexdigest() and code["files"] == len(files) and code["backbone"] is None
    # an uncommitted edit is a different fingerprint (what `-dirty` could not tell apart)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "loss.py").write_text("t = 0.05\n")
    before = _sha256_files(tree, [tree / "loss.py"])
    (tree / "loss.py").write_text("t = 0.5\n")
    assert _sha256_files(tree, [tree / "loss.py"]) != before


def test_a_dry_run_of_part_of_a_study_calls_no_line_of_the_rest_stale(tmp_path):
    """``--replan --runs-only --only simcse-s9 --dry-run`` listed all 72 other lines of the committed
    ClusterNS record as "stale: not a run of the study's plan": the lines were judged against --only's
    part of the plan. They are judged against the whole plan, as without --only."""
    from cselab.workbench.studies.runner import reproduce

    texts = []
    for only in ((), ("simcse-s9",)):
        out = io.StringIO()
        assert reproduce("paper-clusterns", "cpu", dry_run=True, runs_dir=tmp_path / "runs", replan=True,
                         figures_dir="figures/cpu-papers", notebooks=not only, only=only, stream=out) == 0
        texts.append([line for line in out.getvalue().splitlines() if ": stale: " in line])
    assert texts[1] == texts[0]
    assert "| simcse-s9 " in out.getvalue() and "| clusterns-s1 " not in out.getvalue()
