"""Evaluation suites as a registry (cselab.model.evaluate.suites, one module per suite): the CLI, the evaluation
cache and the tables read it, so a suite registered there is at once a `cselab eval --suite` with its
options, an `evaluate_run` suite and a table, and no other module names a suite."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cselab.cli import build_parser, check_suite_options, main
from cselab.model.data.transfer import TRANSFER_TASKS
from cselab.model.evaluate.cache import entry_problem, evaluate_run, evaluation_frame
from cselab.model.evaluate.clustering import DEFAULT_SEEDS
from cselab.model.evaluate.sts import evaluate_pairs
from cselab.model.evaluate.suites import SUITES, Option, Suite, default_suite, get_suite, resolve, result_tables

REPO = Path(__file__).resolve().parents[1]


def test_the_four_suites_and_what_cselab_eval_hands_each():
    assert list(SUITES) == ["clustering", "geometry", "sts", "transfer"]   # one module each, in name order
    assert default_suite() == "sts"

    def options(*argv):
        args = build_parser().parse_args(["eval", "model", *argv])
        check_suite_options(args)          # as cmd_eval: refuse inapplicable options
        return get_suite(args.suite).cli_options(args)   # the suite fills in the defaults

    assert options()["aggregate"] == "all" and len(options()["tasks"]) == 7 and options()["pairs"] is None
    assert options("--suite", "transfer", "--fast") == {"tasks": TRANSFER_TASKS, "fast": True, "probe": "sklearn"}
    assert options("--suite", "transfer") == {"tasks": TRANSFER_TASKS, "fast": False, "probe": "sklearn"}
    assert options("--suite", "clustering", "--tasks", "DBpedia") == {"tasks": ["DBpedia"], "seeds": list(DEFAULT_SEEDS)}
    # --texts alone clusters only the user's file; with --tasks the standard sets as well
    assert options("--suite", "clustering", "--texts", "my.tsv") == {"tasks": [], "seeds": list(DEFAULT_SEEDS),
                                                                     "texts": ["my.tsv"]}
    assert options("--suite", "clustering", "--texts", "my.tsv", "--tasks", "Tweet")["tasks"] == ["Tweet"]
    assert options("--suite", "geometry", "--split", "dev") == {"split": "dev"}
    assert options("--suite", "geometry") == {"split": "all"}
    with pytest.raises(ValueError, match=r"--fast: does not apply to --suite sts \(only to --suite transfer\)"):
        options("--fast")
    with pytest.raises(ValueError, match=r"--tasks: does not apply to --suite geometry \(only to --suite "
                                         r"clustering / sts / transfer\)"):
        options("--suite", "geometry", "--tasks", "STS12")
    assert [SUITES[s].primary for s in SUITES] == ["short_text_avg", "uniformity", "avg", "avg"]
    # the one suite that scores a given set of pairs: training's dev evaluation asks it for STS-B dev
    assert [s for s in SUITES if SUITES[s].score_pairs is not None] == ["sts"]
    assert resolve(SUITES["sts"].score_pairs) is evaluate_pairs
    with pytest.raises(ValueError, match=r"suite must be one of \('clustering', 'geometry', 'sts', 'transfer'\), "
                                         r"got 'x'"):
        get_suite("x")
    # the tables the suites' results make, with the papers' column labels
    assert {name: suite.name for name, (suite, _) in result_tables().items()} == {
        "short_text": "clustering", "dbpedia": "clustering", "sts": "sts", "transfer": "transfer"}
    assert SUITES["sts"].task_labels()["STSBenchmark"] == "STS-B"
    assert SUITES["clustering"].task_labels()["AgNews"] == "AG" and SUITES["geometry"].task_labels() == {}


def test_declaring_the_suites_loads_no_evaluation_code():
    """`cselab --help` reads the registry: a suite names its function and its task lists by module and
    name (Ref), so declaring the suites imports neither torch, scikit-learn, scipy nor numpy."""
    code = ("import sys; import cselab.cli; cselab.cli.build_parser(); "
            "heavy = [m for m in ('torch', 'sklearn', 'scipy', 'numpy', 'cselab.model.evaluate.sts') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.stdout.strip() == "[]"


@pytest.fixture
def toy_suite(monkeypatch):
    """A suite registered by a test, as a researcher's own module in cselab/model/evaluate/suites/ would register it."""
    calls = []

    def count_words(model, data_dir=None, batch_size=128, words=("a", "b"), per_pair=False):
        calls.append(list(words))
        vectors = model.encode(list(words), batch_size=batch_size)
        return {"n": len(words), "dim": int(vectors.shape[1]), "scores": {"w": 10.0 * len(words)},
                **({"per_pair": list(words)} if per_pair else {})}

    toy = Suite("toy", count_words, "a toy suite that counts its words", "n",
                options=(Option("--words", "the words to encode", ("a", "b"), {"nargs": "+"}),),
                table=lambda r, label: f"{label}: {r['n']}", result_keys=("n", "dim"), extras=("per_pair",),
                frame_keys=("n", "dim"), columns={"w": "Words"})
    monkeypatch.setitem(SUITES, "toy", toy)
    return toy, calls


def test_a_registered_suite_is_a_cli_suite_a_cached_run_suite_and_a_table(toy_suite, tiny_model, tmp_path, capsys):
    """Nothing outside the suite's declaration is edited: the CLI's choices, options and help, the
    evaluation cache and the tables read the registry."""
    toy, calls = toy_suite
    parser = build_parser()
    ev = parser._subparsers._group_actions[0].choices["eval"]
    suite_arg = next(a for a in ev._actions if a.dest == "suite")
    assert "toy" in suite_arg.choices and "toy = a toy suite that counts its words" in suite_arg.help
    words_arg = next(a for a in ev._actions if a.dest == "words")
    assert words_arg.help == "toy: the words to encode" and words_arg.nargs == "+"
    args = parser.parse_args(["eval", "m", "--suite", "toy", "--words", "x", "y"])
    check_suite_options(args)
    assert toy.cli_options(args) == {"words": ["x", "y"]}
    assert toy.cli_options(parser.parse_args(["eval", "m", "--suite", "toy"])) == {"words": ("a", "b")}
    with pytest.raises(ValueError, match=r"--words: does not apply to --suite sts \(only to --suite toy\)"):
        check_suite_options(parser.parse_args(["eval", "m", "--words", "x"]))

    assert main(["eval", str(tiny_model), "--suite", "toy", "--words", "x", "y", "z",
                 "--output", str(tmp_path / "out.json")]) == 0
    assert capsys.readouterr().out.strip() == f"{tiny_model} (cls_before_pooler): 3"
    assert json.loads((tmp_path / "out.json").read_text())["dim"] == 32

    from cselab.model.encoder import SentenceEncoder

    run = tmp_path / "run"
    SentenceEncoder.from_pretrained(tiny_model).save(run / "best")
    first = evaluate_run(run, "toy", words=["x", "y", "z"])
    again = evaluate_run(run, "toy", words=["x", "y", "z"], per_pair=True)   # an extra: kept in the same entry
    assert again == first and first["per_pair"] == ["x", "y", "z"]
    expected = {"n": 3, "dim": 32, "scores": {"w": 30.0}, "per_pair": ["x", "y", "z"],
                "options": {"words": ["x", "y", "z"]}, "model": "best"}
    assert {k: v for k, v in first.items() if k != "data_root"} == expected   # data_root: where it was computed
    assert len(calls) == 2 and len(list((run / "evaluations").glob("toy-best-*.json"))) == 1   # once by the CLI
    assert entry_problem({"n": 3}, "toy") == "not a cached toy result (no 'dim')"
    frame = evaluation_frame({"run": first})
    assert frame.loc[0, ["w", "n", "dim"]].tolist() == [30.0, 3, 32]

    from cselab.workbench.paper_tables import suite_columns
    from cselab.workbench.tables import _short

    assert _short("toy/w") == "Words" and _short("toy/avg") == "Avg."
    assert suite_columns("toy", ["w"]) == ({"w": "Words"}, "Avg.")


def test_an_unknown_suite_is_one_line_before_any_model_loads(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["eval", "no/such/model", "--suite", "bogus"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "cselab eval: error: argument --suite: invalid choice: 'bogus' (choose from 'clustering', 'geometry', "
        "'sts', 'transfer')")


# --------------------------------------------------------------- only the registry names suites
# The modules that read suites from the registry and must name none: the CLI, the evaluation cache,
# the tables, the results layer, the workbench, the run directory's readers, the study engine.
CONSUMERS = ("cselab/cli.py", "cselab/model/evaluate/cache.py", "cselab/workbench/tables.py", "cselab/workbench/results.py",
             "cselab/workbench/notebook.py", "cselab/model/rundir", "cselab/workbench/paper_tables", "cselab/workbench/studies")
# evaluate/__init__.py's lazy exports are keyed by module name, and the suites' modules share their names
MODULE_NAMES = ("cselab/model/evaluate/__init__.py",)


def _suite_names() -> set[str]:
    return set(SUITES) | set(result_tables())


def _is_name(node, names) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names


def suite_name_problems(path: Path, names: set[str], consumer: bool) -> list[str]:
    """Where ``path`` names suites: any suite name in a consumer; elsewhere a list of two or more
    suite names (an enumeration of suites) or a comparison with one (``suite == "sts"``: a special case)."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if consumer and _is_name(node, names):
            problems.append(f"{path}:{node.lineno}: {node.value!r}")
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            named = {item.value for item in items if _is_name(item, names)}
            if len(named) > 1:
                problems.append(f"{path}:{node.lineno}: lists the suites {sorted(named)}")
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            named = [side.value for side in (node.left, *node.comparators) if _is_name(side, names)]
            if named:
                problems.append(f"{path}:{node.lineno}: compares with the suite {named[0]!r}")
    return problems


def test_no_module_outside_the_suites_own_files_names_the_suites():
    names = _suite_names()
    own = REPO / "cselab" / "model" / "evaluate" / "suites"
    problems = []
    for path in sorted((REPO / "cselab").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        if path.is_relative_to(own) or relative in MODULE_NAMES:
            continue
        consumer = any(relative == c or relative.startswith(c + "/") for c in CONSUMERS)
        problems += suite_name_problems(path, names, consumer)
    assert problems == []
    # the study files: no notebook parameter names a suite (notebooks ask for their suites themselves)
    for study in sorted((REPO / "cselab" / "workbench" / "studies").glob("*.yaml")):
        entries = yaml.safe_load(study.read_text(encoding="utf-8")).get("notebooks") or []

        def values(x):
            if isinstance(x, dict):
                return [v for item in x.values() for v in values(item)]
            return [v for item in x for v in values(item)] if isinstance(x, list) else [x]

        assert not [v for entry in entries for v in values(entry.get("parameters") or {}) if v in names], study


def test_the_check_finds_a_planted_special_case(tmp_path):
    names = _suite_names()
    planted = tmp_path / "planted.py"
    planted.write_text('def f(suite):\n    return suite == "sts"\n\nSUITES = ("sts", "transfer")\nX = "geometry"\n')
    assert sorted(suite_name_problems(planted, names, consumer=False)) == [
        f"{planted}:2: compares with the suite 'sts'", f"{planted}:4: lists the suites ['sts', 'transfer']"]
    assert f"{planted}:5: 'geometry'" in suite_name_problems(planted, names, consumer=True)
