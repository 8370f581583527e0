"""APINCSE's two components: the augmented positive (and its neighbour queue's fill ramp) and the
interlayer negative."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

register_view(MethodView("augmented_positive", kinds={
    "augmented positive": StatisticKind("#775500", PAIRS),   # dark brown: pulled together, as the positive
}, fill_ramps=("queue_fill",)))
register_view(MethodView("interlayer_negative", kinds={
    "interlayer negative": StatisticKind("#006666", PAIRS),  # the earlier layer's negative: dark teal
}))
