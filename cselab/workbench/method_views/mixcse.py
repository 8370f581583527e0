"""MixCSE: its mixed negatives (a mixture of the positive and an in-batch negative)."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

register_view(MethodView("mixcse", kinds={"mixed negative": StatisticKind("#7570B3", PAIRS)}))   # violet-grey
