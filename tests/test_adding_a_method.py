"""docs/adding-a-method.md's example is a working method: registered, named, selectable, and its
view hook changes a real training step; written as its two files (the method and its preset) into a
copy of the package, nothing else, it trains and its new statistic gets a figure panel in its own words."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import REPO
from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.losses import ContrastiveBatch
from cselab.model.methods import METHODS, build_loss, display_names


@pytest.fixture
def example():
    text = (REPO / "docs" / "adding-a-method.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "docs/adding-a-method.md", "exec"), namespace)
    yield namespace
    del METHODS["word_deletion"]


def test_the_documented_example_trains_a_step(example, tiny_model):
    assert display_names()["word_deletion"] == "WordDel"
    cfg = load_config({"model": str(tiny_model), "method": ["word_deletion", "mixcse"],
                       "word_deletion": {"rate": 0.5}})
    torch.manual_seed(0)
    encoder = SentenceEncoder.from_pretrained(tiny_model).train()
    loss_fn = build_loss(cfg)
    loss_fn.setup(encoder)
    sentences = ["a cat sat on the mat", "dogs bark loudly at night", "the sun rises in the east"]
    inputs = loss_fn.training_inputs(encoder, sentences, 32)
    n = len(sentences)
    assert inputs["attention_mask"][n:].sum() < inputs["attention_mask"][:n].sum()   # view 2 lost subwords
    view1, view2 = encoder(inputs).split(n)
    out = loss_fn(ContrastiveBatch(view1.embeddings, view2.embeddings, inputs=inputs))
    assert 0 < out.stats["word_deletion.kept"] < 1 and torch.isfinite(out.loss)
    with pytest.raises(ValueError, match="rate"):
        load_config({"method": "word_deletion", "word_deletion": {"rate": 1.5}})


DOC = REPO / "docs" / "adding-a-method.md"
# the blocks the page tells a reader to write: a first line "# file: <path in the repository>"
FILE_BLOCK = re.compile(r"```(?:python|yaml)\n# file: (\S+)\n(.*?)```", re.S)
OWN_PLACES = ("cselab/model/methods/", "cselab/model/configs/")   # a method's own file and its preset

PANEL = """
import json, sys
from cselab.model.config import load_config
from cselab.workbench.plots import check_figure, plot_metric_grid
from cselab.model.rundir import read_metrics
from cselab.model.train import train

cfg = load_config("word-deletion-quickstart", {"model": sys.argv[1], "output_dir": sys.argv[2], "max_sentences": 96,
                  "batch_size": 16, "max_steps": 4, "log_every": 1, "eval_every": 4, "dev_max_pairs": 50})
run = train(cfg, data_dir=sys.argv[3], progress=False)
fig = plot_metric_grid({"word_deletion": run}, ["sim/word_deletion.kept", "loss"])
kept = read_metrics(run, "train")["sim/word_deletion.kept"].dropna().tolist()
print(json.dumps({"titles": [ax.get_title() for ax in fig.axes if ax.get_visible()], "kept": kept,
                  "problems": check_figure(fig)}))
"""


def test_the_example_is_two_files_of_its_own_and_its_statistic_gets_a_panel(tiny_model, data_dir, tmp_path):
    blocks = FILE_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert sorted(path for path, _ in blocks) == ["cselab/model/configs/word-deletion-quickstart.yaml",
                                                   "cselab/model/methods/word_deletion.py"]
    outside = [path for path, _ in blocks if not path.startswith(OWN_PLACES)]
    assert outside == [], f"the example asks for changes outside its own file and preset: {outside}"
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "cselab", copy / "cselab", ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in blocks:
        assert not (copy / path).exists(), f"{path} exists already: the example would overwrite it"
        (copy / path).write_text(text, encoding="utf-8")
    written = {str(p.relative_to(copy)) for p in (copy / "cselab").rglob("*") if p.is_file()}
    original = {str(p.relative_to(REPO)) for p in (REPO / "cselab").rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert written - original == {path for path, _ in blocks}
    out = subprocess.run([sys.executable, "-c", PANEL, str(tiny_model), str(tmp_path / "runs"), str(data_dir)],
                         cwd=copy, env={**__import__("os").environ, "PYTHONPATH": str(copy)},
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    drawn = json.loads(out.stdout.strip().splitlines()[-1])
    # the panel is titled in the method's own words (its stat_labels), the loss as every run's is
    assert drawn["titles"] == ["subwords kept", "total loss"]
    assert len(drawn["kept"]) == 4 and all(0.5 < k < 1 for k in drawn["kept"])   # rate 0.1: about 9 in 10 kept
    assert drawn["problems"] == []


def test_readme_methods_table_lists_every_registered_method():
    """The docs' method table and the registry agree: a registered method missing from README's
    table (or a row for a method that no longer exists) fails here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Methods"):readme.index("## Documentation")]
    first_cells = re.findall(r"^\| ([^|]*`[a-z_]+`[^|]*) \|", table, re.M)
    rows = {name for cell in first_cells for name in re.findall(r"`([a-z_]+)`", cell)} - {"method"}
    assert rows == set(METHODS)


# A method with a statistic of a new kind, and a threshold, a count out of a total and a fill ramp: its
# class (the model side) and its view (how the workbench shows them), each in its own place.
TOY_METHOD = '''
from dataclasses import dataclass

from cselab.model.losses.base import Component, Contribution
from cselab.model.methods.registry import register_method


@dataclass
class ToyEchoParams:
    limit: float = 0.5   # echoes stop once their mean cosine rises above it
    slots: int = 8       # echoes kept


@register_method("toy_echo", ToyEchoParams, "echoes of past batches as negatives")
class ToyEcho(Component):
    display_name = "ToyEcho"
    citation = "Doe, \\"Echoes\\", 2031, eq. 1"
    stat_labels = {"echo_cos": "echo negatives", "live_echoes": "live echoes", "echo_fill": "echo fill"}
    stat_kinds = {"echo_cos": "echo negative"}   # a kind no other method has

    def contribute(self, batch, cos, temperature):
        return Contribution()
'''
TOY_VIEW = '''
from cselab.workbench.method_views import MethodView, OutOf, StatisticKind, Threshold, register_view

register_view(MethodView(
    "toy_echo",
    kinds={"echo negative": StatisticKind("#550000", "echoes")},   # dark maroon, a family of its own
    thresholds={"echo_cos": Threshold("limit", "ε", "echoes stop once this mean rises above it")},
    out_of={"live_echoes": OutOf("slots", "S")},
    fill_ramps=("echo_fill",)))
'''
TOY_FILES = {"cselab/model/methods/toy_echo.py": TOY_METHOD, "cselab/workbench/method_views/toy_echo.py": TOY_VIEW}
TOY_CHECK = """
import json, sys
from pathlib import Path
sys.path.append(sys.argv[1])   # tests/: synthetic run folders
from synthetic_runs import write_run
from cselab.workbench.analysis.logged import method_statistic_words
from cselab.workbench.method_views import statistic_colours
from cselab.workbench.plots import check_figure, plot_statistic_families
from cselab.workbench.plots.palettes import METHOD_PALETTE, delta_e, statistic_colour, statistic_kind
from cselab.workbench.plots.statistic_families import statistic_families, statistic_family_note

run = write_run(Path(sys.argv[2]) / "toy", {"method": ["toy_echo"], "seed": 1, "toy_echo": {"limit": 0.4, "slots": 8}},
                [{"kind": "train", "step": s, "sim/pos_cos": 0.9, "sim/neg_cos": 0.2 + 0.01 * s,
                  "sim/toy_echo.echo_cos": 0.3 + 0.01 * s, "sim/toy_echo.live_echoes": min(s, 6),
                  "sim/toy_echo.echo_fill": min(s / 4, 1.0)} for s in (1, 2, 4, 6, 8)])
stats = ["pos_cos", "neg_cos", "toy_echo.echo_cos"]
titles, notes = method_statistic_words({"toy_echo": run}, ["toy_echo.live_echoes", "toy_echo.echo_fill"])
fig = plot_statistic_families({"toy_echo": run}, stats)
colour = statistic_colour("sim/toy_echo.echo_cos")
others = [c for kind, c in statistic_colours().items() if kind != "echo negative"] + list(METHOD_PALETTE)
print(json.dumps({"kind": statistic_kind("toy_echo.echo_cos"), "colour": colour,
                  "apart": min(delta_e(colour, c) for c in others),
                  "families": statistic_families(stats), "panels": [ax.get_title() for ax in fig.axes],
                  "note": statistic_family_note({"toy_echo": run}, stats), "titles": titles, "notes": notes,
                  "problems": check_figure(fig)}))
"""


def test_a_method_with_a_new_statistic_kind_touches_only_its_own_files(tmp_path):
    """Issue 56: adding a method with a new statistic kind edited two shared modules (the statistic
    palette and the families of plots/dynamics.py). Written as its class and its view, into a copy of
    the package and nothing else, its statistic takes its colour and its own panel, its threshold is
    dotted and said, its count says out of how many and its fill ramp is said in words, not drawn."""
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "cselab", copy / "cselab", ignore=shutil.ignore_patterns("__pycache__"))
    for path, text in TOY_FILES.items():
        assert not (copy / path).exists()
        (copy / path).write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", TOY_CHECK, str(REPO / "tests"), str(tmp_path / "runs")],
                         cwd=copy, env={**__import__("os").environ, "PYTHONPATH": str(copy)},
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    shown = json.loads(out.stdout.strip().splitlines()[-1])
    assert shown["kind"] == "echo negative" and shown["colour"] == "#550000" and shown["apart"] >= 15
    assert shown["families"] == {"pairs the loss contrasts": ["pos_cos", "neg_cos"], "echoes": ["toy_echo.echo_cos"]}
    assert shown["panels"] == ["pairs the loss contrasts", "echoes"]
    assert shown["note"] == ("Dotted, with the echo negatives: ε = 0.4, the threshold (echoes stop once this mean "
                             "rises above it).")
    assert shown["titles"] == {"toy_echo.live_echoes": "live echoes (of\u00a0S\u00a0=\u00a08)"}
    assert shown["notes"] == ["Echo fill: not drawn (a ramp to 1 set by the queue's size and the batch size); "
                              "full from step 4 in ToyEcho."]
    assert shown["problems"] == []
