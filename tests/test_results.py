"""The results layer (cselab.workbench.results) against hand computations and direct computations: runs →
variants by the one label-prefix rule, per-seed frames, summaries (mean ± std, the t interval), the
paired t-test, the Holm adjustment, the minimum detectable difference and the paired bootstrap over
test pairs."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from cselab.workbench.results import (assign_variants, compare_to_baseline, format_comparison, group_results, match_variants,
                            mean_ci, paired_test, summarise, variant_frame)


# ------------------------------------------------------------------- runs → variants
def test_a_prefix_selects_its_label_with_seeds_and_grid_points_never_a_longer_label():
    labels = ["apincse-s1", "apincse-no_ap-s1", "apincse-no_in-s2", "apincse2-s1", "simcse-s1", "apincse",
              "apincse-pooler", "apincse-pooler-s2", "apincse-topk-top_k=8-s1", "apincse-layer-interlayer=-2-s1"]
    variants = {"APINCSE": "apincse", "APINCSE-AP": "apincse-no_ap", "APINCSE-IN": "apincse-no_in",
                "k sweep": "apincse-topk", "M sweep": "apincse-layer"}
    expected = {"apincse-s1": "APINCSE", "apincse-no_ap-s1": "APINCSE-AP", "apincse-no_in-s2": "APINCSE-IN",
                "apincse": "APINCSE", "apincse-topk-top_k=8-s1": "k sweep", "apincse-layer-interlayer=-2-s1": "M sweep"}
    # apincse-pooler(-s2): a longer label that "apincse" prefixes, not an APINCSE run (the cpu-demo
    # study's pooler-only control); apincse2-s1: not "apincse" and a suffix; simcse-s1: no prefix
    assert match_variants(labels, variants) == expected
    assert match_variants(labels, dict(reversed(list(variants.items())))) == expected
    # named, the longer label is its own variant
    assert match_variants(labels, {**variants, "pooler only": "apincse-pooler"})["apincse-pooler-s2"] == "pooler only"
    # several prefixes for one variant (a second backbone's label); variants in the mapping's order
    groups = assign_variants(["simcse-s1", "simcse-large-s1", "apincse-no_ap-s1", "apincse-s1", "apincse"],
                             {"SimCSE": ["simcse", "simcse-large"], "-AP": "apincse-no_ap", "APINCSE": "apincse"})
    assert groups == {"SimCSE": ["simcse-s1", "simcse-large-s1"], "-AP": ["apincse-no_ap-s1"],
                      "APINCSE": ["apincse-s1", "apincse"]}
    # runs labelled by their folder (a list of paths): the config hash is what cselab appended
    assert match_variants(["simcse-f8fbb5c8ad", "simcse-f8fbb5c8"], {"SimCSE": "simcse"}) == {
        "simcse-f8fbb5c8ad": "SimCSE"}


def test_the_variants_mapping_has_one_direction_and_says_so():
    labels = ["simcse-s1", "mixcse-s1"]
    with pytest.raises(ValueError, match="at least one"):
        match_variants(labels, {})
    with pytest.raises(ValueError, match="the prefix 'simcse' is given to both 'A' and 'B'"):
        match_variants(labels, {"A": "simcse", "B": ["x", "simcse"]})
    with pytest.raises(ValueError, match="must be a non-empty string"):
        match_variants(labels, {"A": ""})
    # {label prefix: name}, the direction the compare notebook used to take: one line naming the fix
    with pytest.raises(ValueError, match=r"the names \['simcse', 'mixcse'\] do; give \{variant name: label prefix\}, "
                                         r"e.g. \{'SimCSE': 'simcse'\}"):
        match_variants(labels, {"simcse": "SimCSE", "mixcse": "MixCSE"})
    assert match_variants(labels, {"GS": "gs_infonce"}) == {}   # no run of it: nothing, and no error


# ------------------------------------------------------------------- per-seed scores and summaries
def test_variant_frame_has_one_row_per_run_with_its_variant_and_seed(tmp_path):
    from synthetic_runs import write_run

    runs = {f"{m}-s{s}": write_run(tmp_path / f"{m}-{s}", {"method": [m], "seed": s}, [])
            for m in ("simcse", "mixcse") for s in (1, 2)}
    results = {"simcse-s1": {"scores": {"A": 70.0}, "avg": 70.0}, "simcse-s2": {"scores": {"A": 72.0}, "avg": 72.0},
               "mixcse-s1": {"scores": {"A": 73.0}, "avg": 73.0}}   # mixcse-s2 not evaluated: left out
    groups = {v: {label: runs[label] for label in labels}
              for v, labels in assign_variants(runs, {"SimCSE": "simcse", "MixCSE": "mixcse"}).items()}
    frame = variant_frame(results, groups)
    assert frame[["run", "variant", "seed", "A"]].values.tolist() == [
        ["simcse-s1", "SimCSE", 1, 70.0], ["simcse-s2", "SimCSE", 2, 72.0], ["mixcse-s1", "MixCSE", 1, 73.0]]
    assert group_results(results, groups) == {"SimCSE": [results["simcse-s1"], results["simcse-s2"]],
                                              "MixCSE": [results["mixcse-s1"]]}


def test_summarise_by_hand():
    frame = pd.DataFrame({"variant": ["B", "A", "B", "B", "A"], "x": [1.0, 10.0, 2.0, 6.0, 14.0],
                          "y": [0.5, 1.0, 0.5, 0.5, float("nan")]})
    summary = summarise(frame, "variant")
    assert list(summary.index) == ["B", "A"]                              # order of first appearance
    # B: x = 1, 2, 6 → mean 3, s² = ((−2)² + (−1)² + 3²) / 2 = 7; A: x = 10, 14 → mean 12, s² = 8
    assert summary.loc["B", "x"].tolist() == pytest.approx([3.0, math.sqrt(7), 3])
    assert summary.loc["A", "x"].tolist() == pytest.approx([12.0, math.sqrt(8), 2])
    # A's y: one value (the NaN is not counted), so no spread
    assert summary.loc["A", ("y", "mean")] == 1.0 and math.isnan(summary.loc["A", ("y", "std")])
    assert summary.loc["A", ("y", "n")] == 1 and summary.loc["B", ("y", "std")] == 0.0
    with pytest.raises(ValueError, match="no column \\['group'\\]"):
        summarise(frame, "group")


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
    # the same numbers through scipy directly: the statistic, its p and the t-interval of the mean difference
    direct = scipy_stats.ttest_rel(method, baseline)
    low, high = direct.confidence_interval(0.95)
    assert (out["t"], out["p"]) == pytest.approx((direct.statistic, direct.pvalue))
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((low, high))
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


# ------------------------------------------------------------------- multiplicity and power
def test_holm_by_hand_and_against_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from cselab.workbench.results import holm

    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, 2·0.03 = 0.06, max(1·0.04, 0.06) = 0.06; NaN is no member
    out = holm([0.04, 0.01, float("nan"), 0.03])
    assert out[[0, 1, 3]].tolist() == pytest.approx([0.06, 0.03, 0.06]) and math.isnan(out[2])
    assert holm([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])            # capped at 1
    rng = np.random.default_rng(4)
    p = rng.uniform(0, 0.2, 9)
    assert holm(p).tolist() == pytest.approx(multipletests(p, method="holm")[1].tolist())
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.2, 1.5])


def test_minimum_detectable_difference_has_the_stated_power():
    from cselab.workbench.results import minimum_detectable_difference

    sd, n = 0.25, 3
    mde = minimum_detectable_difference(sd, n)
    # power of the two-sided paired t-test at a true difference δ: the noncentral t with n − 1 df and
    # noncentrality δ√n / sd beyond ±t_{0.975, n−1}; at δ = MDE it must be 0.8
    crit = scipy_stats.t.ppf(0.975, n - 1)
    nc = mde * math.sqrt(n) / sd
    power = scipy_stats.nct.sf(crit, n - 1, nc) + scipy_stats.nct.cdf(-crit, n - 1, nc)
    assert power == pytest.approx(0.8, abs=1e-6)
    assert mde == pytest.approx(3.2640 * sd, abs=1e-3)                      # effect size 3.264 sd at n = 3
    assert minimum_detectable_difference(sd, 10) < mde                       # more seeds, smaller MDE
    assert math.isnan(minimum_detectable_difference(sd, 1))


def test_compare_to_baseline_adjusts_over_the_methods_and_states_the_family():
    from cselab.workbench.results import holm, minimum_detectable_difference

    frame = pd.DataFrame({
        "method": ["simcse"] * 3 + ["mixcse"] * 3 + ["clusterns"] * 3 + ["apincse"],
        "seed": [1, 2, 3] * 3 + [1],
        "avg": [75.0, 75.5, 76.0, 76.0, 77.0, 78.5, 75.1, 75.4, 76.2, 80.0]})
    table = compare_to_baseline(frame, "avg").set_index("method")
    raw = [paired_test([76.0, 77.0, 78.5], [75.0, 75.5, 76.0])["p"],
           paired_test([75.1, 75.4, 76.2], [75.0, 75.5, 76.0])["p"]]
    assert table.loc[["mixcse", "clusterns"], "p"].tolist() == pytest.approx(raw)
    assert table.loc[["mixcse", "clusterns"], "p_holm"].tolist() == pytest.approx(holm(raw).tolist())
    assert math.isnan(table.loc["apincse", "p_holm"])                     # one seed: no member of the family
    assert table.loc[["mixcse", "clusterns", "apincse"], "family"].tolist() == [
        "Holm over 2 methods vs simcse on avg"] * 2 + [""]                  # named on the members only
    # clusterns: d = 0.1, −0.1, 0.2 → sd 0.1528; MDE = 3.264 · sd
    assert table.loc["clusterns", "mde"] == pytest.approx(minimum_detectable_difference(math.sqrt(0.07 / 3), 3))
    assert table.loc["clusterns", "reading"] == f"no detectable effect (MDE {table.loc['clusterns', 'mde']:.2f})"
    assert table.loc["apincse", "reading"] == "no test (n 1)"
    text = format_comparison(table.reset_index())
    assert list(text.columns) == ["seeds", "mean ± std", "95% CI", "Δ vs baseline", "Δ 95% CI", "p (paired t)",
                                  "p (Holm)", "reading", "Holm family"]
    assert text.loc["clusterns", "p (Holm)"] == f"{holm(raw)[1]:.3f}" and text.loc["apincse", "p (Holm)"] == "–"
    strong = compare_to_baseline(frame.assign(avg=frame["avg"] + [0, 0, 0, 5, 5.1, 5.3, 0, 0, 0, 0]), "avg")
    assert strong.set_index("method").loc["mixcse", "reading"] == "detected (higher)"


# ------------------------------------------------------------------- paired bootstrap over test pairs
def direct_bootstrap(a, b, gold, n_resamples, seed):
    """The paired bootstrap written out: one resample of the pairs at a time, scipy's Spearman."""
    rng = np.random.default_rng(seed)
    n, diffs = len(gold), []
    for _ in range(n_resamples):
        i = rng.integers(0, n, size=n)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diffs.append(100 * (scipy_stats.spearmanr(a[i], gold[i]).statistic
                                - scipy_stats.spearmanr(b[i], gold[i]).statistic))
    diffs = np.array(diffs)
    return diffs[~np.isnan(diffs)]


def sts_like(n, seed=0):
    rng = np.random.default_rng(seed)
    gold = np.round(rng.uniform(0, 5, n) * 2) / 2                       # STS gold: 0–5 in halves, many ties
    a = gold + rng.normal(0, 1.0, n)
    b = gold + rng.normal(0, 1.5, n)
    return a, b, gold


def test_bootstrap_matches_a_direct_resampling_loop():
    from cselab.workbench.results import bootstrap_spearman_difference

    a, b, gold = sts_like(120)
    out = bootstrap_spearman_difference(a, b, gold, n_resamples=300, seed=7)
    point = 100 * (scipy_stats.spearmanr(a, gold).statistic - scipy_stats.spearmanr(b, gold).statistic)
    assert out["diff"] == pytest.approx(point, abs=1e-9)
    loop = direct_bootstrap(a, b, gold, 300, 7)
    assert [out["ci_low"], out["ci_high"]] == pytest.approx(np.quantile(loop, [0.025, 0.975]).tolist(), abs=1e-9)
    assert out["ci_low"] < out["diff"] < out["ci_high"] and out["n_pairs"] == 120
    assert "test-set uncertainty, not training-seed variance" in out["interval"]
    other = bootstrap_spearman_difference(a, b, gold, n_resamples=300, seed=8)
    assert other["ci_low"] != out["ci_low"]                                # the seed draws the resamples


def test_bootstrap_of_identical_systems_is_exactly_zero_and_constant_resamples_are_left_out():
    from cselab.workbench.results import bootstrap_average_spearman_difference, bootstrap_spearman_difference

    a, b, gold = sts_like(120)
    same = bootstrap_spearman_difference(a, a.copy(), gold, n_resamples=200, seed=1)
    assert (same["diff"], same["ci_low"], same["ci_high"]) == (0.0, 0.0, 0.0)
    # four pairs: many resamples repeat one pair, so a correlation is undefined on them
    tiny_a, tiny_b, tiny_gold = np.array([0.1, 0.4, 0.3, 0.9]), np.array([0.2, 0.1, 0.5, 0.7]), np.array([1., 2, 3, 4])
    same_tiny = bootstrap_spearman_difference(tiny_a, tiny_a, tiny_gold, n_resamples=500, seed=0)
    assert (same_tiny["diff"], same_tiny["ci_low"], same_tiny["ci_high"]) == (0.0, 0.0, 0.0)
    differ = bootstrap_spearman_difference(tiny_a, tiny_b, tiny_gold, n_resamples=500, seed=0)
    loop = direct_bootstrap(tiny_a, tiny_b, tiny_gold, 500, 0)
    assert differ["undefined_resamples"] == 500 - len(loop) > 0
    assert [differ["ci_low"], differ["ci_high"]] == pytest.approx(np.quantile(loop, [0.025, 0.975]).tolist())
    average = bootstrap_average_spearman_difference({"x": (a, a, gold), "y": (tiny_a, tiny_a, tiny_gold)}, 100, 3)
    assert (average["diff"], average["ci_low"], average["ci_high"]) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="gold scores are constant"):
        bootstrap_spearman_difference(tiny_a, tiny_b, np.ones(4))
    with pytest.raises(ValueError, match="aligned"):
        bootstrap_spearman_difference(tiny_a, tiny_b[:3], tiny_gold)


def test_bootstrap_of_an_average_resamples_each_task_in_turn():
    from cselab.workbench.results import bootstrap_average_spearman_difference

    first, second = sts_like(80, 1), sts_like(50, 2)
    out = bootstrap_average_spearman_difference({"t1": first, "t2": second}, n_resamples=200, seed=5)
    rng = np.random.default_rng(5)
    draws = []
    for a, b, gold in (first, second):                   # task 1's 200 resamples, then task 2's, one generator
        per = []
        for _ in range(200):
            i = rng.integers(0, len(gold), size=len(gold))
            per.append(100 * (scipy_stats.spearmanr(a[i], gold[i]).statistic
                              - scipy_stats.spearmanr(b[i], gold[i]).statistic))
        draws.append(per)
    expected = np.quantile(np.mean(draws, axis=0), [0.025, 0.975])
    assert [out["ci_low"], out["ci_high"]] == pytest.approx(expected.tolist(), abs=1e-9)
    points = [100 * (scipy_stats.spearmanr(a, g).statistic - scipy_stats.spearmanr(b, g).statistic)
              for a, b, g in (first, second)]
    assert out["diff"] == pytest.approx(np.mean(points)) and out["n_pairs"] == 130
