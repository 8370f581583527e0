"""cselab: unsupervised contrastive sentence embeddings, in two packages a reader sees at once.

* :mod:`cselab.model` — what trains and evaluates an encoder (config, data, encoder, losses,
  methods, train, evaluate, the run directory, export, and their foundations);
* :mod:`cselab.workbench` — a study's runs → records → statistics → tables and figures, the
  notebooks' helpers, the studies; it imports the model side, never the other way round;
* :mod:`cselab.cli` — the command line, above both.

The modules' former paths (``cselab.train``, ``cselab.plots.style``, ``cselab.results``, ...) still
import, for one release, as the same modules under their new paths, with a DeprecationWarning
naming the new path (:data:`MOVED`; ``cselab.workbench``'s notebook helpers kept their path).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

# former top-level module or package → where it is now; its submodules follow it
MOVED = {name: f"cselab.model.{name}" for name in (
    "config", "options", "io", "utils", "distributed", "progress", "lockfile", "project", "timing", "export",
    "data", "encoder", "losses", "methods", "rundir", "train", "evaluate")}
MOVED.update({name: f"cselab.workbench.{name}" for name in (
    "results", "tables", "labels", "published", "plots", "analysis", "paper_tables", "widgets", "neighbours",
    "studies", "comparisons")})
MOVED["lab"] = "cselab.workbench.jupyterlab"


def new_path(name: str) -> str | None:
    """The current path of a former module path (``cselab.plots.style`` → ``cselab.workbench.plots.style``),
    None when ``name`` did not move."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != __name__ or parts[1] not in MOVED:
        return None
    return ".".join([MOVED[parts[1]], *parts[2:]])


class _MovedModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a former path as the module at its new path (the same module object, registered under
    both names), with a DeprecationWarning."""

    def find_spec(self, name, path=None, target=None):
        target_name = new_path(name)
        if target_name is None:
            return None
        is_package = importlib.util.find_spec(target_name).submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(name, self, is_package=is_package)

    def create_module(self, spec):
        target_name = new_path(spec.name)
        # stacklevel 2: the importing line (warnings skips the import system's own frames)
        warnings.warn(f"{spec.name} moved to {target_name}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(target_name)

    def exec_module(self, module):
        """Nothing: the module ran under its new path."""


# first in line: the finders after it would find a former submodule in its (moved) package's folder and
# run it a second time under its old name
if not any(isinstance(finder, _MovedModule) for finder in sys.meta_path):
    sys.meta_path.insert(0, _MovedModule())
