"""cselab.workbench.comparisons, the one home of a comparison: one grouping rule (config keys or label
prefixes, one frame either way), one ``mean ± std`` formatter, and the paired comparison that the
compare notebook, the paper tables and the workbench's cell all reach through it."""
from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from conftest import REPO
from synthetic_runs import write_run

from cselab.workbench import comparisons
from cselab.workbench.results import assign_variants, mean_std_text


def _runs(tmp_path) -> dict[str, Path]:
    specs = [("apincse-s1", ["augmented_positive", "interlayer_negative"], 1),
             ("simcse-s1", ["simcse"], 1), ("apincse-no_ap-s1", ["interlayer_negative"], 1),
             ("apincse-s2", ["augmented_positive", "interlayer_negative"], 2), ("simcse-s2", ["simcse"], 2),
             ("other-s1", ["mixcse"], 1)]
    return {label: write_run(tmp_path / label, {"method": method, "seed": seed, "model": "m"}, [])
            for label, method, seed in specs}


def test_one_grouping_rule_by_config_keys_or_by_label_prefixes(tmp_path):
    runs = _runs(tmp_path)
    by_method = comparisons.group_runs(runs)
    assert by_method[["run", "group", "seed"]].values.tolist() == [
        ["apincse-s1", "APINCSE", 1], ["simcse-s1", "SimCSE", 1], ["apincse-no_ap-s1", "APINCSE-AP", 1],
        ["apincse-s2", "APINCSE", 2], ["simcse-s2", "SimCSE", 2], ["other-s1", "MixCSE", 1]]
    variants = {"SimCSE": "simcse", "APINCSE": "apincse", "-AP": "apincse-no_ap"}
    by_prefix = comparisons.group_runs(runs, variants)
    # the longest prefix wins (apincse-no_ap-s1 is "-AP"), groups in the mapping's order, runs in theirs;
    # a run no prefix selects is left out; the seed read from each run's config
    assert by_prefix.values.tolist() == [["simcse-s1", "SimCSE", 1], ["simcse-s2", "SimCSE", 2],
                                         ["apincse-s1", "APINCSE", 1], ["apincse-s2", "APINCSE", 2],
                                         ["apincse-no_ap-s1", "-AP", 1]]
    # the paper tables' {group: {label: run dir}} is the same grouping, in the results layer's order
    groups = comparisons.groups_of(by_prefix, runs)
    assert {g: list(m) for g, m in groups.items()} == assign_variants(list(runs), variants)
    assert groups["-AP"]["apincse-no_ap-s1"] == runs["apincse-no_ap-s1"]
    from cselab.workbench.paper_tables import variant_runs

    assert variant_runs(runs, variants) == groups


def test_one_mean_std_formatter_for_summaries_and_comparisons():
    assert mean_std_text(81.234, 0.456) == "81.23 ± 0.46"
    assert mean_std_text(81.234, math.nan) == "81.23 ± –"                      # one seed, in a comparison
    assert mean_std_text(81.234, math.nan, missing_std=None) == "81.23"        # one seed, in a summary
    assert mean_std_text(math.nan, math.nan) == "– ± –" and mean_std_text(math.nan, 1.0, missing_std=None) == "–"
    assert mean_std_text(1.5, 0.25, decimals=1) == "1.5 ± 0.2"


def test_the_paper_tables_and_the_workbench_reach_the_same_comparison():
    from cselab.workbench import notebook
    from cselab.workbench import paper_tables as pt

    assert pt.paired_comparison is comparisons.paired_comparison
    source = Path(notebook.__file__).read_text(encoding="utf-8")
    assert "from .comparisons import paired_comparison" in source


STATISTICS = ("compare_to_baseline", "format_comparison", "paired_tests", "single_seed_bootstrap", "single_seed_runs")


def test_no_notebook_or_module_but_comparisons_assembles_a_comparison_itself():
    """The results layer's tests are assembled into tables in one place: every call of them outside
    cselab/workbench/results.py and cselab/workbench/comparisons.py is listed here (there is none)."""
    found = []
    for path in [*sorted((REPO / "cselab").rglob("*.py")), *sorted((REPO / "notebooks").glob("*.py"))]:
        if path.name in ("results.py", "comparisons.py") and path.parent.name == "workbench":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in STATISTICS:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    assert found == []


def test_the_comparison_names_have_one_home_and_no_alias_in_analysis_compare():
    # the one release of aliases (a module __getattr__ reading comparisons by name, an edge the
    # import graph did not see) is over: the names live in comparisons only
    import cselab.workbench.analysis.compare as run_scores

    for name in ("group_runs", "run_groups", "with_groups", "grouped_table", "resolve_baseline", "label_group",
                 "per_task_comparison", "difference_panels", "sweep_frame", "config_value", "one_backbone"):
        assert not hasattr(run_scores, name), name
    assert callable(comparisons.group_runs) and callable(comparisons.label_group)
    with pytest.raises(AttributeError):
        run_scores.no_such_name
