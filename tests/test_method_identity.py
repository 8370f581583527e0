"""A method's identity lives on its class: figures, tables, the cost model and the docs' method
table read it through the registry, so a method registered anywhere is named, coloured and costed
without touching those modules."""
from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from cselab.workbench.comparisons import method_names as compare_names
from cselab.model.losses.base import Component, Contribution
from cselab.model.methods import FAMILIES, METHODS, method_table, registry
from cselab.workbench.labels import display_name, method_key, readable
from cselab.workbench.plots.style import METHOD_PALETTE, method_color
from cselab.workbench.studies import cost


@dataclass
class _ToyParams:
    strength: float = 1.0


@pytest.fixture
def toy_method():
    """A method registered by a test, as a researcher's own module would register it."""

    class Toy(Component):
        display_name = "Toy-CSE++"
        citation = "Doe, \"A toy\", 2030, eq. 7"
        color_slot = 8
        cost_factor = 0.3
        stat_labels = {"toy_cos": "toy pairs"}
        key_labels = {"strength": "toy strength s"}
        term_labels = {"l_toy": "toy loss"}

        def contribute(self, batch, cos, temperature):
            return Contribution()

    registry.register_method("toy_cse", _ToyParams, "a toy term")(Toy)
    yield Toy
    del METHODS["toy_cse"]


def test_a_registered_method_is_named_coloured_costed_and_tabled_everywhere(toy_method):
    assert display_name("toy_cse") == "Toy-CSE++"
    assert compare_names()["toy_cse"] == "Toy-CSE++"
    assert method_key("toy-cse-s2") == "toy_cse"          # a run label's spelling
    assert method_key("Toy-CSE++") == "toy_cse"         # its display name, "++" read as "pp"
    assert method_color("toy_cse-s1") == METHOD_PALETTE[8]
    assert readable("toy_cse.strength") == "toy strength s"
    assert readable("loss/toy_cse.l_toy") == "toy loss"
    assert registry.stat_labels()["toy_cse.toy_cos"] == "toy pairs"
    assert cost.cost_factors()["toy_cse"] == pytest.approx(0.3)
    assert "| `toy_cse` | a toy term | Doe, \"A toy\", 2030, eq. 7 |" in method_table().splitlines()


def test_the_papers_methods_keep_their_names_colours_and_costs():
    assert [display_name(m) for m in ("simcse", "mixcse", "gs_infonce", "clusterns", "apincse")] == [
        "SimCSE", "MixCSE", "GS-InfoNCE", "ClusterNS", "APINCSE"]
    assert method_color("mixcse-s3") == "#D55E00" and method_color("SimCSE") == "#0072B2"
    assert method_key(["interlayer_negative", "augmented_positive", "mlm"]) == "apincse"
    assert method_key("apincse-no_ap") == "interlayer_negative"
    assert display_name("apincse-no_ap") == "APINCSE-AP"
    # a family's pooler with neither of its parts: SimCSE's loss on APINCSE's pooler (the ablation's control)
    assert display_name("apincse-pooler") == "APINCSE pooler only"
    assert method_key("apincse-pooler") == method_key("APINCSE pooler only") == "simcse"
    assert FAMILIES["apincse"].methods == ("augmented_positive", "interlayer_negative")
    # every statistic the papers' methods log has words for figures (none shows as a raw key)
    words = registry.stat_labels()
    assert words["mixcse.mixed_cos"] == "mixed negatives" and words["gs_infonce.noise_cos"] == "Gaussian negatives"
    assert registry.cost_factors()["mlm"] == 0.5 and registry.cost_factors()["simcse"] == 0.0


def test_every_method_declares_a_citation_and_a_display_name():
    for name, spec in METHODS.items():
        assert spec.about.citation, name
        assert spec.display_name and spec.display_name != name or name in ("mlm",), name


def test_new_methods_are_in_cpu_compare_and_costed_by_hand(tmp_path, monkeypatch):
    from cselab.model.config import load_config
    from cselab.workbench.studies import load_study

    study = load_study("cpu-compare", "cpu", tmp_path / "runs")
    labels = {spec.label.rsplit("-s", 1)[0] for spec in study.runs}
    assert {"esimcse", "simcse_pp"} <= labels
    # CPU reference: 15 s + 100 steps × 2.0 s × (1 + ESimCSE's 0.05 + the momentum pass 1/6) + 5 evaluations × 8 s
    # (every 25 steps, and step 0's before training)
    cfg = load_config(None, {"method": "esimcse", "max_steps": 100, "eval_every": 25, "final_eval": False,
                             "device": "cpu"})
    monkeypatch.setenv("CSELAB_NATIVE_BF16", "off")   # the fp32 reference step (auto is bf16 where it is native)
    assert cost.estimate_run(cfg, "cpu").seconds == pytest.approx(15 + 100 * 2.0 * (1 + 0.05 + 1 / 6) + 40)


# ------------------------------------------------------------------ no method's name in shared modules
PACKAGE = Path(__file__).resolve().parents[1] / "cselab"
# Where a method's name may stand: the methods' own files (cselab/model/methods/, the presets; on the
# workbench side their presentation, cselab/workbench/method_views/), and, with their reasons, these.
OWN_PLACES = ("model/methods/", "workbench/method_views/")
NAMED_HERE = {
    "model/config.py": "DEFAULT_METHOD: the method of a config that names none (the core alone), every default of "
                 "TrainConfig being SimCSE's",
    "workbench/published.py": "the papers' published tables as data, keyed by paper (like the presets)",
}


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are no docstring (prose may name a method: it is read,
    not branched on), f-strings' literal parts included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def method_names_in_shared_modules(root: Path = PACKAGE) -> list[str]:
    """``file:line: 'literal'`` for every string literal outside the methods' own files that holds a
    registered method's or family's name as a word of its own (``clusterns.bml``, ``"mlm"``; not
    ``wiki1m_for_simcse``, and not in a URL: a data set's address is no method)."""
    names = sorted(set(METHODS) | set(FAMILIES), key=len, reverse=True)
    word = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])")
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(OWN_PLACES) or rel in NAMED_HERE:
            continue
        found += [f"{rel}:{line}: {text[:60]!r}" for line, text in _string_literals(path)
                  if "://" not in text and word.search(text)]
    return found


def test_no_shared_module_spells_a_method_name():
    assert method_names_in_shared_modules() == []


def test_the_name_check_finds_a_planted_name(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "cselab", ignore=shutil.ignore_patterns("__pycache__"))
    panels = tmp_path / "cselab" / "workbench" / "plots" / "panels.py"
    panels.write_text(panels.read_text() + '\nEXTRA = {"loss/clusterns.bml": "BML"}\n', encoding="utf-8")
    docs = tmp_path / "cselab" / "workbench" / "plots" / "core.py"   # a docstring naming a method is prose, not a branch
    docs.write_text(docs.read_text() + '\n\ndef f():\n    """Like mixcse."""\n', encoding="utf-8")
    found = method_names_in_shared_modules(tmp_path / "cselab")
    assert len(found) == 1 and found[0].startswith("workbench/plots/panels.py:") and "clusterns.bml" in found[0]


def test_the_default_method_is_the_registered_core():
    from cselab.model.config import DEFAULT_METHOD, TrainConfig

    assert METHODS[DEFAULT_METHOD].component is None and TrainConfig().method == [DEFAULT_METHOD]


def test_what_shared_modules_ask_of_a_method_comes_from_its_class(monkeypatch):
    from cselab.model.config import load_config
    from cselab.workbench.method_views import statistic_colours
    from cselab.workbench.plots.palettes import statistic_colour
    from cselab.workbench.plots.panels import key_words
    from cselab.workbench.studies import smoke
    from cselab.model.train.ddp import Processes

    # the smoke profile's batch: 64 / 8 = 8, and ClusterNS's 16 centroids drawn from a batch ask for 16 more
    monkeypatch.setattr(smoke, "tiny_backbone", lambda name: Path("/tiny"))
    clusterns = load_config({"method": "clusterns", "batch_size": 64, "clusterns": {"num_clusters": 16}})
    assert smoke.smoke_overrides(clusterns)["batch_size"] == 8 + 16
    assert smoke.smoke_overrides(load_config({"method": "mixcse", "batch_size": 64}))["batch_size"] == 8
    # torchrun: the masked-LM term refuses, from its own class; one process runs it
    mlm = load_config({"method": ["simcse", "mlm"], "batch_size": 64})
    with pytest.raises(ValueError, match="method mlm is not supported with torchrun"):
        Processes(rank=0, world_size=2).check_config(mlm)
    Processes().check_config(mlm)
    # a loss term's panel title and a cosine's colour, as the methods declare them
    assert key_words("loss/clusterns.bml") == "ClusterNS BML (× λ)"
    assert key_words("loss/simcse_pp.dcl") == "SimCSE++: dimension-wise contrastive loss"
    assert statistic_colour("esimcse.queue_cos") == statistic_colours()["queue negative"]
    assert method_key(["simcse", "mlm"]) == "simcse"   # the auxiliary term names no method


def test_a_registered_method_declares_its_statistics_kinds_and_terms(toy_method):
    from cselab.workbench.method_views import statistic_colours
    from cselab.workbench.plots.palettes import statistic_colour
    from cselab.workbench.plots.panels import key_words

    toy_method.stat_kinds = {"toy_cos": "hard negative"}
    toy_method.term_titles = {"l_toy": "Toy-CSE++ toy term"}
    assert statistic_colour("sim/toy_cse.toy_cos") == statistic_colours()["hard negative"]
    assert key_words("loss/toy_cse.l_toy") == "Toy-CSE++ toy term"
    toy_method.term_titles = {}
    assert key_words("loss/toy_cse.l_toy") == "Toy-CSE++: toy loss"   # the label, the method named
