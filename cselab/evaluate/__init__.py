"""Evaluation: STS (SimCSE's protocol), SentEval transfer tasks, clustering, embedding geometry."""
from .clustering import CLUSTERING_TASKS, cluster_embeddings, evaluate_clustering, hungarian_accuracy
from .geometry import (alignment, evaluate_alignment_uniformity, largest_angle, mean_pairwise_cosine,
                       uniformity)
from .sts import AGGREGATES, aggregate_subsets, cosine_scores, evaluate_pairs, evaluate_sts, format_sts_table
from .transfer import evaluate_transfer
from .runs import evaluate_run, evaluate_runs, evaluation_frame

__all__ = ["AGGREGATES", "aggregate_subsets", "cosine_scores", "evaluate_pairs", "evaluate_sts", "format_sts_table",
           "CLUSTERING_TASKS", "alignment", "cluster_embeddings", "evaluate_alignment_uniformity",
           "evaluate_clustering", "evaluate_transfer", "hungarian_accuracy", "largest_angle",
           "mean_pairwise_cosine", "uniformity", "evaluate_run", "evaluate_runs", "evaluation_frame"]
