"""Evaluation: STS (SimCSE's protocol)."""
from .sts import AGGREGATES, aggregate_subsets, cosine_scores, evaluate_pairs, evaluate_sts, format_sts_table

__all__ = ["AGGREGATES", "aggregate_subsets", "cosine_scores", "evaluate_pairs", "evaluate_sts", "format_sts_table"]
