"""One owner per on-disk layout: the names of a run directory's files and folders are spelled only in
cselab/model/rundir/layout.py (RunDir), those of a model folder only in cselab/model/encoder/backbone.py.
Everything else asks them; this test reads the package's code (not its docstrings or comments) and
fails on a name spelled anywhere else, so that a second spelling cannot come back."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "cselab"
OWNERS = {"model/rundir/layout.py", "model/encoder/backbone.py"}

# File names that mean one thing only: never a string anywhere else.
FILE_NAMES = {"config.json", "metrics.jsonl", "results.json", "tokenizer_config.json", "cselab.json"}
# Folder names that are also ordinary words ("best" legend location, select_by "last", steps="last"):
# caught where they build a path (``run / "best"``), are compared with (``model == "best"``; not
# "last", which is also a ``select_by`` value) or listed together (``("best", "last")``).
FOLDER_NAMES = {"best", "last", "snapshots", "evaluations"}
COMPARED = FOLDER_NAMES - {"last"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _text(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def spellings(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` for every layout name the code spells (docstrings left out)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        text = _text(node)
        if text is not None and text.strip("/") in FILE_NAMES:
            found.append((node.lineno, text))
        operands, names = [], FOLDER_NAMES
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            operands, names = [node.left, *node.comparators], COMPARED
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = {_text(e) for e in node.elts}
            if {"best", "last"} <= words:
                found.append((node.lineno, "best, last"))
        for operand in operands:
            text = _text(operand)
            if text is not None and text.strip("/") in names:
                found.append((operand.lineno, text))
    return sorted(set(found))


def test_the_check_sees_each_way_of_spelling_a_name():
    code = ('"""Reads results.json."""\nimport x\n'
            'a = run / "results.json"\nb = run / "best"\nc = model == "best"\nd = ("best", "last")\n'
            'e = {"last": 1}\nf = select_by == "last"\ng = ("best", "upper right")\nh = run / "last"\n')
    assert spellings(code) == [(3, "results.json"), (4, "best"), (5, "best"), (6, "best, last"), (10, "last")]


@pytest.mark.parametrize("name", sorted(FILE_NAMES | FOLDER_NAMES))
def test_the_owners_spell_what_the_check_looks_for(name):
    owners = "".join((PACKAGE / path).read_text(encoding="utf-8") for path in OWNERS)
    assert f'"{name}"' in owners


def test_no_layout_name_outside_its_owner():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in OWNERS:
            continue
        found += [f"cselab/{relative}:{line}: {name!r}" for line, name in spellings(path.read_text(encoding="utf-8"))]
    assert not found, ("spelled outside its owner (ask RunDir, cselab/model/rundir/layout.py, or the model-folder "
                       "functions of cselab/model/encoder/backbone.py):\n" + "\n".join(found))


def test_rundir_answers_what_the_others_used_to_spell(tmp_path):
    from synthetic_runs import make_run

    from cselab.model.encoder.backbone import is_model_folder, is_saved_encoder
    from cselab.model.rundir import RunDir, label_matches

    run = RunDir(make_run(tmp_path / "simcse-s1", ["simcse"]))
    assert run.is_run() and run.not_a_run() is None and run.results()["best_step"] == 40
    assert run.model_dir("best") == run.best_dir and run.model_dir("step-50") == run.snapshot_dir(50)
    with pytest.raises(ValueError, match=r"step-<N>"):
        run.model_dir("first")
    assert run.evaluation_file("sts", "best", "abc").relative_to(run.path).as_posix() == "evaluations/sts-best-abc.json"
    assert run.saved_models() == {}
    run.best_dir.mkdir()
    run.best_dir.joinpath("config.json").write_text("{}")
    assert run.saved_models() == {"best": run.best_dir} and is_model_folder(run.best_dir)
    assert not is_saved_encoder(run.best_dir)

    assert RunDir(tmp_path / "gone").not_a_run() == "no config.json"
    with pytest.raises(FileNotFoundError, match=r"gone: not a run directory \(no config.json\)"):
        RunDir(tmp_path / "gone").check_is_run()
    run.best_dir.joinpath("cselab.json").write_text("{}")
    assert RunDir(run.best_dir).not_a_run() == "a saved model, not a run"
    assert RunDir(tmp_path / "simcse-s1").results_file.is_file()

    assert label_matches("simcse-s1", "simcse") and label_matches("simcse", "simcse")
    assert not label_matches("simcse2-s1", "simcse") and not label_matches("simcse-large-s1", "simcse")
