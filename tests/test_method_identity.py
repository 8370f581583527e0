"""A method's identity lives on its class: figures, tables, the cost model and the docs' method
table read it through the registry, so a method registered anywhere is named, coloured and costed
without touching those modules."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from cselab.analysis.compare import method_names as compare_names
from cselab.losses.base import Component, Contribution
from cselab.methods import FAMILIES, METHODS, method_table, registry
from cselab.labels import display_name, method_key, readable
from cselab.plots.style import METHOD_PALETTE, method_color
from cselab.studies import cost


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
    from cselab.config import load_config
    from cselab.studies import load_study

    study = load_study("cpu-compare", "cpu", tmp_path / "runs")
    labels = {spec.label.rsplit("-s", 1)[0] for spec in study.runs}
    assert {"esimcse", "simcse_pp"} <= labels
    # CPU reference: 15 s + 100 steps × 2.0 s × (1 + ESimCSE's 0.05 + the momentum pass 1/6) + 5 evaluations × 8 s
    # (every 25 steps, and step 0's before training)
    cfg = load_config(None, {"method": "esimcse", "max_steps": 100, "eval_every": 25, "final_eval": False,
                             "device": "cpu"})
    monkeypatch.setenv("CSELAB_NATIVE_BF16", "off")   # the fp32 reference step (auto is bf16 where it is native)
    assert cost.estimate_run(cfg, "cpu").seconds == pytest.approx(15 + 100 * 2.0 * (1 + 0.05 + 1 / 6) + 40)
