"""Every paper claim of the cpu studies at a glance: one row per claim, grouped by paper.

The rows come from the same claims tables as each study's own block
(:func:`cselab.workbench.paper_tables.record_report.overview_rows`: ``claims_of`` over the committed
record), so the overview can never disagree with them. Each row carries Δ in
the paper's direction (positive: as the paper says) with its 95 % t-interval over the seed pairs the
test kept, n, the MDE and the claim's target in the claim's own units, the paper's own number and
the verdict. ``make findings`` writes the table into docs/cpu-papers.md (``<!-- record: overview
cpu-papers -->``) and the figure beside the records (``record_report.write_overview_figure``).
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..claims import verdict_class

OVERVIEW_FIGURE = Path("figures/cpu-papers/overview")     # + .png; written by make findings
PAPER_STUDY = "paper-"   # a paper's study is named after its method (paper-<method>)
UNITS = {"avg": "STS points"}


def paper_studies() -> list[str]:
    """The shipped paper studies, by name."""
    from ..studies.spec import available_studies

    return [s for s in available_studies() if s.startswith(PAPER_STUDY)]


def _number(x: float, signed: bool = False) -> str:
    if not math.isfinite(x):
        return "–"
    return f"{x:+.2f}" if signed else f"{x:.2f}"


def overview_markdown(rows: pd.DataFrame) -> str:
    """The table: paper, claim, verdict, Δ [95 % CI] in the paper's direction, n, MDE / target, paper."""
    lines = ["| paper | claim | verdict | Δ [95 % CI], paper's direction | n | MDE / target | the paper's Δ |",
             "|---|---|---|---|---|---|---|"]
    for _, r in rows.iterrows():
        ratio = r["test"] == "paired_variance"   # an sd ratio, not a difference: no direction to flip
        if math.isfinite(r["delta"]) and r["n"] >= 2 and not ratio:
            delta = f"{_number(r['delta'], True)} [{_number(r['low'], True)}, {_number(r['high'], True)}]"
        elif math.isfinite(r["delta"]) and r["n"] >= 2:
            delta = f"sd ratio {_number(r['delta'])}"
        else:
            delta = "–"
        unit = "" if ratio else UNITS.get(r["metric"], f"({r['metric']})")
        verdict = str(r["verdict"]).replace("|", "/")
        if verdict.startswith("no test: ") or verdict.startswith("not tested: "):
            verdict = verdict.split(" (")[0]    # the cause in words; the study's own table has the seeds
        lines.append(f"| {r['paper']} | {r['claim']} | {verdict} | {delta} {unit if delta != '–' else ''} | "
                     f"{r['n'] or '–'} | {_number(r['mde'])} / {_number(r['target'])} | "
                     f"{_number(r['paper_effect'], True)} |")
    counts = rows["class"].value_counts()
    order = ["holds", "reversed", "powered null", "underpowered", "inconclusive", "not testable", "no test"]
    tally = ", ".join(f"{counts[c]} {c}" for c in order if c in counts)
    return (f"{len(rows)} paper claims: {tally}. Δ is the variant minus its reference turned so that a positive Δ "
            "is what the paper says; its interval is the 95 % t-interval over the n seed pairs of one "
            "computation the test kept.\n\n" + "\n".join(lines) + "\n")


__all__ = ["OVERVIEW_FIGURE", "overview_markdown", "paper_studies", "verdict_class"]
