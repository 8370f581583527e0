"""One InfoNCE core (``infonce``) and the component interface methods plug into (``base``)."""
from .base import Component, ContrastiveBatch, Contribution, NegativeBlock
from .infonce import ContrastiveLoss, LossOutput, aligned_positive_mask, cosine_matrix, info_nce, similarity_stats

__all__ = [
    "Component", "ContrastiveBatch", "ContrastiveLoss", "Contribution", "LossOutput", "NegativeBlock",
    "aligned_positive_mask", "cosine_matrix", "info_nce", "similarity_stats",
]
