"""``cselab reproduce``: validate a study, plan its runs against the shared runs root, train what is
missing (a function call per run, in worker processes or submitit jobs), execute the analysis
notebooks, write the index page.

Reuse and resume come from the run directories alone (cselab/workbench/studies/status.py): a finished run
(``results.json``) is reused, a partial one (``config.json`` only) is resumed from its checkpoint,
anything else is trained. So an interrupted study resumes by running the same command again.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from .cost import estimate_run, format_seconds
from ...model.io import check_folder_location, check_not_link, check_writable, first_line
from ...model.rundir import RunDir
from .execute import NotebookFailed, RunOutcome, RunTask, TimeSplit, execute_notebook, remove_partials, signal_kernels
from .launchers import make_launcher, signal_workers
from .schedule import NotebookSchedule
from .report import (NotebookResult, PlannedRun, Progress, StudyReport, format_plan, interrupted_state, run_line,
                     write_report)
from .record import (FIRST_PLAN, RECORD_FILE, RecordError, put_records, read_study_record, record_path, recorded, run_record,
                     variant_of_label)
from .record_extras import compute_extras
from .smoke import SMOKE, build_stand_ins, smoke_data, stand_in_shape
from .spec import Study, StudyError, load_study
from .status import RunStatus, execution_differences, observation_differences, recorded_execution, run_status


def require_notebook_tools() -> None:
    """Studies execute notebooks: papermill, jupytext and ipykernel come with cselab's notebooks extra."""
    missing = []
    for module in ("papermill", "jupytext", "ipykernel"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise ImportError(f"cselab reproduce needs {', '.join(missing)}: pip install 'cselab[notebooks]'")


def threads_per_run(jobs: int, launcher: str) -> int:
    """Intra-op threads each run gets: this machine's (torch's default here, what ``cselab train``
    would use: the physical cores, or OMP_NUM_THREADS) divided by ``jobs``, at least 1; 0 on SLURM,
    where each job's allocation decides (the run records what it got)."""
    if launcher == "slurm":
        return 0
    import torch

    return max(1, torch.get_num_threads() // jobs)


def expected_execution(cfg, threads: int, launcher: str) -> dict:
    """The execution settings a run trained by this study gets (cselab/model/train/execution.py): on SLURM
    only the process count is known here."""
    if launcher == "slurm":
        return {"world_size": 1}
    from ...model.utils import precision_name, resolve_device, resolve_precision

    device = resolve_device(cfg.device)
    return {"device": device.type, "threads": threads, "world_size": 1,
            "precision": precision_name(resolve_precision(cfg.precision, device)),
            "eval_precision": precision_name(resolve_precision(cfg.eval_precision, device, evaluation=True))}


def make_plan(study: Study, data_dir: str | None = None, threads: int | None = None,
              launcher: str = "local", record: dict | None = None) -> list[PlannedRun]:
    """Each run's status and cost; labels whose config another label already has share its run. With
    ``threads`` (per run), a run that exists already and was trained under other execution settings
    than this study's gets a note saying so. A run with no folder here whose label and config hash the
    study's ``record`` holds is ``recorded``: it was trained before (perhaps elsewhere) and is not trained again."""
    plan, first = [], {}
    record = record or {}
    for spec in study.runs:
        status = run_status(spec.run_dir)
        kept = record.get(spec.label)
        if status.kind == "new" and kept and kept.get("config_hash") == spec.config.config_hash():
            status = RunStatus("recorded", int(spec.config.max_steps or 0), (kept.get("best") or {}).get("stsb_dev"),
                               kept.get("train_seconds"))
        shape = stand_in_shape(spec.stand_in_for) if spec.stand_in_for else None   # built only when the study runs
        estimate = estimate_run(spec.config, study.profile, status.steps_done, status.kind == "finished", data_dir,
                                shape)
        notes = observation_differences(spec.run_dir, spec.config) if status.kind != "new" else []
        changed = RunDir(spec.run_dir).version_differences() if status.kind != "new" else []
        if changed and first.get(spec.run_dir) is None:
            notes.append(f"trained under other package versions ({', '.join(changed)}): the same config, but not "
                         "byte-identical numbers")
        if status.kind != "new" and threads is not None and first.get(spec.run_dir) is None:
            own = resume_threads(spec.run_dir, threads) if status.kind == "partial" else threads
            if own != threads:
                notes.append(f"resumes with threads={own}, as its checkpoint was written (this study gives a run "
                             f"threads={threads})")
            notes += execution_differences(spec.run_dir, expected_execution(spec.config, own, launcher))
        plan.append(PlannedRun(spec, status, estimate, first.get(spec.run_dir), notes))
        first.setdefault(spec.run_dir, spec.label)
    return plan


def unpaired_lines(planned: Study, chosen, records: dict, threads: int, launcher: str) -> list[str]:
    """One line per chosen run that would buy no pair (:func:`.pairable.unpaired_runs`): its partners'
    computations, this machine's, and the seeds of its variant that would pair instead."""
    from .pairable import describe, pairable_seeds, this_computation, unpaired_runs

    if launcher != "local" or not planned.claims.claims:   # on SLURM the machine that trains is not this one
        return []
    claims = planned.claims.claims
    space = planned.claims.rule.seed_space if planned.claims.rule is not None else 40
    labels = [r.label for r in chosen]
    lines = []
    for run in chosen:
        here = this_computation(run.config, expected_execution(run.config, threads, launcher))
        why = unpaired_runs([run.label], claims, records, here, training=labels).get(run.label)
        if why:
            variant = variant_of_label(run.label)[0]
            seeds = pairable_seeds(variant, claims, records, here, range(1, space + 1))
            lines.append(f"{run.label}: {why}, this machine {describe(here)}; seeds of {variant} that would pair: "
                         f"{', '.join(map(str, seeds)) or 'none up to ' + str(space)}")
    return lines


def recorded_replans(study: Study, records, runs_root) -> list:
    """The runs a re-plan asked for that the record holds beyond the study's plan (its seeds past the
    first plan's: :func:`.record.planned_config`), so that a study continued without ``--replan``
    still lists them — ``recorded``, never trained again — and its notebooks see them."""
    from .record import planned_config
    from .run_grid import RunSpec

    have = {r.label for r in study.runs}
    extra = []
    for record in records:
        config = planned_config(study, record) if record["label"] not in have else None
        if config is not None:
            group = next(r.group for r in study.runs if variant_of_label(r.label)[0] == record["variant"])
            extra.append(RunSpec(record["label"], group, config, Path(runs_root) / config.default_run_name()))
    return sorted(extra, key=lambda r: (r.group, r.seed))


def resume_threads(run_dir: Path, threads: int) -> int:
    """A partial run resumes with the thread count its checkpoint was written with (the trainer
    refuses any other on a CPU: the resumed run stays one numeric history)."""
    recorded = recorded_execution(run_dir)
    if recorded and recorded.get("device") == "cpu" and isinstance(recorded.get("threads"), int):
        return recorded["threads"]
    return threads


def run_tasks(study: Study, plan: list[PlannedRun], report_dir: Path, data_dir: str | None, jobs: int,
              launcher: str, threads: int | None = None) -> list[RunTask]:
    """A task for every distinct run that is not finished."""
    from ...model.rundir import RunDir

    threads = threads_per_run(jobs, launcher) if threads is None else threads
    cwd = os.getcwd()
    # seeds first (every variant's first seed, then every variant's second, ...): a study stopped
    # mid-way has every variant at its first seeds rather than some variants at all of theirs
    order = {id(p): (p.spec.seed if p.spec.seed is not None else 0, i) for i, p in enumerate(plan)}
    plan = sorted(plan, key=lambda p: order[id(p)])
    return [RunTask(label=p.spec.label, run_dir=str(p.spec.run_dir), config=p.spec.config.to_dict(),
                    resume=p.status.kind == "partial", log=str(report_dir / "runs" / f"{p.spec.label}.log"),
                    data_dir=data_dir, cwd=cwd,
                    threads=resume_threads(Path(cwd, p.spec.run_dir), threads) if p.status.kind == "partial"
                    else threads, estimate_seconds=p.estimate.seconds,
                    lock_file=str(RunDir(p.spec.run_dir).lock_file))
            for p in plan if p.same_as is None and p.status.kind not in ("finished", "recorded")]


def format_power_plan(study: Study) -> str:
    """The study's power plan in words and a table (what the dry run prints and the docs quote)."""
    plan, rule = study.claims.plan(), study.claims.rule
    if plan is None:
        return ""
    from tabulate import tabulate

    from ..claims import format_plan as claims_plan

    table = claims_plan(plan)
    # a scale of 0 is a dropped one: "the paper's effect × 0 if larger" would read as a rule in force
    target = (f"target {rule.target:g} STS points, no paper effect scaled" if not rule.scale else
              f"target {rule.target:g} STS points or the paper's effect × {rule.scale:g} if larger")
    return "\n".join([
        "", f"power plan ({len(plan)} claims; cselab/claims.py): each claim's MDE at its Holm level α/k, power "
        f"{rule.power:g}; {target} "
        f"({rule.scale_rule}); {rule.min_seeds}-{rule.max_seeds} seeds a paper claim, {rule.check_seeds} a check; "
        f"spread without a pilot: {rule.prior_sd:g} ({rule.prior_rule})",
        tabulate(table, headers="keys", tablefmt="github"),
        "seeds per run group: " + ", ".join(f"{k} {v}" for k, v in study.claims.planned_seeds().items())])


def other_profiles(study: Study, runs_dir, data_dir: str | None) -> list[str]:
    """One line for each of the study's other (non-smoke) profiles: its runs and their estimated cost,
    so that a dry run of ``cpu`` also says what ``gpu`` costs, and the other way round."""
    lines = []
    for name in study.profiles:
        if name == study.profile or study.smoke:
            continue
        other = load_study(study.path, name, runs_dir, notebooks=False)
        seconds = sum(estimate_run(r.config, name, 0, False, data_dir).seconds or 0
                      for r in {r.run_dir: r for r in other.runs}.values())
        distinct = len({r.run_dir for r in other.runs})
        lines.append(f"profile {name} (not run now): {len(other.runs)} runs ({distinct} distinct configs), "
                     f"estimated {format_seconds(seconds)} from scratch: cselab reproduce {study.name} --profile {name}")
    return lines


def check_output_folders(study: Study, folders: dict[str, Path], figures_root: Path) -> None:
    """Before anything runs (``--dry-run`` too): the roots are folders (or can become ones), and no
    notebook's figures folder — which the engine empties before the notebook runs — is a link or a
    file (the engine never deletes through a link)."""
    for option, folder in folders.items():
        check_folder_location(folder, option)
    if study.notebooks and figures_root.is_symlink():   # the notebooks' folders would be emptied through it
        raise StudyError(f"{figures_root}: the figures folder of study {study.name!r} is a symbolic link (to "
                         f"{os.readlink(figures_root)}); the study empties the folders inside it before its notebooks "
                         "run and does not delete through links: remove the link or choose another --figures-dir")
    for nb in study.notebooks:
        figures = figures_root / nb.name
        if figures.is_symlink():
            raise StudyError(f"{figures}: the figures folder of notebook {nb.name!r} is a symbolic link (to "
                             f"{os.readlink(figures)}); the study empties this folder before the notebook runs and "
                             "does not delete through links: remove the link or choose another --figures-dir")
        if figures.exists() and not figures.is_dir():
            raise StudyError(f"{figures}: the figures folder of notebook {nb.name!r} is a file; remove it or choose "
                             "another --figures-dir")


def notebook_parameters(study: Study, nb, report: StudyReport, data_dir: str | None) -> dict:
    """The engine's parameters the notebook declares, then the study's parameters for it."""
    engine = {"runs": {label: str(study.run(label).run_dir) for label in nb.runs
                       if Path(study.run(label).run_dir).is_dir()},   # a recorded run without its folder: not here
              "figures_dir": str(report.figures_dir / nb.name), "tables_dir": str(report.report_dir / "tables"),
              "data_dir": data_dir, "profile": SMOKE if study.smoke else study.profile,
              "record": str(report.figures_dir / RECORD_FILE)}
    return {**{k: v for k, v in engine.items() if k in nb.declared}, **nb.parameters}


class Interrupts:
    """What :func:`interrupt_on_signals` hands the study: how many times Ctrl-C or SIGTERM came, and
    :meth:`deferred`, a block where the first one raises nothing (a launcher that stops when asked
    then collects its running runs' outcomes and says which runs never started); ``on_first``: called
    at the first one (from the signal handler: they must take no lock)."""

    def __init__(self):
        self.presses = 0
        self.deferring = False
        self.on_first: list = []

    @contextlib.contextmanager
    def deferred(self, when: bool = True):
        self.deferring = when
        try:
            yield
        finally:
            self.deferring = False


@contextlib.contextmanager
def interrupt_on_signals():
    """Ctrl-C or SIGTERM: stop the run workers (no run starts after it; the running ones stop at their
    last checkpoint) and interrupt the notebook kernels (their workers and kernels run in sessions of
    their own and would not see it; a second signal kills them), then raise KeyboardInterrupt here,
    unless the study is inside :meth:`Interrupts.deferred`. Runs resume next time. Only the main
    thread can install handlers."""
    interrupts = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield interrupts
        return

    def handler(signum, frame):
        interrupts.presses += 1
        first = interrupts.presses == 1
        signum = signal.SIGINT if first else signal.SIGKILL
        signal_workers(signum)
        signal_kernels(signum)
        if first:
            for stop in interrupts.on_first:
                stop()
            if interrupts.deferring:
                return
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield interrupts
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def notebook_executor(study: Study, report: StudyReport, data_dir: str | None, threads: int):
    """The function that executes one of the study's notebooks into ``reports/<study>/`` (after
    emptying its figures folder) and returns its result; ``threads``: each kernel's CPU threads
    (0: the libraries' defaults)."""
    def execute(nb) -> NotebookResult:
        clear_figures(report.figures_dir / nb.name)   # its own output folder: no stale figures listed
        output = report.report_dir / f"{nb.name}.ipynb"
        started = time.perf_counter()
        split = TimeSplit(0.0)
        try:
            execute_notebook(nb.path, output, notebook_parameters(study, nb, report, data_dir), os.getcwd(), split,
                             threads=threads)
            return NotebookResult(nb, "ok", output, time.perf_counter() - started, split=split)
        except NotebookFailed as e:
            return NotebookResult(nb, "failed", output, time.perf_counter() - started, note=str(e), split=split)

    return execute


# what workbench.show writes: the figure (cselab.workbench.plots.core.FORMATS) and the checker's record of its
# problems (cselab.workbench.plots.core.PROBLEMS_SUFFIX)
FIGURE_SUFFIXES = (".png", ".pdf", ".problems.json")


def clear_figures(folder: Path) -> None:
    """Remove the figures an earlier execution of a notebook left in its folder: the PNG and PDF
    files at its top and the checker's records, then the folder when nothing else is in it. A user's other files and
    subfolders stay (cselab never wrote them), and a link is never followed."""
    if folder.is_symlink() or not folder.is_dir():
        return
    for entry in folder.iterdir():
        if entry.name.lower().endswith(FIGURE_SUFFIXES) and entry.is_file() and not entry.is_symlink():
            entry.unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()   # only when empty


def notebook_line(result: NotebookResult) -> str:
    return (f"notebook {result.spec.name}: {result.status}  {result.seconds:.1f} s  {result.output or ''}"
            + (f"\n    {result.note}" if result.note else ""))


@contextlib.contextmanager
def notebooks_lock(report_dir: Path):
    """One study's runs and notebooks run in one process at a time (its notebooks start while its last
    runs train): a second ``cselab reproduce`` of the same study waits here instead of emptying
    figures folders the first one's notebooks are writing."""
    from filelock import FileLock

    report_dir.mkdir(parents=True, exist_ok=True)
    check_not_link(report_dir / ".notebooks.lock", "the study's lock")
    with FileLock(report_dir / ".notebooks.lock", timeout=-1):
        yield


def reproduce(study: str | os.PathLike, profile: str = "cpu", jobs: int = 1, dry_run: bool = False,
              launcher: str = "local", runs_dir: str | os.PathLike = "runs", data_dir: str | None = None,
              reports_dir: str | os.PathLike = "reports", figures_dir: str | os.PathLike = "figures",
              slurm: dict | None = None, stream=None, progress: str = "auto", notebooks: bool = True,
              replan: bool = False, only: Sequence[str] = (), allow_unpaired: bool = False) -> int:
    """Run a study; returns the exit status: 0 when every run and notebook succeeded, 1 when something
    failed (the rest still ran), 130 when interrupted. Invalid studies raise StudyError first. Every
    run that finishes or is reused is added to the study's record (:mod:`.record`) at once;
    ``notebooks=False`` trains and records the runs and executes no notebook; ``replan=True``
    re-estimates the power plan from the spreads the study's record shows (more seeds where the
    pilot's spread was too small, up to the rule's cap; never fewer than the first plan); each line
    it records then says so (``plan``). ``only``: label patterns (fnmatch, e.g. ``simcse-s1?``) — the
    runs to train now, in the study's order (a continuation spent where a seed buys most); it needs
    ``notebooks=False``, since a notebook reads every run of its study. With ``replan``, ``only`` may
    name any seed up to the power rule's seed space (twice its cap) of a group the plan sizes (a seed of another computation
    counts in the plan but pairs with nothing new). A run ``only`` names whose every claim partner at its
    seed the record holds from another computation is refused before anything trains (it would buy no
    pair: :mod:`.pairable`), unless ``allow_unpaired``; a dry run lists such runs."""
    out = stream or sys.stdout
    if notebooks:   # --runs-only trains and records without them (a lent GPU machine may lack them)
        require_notebook_tools()
    for option, folder in (("--runs-dir", runs_dir), ("--reports-dir", reports_dir), ("--figures-dir", figures_dir)):
        check_folder_location(folder, option)
    spec = load_study(study, profile, runs_dir, notebooks=notebooks)
    if replan:
        from .record import records_frame

        kept = recorded(record_path(figures_dir, spec.name))
        # --only chooses among each sized group's seeds up to the seed space: the re-plan counts seeds, a pair
        # needs both sides on one computation, so a continuation may name seeds past the re-plan's count
        spec = load_study(study, profile, runs_dir, notebooks=notebooks, observed=records_frame(kept.values()),
                          up_to_cap=bool(only))
    planned = spec   # the whole plan: a line is stale against it, not against --only's part (a copy is narrowed)
    if only:
        if notebooks:
            raise ValueError("--only trains part of a study: add --runs-only (a notebook reads every run)")
        chosen = [r for r in spec.runs if any(fnmatch.fnmatchcase(r.label, pattern) for pattern in only)]
        if not chosen:
            raise ValueError(f"--only {' '.join(only)}: no run of study {spec.name} (profile {profile}) has such "
                             f"a label (e.g. {', '.join(r.label for r in spec.runs[:3])})")
        spec = dataclasses.replace(spec, runs=chosen)
    plan_tag = {"name": "re-plan", "made": datetime.now(timezone.utc).date().isoformat()} if replan else FIRST_PLAN
    if not notebooks:
        spec = dataclasses.replace(spec, notebooks=[])
    if jobs < 1:
        raise ValueError(f"--jobs: expected at least 1, got {jobs}")
    report_dir = Path(reports_dir) / spec.name
    check_output_folders(spec, {"--reports-dir": report_dir, "--figures-dir": Path(figures_dir) / spec.name},
                         Path(figures_dir) / spec.name)
    run_launcher = make_launcher(launcher, jobs, report_dir / "submitit", {**spec.slurm, **(slurm or {})},
                                 f"{spec.path}: slurm")
    threads = threads_per_run(jobs, launcher)
    record_file = record_path(figures_dir, spec.name)
    if not spec.smoke:   # the record is never read or written through a link (another file would take its lines)
        check_not_link(record_file, "the study's record")
    already = recorded(record_file)
    if not spec.smoke and not only:
        spec = dataclasses.replace(spec, runs=[*spec.runs, *recorded_replans(spec, already.values(), runs_dir)])
    plan = make_plan(spec, data_dir, threads, launcher, already)
    unpaired = unpaired_lines(planned, spec.runs, already, threads, launcher) if only and not spec.smoke else []
    if unpaired and not dry_run and not allow_unpaired:
        raise ValueError(f"--only: {len(unpaired)} run(s) would pair with nothing: {' | '.join(unpaired)}; "
                         "pass --allow-unpaired to train them anyway")
    if dry_run:
        print(format_plan(spec, plan), file=out)
        for line in unpaired:
            print(f"pairs with nothing: {line}", file=out)
        power = format_power_plan(spec)
        if power:
            print(power, file=out)
        for line in other_profiles(spec, runs_dir, data_dir):
            print(line, file=out)
        if record_file.is_file():   # lines the plan no longer has: trained again, and no verdict rests on them
            try:
                for line in read_study_record(record_file, planned).stale:
                    print(line, file=out)
            except RecordError as e:   # e.g. another profile's lines: what --from-record would refuse, said here
                print(f"record: {e}", file=out)
        return 0
    run_launcher.check_available()   # e.g. no SLURM here: one line, before any report is written
    # before anything runs: a read-only place fails here in one line naming the option, not in a run's
    # lock or in a notebook's cell (after the earlier executed notebook was replaced by the failed one)
    # (the record too: a study that trained every run and could not record one is not a success)
    for option, folder in (("--runs-dir", runs_dir), ("--reports-dir", report_dir),
                           *(("--figures-dir", Path(figures_dir) / spec.name / nb.name) for nb in spec.notebooks),
                           *((("--figures-dir", record_file.parent),) if not spec.smoke else ())):
        check_writable(folder, option)
    if spec.smoke:
        build_stand_ins(spec.runs)   # not before: a dry run writes nothing
        data_dir = str(smoke_data(data_dir))

    report = StudyReport(spec, launcher, jobs, plan, report_dir, Path(figures_dir) / spec.name, threads=threads,
                         data_dir=data_dir)
    tasks = run_tasks(spec, plan, report_dir, data_dir, jobs, launcher, threads)
    estimate = sum(t.estimate_seconds or 0 for t in tasks)
    per_run = f", {threads} thread(s) each" if threads else ""
    print(f"study {spec.name} (profile {profile}): {len(plan)} runs, {len(tasks)} to train or resume "
          f"(estimated {format_seconds(estimate)}; {jobs} at a time{per_run}), {len(spec.notebooks)} notebooks",
          file=out, flush=True)
    notes = {p.spec.label: p.notes for p in plan}
    aliases: dict[str, list[str]] = {}
    for p in plan:
        if p.same_as:
            aliases.setdefault(p.same_as, []).append(p.spec.label)
    bar = Progress(len(plan), out, progress)
    started = time.perf_counter()
    finished_notebooks: dict[int, NotebookResult] = {}

    def notebook_done(i: int, result: NotebookResult) -> None:
        finished_notebooks[i] = result
        bar.line(notebook_line(result))

    # notebooks start as their runs finish, sharing the jobs places with the runs that train here;
    # with several at once each kernel gets cores / jobs threads, as the runs do
    schedule = NotebookSchedule(spec.notebooks, [p.spec.label for p in plan], jobs,
                                [t.label for t in tasks] if launcher != "slurm" else [],
                                notebook_executor(spec, report, data_dir, threads_per_run(jobs, "local") if jobs > 1
                                                  else 0), notebook_done)

    def keep(outcome: RunOutcome, labels: list[str]) -> None:
        """The study's record gets the run's line (under each label it has here) as soon as it is done."""
        if outcome.status not in ("trained", "resumed", "reused") or spec.smoke:
            return
        # a line the record holds for this config is the evidence its pairs rest on: a folder of the same
        # config here (trained for another study, or by other code) never replaces it
        labels = [label for label in labels
                  if (already.get(label) or {}).get("config_hash") != spec.run(label).config.config_hash()]
        if not labels:
            return
        try:
            extras = compute_extras(spec.claims.extras, variant_of_label(outcome.label)[0], Path(outcome.run_dir),
                                    data_dir)
            put_records(record_file, [run_record(outcome.run_dir, label, spec.name, spec.profile, extras, plan_tag)
                                      for label in labels])
        except Exception as e:   # the run stays; the record says nothing false, the line says why and the
            # study does not end "all succeeded" (exit status 1)
            report.unrecorded[outcome.label] = f"{type(e).__name__}: {first_line(e)}"
            bar.line(f"    record: {outcome.label} not recorded in {record_file}: {report.unrecorded[outcome.label]}")

    def record(outcome: RunOutcome) -> None:
        keep(outcome, [outcome.label, *aliases.get(outcome.label, [])])
        report.outcomes[outcome.label] = outcome
        bar.line(run_line(outcome, notes=notes[outcome.label]), advance=True)
        for label in aliases.get(outcome.label, []):
            report.outcomes[label] = replace(outcome, label=label)
            bar.line(run_line(report.outcomes[label], same_as=outcome.label, notes=notes[label]), advance=True)
        for label in (outcome.label, *aliases.get(outcome.label, [])):
            schedule.run_done(label, outcome.ok)

    try:
        with interrupt_on_signals() as interrupts, notebooks_lock(report_dir):
            interrupts.on_first.append(schedule.halt)   # no notebook starts after a Ctrl-C
            # the previous index would go on saying "ok" while this study empties its figures
            # folders and rewrites its notebooks: until the end, the index says the study is running
            report.in_progress = True
            for folder in (report_dir, report_dir / "runs"):   # what a study killed earlier left there
                remove_partials(folder)
            write_report(report)
            report.in_progress = False
            for p in plan:
                if p.same_as is None and p.status.kind == "recorded":
                    record(RunOutcome(p.spec.label, str(p.spec.run_dir), "recorded", 0.0, p.status.best_stsb_dev,
                                      p.status.steps_done, train_seconds=p.status.train_seconds))
                if p.same_as is None and p.status.kind == "finished":
                    # what its training cost when it was trained: the index then records every run's time
                    record(RunOutcome(p.spec.label, str(p.spec.run_dir), "reused", 0.0, p.status.best_stsb_dev,
                                      p.status.steps_done, train_seconds=p.status.train_seconds))
            try:
                # a launcher that stops when asked is not interrupted mid-loop: after a Ctrl-C it hands
                # back its running runs' outcomes (interrupted at their checkpoint) and the queued ones
                # (not started), which the index then tells apart
                with interrupts.deferred(getattr(run_launcher, "stops_when_asked", False)):
                    for outcome in run_launcher.run(tasks):
                        record(outcome)
                if interrupts.presses:
                    raise KeyboardInterrupt
            except Exception as e:   # the launcher itself broke (submission refused, ...): its runs failed
                for task in tasks:
                    if task.label not in report.outcomes:
                        record(RunOutcome(task.label, task.run_dir, "failed",
                                          error=f"--launcher {launcher}: {type(e).__name__}: {first_line(e)}"))
            report.runs_done_seconds = time.perf_counter() - started
            bar.close()
            schedule.wait()
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        schedule.stop()   # whatever ended the study: no notebook starts after it (a no-op after wait())
        bar.close()
        report.notebooks.extend(finished_notebooks[i] for i in sorted(finished_notebooks))
        report.wall_seconds = time.perf_counter() - started
        index = write_report(report)
    state = (interrupted_state(report) if report.interrupted
             else "all succeeded" if report.ok else f"{report.failures} failed or skipped")
    if report.unrecorded:
        state += (f"; {len(report.unrecorded)} run(s) not recorded in {record_file} "
                  f"({next(iter(report.unrecorded.values()))})")
    print(f"study {spec.name}: {state}; {format_seconds(report.wall_seconds)}; index: {index}", file=out, flush=True)
    return 130 if report.interrupted else 0 if report.ok else 1
