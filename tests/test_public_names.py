"""One meaning per public name (issue 56 item 2): the test lists every public name cselab defines — a
module's top-level function, class or assigned name not starting with ``_`` (imports and re-exports
are not definitions) — and fails where one name is defined in two modules, unless ALLOWED names it
with its modules and why. Each entry there is either the same meaning by convention, or a second
meaning left for the engineer who owns one of its modules (say which); a stale entry fails too."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from conftest import REPO

# name → (the modules defining it, why it may stay)
ALLOWED = {
    # the same meaning everywhere, by convention
    "logger": (("cselab/model/data/fetch.py", "cselab/model/data/sample.py", "cselab/model/encoder/interop.py",
                "cselab/model/evaluate/cache.py", "cselab/model/evaluate/clustering.py", "cselab/model/evaluate/sts.py",
                "cselab/model/evaluate/transfer.py", "cselab/model/export.py", "cselab/model/io.py",
                "cselab/model/train/batches.py", "cselab/model/train/dev_evaluation.py", "cselab/model/train/guards.py",
                "cselab/model/train/loop.py", "cselab/model/train/reporting.py",
                "cselab/workbench/studies/execute.py"),
               "same meaning: the module's logging.getLogger(__name__)"),
    "main": (("cselab/cli.py", "cselab/workbench/analysis/apincse.py", "cselab/workbench/paper_tables/record_report.py"),
             "same meaning: the module's command-line entry point (python -m)"),
    "RECORD_FILES": (("cselab/model/data/clustering.py", "cselab/model/data/sample.py", "cselab/model/data/sts.py",
                      "cselab/model/data/transfer.py"),
                     "same meaning: a loader's one-record-a-line files; sample.py's is the union of the loaders'"),
    # two meanings, left for the owner of one of the modules
    "FAMILIES": (("cselab/model/methods/registry.py", "cselab/workbench/results.py"),
                 "two meanings: method families vs Holm families (results.py: CLAIMS)"),
    "SHOWN_CHARS": (("cselab/model/options.py", "cselab/workbench/plots/check/drawn.py"),
                    "two meanings: an error message's value vs a figure problem's text (plots/check: FIGURES)"),
    "LOG_SPAN": (("cselab/workbench/plots/panels.py", "cselab/workbench/plots/training_curves.py"),
                 "plots' own constants (FIGURES)"),
    "TITLE_WIDTH": (("cselab/workbench/plots/paired.py", "cselab/workbench/plots/panels.py",
                     "cselab/workbench/plots/training_curves.py"), "plots' own constants (FIGURES)"),
    "config_difference": (("cselab/model/rundir/readers.py", "cselab/workbench/studies/record.py"),
                          "two meanings: words for two configs' difference vs a config's keys off the defaults "
                          "(record.py: RECORDS; renaming readers' touches comparisons.py and paper_tables: CLAIMS)"),
    "format_plan": (("cselab/workbench/claims.py", "cselab/workbench/studies/report.py"),
                    "two meanings: the power plan vs the runs' plan (runner.py imports report's: RELIABILITY)"),
    "method_names": (("cselab/workbench/comparisons.py", "cselab/workbench/labels.py"),
                     "two meanings: display names vs display names and BERT (comparisons.py: CLAIMS)"),
    "notebook_parameters": (("cselab/workbench/studies/notebook_specs.py", "cselab/workbench/studies/runner.py"),
                            "two meanings: a notebook's declared names vs the values a study passes (runner.py: "
                            "RELIABILITY)"),
    "save_table": (("cselab/workbench/notebook.py", "cselab/workbench/paper_tables/record_report.py"),
                   "two meanings: the notebook helper vs record_report's writer (paper_tables: CLAIMS)"),
    "scores_table": (("cselab/workbench/paper_tables/record_report.py", "cselab/workbench/tables.py"),
                     "two meanings: a record's per-variant table vs a results frame's (paper_tables: CLAIMS)"),
}


def definitions(path: Path) -> set[str]:
    """The public names a module defines at its top level."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def defined_twice(root: Path) -> dict[str, tuple[str, ...]]:
    where = defaultdict(list)
    for path in sorted((root / "cselab").rglob("*.py")):
        for name in definitions(path):
            where[name].append(str(path.relative_to(root)))
    return {name: tuple(sorted(modules)) for name, modules in where.items() if len(modules) > 1}


def test_no_public_name_is_defined_twice_unless_listed_with_its_reason():
    found = defined_twice(REPO)
    assert len({n for p in (REPO / "cselab").rglob("*.py") for n in definitions(p)}) > 500   # the listing read the package
    unlisted = {name: modules for name, modules in found.items() if name not in ALLOWED}
    assert unlisted == {}
    # each entry still holds, module for module (a rename removes its entry)
    stale = {name: modules for name, (modules, _) in ALLOWED.items() if found.get(name) != tuple(sorted(modules))}
    assert stale == {}


def test_the_names_renamed_here_keep_one_meaning():
    """Renamed in this round: a second module's definition would be a second meaning again."""
    found = defined_twice(REPO)
    for name in ("method_name", "config_value", "setup", "flatten", "KINDS", "METHODS", "METRICS", "STSB_SPLITS",
                 "METRIC_WORDS"):
        assert name not in found, (name, found.get(name))


def test_a_planted_second_meaning_is_found(tmp_path):
    for module, code in {"cselab/model/io.py": "def method_name(config):\n    return config['method']\n",
                         "cselab/workbench/labels.py": "def method_name(key):\n    return key.upper()\n"}.items():
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text("import os\nfrom typing import Any\n" + code + "_private = 1\n")
    assert defined_twice(tmp_path) == {"method_name": ("cselab/model/io.py", "cselab/workbench/labels.py")}
