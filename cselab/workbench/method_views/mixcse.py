"""MixCSE: its mixed negatives (a mixture of the positive and an in-batch negative), and the words of
its pair scores' columns (``cselab.workbench.analysis.mixcse.mixcse_scores``)."""
from __future__ import annotations

from .registry import MethodView, StatisticKind, register_view
from .core import PAIRS

SCORE_LABELS = {"positive": "positive", "random_negative": "random negative", "mixed_negative": "mixed negative"}

register_view(MethodView("mixcse", kinds={"mixed negative": StatisticKind("#7570B3", PAIRS)},   # violet-grey
                         column_words=SCORE_LABELS))
