"""What a study prints and writes: the dry-run plan, one progress line per run, and the index page
``reports/<study>/index.md`` (plus ``study.json``, the same facts for programs)."""
from __future__ import annotations

import datetime
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate

from ...model.config import STS_SELECTED_MARK, STS_SELECTED_NOTE, uses_sts
from ...model.io import atomic_write_json, atomic_write_text
from .cost import Estimate, assumptions, format_seconds
from .execute import RunOutcome, TimeSplit
from .smoke import DATA_EVERY
from .spec import NotebookSpec, RunSpec, Study
from .status import RunStatus


@dataclass
class PlannedRun:
    spec: RunSpec
    status: RunStatus
    estimate: Estimate
    same_as: str | None = None     # an earlier label of the study with the same config (same run dir)
    notes: list[str] = field(default_factory=list)   # e.g. recording settings that differ from the study's


@dataclass
class NotebookResult:
    spec: NotebookSpec
    status: str                    # ok | failed | skipped
    output: Path | None = None
    seconds: float = 0.0
    note: str | None = None
    split: TimeSplit | None = None


@dataclass
class StudyReport:
    study: Study
    launcher: str
    jobs: int
    plan: list[PlannedRun]
    report_dir: Path
    figures_dir: Path
    outcomes: dict[str, RunOutcome] = field(default_factory=dict)
    notebooks: list[NotebookResult] = field(default_factory=list)
    wall_seconds: float = 0.0
    runs_done_seconds: float | None = None   # wall time when the last run got its outcome (notebooks may overlap)
    interrupted: bool = False
    unrecorded: dict[str, str] = field(default_factory=dict)   # label → why its line is not in the record
    in_progress: bool = False      # written so at the start: an index left so says the study was killed
    threads: int = 0               # intra-op threads per run (0: each SLURM job's own)
    data_dir: str | None = None    # the data root runs and notebooks read (None: the default one)

    @property
    def failures(self) -> int:
        return (sum(not o.ok for o in self.outcomes.values()) + sum(n.status != "ok" for n in self.notebooks)
                + len(self.unrecorded)
                + sum(p.spec.label not in self.outcomes for p in self.plan))

    @property
    def ok(self) -> bool:
        return not self.interrupted and self.failures == 0


# ------------------------------------------------------------------- dry run
def format_plan(study: Study, plan: list[PlannedRun]) -> str:
    rows = []
    for p in plan:
        status = f"same run as {p.same_as}" if p.same_as else p.status.describe(p.estimate.steps)
        estimate = "—" if p.same_as else format_seconds(p.estimate.seconds)
        rows.append([p.spec.label, p.spec.method, p.spec.seed, str(p.spec.run_dir), status,
                     p.estimate.steps if p.estimate.steps is not None else "?", estimate])
    todo = [p for p in plan if not p.same_as and p.status.kind != "finished"]
    known = [p.estimate.seconds for p in todo if p.estimate.seconds is not None]
    lines = [f"study {study.name} (profile {study.profile}, {study.path}): {len(plan)} runs, "
             f"{len(study.notebooks)} notebooks", "",
             tabulate(rows, headers=["label", "method", "seed", "run dir", "status", "steps", "estimate"],
                      tablefmt="github"), ""]
    if study.notebooks:
        lines.append("notebooks, executed in order after the runs:")
        for i, nb in enumerate(study.notebooks, 1):
            lines.append(f"  {i}. {nb.name} ({nb.path.name}) on {len(nb.runs)} runs: {', '.join(nb.runs)}")
        lines.append("")
    unknown = len(todo) - len(known)
    total = (f"ESTIMATED total: {format_seconds(sum(known))} for the {len(known)} runs to train or resume"
             + (f" (+{unknown} runs of unknown length)" if unknown else "")
             + "; notebooks not included. This is a rough estimate, not a measurement.")
    lines.append(total)
    for p in plan:
        lines += [f"  note: {p.spec.label}: {note}" for note in p.notes]
    for note in sorted({n for p in plan for n in p.estimate.notes}):
        lines.append(f"  note: {note}")
    lines += [f"  assumption: {a}" for a in assumptions({p.estimate.device for p in plan})]
    lines.append("dry run: nothing was trained, executed or written")
    return "\n".join(lines)


# ------------------------------------------------------------------- progress
def run_line(outcome: RunOutcome, same_as: str | None = None, notes: list[str] = ()) -> str:
    dev = f"best dev {outcome.best_stsb_dev:.2f}" if outcome.best_stsb_dev is not None else ""
    status = f"{outcome.status} (same run as {same_as})" if same_as else outcome.status
    line = f"run {outcome.label}: {status}  {outcome.seconds:.1f} s  {dev}  {outcome.run_dir}"
    if outcome.error:
        line += f"\n    {outcome.error}"
    if outcome.note:
        line += f"\n    note: {outcome.note}"
    return line + "".join(f"\n    note: {note}" for note in notes)


def in_jupyter() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class Progress:
    """A tqdm.auto bar over runs in Jupyter or a terminal; one plain line per run otherwise."""

    def __init__(self, total: int, stream=None, mode: str = "auto"):
        self.stream = stream or sys.stderr
        self._lock = threading.Lock()
        interactive = mode == "bar" or (mode == "auto" and (in_jupyter() or self.stream.isatty()))
        self.bar = None
        if interactive:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="runs", unit="run", file=self.stream, dynamic_ncols=True)

    def line(self, text: str, advance: bool = False) -> None:
        with self._lock:   # runs and notebooks report from several threads
            if self.bar is not None:
                self.bar.write(text, file=self.stream)
                if advance:
                    self.bar.update(1)
            else:
                print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ------------------------------------------------------------------- index page
def _link(target: Path, start: Path) -> str:
    return Path(os.path.relpath(Path(target).resolve(), start.resolve())).as_posix()


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# cselab.workbench.plots.core.PROBLEMS_SUFFIX (not imported: the study engine does not load matplotlib)
FIGURE_PROBLEMS_SUFFIX = ".problems.json"


def _figure_lines(png: Path, figures_dir: Path, here: Path) -> list[str]:
    """A figure's image line, then the figure checker's problems that ``save_figure`` recorded
    beside it (``<name>.problems.json``), so that a defect is seen where the figure is."""
    lines = [f"![{png.relative_to(figures_dir).as_posix()}]({_link(png, here)})"]
    record = png.with_name(png.stem + FIGURE_PROBLEMS_SUFFIX)
    if record.is_file():
        try:
            problems = json.loads(record.read_text())["problems"]
        except (ValueError, KeyError, TypeError) as error:
            problems = [f"unreadable problems record {record.name}: {error}"]
        lines += ["", f"**Figure check: {len(problems)} problem(s) in `{png.name}`:**", ""]
        lines += [f"- {_cell(p)}" for p in problems] + [""]
    return lines


def interrupted_state(report: StudyReport) -> str:
    """An interrupted study in words: how many runs a Ctrl-C stopped at their last checkpoint and how
    many it kept from starting (each run's row says which)."""
    statuses = [o.status for o in report.outcomes.values()]
    parts = [f"{n} run(s) {words}" for n, words in ((statuses.count("interrupted"), "stopped at their last checkpoint"),
                                                   (statuses.count("not started"), "not started")) if n]
    return f"interrupted{' (' + ', '.join(parts) + ')' if parts else ''}: run the same command again to resume"


def index_markdown(report: StudyReport) -> str:
    study, here = report.study, report.report_dir
    state = ("in progress: if no `cselab reproduce` of this study is running, it was killed; run the same command "
             "again to resume" if report.in_progress
             else interrupted_state(report) if report.interrupted
             else "all runs and notebooks succeeded" if report.ok else f"{report.failures} failed or skipped")
    lines = [f"# Study `{study.name}`", ""]
    if study.description:
        lines += [study.description.strip(), ""]
    threads = (f"{report.threads} intra-op thread(s) per run" if report.threads else
               "intra-op threads per run: each job's own")
    lines += [f"- profile: `{study.profile}`; launcher: `{report.launcher}`, {report.jobs} run(s) and {report.jobs} notebook(s) at a time, {threads}",
              f"- study file: `{study.path.name}`",
              *([f"- data: every {DATA_EVERY}th record of the data root's evaluation sets (the smoke profile's sample): "
                 f"`{report.data_dir}`"] if study.smoke else []),
              f"- wall time: {format_seconds(report.wall_seconds)} "
              f"(finished {datetime.datetime.now().astimezone().isoformat(timespec='seconds')})",
              f"- status: **{state}**", "", "## Runs", ""]
    rows = []
    for p in report.plan:
        o = report.outcomes.get(p.spec.label)
        status = o.status if o else "interrupted" if report.interrupted else "not run"
        if o and o.status == "reused" and o.train_seconds is not None:
            status += f" (its training loop took {format_seconds(o.train_seconds)})"
        if p.same_as:
            status += f" (same run as {p.same_as})"
        log = here / "runs" / f"{p.spec.label}.log"   # what its training said (cselab.workbench.studies.execute.train_logged)
        label = f"[{p.spec.label}]({_link(log, here)})" if log.is_file() else p.spec.label
        dev = f"{o.best_stsb_dev:.2f}" if o and o.best_stsb_dev is not None else "—"
        chosen = p.spec.config.select_by + (STS_SELECTED_MARK if uses_sts(p.spec.config.select_by) else "")
        rows.append([label, p.spec.method, p.spec.seed, status, dev, chosen,
                     f"[{p.spec.run_dir.name}]({_link(p.spec.run_dir, here)})"])
    lines += [tabulate(rows, headers=["label", "method", "seed", "status", "best STS-B dev", "best/ chosen by",
                                      "run dir"], tablefmt="github", disable_numparse=True), ""]
    if any(uses_sts(p.spec.config.select_by) for p in report.plan):
        lines += [STS_SELECTED_NOTE, ""]
    notes = [f"- {p.spec.label}: {_cell(note)}" for p in report.plan for note in p.notes]
    notes += [f"- {o.label}: {_cell(o.note)}" for o in report.outcomes.values() if o.note]
    if notes:
        lines += ["Notes:", ""] + notes + [""]
    lines += ["## Notebooks", ""]
    if not report.notebooks:
        lines.append("(none executed)")
    for nb in report.notebooks:
        name = f"[{nb.spec.name}]({_link(nb.output, here)})" if nb.output and nb.output.is_file() else nb.spec.name
        extra = f": {_cell(nb.note)}" if nb.note else ""
        lines.append(f"- {name} — {nb.status} ({nb.seconds:.1f} s) on {len(nb.spec.runs)} runs{extra}")
    lines += ["", "## Time", ""] + time_split_lines(report)
    lines += ["", "## Figures", ""]
    figures = sorted(report.figures_dir.rglob("*.png")) if report.figures_dir.is_dir() else []
    if report.in_progress:   # each notebook empties its figures folder first: a link now could point at nothing
        lines.append("(being redrawn: each notebook empties its figures folder before it runs; listed when the "
                     "study ends)")
    else:
        lines += [line for p in figures for line in _figure_lines(p, report.figures_dir, here)] or ["(none)"]
    lines += ["", "## Tables", ""]
    tables_dir = here / "tables"
    tables = sorted(tables_dir.glob("*.md")) if tables_dir.is_dir() else []
    for md in tables:
        csv = md.with_suffix(".csv")
        lines.append(f"- [{md.stem}]({_link(md, here)})" + (f" ([csv]({_link(csv, here)}))" if csv.is_file() else ""))
    for csv in sorted(tables_dir.glob("*.csv")) if tables_dir.is_dir() else []:
        if not csv.with_suffix(".md").is_file():
            lines.append(f"- [{csv.name}]({_link(csv, here)})")
    if not tables and not (tables_dir.is_dir() and any(tables_dir.glob("*.csv"))):
        lines.append("(none)")
    errors = [o.error for o in report.outcomes.values() if o.error]
    errors += [f"notebook {nb.spec.name}: {nb.note}" for nb in report.notebooks if nb.status == "failed"]
    errors += [f"{label}: not recorded in the study's record: {why}" for label, why in report.unrecorded.items()]
    if errors:
        lines += ["", "## Failures", ""] + [f"- {_cell(e)}" for e in errors]
    return "\n".join(lines) + "\n"


def _seconds(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def time_split_lines(report: StudyReport) -> list[str]:
    """Where the wall time went, per trained run and per notebook: start-up and saving (a notebook's
    kernel and its saved copy, a run's config, log and thread set-up: total − the cells' own seconds,
    a run's cell being its training call), a run's training loop (``results.json``'s ``train_seconds``:
    up to its last step, the dev evaluations and probes before it included, which *encode* counts
    too), the notebook's encoding and K-means/UMAP fits, and the other cells (imports, model
    loading, for a run its last evaluation and saving, statistics, drawing)."""
    rows, totals = [], {"kernel": 0.0, "encode": 0.0, "fit": 0.0}

    def other(s: TimeSplit, inside: float) -> float | None:
        return None if s.cells is None else max(0.0, s.cells - inside)

    for label, o in report.outcomes.items():
        if o.status in ("trained", "resumed") and o.split is not None:
            s = o.split
            rows.append([f"run {label}", _seconds(o.seconds), _seconds(s.kernel), _seconds(o.train_seconds),
                         _seconds(s.encode), _seconds(s.fit), _seconds(other(s, (o.train_seconds or 0.0)))])
    for nb in report.notebooks:
        if nb.split is not None:
            s = nb.split
            rows.append([f"notebook {nb.spec.name}", _seconds(nb.seconds), _seconds(s.kernel), "",
                         _seconds(s.encode), _seconds(s.fit), _seconds(other(s, (s.encode or 0.0) + (s.fit or 0.0)))])
    if not rows:
        return ["(nothing executed)"]
    for x in [*report.outcomes.values(), *report.notebooks]:
        if x.split is not None:
            totals["kernel"] += x.split.kernel or 0.0
            totals["encode"] += x.split.encode or 0.0
            totals["fit"] += x.split.fit or 0.0
    runs = sum(o.seconds for o in report.outcomes.values() if o.status in ("trained", "resumed"))
    notebooks = sum(nb.seconds for nb in report.notebooks)
    table = tabulate(rows, headers=["part", "seconds", "start-up + save", "training", "encode", "fits",
                                    "other cells"], tablefmt="github", disable_numparse=True)
    phases = (f"; the last run finished after {format_seconds(report.runs_done_seconds)}"
              if report.runs_done_seconds is not None else "")
    reused = [o.train_seconds for o in report.outcomes.values() if o.status == "reused" and o.train_seconds]
    earlier = (f" The {len(reused)} reused runs' training loops took {format_seconds(sum(reused))} in all when they "
               "were trained (results.json's train_seconds; their final STS evaluation not included)."
               if reused else "")
    return [f"Wall time {format_seconds(report.wall_seconds)}, {report.jobs} process(es) at a time{phases} "
            f"(a notebook starts once its runs are done). Summed over the processes: runs {format_seconds(runs)}, "
            f"notebooks {format_seconds(notebooks)}; in them {format_seconds(totals['kernel'])} starting kernels, "
            f"saving notebooks and setting runs up, {format_seconds(totals['encode'])} encoding sentences, "
            f"{format_seconds(totals['fit'])} in K-means/UMAP fits. A run's encode seconds (dev evaluation, probes) "
            f"overlap its training seconds.{earlier}", "", table]


def summary(report: StudyReport) -> dict:
    runs = []
    for p in report.plan:
        o = report.outcomes.get(p.spec.label)
        runs.append({"label": p.spec.label, "method": p.spec.method, "seed": p.spec.seed,
                     "run_dir": str(p.spec.run_dir), "same_as": p.same_as, "notes": p.notes,
                     "status": o.status if o else "interrupted" if report.interrupted else "not run", "seconds": o.seconds if o else None,
                     "best_stsb_dev": o.best_stsb_dev if o else None, "select_by": p.spec.config.select_by,
                     "error": o.error if o else None,
                     "train_seconds": o.train_seconds if o else None, "note": o.note if o else None,
                     "time_split": o.split.to_dict() if o and o.split else None})
    notebooks = [{"name": nb.spec.name, "notebook": str(nb.spec.path), "runs": nb.spec.runs, "status": nb.status,
                  "output": str(nb.output) if nb.output else None, "seconds": nb.seconds, "note": nb.note,
                  "time_split": nb.split.to_dict() if nb.split else None}
                 for nb in report.notebooks]
    return {"study": report.study.name, "profile": report.study.profile, "ok": report.ok and not report.in_progress,
            "in_progress": report.in_progress,
            "launcher": report.launcher, "jobs": report.jobs, "threads_per_run": report.threads,
            "interrupted": report.interrupted, "unrecorded": report.unrecorded, "wall_seconds": report.wall_seconds,
            "runs_done_seconds": report.runs_done_seconds, "data_dir": report.data_dir,
            "runs": runs,
            "notebooks": notebooks}


def write_report(report: StudyReport) -> Path:
    """Write ``index.md`` and ``study.json`` (each atomically); returns the index path."""
    atomic_write_json(report.report_dir / "study.json", summary(report))
    return atomic_write_text(report.report_dir / "index.md", index_markdown(report))
