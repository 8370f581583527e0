"""SimCSE++: its off-dropout negatives."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

register_view(MethodView("simcse_pp", kinds={"off-dropout negative": StatisticKind("#7722FF", PAIRS)}))   # violet
