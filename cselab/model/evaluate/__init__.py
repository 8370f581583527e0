"""Evaluation: STS (SimCSE's protocol), SentEval transfer tasks, clustering, embedding geometry.

The names below are imported from their modules on first use (PEP 562): a training kernel that
needs only the STS suite does not pay for scikit-learn's clustering and the transfer tasks'
classifiers (docs/performance-log.md, "The demo's time")."""
from __future__ import annotations

import importlib

_EXPORTS = {
    "sts": ("AGGREGATES", "aggregate_subsets", "cosine_scores", "evaluate_pairs", "evaluate_sts", "format_sts_table"),
    "clustering": ("CLUSTERING_TASKS", "cluster_embeddings", "evaluate_clustering", "hungarian_accuracy"),
    "geometry": ("alignment", "evaluate_alignment_uniformity", "largest_angle", "mean_pairwise_cosine", "uniformity"),
    "transfer": ("evaluate_transfer",),
    "cache": ("evaluate_run", "evaluate_runs", "evaluation_frame"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = list(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value   # the next lookup is an ordinary one
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
