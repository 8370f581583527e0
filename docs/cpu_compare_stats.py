"""Holm adjustment and minimum detectable differences for docs/cpu-compare.md, from its own numbers.

The 15 runs of the 2026-11-30 cpu-compare study are not kept, so the statistics that the study now
computes itself (``cselab reproduce cpu-compare``) are recomputed here from what the document
records: the paired t-test p-values, printed with 3 decimals, and the paired differences' 95 %
t-intervals over the 3 seeds. Two families, as the document reads them:

* **within each method, its 8 scores** (7 tasks and the average) — the claim "better on every
  task" is a claim about all of them at once;
* **the 4 methods on the 7-task average** — "which method beats SimCSE";

and, as the strictest reading, all 32 tests at once.

A printed ``0.000`` is taken as 0.0005 (the largest value that rounds to it: conservative). Holm
is statsmodels' (``cselab.workbench.results.holm``); a difference counts as detected when the adjusted p is
below 0.05. The minimum detectable difference (power 0.8, α 0.05, two-sided paired t-test, n = 3)
needs the standard deviation of the per-seed differences, read back from the recorded interval:
half-width = t_{0.975, 2} · sd / √3. Run from the repository root::

    python docs/cpu_compare_stats.py          # prints the Markdown tables quoted in the document
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pandas as pd
from scipy import stats as scipy_stats

from cselab.workbench.results import ALPHA, POWER, holm, minimum_detectable_difference

DOCUMENT = Path(__file__).with_name("cpu-compare.md")
SEEDS = 3
RECORDED_RUN = "## The 2026-11-30 run"
ZERO = 0.0005          # a p printed as 0.000 lies below 0.0005; the upper end is the conservative reading
CELL = re.compile(r"^([+-]\d+\.\d+) \(p (\d\.\d{3})\)$")


def pipe_tables(text: str) -> list[pd.DataFrame]:
    """Every Markdown pipe table of ``text`` as a frame of text cells (header row → columns)."""
    tables, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set(":- ") for c in cells):
                rows.append(cells)
        elif rows:
            tables.append(pd.DataFrame(rows[1:], columns=rows[0]))
            rows = []
    return tables


def recorded_tables(text: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The recorded per-task table (cells ``+0.54 (p 0.040)``) and the 7-task average table (with
    ``Δ 95% CI`` and ``p (paired t)``), as the study wrote them."""
    per_task = average = None
    for table in pipe_tables(text):
        if per_task is None and table.shape[1] > 2 and table.iloc[:, 1:].map(lambda c: bool(CELL.match(c))).any().any():
            per_task = table
        if average is None and {"Δ 95% CI", "p (paired t)"} <= set(table.columns):
            average = table
    if per_task is None or average is None:
        sys.exit(f"{DOCUMENT}: the recorded per-task table or the average table (Δ 95% CI, p (paired t)) is missing")
    return per_task, average


def p_value(text: str) -> float:
    p = float(text)
    return ZERO if p == 0 else p


def sd_from_interval(interval: str) -> float:
    """The standard deviation of the per-seed differences from their 95 % t-interval ``[lo, hi]``."""
    low, high = (float(x) for x in interval.strip("[]").split(","))
    return (high - low) / 2 * math.sqrt(SEEDS) / scipy_stats.t.ppf(0.975, SEEDS - 1)


def within_methods(per_task: pd.DataFrame) -> pd.DataFrame:
    """Family: each method's 8 scores. One row per method and score."""
    rows = []
    for _, row in per_task.iterrows():
        cells = {task: CELL.match(cell) for task, cell in row.iloc[1:].items()}
        if not all(cells.values()):
            continue                                    # the baseline's row
        raw = [p_value(m.group(2)) for m in cells.values()]
        for (task, match), p, adjusted in zip(cells.items(), raw, holm(raw)):
            rows.append({"method": row.iloc[0], "score": task, "Δ": match.group(1), "p (recorded)": match.group(2),
                         "p (Holm, its 8 scores)": f"{adjusted:.3f}",
                         "detected": "yes" if adjusted < ALPHA else "no"})
    return pd.DataFrame(rows)


def across_methods(average: pd.DataFrame) -> pd.DataFrame:
    """Family: the 4 methods on the 7-task average, with each method's MDE."""
    tested = average[average["p (paired t)"] != ""].reset_index(drop=True)
    raw = [p_value(p) for p in tested["p (paired t)"]]
    rows = []
    for (_, row), adjusted in zip(tested.iterrows(), holm(raw)):
        sd = sd_from_interval(row["Δ 95% CI"])
        mde = minimum_detectable_difference(sd, SEEDS, ALPHA, POWER)
        rows.append({"method": row["group"], "Δ avg": row["Δ vs baseline"], "Δ 95% CI": row["Δ 95% CI"],
                     "p (recorded)": row["p (paired t)"], "p (Holm, 4 methods)": f"{adjusted:.3f}",
                     "sd of Δ": f"{sd:.2f}", "MDE": f"{mde:.2f}",
                     "reading": ("detected" if adjusted < ALPHA else f"no detectable effect (MDE {mde:.2f})")})
    return pd.DataFrame(rows)


def main() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    # the 2026-11-30 run's recorded tables (the 2026-12-02 re-run above them was written by the study itself)
    text = text[text.index(RECORDED_RUN):] if RECORDED_RUN in text else text
    per_task, average = recorded_tables(text)
    print("Family: the 4 methods on the 7-task average (MDE: power 0.8, α 0.05, n 3)\n")
    print(across_methods(average).to_markdown(index=False, disable_numparse=True))
    print("\nFamily: each method's 8 scores (7 tasks and the average)\n")
    within = within_methods(per_task)
    print(within.pivot(index="method", columns="score", values="p (Holm, its 8 scores)")
          .reindex(index=list(dict.fromkeys(within["method"])), columns=list(dict.fromkeys(within["score"])))
          .to_markdown(disable_numparse=True))
    held = within[within["detected"] == "yes"].groupby("method", sort=False)["score"].agg(", ".join)
    print("\nDetected after Holm within each method (adjusted p < 0.05):",
          "; ".join(f"{m}: {s}" for m, s in held.items()) or "none")
    # the strictest reading: all 4 × 8 tests as one family
    every = holm([p_value(p) for p in within["p (recorded)"]])
    strict = within[every < ALPHA]
    print(f"Detected with Holm over all {len(within)} tests at once:",
          "; ".join(f"{r['method']} {r['score']} ({a:.3f})"
                    for (_, r), a in zip(strict.iterrows(), every[every < ALPHA])) or "none")


if __name__ == "__main__":
    main()
