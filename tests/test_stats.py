"""Seed statistics against hand computations: the t interval and the paired t-test."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from cselab.stats import compare_to_baseline, format_comparison, mean_ci, paired_test


def test_mean_ci_by_hand():
    out = mean_ci([1.0, 2.0, 3.0])
    # mean 2, s = 1, t_{0.975, 2} = 4.302653, half width = 4.302653 / √3
    half = 4.302652729911275 / math.sqrt(3)
    assert out == pytest.approx({"n": 3, "mean": 2.0, "std": 1.0, "ci_low": 2 - half, "ci_high": 2 + half})
    single = mean_ci([5.0])
    assert single["mean"] == 5.0 and math.isnan(single["std"]) and math.isnan(single["ci_low"])
    with pytest.raises(ValueError, match="no values"):
        mean_ci([])


def test_paired_t_test_by_hand():
    method, baseline = [76.0, 77.0, 78.5], [75.0, 75.5, 76.0]
    # differences 1.0, 1.5, 2.5: mean 5/3, s = √(7/12), t = mean / (s/√3)
    d_mean, d_sd = 5 / 3, math.sqrt(7 / 12)
    t = d_mean / (d_sd / math.sqrt(3))
    out = paired_test(method, baseline)
    assert out["mean_diff"] == pytest.approx(d_mean) and out["t"] == pytest.approx(t)
    # two-sided p of t with 2 degrees of freedom: 1 − t/√(t² + 2)
    assert out["p"] == pytest.approx(1 - t / math.sqrt(t * t + 2))
    constant = paired_test([2.0, 3.0], [1.0, 2.0])
    assert constant["mean_diff"] == 1.0 and math.isnan(constant["p"])
    with pytest.raises(ValueError, match="aligned"):
        paired_test([1.0, 2.0], [1.0])


def test_compare_to_baseline_pairs_by_seed():
    frame = pd.DataFrame({"method": ["simcse"] * 3 + ["mixcse"] * 3, "seed": [1, 2, 3, 3, 2, 1],
                          "sts/avg": [75.0, 75.5, 76.0, 78.5, 77.0, 76.0]})
    table = compare_to_baseline(frame, "sts/avg")
    mix = table.set_index("method").loc["mixcse"]
    assert mix["paired_n"] == 3 and mix["diff"] == pytest.approx(5 / 3)   # paired on seeds, not on row order
    assert math.isnan(table.set_index("method").loc["simcse"].get("diff", math.nan))
    text = format_comparison(table)
    assert text.loc["mixcse", "Δ vs baseline"] == "+1.67" and text.loc["simcse", "Δ vs baseline"] == "(baseline)"
    with pytest.raises(ValueError, match="no method == 'bert'"):
        compare_to_baseline(frame, "sts/avg", baseline="bert")
    with pytest.raises(ValueError, match="two runs of method='simcse' with seed=1\\b"):
        compare_to_baseline(pd.concat([frame, frame.iloc[:1]]), "sts/avg")
