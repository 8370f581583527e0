"""The quickstart notebook runs end to end under papermill (tiny model, a few steps)."""
from __future__ import annotations

import json

from conftest import REPO

from cselab.model.config import load_config


def test_quickstart_notebook_executes(tiny_model, thin_data, tmp_path):
    import jupytext
    import papermill

    notebook = tmp_path / "quickstart.ipynb"
    jupytext.write(jupytext.read(REPO / "notebooks" / "quickstart.py"), notebook)
    tagged = [c for c in json.loads(notebook.read_text())["cells"] if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1  # papermill injects parameters after this cell
    figures = tmp_path / "figures"
    papermill.execute_notebook(
        str(notebook), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False,
        parameters={"model": str(tiny_model), "max_steps": 4, "batch_size": 16, "eval_every": 2,
                    "data_dir": str(thin_data), "output_dir": str(tmp_path / "runs"), "figures_dir": str(figures)})
    written = {p.name for p in figures.iterdir()}
    assert written == {"loss.pdf", "loss.png", "similarity.pdf", "similarity.png", "stsb_dev.pdf", "stsb_dev.png",
                       "sts_table.md", "provenance.json"}
    # the three figures are shown inline as PNG (a Figure built without pyplot would print "<Figure size …>")
    cells = json.loads((tmp_path / "out.ipynb").read_text())["cells"]
    shown = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert sum("image/png" in o.get("data", {}) for o in shown) == 3
    assert all("image/png" in o["data"] for o in shown                       # no Figure shown as text only
               if "<Figure size" in "".join(o.get("data", {}).get("text/plain", "")))
    table = (figures / "sts_table.md").read_text()
    assert "| before" in table and "| after" in table and "SICK-R" in table
    # what it prints is read, not scrolled: the config in one line (not a 40-line dump), no weight
    # loading bar from sentence-transformers
    printed = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for o in shown)
    config_line = next(line for line in printed.splitlines() if line.startswith("simcse on "))
    assert config_line.endswith("(its config.json holds every setting)") and "4 steps of batch 16" in config_line
    assert '"temperature"' not in printed and "Loading weights" not in printed
    # the run is named by the config's hash: other parameters give another run, never this one
    cfg = load_config("quickstart", {"model": str(tiny_model), "pooler": "cls", "method": "simcse", "max_steps": 4,
                                     "batch_size": 16, "eval_every": 2, "lr": 3e-5, "seed": 42,
                                     "output_dir": str(tmp_path / "runs"), "final_eval": False})
    run = tmp_path / "runs" / f"simcse-{cfg.config_hash()}"
    assert sorted(p.name for p in (tmp_path / "runs").iterdir() if p.is_dir()) == [run.name]
    metrics = (run / "metrics.jsonl").read_text().splitlines()
    assert sum('"kind": "eval"' in line for line in metrics) == 3   # steps 0 (before training), 2 and 4


def test_notebook_sources_are_jupytext_percent():
    import jupytext
    import nbformat

    for path in (REPO / "notebooks").glob("*.py"):
        head = path.read_text().splitlines()[:12]
        assert any("format_name: percent" in line for line in head), path
        notebook = jupytext.read(path)          # in process: what `jupytext --to ipynb` converts
        assert notebook.cells and nbformat.validate(notebook) is None, path


def test_no_notebook_is_named_like_an_importable_module():
    """JupyterLab starts a notebook's kernel in notebooks/; a notebook named like a module that can be
    imported (notebooks/umap.py once) would be imported in its place wherever that folder is on
    sys.path, e.g. `import umap` in cselab.workbench.analysis.umap loading the notebook instead of umap-learn."""
    import importlib.util
    import sys

    notebooks = (REPO / "notebooks").resolve()
    clashes = {}
    for path in sorted(notebooks.glob("*.py")):
        if path.stem in sys.builtin_module_names:
            clashes[path.name] = "built-in"
            continue
        spec = importlib.util.find_spec(path.stem)
        if spec is not None and spec.origin != str(path):   # not the notebook itself (notebooks/ on sys.path)
            clashes[path.name] = spec.origin
    assert clashes == {}, f"notebooks named like importable modules (rename them): {clashes}"


def test_every_notebook_survives_a_jupytext_round_trip_byte_for_byte():
    """JupyterLab opens a .py through jupytext and, on save (autosave during Run All included),
    writes the notebook back through it: a source that jupytext would write differently changes a
    tracked file nobody edited (notebooks/dynamics.py: a blank line inside a markdown cell came back
    as `#`). Read as the lab reads it, kept as JSON as the browser holds it, written back."""
    import jupytext
    import nbformat

    changed = {}
    for path in sorted((REPO / "notebooks").glob("*.py")):
        text = path.read_text()
        held = nbformat.reads(nbformat.writes(jupytext.reads(text, fmt="py:percent")), as_version=4)
        back = jupytext.writes(held, fmt="py:percent")
        if back != text:
            old, new = text.splitlines(), back.splitlines()
            changed[path.name] = next((i for i, (a, b) in enumerate(zip(old, new), 1) if a != b),
                                      min(len(old), len(new)) + 1)
    assert changed == {}, f"notebooks jupytext would rewrite on save (first changed line): {changed}"
