"""ESimCSE: the momentum queue's negatives and the queue's fill ramp."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

register_view(MethodView("esimcse", kinds={"queue negative": StatisticKind("#CCBBFF", PAIRS)},   # lavender
                         fill_ramps=("queue_fill",)))
