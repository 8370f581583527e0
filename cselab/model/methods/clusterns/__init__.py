"""ClusterNS: clustering-aware negative sampling (Deng et al., Findings of ACL 2023)."""
from .bml import bidirectional_margin, bml_loss
from .component import ClusterNS, ClusterNSParams
from .kmeans import ClusterState, greedy_init, kmeans_centroids, momentum_update, same_cluster

__all__ = ["ClusterNS", "ClusterNSParams", "ClusterState", "bidirectional_margin", "bml_loss", "greedy_init",
           "kmeans_centroids", "momentum_update", "same_cluster"]
