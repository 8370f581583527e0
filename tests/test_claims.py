"""Claims tables (cselab/paper_tables/claims.py): paired differences over seeds, Holm over the
paper's family, and verdicts, on fixed numbers checked against scipy and statsmodels directly."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from cselab.paper_tables import Claim, as_variants, claims_table, format_claims

# three seeds; MixCSE clearly above SimCSE, "single" clearly below MixCSE, λ = 0.5 vs 0.2 noise
FRAME = pd.DataFrame({
    "variant": ["SimCSE"] * 3 + ["MixCSE"] * 3 + ["single"] * 3,
    "seed": [1, 2, 3] * 3,
    "avg": [76.0, 76.2, 75.9, 76.5, 76.8, 76.4, 76.1, 76.3, 76.0]})


def test_differences_p_values_and_holm_match_scipy_and_statsmodels():
    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE", "+2.83 (Table)"),
              Claim("single mixing is worse than both", "single", "MixCSE", "-1.23", direction=-1)]
    table = claims_table(FRAME, claims)
    p1 = stats.ttest_rel([76.5, 76.8, 76.4], [76.0, 76.2, 75.9]).pvalue
    p2 = stats.ttest_rel([76.1, 76.3, 76.0], [76.5, 76.8, 76.4]).pvalue
    assert table["diff"].tolist() == pytest.approx([0.5333333, -0.4333333], abs=1e-6)
    assert table["p"].tolist() == pytest.approx([p1, p2])
    assert table["p_holm"].tolist() == pytest.approx(list(multipletests([p1, p2], method="holm")[1]))
    half = stats.t.ppf(0.975, 2) * pd.Series([0.5, 0.6, 0.5]).std() / math.sqrt(3)
    assert (table.loc[0, "ci_low"], table.loc[0, "ci_high"]) == pytest.approx((0.5333333 - half, 0.5333333 + half))
    assert table["p_holm"][0] < 0.05 and table["p_holm"][1] < 0.05   # both detected after Holm ...
    assert table["verdict"].tolist() == ["holds here", "holds here"]   # ... each in the paper's direction
    assert table["n"].tolist() == [3, 3]


def test_verdicts_holds_reversed_and_not_detected_with_its_mde():
    frame = pd.DataFrame({"variant": ["A"] * 3 + ["B"] * 3 + ["C"] * 3, "seed": [1, 2, 3] * 3,
                          "avg": [70.0, 71.0, 72.0, 71.0, 72.01, 73.0, 70.5, 72.5, 71.0]})
    table = claims_table(frame, [Claim("B beats A", "B", "A", "x"), Claim("A beats B", "A", "B", "x"),
                                 Claim("C beats A", "C", "A", "x")])
    # B - A = (1.0, 1.01, 1.0): tiny spread, p ≈ 1e-4 → holds; its mirror is reversed
    assert table["verdict"][0] == "holds here" and table["verdict"][1] == "reversed"
    # C - A = (0.5, 1.5, -1.0): not detected, and the MDE is TTestPower's effect size × the sd
    from statsmodels.stats.power import TTestPower
    sd = pd.Series([0.5, 1.5, -1.0]).std()
    mde = TTestPower().solve_power(nobs=3, alpha=0.05, power=0.8) * sd
    assert table["verdict"][2] == f"not detected (MDE {mde:.2f})"


def test_missing_variants_are_reported_not_dropped_and_sweeps_become_variants():
    sweep = pd.DataFrame({"run": ["a", "b", "c", "d", "e"], "seed": [1, 2, 1, 2, 3], "λ": [0.1, 0.1, 0.5, 0.5, 0.5],
                          "avg": [1.0, 2.0, 1.5, 2.7, 9.0]})
    frame = as_variants(sweep, "λ", "λ = {:g}")
    assert frame["variant"].tolist() == ["λ = 0.1", "λ = 0.1", "λ = 0.5", "λ = 0.5", "λ = 0.5"]
    table = claims_table(frame, [Claim("larger λ is better", "λ = 0.5", "λ = 0.1", "fig"),
                                 Claim("absent", "λ = 0.9", "λ = 0.1", "fig")])
    # paired on the seeds both have (1 and 2): Δ = (0.5, 0.7); seed 3 of λ = 0.5 has no partner
    assert table["diff"][0] == pytest.approx(0.6) and table["n"][0] == 2
    assert table["p"][0] == pytest.approx(stats.ttest_rel([1.5, 2.7], [1.0, 2.0]).pvalue)
    assert table["verdict"][0].startswith("not detected (MDE ")
    assert table["verdict"][1] == "no runs" and math.isnan(table["p_holm"][1])
    text = format_claims(table)
    assert text.loc["absent", "ours: Δ (seeds)"] == "no runs (λ = 0.9)"
    assert text.loc["larger λ is better", "ours: Δ (seeds)"] == "+0.60 (n 2)"
    assert "Holm over the 1 claims" in table.attrs["family"]
    same = pd.DataFrame({"variant": ["a", "a", "b", "b"], "seed": [1, 2, 1, 2], "avg": [1.0, 2.0, 1.5, 2.5]})
    assert claims_table(same, [Claim("b beats a", "b", "a", "p")])["verdict"][0] == "no test (identical differences)"


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="no column 'stsb'"):
        claims_table(FRAME, [Claim("x", "MixCSE", "SimCSE", "p", metric="stsb")])
    with pytest.raises(ValueError, match="direction must be"):
        Claim("x", "a", "b", "p", direction=0)


def test_a_p_value_below_a_thousandth_is_written_as_such_not_as_zero():
    # per-seed differences 0.481, 0.478, 0.481 (APINCSE k = 16 against 32 on AMX): p ≈ 6e-6
    frame = pd.DataFrame({"variant": ["k16"] * 3 + ["k32"] * 3, "seed": [1, 2, 3] * 2,
                          "avg": [76.024, 76.127, 76.267, 75.543, 75.649, 75.786]})
    table = claims_table(frame, [Claim("k = 16 beats 32", "k16", "k32", "x")])
    assert table["p"][0] < 0.0005
    cells = format_claims(table)
    assert cells["p (paired t)"].iloc[0] == "< 0.001" and cells["p (Holm)"].iloc[0] == "< 0.001"
    assert format_claims(claims_table(FRAME, [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE", "x")]))[
        "p (paired t)"].iloc[0] == f"{stats.ttest_rel([76.5, 76.8, 76.4], [76.0, 76.2, 75.9]).pvalue:.3f}"


def test_the_claims_cell_on_one_seed_says_nothing_was_tested(tmp_path, capsys):
    """One seed per variant (the cpu-demo's runs): no paired test, and the cell printed "Holm over the
    0 claims tested here"; it says no claim was tested, and why. With seeds, Holm's family as before."""
    from cselab import workbench

    claims = [Claim("MixCSE beats SimCSE", "MixCSE", "SimCSE", "+2.83")]
    workbench.claims_cell([FRAME[FRAME["seed"] == 1]], claims, tmp_path)
    printed = capsys.readouterr().out
    assert printed.startswith("No claim tested here: a paired t-test needs two or more seeds that a claim's two "
                              "variants share; Δ = variant − reference") and "Holm over the 0" not in printed
    workbench.claims_cell([FRAME], claims, tmp_path)
    assert capsys.readouterr().out.startswith("Holm over the 1 claims tested here (α = 0.05); Δ = ")
