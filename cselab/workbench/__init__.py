"""The workbench side of cselab: a study's runs → records → statistics → tables and figures, the
notebooks' helpers and the studies themselves; it reads the model side (:mod:`cselab.model`), never
the other way round.

``results`` (the statistics of a comparison), ``comparisons`` (the one home of a comparison),
``tables``, ``labels``, ``published`` (the papers' numbers), ``plots`` (figures and the figure
checker), ``analysis`` (per-paper analyses, each run's scores), ``paper_tables``, ``neighbours`` and
``widgets`` (the explorer), ``studies`` (``cselab reproduce``), ``jupyterlab`` (``make lab``'s
contents manager) and ``notebook``: the helpers every notebook calls, re-exported here, so that a
notebook reads ``from cselab import workbench`` then ``workbench.setup()``, ``workbench.show(...)``,
``workbench.save_table(...)``, ``workbench.load_runs(...)``.
"""
from .notebook import (DEFAULT_STUDY, INLINE_DPI, ONE_LINE_ERRORS, BadParameter, NotebookError, RunsNotFound,
                       RunsParameter, claims_cell, comparison_groups, figure_png, load_runs, paired_comparison_cell, project_path,
                       plain_number, project_root, save_table, setup, show, sts_cost_note, study_runs,
                       suite_comparison_cell)

__all__ = ["DEFAULT_STUDY", "INLINE_DPI", "ONE_LINE_ERRORS", "BadParameter", "NotebookError", "RunsNotFound",
           "RunsParameter", "claims_cell", "comparison_groups", "figure_png", "load_runs", "paired_comparison_cell", "project_path",
           "plain_number", "project_root", "save_table", "setup", "show", "sts_cost_note", "study_runs",
           "suite_comparison_cell"]
