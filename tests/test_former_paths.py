"""The modules that moved into the two sides (cselab/model/, cselab/workbench/) still import under
their former paths for one release — as the same module objects, with a DeprecationWarning naming
the new path — and nothing in the repository uses a former path any more."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import REPO

import cselab

# one import statement per former path, as a user's code has it
FORMER = """
import importlib, json, sys, warnings
import cselab
out = {}
""" + "".join(f"""
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import cselab.{old}
out["{old}"] = {{"same": sys.modules["cselab.{old}"] is importlib.import_module("{new}"), "warnings": [
    (w.category.__name__, str(w.message), w.filename) for w in caught if "moved to" in str(w.message)]}}
""" for old, new in sorted(cselab.MOVED.items())) + """
# a submodule through its former package, after the new one was imported: the same objects, run once
from cselab.model.methods.mixcse import MixCSE
from cselab.methods.mixcse import MixCSE as Former
from cselab.plots.style import method_color
import cselab.workbench.plots.style as style
# what exported model folders name (modules.json): sentence-transformers imports it by that path
module = importlib.import_module("cselab.encoder.st_module")
out["checks"] = {"class": Former is MixCSE, "function": method_color is style.method_color,
                 "st_module": module.CselabEncoderModule.__module__}
print(json.dumps(out))
"""


def test_every_former_path_imports_the_moved_module_and_warns(tmp_path):
    script = tmp_path / "former.py"
    script.write_text(FORMER)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    checks = out.pop("checks")
    assert sorted(out) == sorted(cselab.MOVED) and len(out) == 29
    for old, found in out.items():
        new = cselab.MOVED[old]
        assert found["same"], old
        # one warning, naming the new path, attributed to the line that imported it (not to importlib)
        assert [(category, message) for category, message, _ in found["warnings"]] == [
            ("DeprecationWarning", f"cselab.{old} moved to {new}; the old path goes in the next release")], old
        assert found["warnings"][0][2] == str(script)
    assert checks == {"class": True, "function": True, "st_module": "cselab.model.encoder.st_module"}


def test_a_former_path_maps_to_its_new_place():
    assert cselab.new_path("cselab.plots.check") == "cselab.workbench.plots.check"
    assert cselab.new_path("cselab.lab") == "cselab.workbench.jupyterlab"
    assert cselab.new_path("cselab.train.loop") == "cselab.model.train.loop"
    assert cselab.new_path("cselab.workbench") is None and cselab.new_path("cselab.model.train") is None
    assert cselab.new_path("cselab.cli") is None and cselab.new_path("numpy.linalg") is None


def test_nothing_in_the_repository_imports_a_former_path():
    found = []
    for folder in ("cselab", "notebooks", "tests", "benchmarks", "docs"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path.name == "test_former_paths.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else
                         [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                names += [f"cselab.{a.name}" for a in getattr(node, "names", [])
                          if isinstance(node, ast.ImportFrom) and node.module == "cselab"]
                found += [f"{path.relative_to(REPO)}:{node.lineno}: {name}" for name in names
                          if name and cselab.new_path(name)]
    assert found == []
