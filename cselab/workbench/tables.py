"""Result tables (STS, transfer, clustering, anything per run) as DataFrames, rendered to Markdown
and LaTeX, with mean ± std when several seeds exist.

Three steps:

1. :func:`cselab.workbench.results.summarise` (the results layer's summary) — a long or wide frame of per-run
   numbers → one row per group (e.g. method), columns ``(metric, "mean" | "std" | "n")``;
   :func:`scores_table` builds it directly from
   evaluation results (``{"scores": {task: value}}``, as :func:`~cselab.model.evaluate.evaluate_sts`,
   :func:`~cselab.model.evaluate.evaluate_transfer` and :func:`~cselab.model.evaluate.evaluate_clustering` return
   them, or a list of them, one per seed); :func:`runs_table` from run directories.
2. :func:`format_table` — cells as text: ``81.23 ± 0.45`` (``± std`` only when n > 1; the std is
   the sample standard deviation across seeds), the best mean of each column optionally bold.
3. :func:`to_markdown` / :func:`to_latex`.

Example::

    table = scores_table({"SimCSE": [sts_seed1, sts_seed2], "MixCSE": [...]}, columns=task_labels("sts"))
    print(to_markdown(format_table(table, bold_best=True)))
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..model.config import STS_SELECTED_MARK, STS_SELECTED_NOTE
from ..model.evaluate.suites import SUITES
from .results import STATS, mean_std_text, summarise   # the results layer's summary and its one mean ± std
# A row whose checkpoint was chosen on STS data (select_by: stsb_dev, the papers' protocol) carries the
# mark; to_markdown / to_latex / workbench.save_table then print the note under the table.
# The mark and footnote live beside config.uses_sts, below both tables and the study engine.


def marked_label(label):
    """``label`` with the mark (on the last level of a MultiIndex tuple)."""
    if isinstance(label, tuple):
        return (*label[:-1], f"{label[-1]}{STS_SELECTED_MARK}")
    return f"{label}{STS_SELECTED_MARK}"


def mark_rows(table: pd.DataFrame, selected: Iterable) -> pd.DataFrame:
    """A display copy of ``table`` with the mark on each row label in ``selected`` and the note in
    ``table.attrs["note"]`` when any row is marked."""
    selected = set(selected) & set(table.index)
    if not selected:
        return table
    labels = [marked_label(label) if label in selected else label for label in table.index]
    out = table.copy()
    out.index = pd.MultiIndex.from_tuples(labels, names=table.index.names) \
        if isinstance(table.index, pd.MultiIndex) else pd.Index(labels, name=table.index.name)
    out.attrs = {**{k: v for k, v in table.attrs.items() if k != "sts_selected"}, "note": STS_SELECTED_NOTE}
    return out


def scores_table(results: Mapping[str, dict | Sequence[dict]], columns: Mapping[str, str] | Sequence[str] | None = None,
                 average: str | None = "Avg.") -> pd.DataFrame:
    """A summary (see :func:`summarise`) of evaluation results: rows = the mapping's names, columns =
    the tasks of ``scores`` (``columns``: which tasks, in order, optionally renamed ``{task: label}``)
    plus their average per run (named ``average``; None to leave it out)."""
    rows = []
    for name, value in results.items():
        for seed_result in ([value] if isinstance(value, Mapping) else list(value)):
            if not isinstance(seed_result.get("scores") if isinstance(seed_result, Mapping) else None, Mapping):
                raise ValueError(f"{name}: a result needs a 'scores' mapping (task → value)")
            for task, score in seed_result["scores"].items():   # a string would stop the mean as a TypeError
                if isinstance(score, bool) or not isinstance(score, numbers.Real):
                    raise ValueError(f"{name}: the score of {task} is {type(score).__name__} {str(score)[:40]!r}, "
                                     "not a number")
            rows.append({"model": name, **seed_result["scores"]})
    if not rows:
        raise ValueError("scores_table: no results (pass {name: result with 'scores'})")
    frame = pd.DataFrame(rows)
    if columns is None:
        columns = {c: c for c in frame.columns if c != "model"}
    elif not isinstance(columns, Mapping):
        columns = {c: c for c in columns}
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(f"scores_table: task(s) {missing} are in no result; present: {list(frame.columns[1:])}")
    frame = frame[["model", *columns]].rename(columns=dict(columns))
    labels = list(dict(columns).values())
    if average:
        frame[average] = frame[labels].mean(axis=1, skipna=False)
        labels.append(average)
    return summarise(frame, "model", labels)


def runs_table(runs, by: str | Sequence[str] = "method", metrics: Sequence[str] | None = None,
               config_keys: Iterable[str] = ("method", "seed", "batch_size")) -> pd.DataFrame:
    """A summary of finished runs (``results.json``) grouped by config keys: runs that differ only
    in ``seed`` become one row with mean ± std. ``metrics`` default: every suite score training
    wrote (``sts/…``), columns labelled as the suite labels its tasks (``STS-B``, ``Avg.``)."""
    from ..model.config import uses_sts
    from ..model.rundir import read_results

    by = [by] if isinstance(by, str) else list(by)
    frame = read_results(runs, config_keys=list(dict.fromkeys([*config_keys, *by])))
    if metrics is None:
        metrics = [c for c in frame.columns if c.partition("/")[0] in SUITES]
    frame = frame.rename(columns={m: _short(m) for m in metrics})
    summary = summarise(frame, by, [_short(m) for m in metrics])
    # the rows with a checkpoint chosen on STS data: format_table marks them (†)
    summary.attrs["sts_selected"] = list(frame[frame["select_by"].map(uses_sts)].groupby(by, sort=False).size().index)
    return summary


def _short(metric: str) -> str:
    """A ``<suite>/<task>`` column as the suite labels the task (``sts/STSBenchmark`` → ``STS-B``)."""
    suite, _, task = metric.partition("/")
    labels = SUITES[suite].task_labels() if suite in SUITES else {}
    return labels.get(task, "Avg." if task == "avg" else metric)


def format_table(summary: pd.DataFrame, decimals: int = 2, bold_best: bool = False,
                 lower_is_better: Iterable[str] = ()) -> pd.DataFrame:
    """Text cells ``mean ± std`` (``mean`` alone when n = 1) from a :func:`summarise` frame;
    ``bold_best`` marks the best mean per column (``**…**``; LaTeX output turns it into \\textbf);
    rows listed in ``summary.attrs["sts_selected"]`` (:func:`runs_table`) get the † and the note."""
    lower = set(lower_is_better)
    metrics = list(dict.fromkeys(summary.columns.get_level_values(0)))
    out = pd.DataFrame(index=summary.index)
    for metric in metrics:
        means, stds, counts = (summary[(metric, s)] for s in STATS)
        finite = means.dropna()
        best = (finite.min() if metric in lower else finite.max()) if bold_best and len(finite) > 1 else None
        cells = []
        for m, s, n in zip(means, stds, counts):
            if pd.isna(m):
                cells.append("–")
                continue
            text = mean_std_text(m, s if n > 1 else math.nan, decimals, missing_std=None)
            cells.append(f"**{text}**" if best is not None and math.isclose(m, best) else text)
        out[metric] = cells
    out.index.name = summary.index.name
    return mark_rows(out, summary.attrs.get("sts_selected", ()))   # † rows chosen on STS data, and the note


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub Markdown table (index as the first column)."""
    from tabulate import tabulate

    frame = table.reset_index()
    text = tabulate(frame.values.tolist(), headers=[str(c) for c in frame.columns], tablefmt="github",
                    disable_numparse=True)
    return text + (f"\n\n{table.attrs['note']}" if table.attrs.get("note") else "")


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def _latex_cell(text: str) -> str:
    bold = text.startswith("**") and text.endswith("**") and len(text) > 4
    body = text[2:-2] if bold else text
    body = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in body)
    body = body.replace("±", r"$\pm$").replace("–", "--").replace("λ", r"$\lambda$").replace("τ", r"$\tau$")
    body = body.replace(STS_SELECTED_MARK, r"\dag{}")
    return rf"\textbf{{{body}}}" if bold else body


def to_latex(table: pd.DataFrame, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs ``tabular`` (inside a ``table`` environment when a caption or label is given)."""
    frame = table.reset_index()
    header = " & ".join(_latex_cell(str(c)) for c in frame.columns) + r" \\"
    body = [" & ".join(_latex_cell(str(v)) for v in row) + r" \\" for row in frame.values.tolist()]
    lines = [r"\begin{tabular}{l" + "r" * (frame.shape[1] - 1) + "}", r"\toprule", header, r"\midrule", *body,
             r"\bottomrule", r"\end{tabular}"]
    if table.attrs.get("note"):
        lines.append(r"\par\footnotesize " + _latex_cell(table.attrs["note"]))
    if caption is not None or label is not None:
        inner = [r"\begin{table}[t]", r"\centering", *lines]
        if caption is not None:
            inner.append(rf"\caption{{{_latex_cell(caption)}}}")
        if label is not None:
            inner.append(rf"\label{{{re.sub(r'[^A-Za-z0-9:_-]', '', label)}}}")
        lines = [*inner, r"\end{table}"]
    return "\n".join(lines) + "\n"

