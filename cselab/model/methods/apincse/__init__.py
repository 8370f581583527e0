"""APINCSE (Cai, Huang & Dong, J. Jilin Univ. (Eng. & Tech.) 2025): augmented positives from a
neighbour queue and interlayer hard negatives, on top of the layer-attention pooler.

The method is two independent components plus a pooler, so each paper ablation is one change:

    pooler: layer_attention                             # eq. 1–7   (-LAST: pooler: cls_before_pooler)
    method: [augmented_positive, interlayer_negative]   # eq. 10–15 (-AP: drop it), eq. 16–19 (-IN: drop it)

See docs/methods/apincse.md for the equation → config key table and the interpretation choices.
"""
from .augmented_positive import AugmentedPositive, AugmentedPositiveParams
from .interlayer import InterlayerNegative, InterlayerNegativeParams
from ...losses.queue import EmbeddingQueue

__all__ = ["AugmentedPositive", "AugmentedPositiveParams", "EmbeddingQueue", "InterlayerNegative",
           "InterlayerNegativeParams"]

from ..registry import MethodFamily, register_family  # noqa: E402

# APINCSE is its two parts together (with the layer-attention pooler); a run label
# ``apincse-no_ap`` is APINCSE without its augmented positive (the paper's "APINCSE-AP", Sec. 4.4).
register_family(MethodFamily(
    "apincse", {"ap": "augmented_positive", "in": "interlayer_negative"}, "APINCSE",
    'Cai, Huang & Dong, "Semantic similarity model based on augmented positives and interlayer negatives", '
    "J. Jilin Univ. (Eng. & Tech.) 2025, eq. 1-20", color_slot=4))
