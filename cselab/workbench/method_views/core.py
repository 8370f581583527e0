"""The InfoNCE core's statistics (``pos_cos``, ``neg_cos``: kinds "positive" and "in-batch negative"),
which every method logs: the first family, the pairs the loss contrasts."""
from __future__ import annotations

from ...model.config import DEFAULT_METHOD
from .registry import MethodView, StatisticKind, register_view

PAIRS = "pairs the loss contrasts"   # the family of the pairs in the loss's numerator and denominator

CORE = register_view(MethodView(DEFAULT_METHOD, kinds={
    "positive": StatisticKind("#000000", PAIRS),            # the positive pair: black
    "in-batch negative": StatisticKind("#E41A1C", PAIRS),   # the other sentences of the batch (MixCSE's "random negative"): red
}))
