"""ClusterNS: its hard negatives among the pairs the loss contrasts, the clusters' statistics in a family
of their own, the batch mean compared with σ (``start_threshold``: clustering starts once it falls
below), the non-empty clusters out of K (``num_clusters``)."""
from __future__ import annotations

from .registry import MethodView, OutOf, StatisticKind, Threshold, register_view
from .core import PAIRS

CLUSTERS = "clusters"

register_view(MethodView(
    "clusterns",
    kinds={"hard negative": StatisticKind("#FF00FF", PAIRS),         # the hard negative (c_i2): magenta
           "false negative": StatisticKind("#FFAA88", CLUSTERS),     # negatives that are in fact positives: salmon
           "nearest centroid": StatisticKind("#004422", CLUSTERS),   # c_i1: dark green, far from the negatives' reds
           "between centroids": StatisticKind("#554466", CLUSTERS),  # centroid-to-centroid cosine: dark slate
           "batch mean": StatisticKind("#33DD99", "all pairs of the batch")},   # the mean over the batch: mint
    thresholds={"batch_cos": Threshold("start_threshold", "σ",
                                       "the method starts clustering once this mean falls below it")},
    out_of={"nonempty_clusters": OutOf("num_clusters", "K")}))
