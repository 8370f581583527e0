"""The layer contract (pyproject.toml [tool.importlinter], docs/architecture.md "Layers") and the
import graph: the contract catches an upward import planted in a copy of the package, and the
graph — lazy imports inside functions, TYPE_CHECKING imports and modules imported by name
(``importlib.import_module``, the suites' ``Ref``) included — has no circle."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GRAPH = ("import grimp, json; g = grimp.build_graph('cselab', cache_dir=None); "
         "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))")


def _copy_package(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(REPO / "cselab", root / "cselab", ignore=shutil.ignore_patterns("__pycache__"))
    # The contract exactly as pyproject.toml declares it, in a config file of the copy.
    linter = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[importlinter]", f"root_package = {linter['root_package']}",
             f"exclude_type_checking_imports = {linter['exclude_type_checking_imports']}"]
    for i, contract in enumerate(linter["contracts"]):
        lines += ["", f"[importlinter:contract:{i}]"]
        for key, value in contract.items():   # layers (containers, layers) and forbidden (source, forbidden) alike
            lines += [f"{key} =", *[f"    {v}" for v in value]] if isinstance(value, list) else [f"{key} = {value}"]
    (root / ".importlinter").write_text("\n".join(lines) + "\n")
    return root


def _plant(root: Path, module: str, code: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + "\n\n" + code + "\n")


def _lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.argv = ['lint-imports', '--no-cache']; lint_imports_command()"],
                          cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)


def _import_graph(root: Path) -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", GRAPH], cwd=root, env={"PYTHONPATH": str(root)},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# Where a module is imported by a name computed at run time, and where its edges are counted instead:
# Ref.get imports what a Ref names; the Ref(...) calls that name them are the edges.
DYNAMIC = {("cselab.model.evaluate.suites", "self.module")}


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def importlib_edges(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """``({module: modules it imports by name}, names that could not be resolved)``: the calls of
    ``import_module`` and ``Ref`` with a module name — a constant (absolute, or relative to
    ``__name__``), or an f-string on ``__name__``, which may name any module of that package."""
    files = {_module_name(root, p): p for p in sorted((root / "cselab").rglob("*.py"))}
    edges, unresolved = {}, []
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "func", None) and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
            if name not in ("import_module", "Ref") or not node.args:
                continue
            target, found = node.args[0], set()
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                if target.value.startswith("."):
                    found = {package + target.value}
                elif target.value.split(".")[0] == "cselab":
                    found = {target.value}
            elif isinstance(target, ast.JoinedStr) and ("__name__" in ast.unparse(target)
                                                         or ast.unparse(target).startswith("f'.")):
                found = {m for m in files if m.rpartition(".")[0] == package}
            elif (package, ast.unparse(target)) not in DYNAMIC:
                unresolved.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
            edges.setdefault(module, set()).update(found)
    return edges, unresolved


def full_graph(root: Path) -> dict[str, list[str]]:
    """grimp's import graph with the edges of modules imported by name added."""
    graph = _import_graph(root)
    edges, unresolved = importlib_edges(root)
    assert unresolved == []
    return {m: sorted(set(graph.get(m, [])) | edges.get(m, set())) for m in set(graph) | set(edges)}


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each is an import circle."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_contract_is_kept_by_the_package_as_it_is(tmp_path):
    result = _lint(_copy_package(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cselab sides KEPT" in result.stdout and "model side layers KEPT" in result.stdout
    assert "the model side never imports the workbench side KEPT" in result.stdout


@pytest.mark.parametrize("module, code, importer, imported", [
    # a lazy import inside a function: the encoder reaching up to the training config
    ("cselab.model.encoder.pooling", "def _planted():\n    from ..config import TrainConfig\n    return TrainConfig",
     "cselab.model.encoder.pooling", "cselab.model.config"),
    # a type-only import: methods naming the run directory
    ("cselab.model.methods.mixcse", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..rundir import RunDir",
     "cselab.model.methods.mixcse", "cselab.model.rundir"),
    # an import between independent siblings at module level: data importing the encoder
    ("cselab.model.data.corpus", "from ..encoder import pooling", "cselab.model.data.corpus", "cselab.model.encoder"),
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, code, importer, imported):
    root = _copy_package(tmp_path)
    _plant(root, module, code)
    result = _lint(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "model side layers BROKEN" in result.stdout
    assert f"{importer} -> {imported}" in result.stdout


@pytest.mark.parametrize("module, code", [
    # training reading the results layer, at module level
    ("cselab.model.train.loop", "from ...workbench import results"),
    # a lazy import inside a function: the evaluation cache drawing a figure
    ("cselab.model.evaluate.cache", "def _planted():\n    from ...workbench.plots import core\n    return core"),
])
def test_the_model_side_importing_the_workbench_side_breaks_the_contract(tmp_path, module, code):
    root = _copy_package(tmp_path)
    _plant(root, module, code)
    result = _lint(root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the model side never imports the workbench side BROKEN" in result.stdout
    assert "cselab sides BROKEN" in result.stdout
    assert f"{module} -> cselab.workbench." in result.stdout


def test_the_import_graph_has_no_circle(tmp_path):
    graph = full_graph(REPO)
    assert "cselab.cli" in graph and len(graph) > 80
    # lazy imports are edges: cselab.model.config imports the method registry inside a function
    assert "cselab.model.methods" in graph["cselab.model.config"]
    # modules imported by name are edges: the method package imports each method module, the sts
    # suite names its function's module, the evaluation package its modules (PEP 562 exports)
    assert "cselab.model.methods.mixcse" in graph["cselab.model.methods"]
    assert "cselab.model.evaluate.sts" in graph["cselab.model.evaluate.suites.sts"]
    assert "cselab.model.evaluate.cache" in graph["cselab.model.evaluate"]
    assert circles(graph) == []


def test_a_circle_through_a_module_imported_by_name_is_found(tmp_path):
    """The alias analysis/compare.py had: a module __getattr__ reading a module above it by name."""
    root = _copy_package(tmp_path)
    _plant(root, "cselab.workbench.analysis.compare",
           "def __getattr__(name):\n    import importlib\n"
           "    return getattr(importlib.import_module('cselab.workbench.comparisons'), name)")
    assert circles(_import_graph(root)) == []   # grimp alone does not see it
    found = circles(full_graph(root))
    assert len(found) == 1 and {"cselab.workbench.analysis.compare", "cselab.workbench.comparisons"} <= set(found[0])
    # a name the test cannot resolve fails it rather than passing unseen
    _plant(root, "cselab.workbench.tables", "def _planted(name):\n    import importlib\n"
           "    return importlib.import_module(name)")
    (unresolved,) = importlib_edges(root)[1]
    assert unresolved.startswith("cselab/workbench/tables.py:") and unresolved.endswith(": importlib.import_module(name)")


def test_a_planted_circle_is_found(tmp_path):
    root = _copy_package(tmp_path)
    _plant(root, "cselab.model.io", "def _planted():\n    from .. import cli\n    return cli")
    found = circles(_import_graph(root))
    assert len(found) == 1 and {"cselab.model.io", "cselab.cli"} <= set(found[0])


def test_the_circle_finder_on_a_hand_made_graph():
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["e"], "e": ["d"], "f": ["a"]}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_reading_the_config_module_needs_no_torch():
    code = ("import sys, cselab.model.config; assert 'torch' not in sys.modules, 'torch imported'; "
            "from cselab.model.config import load_config; cfg = load_config({'method': 'mixcse', 'batch_size': 8}); "
            "assert 'torch' in sys.modules; print(cfg.config_hash())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.strip()) == 10


def test_a_method_check_gets_only_the_config_values_it_names():
    from cselab.model.config import load_config, run_method_check

    seen = {}

    def check(params, *, batch_size, pooler):
        seen.update(params=params, batch_size=batch_size, pooler=pooler)

    cfg = load_config({"batch_size": 8, "pooler": "avg"})
    run_method_check(check, "the params", cfg)
    assert seen == {"params": "the params", "batch_size": 8, "pooler": "avg"}

    def misspelt(params, *, batchsize):
        raise AssertionError("not called")

    with pytest.raises(TypeError, match="misspelt asks for 'batchsize', which is not a training config key"):
        run_method_check(misspelt, None, cfg)
