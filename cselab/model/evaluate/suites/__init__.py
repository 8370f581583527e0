"""The evaluation suites as a registry, as methods and poolers are (modelled on sentence-transformers'
evaluators). **A suite is one module in this folder**: it declares a :class:`Suite` and calls
:func:`register_suite`; every module here is imported below, in name order, so adding a suite
changes no other file. Everything that names suites reads them here:

* ``cselab eval``: the ``--suite`` choices and help, the options each suite takes (:class:`Option`:
  its flag, help and default), and the table it prints (:mod:`cselab.cli`);
* the evaluation cache (:func:`cselab.model.evaluate.cache.evaluate_run`): the keys a stored result must
  hold, the result training already wrote (``final_eval``), the outputs kept in every entry
  (``per_pair``), the keys that name an entry after a code change, the numbers a frame row takes;
* the tables: each task's column label as the papers write it and the tables a suite's results
  make (:mod:`cselab.workbench.tables`, :mod:`cselab.workbench.paper_tables`);
* training's dev evaluation: the suite that scores one given set of pairs (``score_pairs``,
  :mod:`cselab.model.train.dev_evaluation`).

The registry is light (``cselab --help`` reads it): a suite may name its function, its task list or
any default as a :class:`Ref` — a module and a name, imported on first use — so that declaring the
suites does not load torch, scikit-learn or the data.
"""
from __future__ import annotations

import importlib
import pkgutil

from .registry import (SUITES, Option, Ref, Suite, Table, cli_flags, default_suite, frame_numbers, get_suite,
                       register_suite, resolve, result_tables, task_labels)

__all__ = ["SUITES", "Option", "Ref", "Suite", "Table", "cli_flags", "default_suite", "frame_numbers", "get_suite",
           "register_suite", "resolve", "result_tables", "task_labels"]

# Suite modules register themselves on import: every module of this folder, in name order (so the
# registry's order, and with it `cselab eval --help`, is the same each run).
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module != "registry":
        importlib.import_module(f"{__name__}.{_module}")
