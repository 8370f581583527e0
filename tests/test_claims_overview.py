"""The overview of every paper claim (issue 53 item 2): a row per claim, Δ in the paper's direction
over the claim's target, the verdict's colour and word, n."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from cselab.workbench.paper_tables.overview import overview_markdown, verdict_class
from cselab.workbench.plots.check import check_figure
from cselab.workbench.plots.overview import VERDICT_COLOURS, plot_claims_overview


def _row(paper, claim, verdict, delta=math.nan, low=math.nan, high=math.nan, n=0, target=0.3, test="paired_t",
         metric="avg", mde=math.nan, paper_effect=math.nan):
    return {"paper": paper, "claim": claim, "verdict": verdict, "class": verdict_class(verdict), "metric": metric,
            "test": test, "delta": delta, "low": low, "high": high, "n": n, "mde": mde, "target": target,
            "paper_effect": paper_effect}


ROWS = pd.DataFrame([
    _row("MixCSE", "MixCSE beats SimCSE", "holds here", 0.6, 0.3, 0.9, 5, target=0.47, mde=0.4, paper_effect=2.83),
    _row("MixCSE", "without the stop-gradient it is worse",
         "no test: no pair of one computation (seeds 1, 2: code identities differ (a vs b))"),
    _row("ClusterNS", "ClusterNS beats SimCSE", "not detected, underpowered (MDE 0.53 > target 0.30)",
         0.23, -0.05, 0.5, 7, mde=0.53),
    _row("ClusterNS", "the BML loss beats masking", "reversed", -0.9, -1.5, -0.3, 6),
])


@pytest.mark.parametrize("verdict, group", [
    ("holds here", "holds"), ("reversed", "reversed"), ("not detected (MDE 0.21)", "powered null"),
    ("not detected, underpowered (MDE 0.84 > target 0.47)", "underpowered"),
    ("not detected, inconclusive (MDE 1.74; no target in these units)", "inconclusive"),
    ("not testable at this scale (the BML term ...)", "not testable"), ("no test: no runs", "no test"),
    ("not tested: needs runs at equal data", "no test"),
])
def test_each_verdict_falls_in_one_group(verdict, group):
    assert verdict_class(verdict) == group


def test_the_figure_puts_each_tested_claim_at_its_delta_over_target():
    fig = plot_claims_overview(ROWS)
    ax = fig.axes[0]
    points = {(round(float(ln.get_xdata()[0]), 6), ln.get_color()) for ln in ax.get_lines()
              if ln.get_marker() == "o" and len(ln.get_xdata()) == 1}
    # 0.6 / 0.47, 0.23 / 0.3 and −0.9 / 0.3, each in its verdict's colour; the untested claim has no point
    assert points == {(round(0.6 / 0.47, 6), VERDICT_COLOURS["holds"]),
                      (round(0.23 / 0.3, 6), VERDICT_COLOURS["underpowered"]),
                      (-3.0, VERDICT_COLOURS["reversed"])}
    assert [t.get_text() for t in ax.get_yticklabels()] == list(ROWS["claim"])
    words = [t.get_text() for t in ax.texts]
    assert "holds, n 5" in words and "no test" in words and "reversed, n 6" in words
    assert check_figure(fig) == []


def test_the_table_reads_delta_in_the_papers_direction_and_shortens_a_missing_test():
    text = overview_markdown(ROWS)
    assert text.startswith("4 paper claims: 1 holds, 1 reversed, 1 underpowered, 1 no test.")
    assert "| MixCSE | MixCSE beats SimCSE | holds here | +0.60 [+0.30, +0.90] STS points | 5 | 0.40 / 0.47 | +2.83 |" in text
    # the cause in words; the seeds that could not pair stay in the study's own table
    assert "| no test: no pair of one computation | –  | – |" in text


def test_two_claims_that_differ_at_their_end_keep_their_own_ends():
    """The overview read "doubling the batch instead of the terms does not…" twice (the 80-step row and
    the equal-data row): shortened from their start, the two read alike. Such rows keep their own end
    after the start they share; every other label is shortened as before, and none passes 50 characters."""
    from cselab.workbench.plots.overview import LABEL_CHARS, row_labels

    claims = ["GS-InfoNCE at batch 64 beats SimCSE at batch 128, both 80 steps (twice the data for 128)",
              'GS-InfoNCE at batch 64 beats SimCSE at batch 128 on the same data ("with the same or smaller batch size")',
              "doubling the batch instead of the terms does not help (−bs128 is worse), both 80 steps",
              "doubling the batch instead of the terms does not help (−bs128 is worse), on the same data",
              "MixCSE beats SimCSE", "the mixed negatives keep a larger gradient signal late in training"]
    labels = row_labels(claims)
    assert labels[claims[2]] == "doubling the batch instead of… both 80 steps"
    assert labels[claims[3]] == "doubling the batch instead of… on the same data"
    assert labels[claims[0]] != labels[claims[1]] and labels[claims[0]].rstrip("…") != labels[claims[1]].rstrip("…")
    assert labels[claims[4]] == "MixCSE beats SimCSE"
    assert labels[claims[5]] == "the mixed negatives keep a larger gradient signal…"
    assert len(set(labels.values())) == len(claims) and max(map(len, labels.values())) <= LABEL_CHARS
