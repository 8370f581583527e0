"""Claims (cselab/claims.py): the power plan before the runs and the verdicts after them — paired
differences over seeds, Holm within each family, the MDE at the level α/k the verdict must clear —
on fixed numbers checked against scipy and statsmodels directly, and bad frames that must not crash."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from cselab.workbench.claims import (NOT_TESTABLE, Claim, PowerRule, claims_table, format_claims, format_plan, power_plan,
                                    seeds_per_variant, tally)
from cselab.workbench.paper_tables import as_variants
from cselab.workbench.results import (detectable_effect_size, detectable_sd_ratio, minimum_detectable_difference,
                            paired_variance_test, sd_interval, seeds_for)

# three seeds; MixCSE clearly above SimCSE, "single" clearly below MixCSE
FRAME = pd.DataFrame({
    "variant": ["SimCSE"] * 3 + ["MixCSE"] * 3 + ["single"] * 3,
    "seed": [1, 2, 3] * 3,
    "avg": [76.0, 76.2, 75.9, 76.5, 76.8, 76.4, 76.1, 76.3, 76.0]})


# ------------------------------------------------------------------- the MDE at the verdict's level
def test_detectable_effect_size_at_holms_first_step():
    # a family of k claims: the first p to clear Holm must be below 0.05 / k; n = 3 seeds
    assert [round(detectable_effect_size(3, 0.05 / k), 2) for k in (4, 5, 6)] == [6.55, 7.32, 8.02]
    assert detectable_effect_size(3, 0.05) == pytest.approx(3.26, abs=0.005)    # the unadjusted level
    # where statsmodels' solver converges it agrees; at α = 0.01, n = 3 it does not (5.0 or NaN for 7.32)
    for n, alpha in ((5, 0.05), (10, 0.05), (8, 0.01)):
        ours = detectable_effect_size(n, alpha)
        assert ours == pytest.approx(TTestPower().solve_power(nobs=n, alpha=alpha, power=0.8), rel=1e-3)
        assert TTestPower().power(effect_size=ours, nobs=n, alpha=alpha) == pytest.approx(0.8, abs=1e-4)
    assert minimum_detectable_difference(0.1, 3, 0.05 / 5) == pytest.approx(0.732, abs=0.001)
    assert math.isnan(minimum_detectable_difference(0.1, 1)) and math.isnan(minimum_detectable_difference(math.nan, 5))


def test_seeds_for_a_target_and_the_cap():
    # sd 0.266 at α = 0.01 needs 13 seeds for an MDE of 0.3; capped at 10 it is run at 10
    assert seeds_for(0.266, 0.3, 0.01, least=5, most=10) == (10, 13)
    assert minimum_detectable_difference(0.266, 13, 0.01) <= 0.3 < minimum_detectable_difference(0.266, 12, 0.01)
    assert seeds_for(0.05, 0.3, 0.01, least=5, most=10) == (5, 4)     # the floor holds
    with pytest.raises(ValueError, match="sd"):
        seeds_for(math.nan, 0.3)


def test_sd_interval_and_variance_test_are_scipys():
    low, high = sd_interval(0.1, 3)
    assert (low, high) == pytest.approx((0.1 * math.sqrt(2 / stats.chi2.ppf(0.975, 2)),
                                         0.1 * math.sqrt(2 / stats.chi2.ppf(0.025, 2))))
    a, b = [1.0, 2.0, 3.0, 4.5, 5.0], [1.1, 1.9, 3.4, 4.0, 5.3]
    test = paired_variance_test(a, b)
    x, y = np.array(a), np.array(b)
    assert test["p"] == pytest.approx(stats.pearsonr(x + y, x - y).pvalue)
    assert test["ratio"] == pytest.approx(x.std(ddof=1) / y.std(ddof=1))
    r = detectable_sd_ratio(10, 0.05)
    df = 9
    power = (stats.f.cdf(stats.f.ppf(0.025, df, df) / r ** 2, df, df)
             + stats.f.sf(stats.f.isf(0.025, df, df) / r ** 2, df, df))
    assert power == pytest.approx(0.8, abs=1e-5) and 0 < r < 1


# ------------------------------------------------------------------- verdicts
def test_differences_p_values_and_holm_within_each_family_match_scipy_and_statsmodels():
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE", "+2.83 (Table)", paper_effect=2.83),
              Claim("single mixing is worse", "single", "MixCSE", "-1.23", direction=-1),
              Claim("MixCSE differs from single", "MixCSE", "single", kind="check", direction=0)]
    rule = PowerRule(scale=0.166)
    table = claims_table(FRAME, claims, rule)
    p1 = stats.ttest_rel([76.5, 76.8, 76.4], [76.0, 76.2, 75.9]).pvalue
    p2 = stats.ttest_rel([76.1, 76.3, 76.0], [76.5, 76.8, 76.4]).pvalue
    p3 = stats.ttest_rel([76.5, 76.8, 76.4], [76.1, 76.3, 76.0]).pvalue
    assert table["diff"].tolist()[:2] == pytest.approx([0.5333333, -0.4333333], abs=1e-6)
    assert table["p"].tolist() == pytest.approx([p1, p2, p3])
    # the paper's two claims are one Holm family; the check is a family of its own (of one)
    assert table["p_holm"].tolist()[:2] == pytest.approx(list(multipletests([p1, p2], method="holm")[1]))
    assert table["p_holm"][2] == pytest.approx(p3)
    half = stats.t.ppf(0.975, 2) * pd.Series([0.5, 0.6, 0.5]).std() / math.sqrt(3)
    assert (table.loc[0, "ci_low"], table.loc[0, "ci_high"]) == pytest.approx((0.5333333 - half, 0.5333333 + half))
    # the MDE at α/k: k = 2 for the paper's claims, 1 for the check
    sd1 = pd.Series([0.5, 0.6, 0.5]).std()
    assert table["level"].tolist() == pytest.approx([0.025, 0.025, 0.05])
    assert table["mde"][0] == pytest.approx(detectable_effect_size(3, 0.025) * sd1)
    assert table["scaled_effect"][0] == pytest.approx(2.83 * 0.166)
    assert table["paper_detectable"][0] == (table["mde"][0] <= 2.83 * 0.166)
    assert table["verdict"].tolist()[:2] == ["holds here", "holds here"]
    assert tally(table) == {"claims": 2, "holds here": 2, "reversed": 0, "not detected": 0, "underpowered": 0,
                            "inconclusive": 0, "not testable at this scale": 0, "no test": 0, "elsewhere": 0}
    assert "Holm over the paper's claims (2" in table.attrs["families"]["paper"]


def test_verdicts_holds_reversed_not_detected_underpowered_and_not_testable():
    frame = pd.DataFrame({"variant": ["A"] * 3 + ["B"] * 3 + ["C"] * 3 + ["E"] * 3, "seed": [1, 2, 3] * 4,
                          "avg": [70.0, 71.0, 72.0, 71.0, 72.01, 73.0, 70.5, 72.5, 71.0, 70.001, 70.999, 72.0005]})
    claims = [Claim("B beats A", "B", "A"), Claim("A beats B", "A", "B"), Claim("C beats A", "C", "A"),
              Claim("E beats A", "E", "A"),
              Claim("D beats A", "C", "A", testable=False, reason="the centroids cannot move in 80 steps")]
    table = claims_table(frame, claims, PowerRule(target=0.3))
    assert table["verdict"][0] == "holds here" and table["verdict"][1] == "reversed"
    # C - A = (0.5, 1.5, -1.0): not detected with an MDE at α/4 (four testable claims) far above the
    # 0.3 target: the runs could not have detected it, and the verdict says so
    sd = pd.Series([0.5, 1.5, -1.0]).std()
    mde = detectable_effect_size(3, 0.05 / 4) * sd
    assert mde > 0.3
    assert table["verdict"][2] == f"not detected, underpowered (MDE {mde:.2f} > target 0.30)"
    # E - A = (0.001, -0.001, 0.0005): a powered null, the MDE at the upper end of the spread's 95 %
    # interval (in hundredths) still under the target
    sd = pd.Series([0.001, -0.001, 0.0005]).std()
    high = detectable_effect_size(3, 0.05 / 4) * sd_interval(sd, 3)[1]
    assert high < 0.3
    assert table["verdict"][3] == f"not detected (powered: MDE ≤ {high:.2g} ≤ target 0.30)"
    assert table["verdict"][4] == "not testable at this scale (the centroids cannot move in 80 steps)"
    counts = tally(table)
    assert (counts["not detected"], counts["underpowered"], counts[NOT_TESTABLE]) == (2, 1, 1)
    with pytest.raises(ValueError, match="needs a reason"):
        Claim("x", "a", "b", testable=False)
    with pytest.raises(ValueError, match="has a sign"):
        Claim("x", "a", "b", direction=0)


def test_the_variance_claim_is_pitman_morgan_in_the_paper_family():
    frame = pd.DataFrame({"variant": ["M"] * 5 + ["S"] * 5, "seed": list(range(1, 6)) * 2,
                          "avg": [76.0, 76.1, 76.05, 76.02, 76.08, 75.0, 77.0, 76.2, 75.6, 76.9]})
    claims = [Claim("M varies less", "M", "S", direction=-1, test="paired_variance"), Claim("M beats S", "M", "S")]
    table = claims_table(frame, claims)
    m, s = frame["avg"][:5].to_numpy(), frame["avg"][5:].to_numpy()
    p = stats.pearsonr(m + s, m - s).pvalue
    assert table["p"][0] == pytest.approx(p)
    assert table["diff"][0] == pytest.approx(m.std(ddof=1) / s.std(ddof=1))
    assert table["mde"][0] == pytest.approx(detectable_sd_ratio(5, 0.025))
    assert format_claims(table)["Δ as the paper says [95% CI]"].iloc[0].startswith("sd ratio 0.")


def test_bad_frames_give_one_line_per_claim_and_the_other_claims_are_tested():
    frame = pd.DataFrame({
        "variant": ["ok"] * 3 + ["ref"] * 3 + ["nan"] * 3 + ["dup"] * 3 + ["text"] * 3 + ["inf"] * 3 + ["far"] * 2,
        "seed": [1, 2, 3] * 6 + [7, 8],
        "avg": [1.0, 2.0, 3.1, 0.5, 1.5, 2.4, math.nan, math.nan, math.nan, 1, 2, 3, "a", "b", "c",
                math.inf, 2.0, 3.0, 1.0, 2.0]})
    frame.loc[frame["variant"] == "dup", "seed"] = [1, 1, 2]
    claims = [Claim("ok beats ref", "ok", "ref"), Claim("all NaN", "nan", "ref"), Claim("duplicate seeds", "dup", "ref"),
              Claim("strings", "text", "ref"), Claim("an inf", "inf", "ref"), Claim("disjoint seeds", "far", "ref"),
              Claim("absent", "nowhere", "ref"), Claim("another metric", "ok", "ref", metric="stsb")]
    table = claims_table(frame, claims)
    by = table.set_index("claim")
    assert by.loc["ok beats ref", "p"] == pytest.approx(stats.ttest_rel([1.0, 2.0, 3.1], [0.5, 1.5, 2.4]).pvalue)
    assert "'nan': avg is not a finite number for seed(s) 1, 2, 3" in by.loc["all NaN", "problem"]
    assert "several runs of seed(s) 1" in by.loc["duplicate seeds", "problem"]
    assert "not a finite number" in by.loc["strings", "problem"]
    assert by.loc["an inf", "n"] == 2 and "seed(s) 1" in by.loc["an inf", "problem"]   # the finite seeds tested
    assert "no seed in common ('far': 7, 8; 'ref': 1, 2, 3)" == by.loc["disjoint seeds", "problem"]
    assert by.loc["absent", "problem"] == "no runs of 'nowhere'"
    assert by.loc["another metric", "problem"] == "no 'stsb' scores in the record"
    text = format_claims(table)
    # the verdict says which cause left a claim without a test (issue 55), never a bare "no runs"
    assert text.loc["absent", "verdict"] == "no test: no runs of 'nowhere'"
    assert text.loc["all NaN", "verdict"] == "no test: 'nan': avg is not a finite number for seed(s) 1, 2, 3 (left out)"
    assert text.loc["disjoint seeds", "verdict"] == "no test: no seed in common ('far': 7, 8; 'ref': 1, 2, 3)"
    # the Holm family is the eight claims planned: the six without a test count at p = 1
    assert by.loc["ok beats ref", "p_holm"] == pytest.approx(
        multipletests([by.loc["ok beats ref", "p"], by.loc["an inf", "p"]] + [1.0] * 6, method="holm")[1][0])
    with pytest.raises(ValueError, match="no claims"):
        claims_table(frame, [])
    empty = claims_table(pd.DataFrame(columns=["variant", "seed", "avg"]), [Claim("x", "a", "b")])
    assert empty["verdict"][0] == "no test: no runs of 'a'; no runs of 'b'"


def test_sweeps_become_variants_and_small_p_is_written_as_such():
    sweep = pd.DataFrame({"seed": [1, 2, 1, 2], "λ": [0.1, 0.1, 0.5, 0.5], "avg": [1.0, 2.0, 1.5, 2.7]})
    frame = as_variants(sweep, "λ", "λ = {:g}")
    assert frame["variant"].tolist() == ["λ = 0.1", "λ = 0.1", "λ = 0.5", "λ = 0.5"]
    # per-seed differences 0.481, 0.478, 0.481 (APINCSE k = 16 against 32 in the 2026-12-02 pilot): p ≈ 6e-6
    frame = pd.DataFrame({"variant": ["k16"] * 3 + ["k32"] * 3, "seed": [1, 2, 3] * 2,
                          "avg": [76.024, 76.127, 76.267, 75.543, 75.649, 75.786]})
    cells = format_claims(claims_table(frame, [Claim("k = 16 beats 32", "k16", "k32")]))
    assert cells["p"].iloc[0] == "< 0.001" and cells["p (Holm)"].iloc[0] == "< 0.001"


# ------------------------------------------------------------------- the power plan
def test_power_plan_picks_the_fewest_seeds_reaching_the_target_and_marks_the_rest():
    rule = PowerRule(target=0.3, scale=0.2, min_seeds=5, max_seeds=10, check_seeds=3, prior_sd=0.1)
    claims = [Claim("big paper effect", "A", "ref", paper_effect=3.0, pilot_sd=0.2),
              Claim("noisy", "B", "ref", pilot_sd=0.3),
              Claim("no pilot", "C", "ref"),
              Claim("angle", "A", "ref", metric="largest_angle_final"),
              Claim("a check", "D", "ref", kind="check", direction=0, pilot_sd=0.05)]
    plan = power_plan(claims, rule).set_index("claim")
    # four testable paper claims: level 0.0125; the big effect's target is 3.0 × 0.2 = 0.6
    assert plan["level"]["noisy"] == pytest.approx(0.0125) and plan["target"]["big paper effect"] == pytest.approx(0.6)
    assert plan["seeds"]["big paper effect"] == 5                                    # the floor
    assert plan["seeds"]["noisy"] == 10 and plan["underpowered"]["noisy"]
    assert plan["needed"]["noisy"] == seeds_for(0.3, 0.3, 0.0125)[1] > 10
    assert plan["sd"]["no pilot"] == 0.1 and plan["sd_source"]["no pilot"] == "prior"
    assert plan["seeds"]["no pilot"] == seeds_for(0.1, 0.3, 0.0125, least=5)[0]
    assert "power known after the runs" in plan["note"]["angle"]
    assert plan["seeds"]["a check"] == 3 and plan["level"]["a check"] == 0.05
    assert seeds_per_variant(power_plan(claims, rule), rule) == {"A": 5, "ref": 10, "B": 10, "C": 5, "D": 3}
    text = format_plan(power_plan(claims, rule))
    assert text.loc["noisy", "note"] == f"underpowered: needs {int(plan['needed']['noisy'])} seeds"


def test_a_replanned_study_takes_the_spread_its_runs_showed_and_never_plans_fewer_seeds():
    from cselab.workbench.claims import observed_spreads

    rule = PowerRule(target=0.3, min_seeds=5, max_seeds=10, prior_sd=0.1)
    claims = [Claim("A beats ref", "A", "ref", pilot_sd=0.05), Claim("B beats ref", "B", "ref", pilot_sd=0.3)]
    rng = np.random.default_rng(0)
    ref = rng.normal(76, 0.2, 5)
    frame = pd.DataFrame({"variant": ["ref"] * 5 + ["A"] * 5 + ["B"] * 5, "seed": list(range(1, 6)) * 3,
                          "avg": [*ref, *(ref + [0.4, -0.3, 0.5, -0.2, 0.1]), *(ref + 0.02 * np.arange(5))]})
    spreads = observed_spreads(claims, frame)
    assert spreads["A beats ref"] == (pytest.approx(np.std([0.4, -0.3, 0.5, -0.2, 0.1], ddof=1)), 5)
    first = power_plan(claims, rule).set_index("claim")
    again = power_plan(claims, rule, spreads).set_index("claim")
    assert first.loc["A beats ref", "seeds"] == 5 and again.loc["A beats ref", "seeds"] == 10   # the pilot was lucky
    # sized on the spread's one-sided 80 % upper limit (Browne 1995): sd × √(4 / χ²₀.₂(4 df) = 1.6488)
    observed = np.std([0.4, -0.3, 0.5, -0.2, 0.1], ddof=1)
    assert again.loc["A beats ref", "sd"] == pytest.approx(observed * np.sqrt(4 / 1.6487), rel=1e-3)
    assert again.loc["A beats ref", "sd_source"] == f"80% upper limit of {observed:.3f} observed over 5 seeds"
    # B's runs spread less than its pilot said: the re-plan keeps the first plan's seeds, never fewer
    assert again.loc["B beats ref", "seeds"] == first.loc["B beats ref", "seeds"] == 10


def test_the_claims_cell_on_one_seed_says_nothing_was_tested(tmp_path, capsys):
    """One seed per variant (the cpu-demo's runs): no paired test, and the cell says so and why,
    instead of a Holm family of nothing; with seeds, the families and where the numbers came from."""
    from synthetic_records import study_records

    from cselab import workbench
    from cselab.workbench.studies.record import write_record
    from cselab.workbench.studies.spec import load_study

    records = study_records(load_study("paper-mixcse", "cpu", notebooks=False), {"mixcse": 0.5})
    one = tmp_path / "one.jsonl"
    write_record(one, [r for r in records if r["seed"] == 1])
    workbench.claims_cell("paper-mixcse", "cpu", None, one, tmp_path)
    printed = capsys.readouterr().out
    assert printed.startswith("No claim tested here (the study's record") and "Holm" not in printed
    full = tmp_path / "full.jsonl"
    write_record(full, records)
    shown = workbench.claims_cell("paper-mixcse", "cpu", None, full, tmp_path)
    printed = capsys.readouterr().out
    assert printed.startswith("Holm over the paper's claims (7, α = 0.05); Holm over the workbench's")
    # how to read the table, said by the cell (the four paper notebooks' one copy), the study file named
    assert "How to read the table: each row is one claim, fixed in the study file before any run " \
           "(cselab/workbench/studies/paper-mixcse.yaml, `claims:`)" in printed
    assert (tmp_path / "claims.md").is_file() and shown.index[0] == "MixCSE beats SimCSE"


def test_a_claim_without_a_test_yet_stays_in_its_holm_family():
    """A record part-way through its plan: one of the paper's three claims has no shared seed yet. The
    family stays the planned three (the pending claim at p = 1), so Holm multiplies the smallest p by 3,
    not by the 2 tests made so far."""
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"),
              Claim("single mixing is worse", "single", "MixCSE", direction=-1),
              Claim("not run yet", "absent", "SimCSE")]
    table = claims_table(FRAME, claims, PowerRule())
    p1 = stats.ttest_rel([76.5, 76.8, 76.4], [76.0, 76.2, 75.9]).pvalue
    p2 = stats.ttest_rel([76.1, 76.3, 76.0], [76.5, 76.8, 76.4]).pvalue
    assert table["p_holm"].tolist()[:2] == pytest.approx(list(multipletests([p1, p2, 1.0], method="holm")[1][:2]))
    assert table["p_holm"][0] > multipletests([p1, p2], method="holm")[1][0]
    assert math.isnan(table["p_holm"][2])


# ------------------------------------------------------------------- pairs of one computation
def _computed(frame: pd.DataFrame, cpu="AVX512/amx", precision="bf16/bf16", code="abc") -> pd.DataFrame:
    return frame.assign(cpu=cpu, precision=precision, code=code)


def test_a_planted_mixed_kind_pair_is_left_out_and_the_row_says_why():
    from cselab.workbench.claims import paired_seeds, same_computation

    frame = _computed(pd.DataFrame({"variant": ["A"] * 5 + ["B"] * 5, "seed": [1, 2, 3, 4, 5] * 2,
                                    "avg": [76.5, 76.8, 76.4, 76.7, 80.0, 76.0, 76.2, 75.9, 76.1, 76.0]}))
    # seed 5 of B ran on another CPU kind (its +4.0 would dominate the mean); seed 4 of A in fp32
    frame.loc[9, "cpu"] = "AVX512/avx512_bf16"
    frame.loc[3, "precision"] = "fp32/fp32"
    frame["code"] = "f458b21" + "0" * 33
    assert same_computation(frame.loc[4], frame.loc[9]) == "CPU kinds differ (AVX512/amx vs AVX512/avx512_bf16)"
    kept, left_out = paired_seeds(frame[frame.variant == "A"].set_index("seed"),
                                  frame[frame.variant == "B"].set_index("seed"))
    assert kept == [1, 2, 3]
    assert left_out == {"precisions differ (fp32/fp32 vs bf16/bf16)": [4],
                        "CPU kinds differ (AVX512/amx vs AVX512/avx512_bf16)": [5]}
    row = claims_table(frame, [Claim("A beats B", "A", "B")]).iloc[0]
    assert (row["n"], row["shared"]) == (3, 5)
    assert row["diff"] == pytest.approx(np.mean([0.5, 0.6, 0.5]))
    assert row["p"] == pytest.approx(stats.ttest_rel([76.5, 76.8, 76.4], [76.0, 76.2, 75.9]).pvalue)
    assert row["left_out"] == ("seed 4: precisions differ (fp32/fp32 vs bf16/bf16); "
                               "seed 5: CPU kinds differ (AVX512/amx vs AVX512/avx512_bf16)")
    text = format_claims(claims_table(frame, [Claim("A beats B", "A", "B")])).iloc[0]
    assert text["n (pairs kept)"] == "3 of 5"
    # another commit on one side: no pair left, and the verdict says why instead of "no runs"
    frame.loc[frame.variant == "B", "code"] = "9f0f0ed" + "1" * 33
    row = claims_table(frame, [Claim("A beats B", "A", "B")]).iloc[0]
    assert row["n"] == 0 and row["verdict"].startswith(
        "no test: no pair of one computation (seeds 1, 2, 3: code identities differ (f458b21 vs 9f0f0ed)")


def test_runs_of_an_uncommitted_tree_pair_with_nothing_not_even_the_same_dirty_commit():
    """A referee's point: the same "-dirty" commit on both sides names two uncommitted trees whose
    contents nobody recorded, so such a pair is not known to be one computation; it was kept and
    counted as "code unverified". Now it is left out, the row says so, and a fingerprinted line of a
    dirty tree (the code that ran, hashed) still pairs."""
    from cselab.workbench.claims import UNKNOWN_CODE, paired_seeds

    frame = _computed(pd.DataFrame({"variant": ["A"] * 4 + ["B"] * 4, "seed": [1, 2, 3, 4] * 2,
                                    "avg": [76.5, 76.8, 76.4, 76.7, 76.0, 76.2, 75.9, 76.1]}))
    frame.loc[frame.seed <= 2, "code"] = "commit:f458b21" + "0" * 33 + "-dirty"   # seeds 1-2: legacy dirty lines
    kept, left_out = paired_seeds(frame[frame.variant == "A"].set_index("seed"),
                                  frame[frame.variant == "B"].set_index("seed"))
    assert kept == [3, 4] and left_out == {UNKNOWN_CODE: [1, 2]}
    row = claims_table(frame, [Claim("A beats B", "A", "B")]).iloc[0]
    assert (row["n"], row["shared"]) == (2, 4)
    assert row["left_out"] == f"seeds 1, 2: {UNKNOWN_CODE}"
    assert row["diff"] == pytest.approx(np.mean([76.4 - 75.9, 76.7 - 76.1]))


def test_the_computation_of_a_record_line():
    from cselab.workbench.claims import computation_fields as computation, with_computation

    line = {"label": "a-s1", "commit": "abc-dirty", "cpu": {"capability": "AVX512", "native_bf16": "amx"},
            "execution": {"precision": "bf16", "eval_precision": "fp32"}}
    assert computation(line) == {"cpu": "AVX512/amx", "precision": "bf16/fp32", "code": "abc-dirty"}
    # a line with the training code's fingerprint is identified by it, not by its commit
    assert computation({**line, "code_fingerprint": "f00d"})["code"] == "f00d"
    frame = with_computation(pd.DataFrame({"label": ["a-s1"], "avg": [1.0]}), [line])
    assert frame.loc[0, "precision"] == "bf16/fp32"


# ------------------------------------------------------------------- one rule for every metric
def test_a_null_is_powered_only_within_the_target_at_the_spreads_upper_bound():
    from cselab.workbench.claims import verdict

    assert verdict(0.1, 0.5, 0.35, 1, 5, target=0.3, mde_high=0.9) == "not detected, underpowered (MDE 0.35 > target 0.30)"
    assert verdict(0.1, 0.5, 0.2, 1, 5, target=0.3, mde_high=0.45) == (
        "not detected, inconclusive (MDE 0.20, 0.45 at the spread's upper 95 % bound > target 0.30)")
    assert verdict(0.1, 0.5, 0.2, 1, 5, target=0.3, mde_high=0.28) == "not detected (powered: MDE ≤ 0.28 ≤ target 0.30)"
    assert verdict(0.1, 0.5, 1.74, 1, 5) == "not detected, inconclusive (MDE 1.74; no target in these units)"
    # an inconclusive row names the pairs a powered null would take (nothing when it already has them)
    assert verdict(0.1, 0.5, 0.2, 1, 5, target=0.3, mde_high=0.45, powered_at=11) == (
        "not detected, inconclusive (MDE 0.20, 0.45 at the spread's upper 95 % bound > target 0.30; "
        "a powered null needs 11 pairs at this spread)")
    assert "needs" not in verdict(0.1, 0.5, 0.2, 1, 5, target=0.3, mde_high=0.45, powered_at=5)


def test_pairs_for_a_powered_null_put_the_mde_at_the_spreads_upper_bound_within_the_target():
    from cselab.workbench.plots.claims import _verdict_words
    from cselab.workbench.results import pairs_for_powered_null

    def mde_high(sd, n, alpha):   # scipy's chi-squared bound of the sd, then the paired test's MDE at it
        return minimum_detectable_difference(sd * math.sqrt((n - 1) / stats.chi2.ppf(0.025, n - 1)), n, alpha)

    for sd, alpha in ((0.237, 0.0125), (0.35, 0.01), (0.087, 0.00625)):
        n = pairs_for_powered_null(sd, 0.3, alpha)
        assert mde_high(sd, n, alpha) <= 0.3 < mde_high(sd, n - 1, alpha)
        assert n > seeds_for(sd, 0.3, alpha, most=10 ** 6)[1]   # the spread's uncertainty costs pairs
    assert pairs_for_powered_null(0.237, 0.3, 0.0125) == 19 and pairs_for_powered_null(0.35, 0.3, 0.01) == 32
    assert pairs_for_powered_null(math.nan, 0.3) is None and pairs_for_powered_null(5.0, 0.3, search=20) is None
    assert _verdict_words("reversed (below gs_infonce-m8: one-sided p 0.0055, × 2 neighbours = 0.011 < α/k "
                          "0.0125)") == "reversed (below gs_infonce-m8)"
    assert _verdict_words("not detected, inconclusive (MDE 0.25, 0.42 at the spread's upper 95 % bound > target "
                          "0.30; a powered null needs 19 pairs at this spread)") == "inconclusive (19 pairs needed)"


def test_every_metric_has_its_own_target_and_can_read_underpowered():
    frame = pd.DataFrame({"variant": ["M"] * 5 + ["S"] * 5, "seed": list(range(1, 6)) * 2,
                          "avg": [76.0, 76.3, 75.9, 76.4, 76.1, 75.8, 76.2, 76.0, 76.1, 75.7],
                          "ami": [60.0, 64.0, 59.0, 66.0, 61.0, 58.0, 63.5, 60.5, 62.0, 59.0]})
    claims = [Claim("M varies less", "M", "S", direction=-1, test="paired_variance", target=0.26),
              Claim("M clusters better", "M", "S", metric="ami", target=2.77),
              Claim("M clusters better (loose target)", "M", "S", metric="ami", target=40.0)]
    table = claims_table(frame, claims)
    ratio = detectable_sd_ratio(5, 0.05 / 3)
    assert ratio < 0.26
    assert table["verdict"][0] == f"not detected, underpowered (detects sd ratio ≤ {ratio:.2f} < target 0.26)"
    d = np.array([2.0, 0.5, -1.0, 4.5, 2.0])
    mde = detectable_effect_size(5, 0.05 / 3) * d.std(ddof=1)
    assert table["mde"][1] == pytest.approx(mde) and mde > 2.77
    assert table["verdict"][1] == f"not detected, underpowered (MDE {mde:.2f} > target 2.77)"
    high = detectable_effect_size(5, 0.05 / 3) * sd_interval(d.std(ddof=1), 5)[1]
    assert table["verdict"][2] == f"not detected (powered: MDE ≤ {high:.2f} ≤ target 40.00)"
    assert tally(table)["underpowered"] == 2


# ------------------------------------------------------------------- Δ in the paper's direction
def test_delta_is_shown_in_the_papers_direction_with_its_sides_said():
    claims = [Claim("single mixing is worse", "single", "MixCSE", direction=-1)]
    row = claims_table(FRAME, claims).iloc[0]
    # single − MixCSE = (−0.4, −0.5, −0.4): the paper's direction is MixCSE − single, +0.43
    assert row["paper_diff"] == pytest.approx(0.4333333, abs=1e-6) and row["sides"] == "MixCSE − single"
    assert (row["paper_ci_low"], row["paper_ci_high"]) == pytest.approx((-row["ci_high"], -row["ci_low"]))
    cell = format_claims(claims_table(FRAME, claims))["Δ as the paper says [95% CI]"].iloc[0]
    assert cell == f"+0.43 [{row['paper_ci_low']:.2f}, {row['paper_ci_high']:.2f}] (MixCSE − single)"
    assert list(format_claims(claims_table(FRAME, claims)).columns[:3]) == [
        "verdict", "Δ as the paper says [95% CI]", "n (pairs kept)"]


def test_the_claims_figure_draws_every_row_in_the_papers_direction_and_names_a_hidden_mean():
    from cselab.workbench.plots.claims import plot_claims

    claims = [Claim("single mixing is worse", "single", "MixCSE", direction=-1, paper_effect=-0.4333333 / 0.166)]
    table = claims_table(FRAME, claims, PowerRule(scale=0.166))
    (ax,) = plot_claims(table, {"single mixing is worse": [0.4, 0.5, 0.4]}).axes
    from matplotlib.collections import PathCollection

    means = [c.get_offsets()[0, 0] for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == 1]
    assert means[0] == pytest.approx(0.4333333, abs=1e-6)          # right of 0: as the paper says
    assert "◇ = mean" in {t.get_text() for t in ax.texts}             # the paper's ◇ drawn on the mean
    assert "right = as the paper says" in ax.get_xlabel()


# ------------------------------------------------------------------- optimum claims
def test_an_optimum_is_an_intersection_union_test_against_both_neighbours():
    best = [76.5, 76.8, 76.4, 76.6]
    low, high = [76.0, 76.2, 75.9, 76.1], [76.3, 76.5, 76.3, 76.2]
    frame = pd.DataFrame({"variant": ["k8"] * 4 + ["k16"] * 4 + ["k32"] * 4, "seed": [1, 2, 3, 4] * 3,
                          "avg": [*high, *best, *low]})
    claim = Claim("k 16 is best", "k16", "k8", test="optimum", neighbours=["k8", "k32"], sweep=["k8", "k16", "k32"])
    row = claims_table(frame, [claim]).iloc[0]
    p8 = stats.ttest_rel(best, high, alternative="greater").pvalue
    p32 = stats.ttest_rel(best, low, alternative="greater").pvalue
    assert p8 > p32 and row["p"] == pytest.approx(p8)                 # p: the larger of the two
    assert row["against"] == "k8" and row["diff"] == pytest.approx(np.mean(np.subtract(best, high)))
    assert row["verdict"] == "holds here"
    fit = stats.linregress([0] * 4 + [1] * 4 + [2] * 4, [*high, *best, *low])
    assert row["trend"] == (f"k8 {np.mean(high):.2f} → k16 {np.mean(best):.2f} → k32 {np.mean(low):.2f}; "
                            f"slope {fit.slope:+.2f} a step (p {fit.pvalue:.2g})")
    # a monotone sweep (k 8 the best): the one-sided test against k 8 cannot reject, so no optimum
    frame.loc[frame.variant == "k8", "avg"] = [77.0, 77.2, 76.9, 77.1]
    row = claims_table(frame, [claim]).iloc[0]
    assert row["p"] > 0.5 and row["verdict"] != "holds here" and row["against"] == "k8"
    # ... and k 16 clearly below k 8 (GS-InfoNCE's M = 3× against 8×): the claim is reversed, which the
    # intersection-union test cannot say; the one-sided test the other way, Bonferroni over 2 neighbours
    below = stats.ttest_rel(best, [77.0, 77.2, 76.9, 77.1], alternative="less").pvalue
    assert 2 * below < 0.05 and row["p_contrary"] == pytest.approx(2 * below)
    assert row["verdict"] == (f"reversed (below k8: one-sided p {below:.2g}, × 2 neighbours = {2 * below:.2g} "
                              "< α/k 0.05)")
    assert tally(claims_table(frame, [claim]))["reversed"] == 1   # counted as a reversal, words and all
    # a variant between its neighbours, neither clearly: no reversal
    frame.loc[frame.variant == "k8", "avg"] = [76.6, 76.7, 76.5, 76.6]
    assert claims_table(frame, [claim]).iloc[0]["verdict"].startswith("not detected")
    with pytest.raises(ValueError, match="two neighbours"):
        Claim("x", "a", "b", test="optimum", neighbours=["b"])


# ------------------------------------------------------------------- mechanisms, shared and untested claims
def test_a_claim_whose_mechanism_is_inert_is_not_testable_and_leaves_the_family():
    from cselab.workbench.claims import mechanism_reading

    bml = Claim("without BML it is worse", "single", "MixCSE", direction=-1,
                mechanism={"statistic": "train:loss/bml", "at_least": 0.005, "words": "the BML term"})
    assert mechanism_reading(bml, [0.0002, 0.0003]) == (
        "the BML term: 0.00025 over 2 seeds of single, below the 0.005 the mechanism needs")
    assert mechanism_reading(bml, [0.01, 0.02]) == "" and mechanism_reading(bml, []) == ""
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"), bml]
    table = claims_table(FRAME, claims, inert={bml.claim: mechanism_reading(bml, [0.0002, 0.0003])})
    assert table["verdict"][1].startswith("not testable at this scale (the BML term: 0.00025")
    assert table["level"][0] == pytest.approx(0.05)                      # a family of one
    with pytest.raises(ValueError, match="mechanism needs statistic"):
        Claim("x", "a", "b", mechanism={"statistic": "train:x"})


def test_a_shared_comparison_is_decided_by_one_family_and_untested_claims_say_what_they_need():
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE", decided_in="paper-mixcse"),
              Claim("single is worse", "single", "MixCSE", direction=-1),
              Claim("at a larger batch", "MixCSE", "single", untested="needs runs at equal data (128 for 40 steps)")]
    table = claims_table(FRAME, claims, decided={"MixCSE beats SimCSE": "holds here"})
    assert table["verdict"].tolist()[0::2] == ["decided in paper-mixcse: holds here",
                                                "not tested: needs runs at equal data (128 for 40 steps)"]
    assert table["level"][1] == pytest.approx(0.05) and table["p_holm"][1] == pytest.approx(table["p"][1])
    counts = tally(table)
    assert (counts["elsewhere"], counts["no test"], counts["holds here"]) == (1, 1, 1)


def test_a_study_whose_claims_are_all_untestable_still_has_its_table():
    claims = [Claim("a", "MixCSE", "SimCSE", testable=False, reason="the centroids cannot move"),
              Claim("b", "single", "SimCSE", testable=False, reason="the centroids cannot move")]
    table = claims_table(FRAME, claims)
    assert table.attrs["families"]["paper"] == "Holm over the paper's claims (0, α = 0.05)"
    assert tally(table)[NOT_TESTABLE] == 2 and len(format_claims(table)) == 2


def test_a_study_file_names_an_optimums_neighbours_and_a_mechanism_with_file_and_line(tmp_path):
    from conftest import REPO

    from cselab.workbench.studies import StudyError, load_study

    source = (REPO / "cselab" / "workbench" / "studies" / "paper-apincse.yaml").read_text(encoding="utf-8")
    spec = load_study(REPO / "cselab" / "workbench" / "studies" / "paper-apincse.yaml", "cpu", notebooks=False)
    optimum = next(c for c in spec.claims.claims if c.test == "optimum")
    assert optimum.neighbours == ("apincse-k8", "apincse-k32") and optimum.sweep[1] == "apincse"
    line = source.splitlines().index('  - claim: "k = 16 neighbours is best: it beats both k = 8 and k = 32"') + 1
    bad = tmp_path / "paper-apincse.yaml"
    bad.write_text(source.replace("neighbours: [apincse-k8, apincse-k32]", "neighbours: [apincse-k8, apincse-k64]"),
                   encoding="utf-8")
    with pytest.raises(StudyError, match=rf"paper-apincse\.yaml:{line}: neighbour 'apincse-k64' is not a run group"):
        load_study(bad, "cpu", notebooks=False)
    bad.write_text(source.replace("neighbours: [apincse-k8, apincse-k32]", "neighbours: [apincse-k8]"), encoding="utf-8")
    with pytest.raises(StudyError, match=rf"paper-apincse\.yaml:{line}: claim .* names its two neighbours"):
        load_study(bad, "cpu", notebooks=False)


def test_the_claims_figure_gives_n_per_row_where_the_seed_counts_differ():
    from cselab.workbench.plots.claims import plot_claims

    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"), Claim("single is worse", "single", "MixCSE", direction=-1)]
    table = claims_table(FRAME, claims)
    (ax,) = plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5], "single is worse": [0.4, 0.5]}).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["MixCSE beats SimCSE (n 3)", "single is worse (n 2)"]
    (ax,) = plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5], "single is worse": [0.4, 0.5, 0.4]}).axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["MixCSE beats SimCSE", "single is worse"]


def test_claim_labels_wrap_at_words_and_keep_their_n_whole():
    """ClusterNS's claims figure broke "(n 3)" over two lines ("σ = 0.2 (n" / "3)"): the label wraps
    at words and "(n k)" goes on the last line where it fits, else on a line of its own."""
    from cselab.workbench.plots.claims import LABEL_WIDTH, claim_label

    label = claim_label("without BML, σ = 0.4 differs from σ = 0.2", 3)
    assert label == "without BML, σ = 0.4 differs from σ = 0.2\n(n 3)"      # 41 characters: "(n 3)" would make 47
    assert claim_label("MixCSE beats SimCSE", 3) == "MixCSE beats SimCSE (n 3)"
    long = claim_label("ClusterNS clusters the 8 short-text sets better than SimCSE (mean accuracy)", 7)
    assert long == "ClusterNS clusters the 8 short-text sets\nbetter than SimCSE (mean accuracy) (n 7)"
    assert all(len(line) <= LABEL_WIDTH for line in long.split("\n"))


def test_the_claims_figure_colours_each_row_by_its_verdict_as_the_overview_does_and_its_labels_never_meet():
    """Every row was drawn in one teal whatever its verdict, while the overview of every claim colours
    the verdict: each row's dots, bar and verdict words now take VERDICT_COLOURS of the verdict's group
    (the overview's own dictionary), and wrapped labels get the height they need."""
    from matplotlib.colors import to_hex

    from cselab.workbench.claims import verdict_class
    from cselab.workbench.plots.claims import plot_claims
    from cselab.workbench.plots.check import draw
    from cselab.workbench.plots.overview import VERDICT_COLOURS

    long = "single mixing beats MixCSE's mixing of a hard negative with the positive (reversed in FRAME)"
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"), Claim(long, "single", "MixCSE")]
    table = claims_table(FRAME, claims)
    verdicts = dict(zip(table["claim"], table["verdict"]))
    assert [verdict_class(v) for v in verdicts.values()] == ["holds", "reversed"]   # two colours to tell apart
    # a two-sided check that detects a difference holds (it was drawn in the grey of "no test")
    assert [verdict_class(v) for v in ("detected (lower)", "detected (higher)", "not detected", "no test: no pairs")] == \
        ["holds", "holds", "powered null", "no test"]
    fig = plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5], long: [0.4, 0.5]})
    (ax,) = fig.axes
    expected = {claim: VERDICT_COLOURS[verdict_class(verdict)] for claim, verdict in verdicts.items()}
    rows = {" ".join(t.get_text().split()): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert list(rows) == ["MixCSE beats SimCSE (n 3)", f"{long} (n 2)"]
    from matplotlib.collections import LineCollection, PathCollection

    means = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == 1]
    for claim, mean in zip(verdicts, means):
        assert to_hex(mean.get_facecolor()[0]).upper() == expected[claim].upper()
    bars = [to_hex(c.get_color()[0]).upper() for c in ax.collections if isinstance(c, LineCollection)]
    assert bars == [expected[c].upper() for c in verdicts]
    words = {t.get_text(): to_hex(t.get_color()).upper() for t in ax.texts}
    assert set(words.values()) == {c.upper() for c in expected.values()}
    renderer = draw(fig)
    boxes = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
    assert not boxes[0].overlaps(boxes[1]) and min(b.x0 for b in boxes) >= 0   # apart, and inside the figure


def test_mechanism_readings_take_each_runs_late_mean_from_its_record_line():
    from cselab.workbench.claims import mechanism_readings

    bml = Claim("without BML it is worse", "no_fn", "full", direction=-1,
                mechanism={"statistic": "train:loss/bml", "variant": "full", "at_least": 0.005, "words": "BML"})
    lines = [{"variant": "full", "train": {"step": [10, 20, 30, 40], "loss/bml": [0.9, 0.9, 0.0002, 0.0004]}},
             {"variant": "full", "train": {"step": [10, 20, 30, 40], "loss/bml": [0.9, None, 0.0001, 0.0003]}},
             {"variant": "no_fn", "train": {"step": [10, 20], "loss/bml": [1.0, 1.0]}}]
    # late means 0.0003 and 0.0002 (the second half of each run's logged values; None is not a value)
    assert mechanism_readings([bml], lines) == {
        bml.claim: "BML: 0.00025 over 2 seeds of full, below the 0.005 the mechanism needs"}
    lines[0]["train"]["loss/bml"] = [0.0, 0.0, 0.02, 0.02]
    lines[1]["train"]["loss/bml"] = [0.0, 0.0, 0.02, 0.02]
    assert mechanism_readings([bml], lines) == {}


def test_the_claims_figure_names_the_claims_it_cannot_draw():
    """A claim counted in the tally but without a paired difference (a spread claim, a claim without a
    test) was missing from the claims figure without a word (MixCSE's variance claim): the note names
    each paper claim left out with its verdict, and counts the checks left out."""
    from cselab.workbench.plots.claims import plot_claims
    from cselab.workbench.plots.core import figure_note
    from cselab.workbench.plots.core import figure_note as note_text

    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE")]
    table = claims_table(FRAME, claims)
    extra = pd.DataFrame([{**{c: None for c in table.columns}, "claim": "MixCSE varies less than SimCSE",
                           "kind": "paper", "test": "variance", "diff": float("nan"),
                           "verdict": "not detected (powered: MDE ≤ 0.34 ≤ target 0.50)"},
                          {**{c: None for c in table.columns}, "claim": "λ 0.5 is worse than λ 0.2",
                           "kind": "check", "test": "paired_t", "diff": float("nan"), "verdict": "no test: no runs"}])
    fig = plot_claims(pd.concat([table, extra], ignore_index=True), {"MixCSE beats SimCSE": [0.5, 0.6, 0.5]})
    note = " ".join(note_text(fig).split())
    assert ("Not drawn, having no paired difference: MixCSE varies less than SimCSE (not detected (MDE ≤ 0.34)); "
            "1 of the workbench's checks (the study's claims table names them).") in note
    assert len(fig.axes) == 1   # the left-out rows are words, not empty panels
    from cselab.workbench.plots.check import check_figure

    # a note of many lines (four paper claims left out) grows the figure under the x label, never over it
    many = pd.concat([table, extra, *[extra.iloc[:1].assign(claim=f"a paper claim without a test, number {i}, whose "
                                                             "words run long enough to wrap") for i in range(4)]],
                     ignore_index=True)
    checks = [Claim(f"a check, number {i}", "MixCSE", "single", kind="check", direction=0) for i in range(3)]
    both = claims_table(FRAME, [*claims, *checks])
    many = pd.concat([both, *[extra.iloc[:1].assign(claim=f"a paper claim without a test, number {i}, whose words "
                                                          "run long enough to wrap") for i in range(6)]],
                     ignore_index=True)
    fig = plot_claims(many, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5],
                             **{c.claim: [0.4, 0.5, 0.4] for c in checks}})
    assert len(fig.axes) == 2 and figure_note(fig).count("\n") >= 7 and check_figure(fig) == []
    assert "Not drawn" not in " ".join(note_text(plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5]})).split())


def test_a_comparison_decided_in_another_study_is_named_in_the_note_not_drawn_beside_a_verdict_of_other_pairs():
    """cpu-compare's "APINCSE beats SimCSE" is decided in paper-apincse: drawn here, its dots were this
    study's pairs beside the other study's verdict, cut to "decided in paper-apincse:…" and coloured as
    "no test". The figure draws only its own verdicts; the note names the others, with their verdicts."""
    from cselab.workbench.plots.claims import plot_claims
    from cselab.workbench.plots.core import figure_note

    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"), Claim("single beats SimCSE", "single", "SimCSE")]
    table = claims_table(FRAME, claims)
    table.loc[1, "verdict"] = "decided in paper-apincse: reversed (its row: single beats SimCSE)"
    fig = plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5], "single beats SimCSE": [0.1, 0.1, 0.1]})
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["MixCSE beats SimCSE"]
    assert not any("decided" in t.get_text() for t in ax.texts)
    note = " ".join(figure_note(fig).split())
    assert ("Decided in another study, whose claims figure draws its pairs (one verdict per comparison): "
            "single beats SimCSE (reversed, in paper-apincse).") in note


def test_an_interval_far_wider_than_the_data_is_cut_at_the_axis_with_its_end_written():
    """GS-InfoNCE's equal-data batch claim over 2 seeds has a t-interval 2.6 wide against differences of
    tenths: drawn whole it set the axis, and every other row's seeds shrank into a point. The axis
    keeps the data (0, every seed, every mean); a bar it cuts ends in an arrowhead with its end written."""
    from matplotlib.lines import Line2D

    from cselab.workbench.plots.claims import plot_claims
    from cselab.workbench.plots.core import figure_note as note_text

    frame = pd.DataFrame({"variant": ["a"] * 4 + ["b"] * 4 + ["c"] * 2, "seed": [1, 2, 3, 4] * 2 + [1, 2],
                          "avg": [76.0] * 4 + [76.5, 76.4, 76.6, 76.5] + [76.1, 76.5]})
    table = claims_table(frame, [Claim("b beats a", "b", "a"), Claim("c beats a", "c", "a")])
    wide = table.set_index("claim").loc["c beats a"]
    half = stats.t.ppf(0.975, 1) * np.std([0.1, 0.5], ddof=1) / np.sqrt(2)   # 2.54
    assert wide["ci_low"] == pytest.approx(0.3 - half) and wide["ci_high"] == pytest.approx(0.3 + half)
    fig = plot_claims(table, {"b beats a": [0.5, 0.4, 0.6, 0.5], "c beats a": [0.1, 0.5]})
    (ax,) = fig.axes
    low, high = ax.get_xlim()
    assert -0.7 < low < 0.0 and 0.6 < high < 1.3   # the data with a margin, not the interval's ±2.5
    heads = [line for line in ax.lines if isinstance(line, Line2D) and line.get_marker() in ("<", ">")]
    assert sorted(line.get_marker() for line in heads) == ["<", ">"]
    assert sorted(line.get_xdata()[0] for line in heads) == pytest.approx([low, high])
    texts = {t.get_text() for t in ax.texts}
    assert f"{0.3 + half:+.2f}" in texts and f"{0.3 - half:+.2f}".replace("-", "−") in texts
    assert "arrowhead" in " ".join(note_text(fig).split())
    from cselab.workbench.plots.check import check_figure

    assert check_figure(fig) == []   # an arrowhead is a mark, not a one-point line the checker refuses
    # intervals near the data are drawn whole, and the note does not mention a cut
    (ax,) = (fig := plot_claims(claims_table(FRAME, [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE")]),
                                {"MixCSE beats SimCSE": [0.5, 0.6, 0.5]})).axes
    assert not [line for line in ax.lines if line.get_marker() in ("<", ">")]
    assert "arrowhead" not in " ".join(note_text(fig).split())


def test_the_papers_claims_and_the_checks_of_one_metric_share_one_x_scale():
    """GS-InfoNCE's claims figure drew the paper's claims on −0.4…0.5 and its check on −0.6…0.4: two
    panels of one metric on different scales, so one difference looked wider than another of the same
    size. Panels of one metric take the union of their ranges."""
    from cselab.workbench.plots.claims import plot_claims

    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE"),
              Claim("MixCSE differs from single", "MixCSE", "single", kind="check", direction=0)]
    table = claims_table(FRAME, claims)
    fig = plot_claims(table, {"MixCSE beats SimCSE": [0.5, 0.6, 0.5], "MixCSE differs from single": [0.4, 0.5, 0.4]})
    paper, check = fig.axes
    assert paper.get_xlim() == check.get_xlim()
    low, high = paper.get_xlim()
    assert low < 0.0 and high > 0.6   # 0 (the dotted line) and every seed's difference inside
