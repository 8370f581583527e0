"""GS-InfoNCE: its Gaussian-noise negatives."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

register_view(MethodView("gs_infonce", kinds={"noise negative": StatisticKind("#66CC00", PAIRS)}))   # yellow green
