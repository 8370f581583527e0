"""Every module has one path: no import hook maps the modules' former paths (``cselab.train``,
``cselab.plots``, ...) onto the two sides any more, so ``importlib.reload`` works on every module
(IPython's autoreload), a missing module is a ModuleNotFoundError, and nothing in the repository
imports a former path. The one former path kept is a real two-line module,
``cselab.encoder.st_module``, which model folders exported before the move name in modules.json."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass, replace

import pytest
from conftest import REPO

# the top-level modules and packages that moved into cselab/model/ and cselab/workbench/
FORMER = {"config", "options", "io", "utils", "distributed", "progress", "lockfile", "project", "timing", "export",
          "data", "encoder", "losses", "methods", "rundir", "train", "evaluate", "results", "tables", "labels",
          "published", "plots", "analysis", "paper_tables", "widgets", "neighbours", "studies", "comparisons", "lab"}
KEPT = {"cselab.encoder", "cselab.encoder.st_module"}   # real modules (old exported folders name them)

# import every module of the package, then reload each: the module object must stay the same, under
# its own name, in sys.modules (the import hook renamed a module reloaded after its former path)
RELOAD = """
import importlib, json, pkgutil, sys
import cselab
names = sorted(m.name for m in pkgutil.walk_packages(cselab.__path__, "cselab."))
problems = {}
for name in names:
    module = importlib.import_module(name)
    try:
        again = importlib.reload(module)
    except Exception as error:
        problems[name] = repr(error)
        continue
    if not (again is module and module.__name__ == name and module.__spec__.name == name
            and sys.modules[name] is module):
        problems[name] = f"reloaded as {again.__name__} (spec {module.__spec__.name})"
print(json.dumps({"modules": names, "problems": problems}))
"""


def _python(code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})


def test_every_module_reloads_as_itself(tmp_path):
    done = _python(RELOAD, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["problems"] == {}
    # every module was reached: the two sides' packages, the registries' modules, the kept former path
    modules = set(out["modules"])
    assert len(modules) > 140 and KEPT <= modules
    assert {"cselab.__main__", "cselab.cli", "cselab.model.methods.mixcse", "cselab.model.encoder.layer_attention",
            "cselab.workbench.studies.record", "cselab.model.evaluate.suites.sts"} <= modules


def test_a_registry_reloaded_keeps_refusing_another_definition_under_a_taken_name():
    """A reload may define a method, a pooler or a suite again (same module, same class name); a
    different definition under a registered name is still refused."""
    from cselab.model.encoder.pooling import Pooler, register_pooler
    from cselab.model.evaluate.suites import get_suite, register_suite
    from cselab.model.losses.base import Component
    from cselab.model.methods import register_method

    @dataclass
    class Params:
        weight: float = 1.0

    with pytest.raises(ValueError, match="method 'mixcse' is registered twice"):
        register_method("mixcse", Params)(type("Planted", (Component,), {}))
    with pytest.raises(ValueError, match="pooler 'avg' is registered twice"):
        register_pooler("avg")(type("Planted", (Pooler,), {}))
    with pytest.raises(ValueError, match="suite 'sts' is registered twice"):
        register_suite(replace(get_suite("geometry"), name="sts"))   # declared here, under a taken name
    assert get_suite("sts").name == "sts"


@pytest.mark.parametrize("statement", ["import cselab.data.nope", "import cselab.train", "from cselab.plots import style",
                                       "import cselab.model.nope"])
def test_a_missing_module_is_a_module_not_found_error(statement, tmp_path):
    code = (f"try:\n    {statement}\nexcept ModuleNotFoundError as error:\n    print('ModuleNotFoundError', error.name)\n"
            "import importlib.util, sys\n"
            # find_spec answers without importing the packages it looks in (the hook imported them)
            "assert importlib.util.find_spec('cselab.studies') is None\n"
            "print(sorted(m for m in sys.modules if m.startswith('cselab')))")
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    found, imported = done.stdout.strip().splitlines()
    assert found.startswith("ModuleNotFoundError cselab.")
    # only what the statement itself imported: cselab (and cselab.model for cselab.model.nope)
    assert imported in ("['cselab']", "['cselab', 'cselab.model']")


def test_a_model_folder_exported_before_the_move_loads_in_sentence_transformers(tiny_model, tmp_path):
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from cselab.model.encoder import SentenceEncoder
    from cselab.model.encoder.st_module import CselabEncoderModule

    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="prompt")
    encoder.eval_precision = "fp32"
    folder = tmp_path / "exported-before-the-move"
    encoder.save(folder)
    modules = json.loads((folder / "modules.json").read_text())
    assert [m["type"] for m in modules] == ["cselab.model.encoder.st_module.CselabEncoderModule"]
    # what a folder saved before the encoder moved to cselab/model/ says
    modules[0]["type"] = "cselab.encoder.st_module.CselabEncoderModule"
    (folder / "modules.json").write_text(json.dumps(modules))
    model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=True)
    assert [type(m) for m in model] == [CselabEncoderModule]
    sentences = ["A man is playing a guitar.", "Two dogs run on the beach.", "The stock market fell today."]
    theirs, ours = model.encode(sentences), encoder.encode(sentences)
    assert theirs.shape == (3, 32) and np.abs(theirs - ours).max() < 1e-4


def test_nothing_in_the_repository_imports_a_former_path():
    def former(name: str) -> bool:
        parts = name.split(".")
        return len(parts) > 1 and parts[0] == "cselab" and parts[1] in FORMER and name not in KEPT

    found = []
    for folder in ("cselab", "notebooks", "tests", "benchmarks", "docs"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else
                         [a.name for a in node.names] if isinstance(node, ast.Import) else [])
                names += [f"cselab.{a.name}" for a in getattr(node, "names", [])
                          if isinstance(node, ast.ImportFrom) and node.module == "cselab"]
                found += [f"{path.relative_to(REPO)}:{node.lineno}: {name}" for name in names if name and former(name)]
    assert found == []
    assert former("cselab.plots.style") and not former("cselab.encoder.st_module") and not former("cselab.model.io")
