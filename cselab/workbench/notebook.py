"""Helpers every analysis notebook uses: inline figures, saved figures and tables, run parameters,
one-line errors.

cselab draws figures on :class:`matplotlib.figure.Figure` objects without pyplot, so Jupyter shows
them as ``<Figure size 340x260 with 1 Axes>`` unless something renders them. :func:`setup`
registers a PNG formatter for ``Figure`` with IPython, after which a cell ending in ``fig`` and
``display(fig)`` both put an ``image/png`` output in the notebook (and in papermill's executed copy).
It also registers how a pandas DataFrame is shown (:func:`frame_html`): without a row index that is
only the row numbers, and numbers in positional notation, never ``1.2e-07``.

Typical notebook::

    from cselab import workbench
    workbench.setup()
    runs = workbench.load_runs(runs)                      # the study's `runs` parameter
    fig = plot_similarity_dynamics(runs)
    workbench.show(fig, f"{figures_dir}/similarity")      # PNG + PDF, shown inline
    workbench.save_table(frame, "sts", tables_dir)        # sts.md + sts.csv

Relative paths (``runs``, ``figures_dir``, ``tables_dir``, the data root) are taken from the project
root (:func:`cselab.model.project.project_root`), not from the folder JupyterLab starts the kernel in.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence, Union

from matplotlib.figure import Figure

if TYPE_CHECKING:   # annotations only: the notebooks import pandas themselves
    import pandas as pd

from ..model import timing
from ..model.config import DEFAULT_METHOD
from ..model.data.errors import DataError
from ..model.io import atomic_write_text
from ..model.options import shown
from .plots.core import FORMATS, save_figure, style
from ..model.project import project_path, project_root

INLINE_DPI = 100   # inline copies are for reading; the saved PNG/PDF are the figures of record

RunsParameter = Union[Mapping[str, Union[str, os.PathLike]], Iterable[Union[str, os.PathLike]], str, os.PathLike]


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


class NotebookError(Exception):
    """A mistake in a notebook's parameters or a missing prerequisite (no finished runs, an unknown run
    label): after :func:`setup` the notebook shows it as one line, ``Name: what to do``, instead of a
    traceback through cselab. The cell still fails (papermill and ``cselab reproduce`` report it)."""


class RunsNotFound(NotebookError, FileNotFoundError):
    """The ``runs`` parameter names no run that exists (or ``runs = None`` found no finished run)."""


class BadParameter(NotebookError, ValueError):
    """A notebook parameter has a value the notebook cannot use."""


# shown as one line; DataError too, as its message names the file and says how to get it
ONE_LINE_ERRORS = (NotebookError, DataError)


def one_line_errors() -> tuple[type[BaseException], ...]:
    """:data:`ONE_LINE_ERRORS` and cselab's other errors whose message says all (a bad config value
    naming its key, a study file's line, runs that make no paper variant, a run folder that is
    taken or locked, a place that cannot be written, a loss that became non-finite): a notebook shows them as one line, not as a
    traceback into cselab. Imported here, when a kernel sets up, not when this module is."""
    from ..model.config import ConfigError
    from ..model.io import WriteError
    from .paper_tables.variants import VariantError
    from ..model.rundir import RunExistsError, RunLockedError
    from ..model.train.guards import NonFiniteLossError   # says the step, the value and what to change
    from .studies.study_file import StudyError

    return (*ONE_LINE_ERRORS, ConfigError, StudyError, VariantError, RunExistsError, RunLockedError, WriteError,
            NonFiniteLossError)


def _one_line_error(shell, etype, value, tb, tb_offset=None):
    # IPython calls this instead of printing a traceback; _showtraceback publishes it as the cell's
    # error output (ZMQ shell) or prints it (terminal), and run_cell still records the error, so the
    # execute reply says "error" and papermill stops there as for any exception.
    shell._showtraceback(etype, value, [f"{etype.__name__}: {value}"])


def figure_png(fig: Figure, dpi: int = INLINE_DPI) -> bytes:
    """The figure as PNG bytes, drawn with cselab's style."""
    buffer = io.BytesIO()
    with style():
        fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


SIGNIFICANT_DIGITS = 5   # a table's numbers as shown (its saved .md and .csv keep what the notebook rounded to)


def plain_number(value) -> str:
    """A number in positional notation with at most :data:`SIGNIFICANT_DIGITS` significant digits
    and no trailing zeros (``81.39``, ``0.047488``, ``0.000000123``), every digit before the point
    (``1234568``); NaN as an empty cell."""
    import math

    import numpy as np

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    value = float(value)
    if math.isinf(value):
        return str(value)
    whole = len(str(int(abs(value)))) if abs(value) >= 1 else 0   # digits before the point: all of them shown
    if whole:
        return np.format_float_positional(value, precision=max(0, SIGNIFICANT_DIGITS - whole), trim="-")
    return np.format_float_positional(value, precision=SIGNIFICANT_DIGITS, fractional=False, trim="-")


def frame_html(frame: "pd.DataFrame") -> str:
    """A DataFrame as a notebook shows it after :func:`setup`: floats by :func:`plain_number`, and
    without the row index when that is only the row numbers (an unnamed RangeIndex)."""
    import pandas as pd

    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    if isinstance(frame.index, pd.RangeIndex) and frame.index.name is None:
        styled = frame.style.hide(axis="index").format(plain_number, subset=floats)
        return styled.to_html(max_rows=pd.get_option("display.max_rows"))
    return frame.to_html(float_format=plain_number, max_rows=pd.get_option("display.max_rows"))


def setup(dpi: int = INLINE_DPI) -> bool:
    """Show matplotlib Figures inline as PNG in this IPython kernel, DataFrames as :func:`frame_html`
    writes them, and :func:`one_line_errors` as one line. Returns False outside IPython (in a plain
    script nothing needs registering)."""
    import pandas as pd

    shell = _shell()
    if shell is None:
        return False
    shell.display_formatter.formatters["image/png"].for_type(Figure, lambda fig: figure_png(fig, dpi))
    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
    shell.set_custom_exc(one_line_errors(), _one_line_error)
    # a study reads each notebook's encode/fit seconds from the timing file: written after every
    # cell too, because a kernel that is shut down hard or killed never runs its exit handlers
    if _flush_timings not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", _flush_timings)
    return True


def _flush_timings(result=None) -> None:
    timing.flush()


def show(fig: Figure, path: str | os.PathLike, formats: Iterable[str] = FORMATS) -> list[Path]:
    """Save ``fig`` as ``path``.png / .pdf (reproducible bytes, :func:`cselab.workbench.plots.save_figure`) and
    display it inline when running in IPython; returns the files written. The figure checker runs
    on the way: its problems are logged as warnings (shown under the cell) and recorded in
    ``<path>.problems.json``, which the study's index lists beside the figure."""
    written = save_figure(fig, project_path(path), formats)
    shell = _shell()
    if shell is not None:
        from IPython.display import display

        if Figure not in shell.display_formatter.formatters["image/png"].type_printers:
            setup()   # (keeps the dpi of an earlier setup() call)
        display(fig)
    return written


# ------------------------------------------------------------------- tables
def _markdown_rows(markdown: str) -> list[list[str]]:
    """Rows of the first pipe table in ``markdown`` (header first, the ``|---|`` rule dropped)."""
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if rows:
                break   # the table ended
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(set(c) <= set(":- ") and "-" in c for c in cells):
            continue
        rows.append(cells)
    return rows


def save_table(table, name: str, tables_dir: str | os.PathLike, index: bool | None = None) -> tuple[Path, Path]:
    """Write a table as ``<tables_dir>/<name>.md`` and ``.csv`` (each atomically); returns both paths.

    ``table`` is a pandas DataFrame (the index is kept when it is named or not a plain range, unless
    ``index`` says otherwise) or a Markdown pipe table (as :func:`cselab.workbench.tables.to_markdown` and
    ``format_sts_table`` produce); its cells go to the CSV as text."""
    import pandas as pd

    tables_dir = project_path(tables_dir)
    if not name or "/" in name or name.endswith((".md", ".csv")):
        raise ValueError(f"save_table: name {name!r} must be a bare file name without suffix")
    if isinstance(table, pd.DataFrame):
        if index is None:
            index = table.index.name is not None or not isinstance(table.index, pd.RangeIndex)
        markdown = table.to_markdown(index=index)
        if table.attrs.get("note"):   # e.g. the † of checkpoints chosen on STS data (cselab.workbench.tables)
            markdown += f"\n\n{table.attrs['note']}"
        csv_text = table.to_csv(index=index)
    elif isinstance(table, str):
        rows = _markdown_rows(table)
        if not rows:
            raise ValueError(f"save_table({name!r}): the text holds no Markdown pipe table")
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            raise ValueError(f"save_table({name!r}): the Markdown table's rows have {sorted(widths)} cells")
        markdown = table.strip()
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        csv_text = buffer.getvalue()
    else:
        raise TypeError(f"save_table({name!r}): expected a DataFrame or a Markdown table, got {type(table).__name__}")
    md_path = atomic_write_text(tables_dir / f"{name}.md", markdown + "\n")
    csv_path = atomic_write_text(tables_dir / f"{name}.csv", csv_text)
    return md_path, csv_path


# ------------------------------------------------------------------- runs
DEFAULT_STUDY = "cpu-demo"      # what `runs = None` means in an analysis notebook


def study_runs(study: str | os.PathLike = DEFAULT_STUDY, runs_dir: str | os.PathLike = "runs",
               profile: str = "cpu", *, _stacklevel: int = 2) -> dict[str, Path]:
    """The finished runs of a study in a runs root, ``{label: run directory}`` in study order.

    Each label's run directory is computed from the study file as ``cselab reproduce`` computes it
    (:func:`cselab.workbench.studies.spec.load_study`: the config hash names the folder); a relative
    ``runs_dir`` is taken from the project root. Unfinished runs are left out with a warning naming
    them; when none is finished, one line (:class:`RunsNotFound`) says what to run."""
    import warnings

    from .studies.spec import load_study
    from .studies.status import run_status

    runs_dir = project_path(runs_dir)
    spec = load_study(study, profile, runs_dir, notebooks=False)
    status = {run.label: run_status(run.run_dir).kind for run in spec.runs}
    finished = {run.label: run.run_dir for run in spec.runs if status[run.label] == "finished"}
    unfinished = [run for run in spec.runs if status[run.label] != "finished"]
    command = f"cselab reproduce {study} --profile {profile} --runs-dir {runs_dir}"
    if not finished:
        demo = " (`make demo` for this one)" if spec.name == DEFAULT_STUDY and profile == "cpu" else ""
        raise RunsNotFound(
            f"runs = None stands for the finished runs of the study {spec.name!r} (profile {profile}) in "
            f"{runs_dir}/, and none is there (missing: "
            + ", ".join(f"{run.label} ({status[run.label]})" for run in unfinished)
            + f"): run `{command}` first{demo}, or set runs = {{label: run directory}}")
    if unfinished:
        # labels only (the paths made it a screenful in a notebook), attributed to the notebook's line
        warnings.warn(f"study {spec.name!r}: {len(unfinished)} of {len(spec.runs)} runs are not finished and are "
                      "left out (" + ", ".join(f"{run.label} ({status[run.label]})" for run in unfinished)
                      + f"); `{command}` trains them", stacklevel=_stacklevel)
    return finished


def load_runs(runs: RunsParameter | None, study: str | os.PathLike = DEFAULT_STUDY,
              runs_dir: str | os.PathLike = "runs", profile: str = "cpu", need_best: bool = False) -> dict[str, Path]:
    """The ``runs`` parameter of an analysis notebook as ``{label: run directory}``.

    Accepts a mapping ``{label: path}`` (what a study passes), a list of paths (labelled by folder
    name) or one path. Every directory must hold a run (``config.json``); all missing ones are
    named in one error. ``None`` means the finished runs of ``study`` (default: the cpu-demo study,
    ``profile`` cpu) found in ``runs_dir`` (:func:`study_runs`), so that a notebook runs on its
    defaults after ``cselab reproduce cpu-demo``. Relative paths are taken from the project root.
    ``need_best``: every run must have its ``best/`` model (a notebook that reads it), else one
    line says what each such run has instead."""
    if runs is None:
        return study_runs(study, runs_dir, profile, _stacklevel=3)
    if isinstance(runs, (str, os.PathLike)):
        runs = [runs]
    if not isinstance(runs, (Mapping, list, tuple)):
        raise BadParameter(f"runs: expected {{label: run directory}}, a list of run directories or one, got "
                           f"{shown(runs)}")
    paths = runs.values() if isinstance(runs, Mapping) else runs
    bad = [p for p in paths if not isinstance(p, (str, os.PathLike))]
    if bad:
        raise BadParameter(f"runs: a run directory is a path, got {shown(bad[0])} ({type(bad[0]).__name__})")
    if isinstance(runs, Mapping):
        pairs = [(str(label), project_path(path)) for label, path in runs.items()]
    else:
        pairs = [(Path(path).name, project_path(path)) for path in runs]
    if not pairs:
        raise BadParameter("runs: no run directory given (pass {label: run directory})")
    labels = [label for label, _ in pairs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise BadParameter(f"runs: the label(s) {twice} name more than one run; pass a mapping {{label: path}}")
    from ..model.rundir.layout import CONFIG, RunDir

    reasons = {label: RunDir(path).not_a_run() or _config_problem(RunDir(path)) for label, path in pairs}
    missing = [(label, path, reasons[label]) for label, path in pairs if reasons[label] is not None]
    usual = f"no {CONFIG}"   # a wrong path: said once for all of them
    if missing and all(reason == usual for _, _, reason in missing):
        raise RunsNotFound(f"runs: not a run directory ({usual}): "
                           + "; ".join(f"{label}: {path}" for label, path, _ in missing))
    if missing:
        raise RunsNotFound("runs: not a run directory: "
                           + "; ".join(f"{label}: {path} ({reason})" for label, path, reason in missing))
    # every analysis notebook reads the trained model: a run stopped before its first evaluation
    # is said here, with what it has instead, not as a traceback in the cell that loads best/
    no_best = []
    for label, path in (pairs if need_best else []):
        try:
            RunDir(path).best_model()
        except FileNotFoundError as e:
            no_best.append(f"{label}: {e}")
    if no_best:
        raise RunsNotFound("runs: no best/ model: " + "; ".join(no_best))
    return dict(pairs)


def _config_problem(run) -> str | None:
    """Why a run's config.json cannot be read as a run's (None when it can): one line naming it."""
    try:
        run.read_config()
    except (OSError, ValueError) as e:
        return str(e)
    return None


def comparison_groups(runs: Mapping[str, Path], group_by: Sequence[str], names: Mapping[str, str] | None = None,
                      backbone: str | None = None):
    """The runs a paired comparison takes and their groups (:func:`cselab.workbench.comparisons.group_runs`):
    those of one backbone (``backbone``, None: the one most runs start from; a line printed names the
    runs left out), each group with one run per seed. A wrong ``backbone`` or two runs of one group
    with one seed are one line (:class:`BadParameter`) naming the runs and what to set."""
    from .comparisons import group_runs, one_backbone, one_run_per_seed

    try:
        kept, left_out = one_backbone(runs, backbone)
        groups = group_runs(kept, group_by, names)
        one_run_per_seed(groups, kept)
    except ValueError as error:
        raise BadParameter(str(error)) from None
    if left_out:
        print(left_out)
    return kept, groups


def paired_comparison_cell(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                           tables_dir: str | os.PathLike, tasks: Sequence[str] | None = None,
                           data_dir: str | os.PathLike | None = None, name: str = f"sts_vs_{DEFAULT_METHOD}",
                           baseline: str = "SimCSE", bootstrap_resamples: int = 2000) -> pd.DataFrame | None:
    """The paper notebooks' "paired comparison against SimCSE" cell:
    :func:`cselab.workbench.comparisons.paired_comparison` on the STS average (the results layer's paired
    t-test, Holm and MDE, with the test-pair bootstrap for single-seed variants), saved as
    ``<name>`` (.md and .csv) and returned for display; one printed line and None when there are no
    baseline runs."""
    from .comparisons import paired_comparison
    from ..model.evaluate.sts import STS_TASKS

    paired = paired_comparison(results, groups, "avg", baseline, bootstrap_resamples,
                               STS_TASKS if tasks is None else tasks, data_dir)
    if paired is None:
        print(f"no {baseline} runs to compare with")
        return None
    save_table(paired, name, tables_dir)
    return paired


def _display(shown, markdown: bool = False) -> None:
    """``shown`` as a cell output in IPython (a string as Markdown with ``markdown``), else printed."""
    if _shell() is None:
        print(shown)
        return
    from IPython.display import Markdown, display

    display(Markdown(shown) if markdown else shown)


def suite_comparison_cell(results: Mapping[str, dict], groups: pd.DataFrame, suite: str, tasks: Sequence[str],
                          baseline: str | None, tables_dir: str | os.PathLike, average: str = "avg",
                          mean_of_tasks: bool = False) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The compare notebook's cell for a suite scored per task (transfer, clustering): each group's
    mean ± std over its seeds on every task and on ``average`` (``<suite>_methods``) and, with a
    ``baseline`` group, each group against it on ``average``
    (:func:`cselab.workbench.comparisons.baseline_table`, ``<suite>_vs_baseline``), saved (.md and .csv)
    and displayed. ``results``: :func:`cselab.model.evaluate.cache.evaluate_runs` of the suite;
    ``groups``: :func:`comparison_groups`' frame. ``mean_of_tasks``: ``average`` is the mean over
    ``tasks``, added here (the clustering suite's results have no average over the tasks asked for)."""
    from ..model.evaluate.cache import evaluation_frame
    from ..model.evaluate.suites import task_labels
    from .comparisons import baseline_table, grouped_table, with_groups

    frame = with_groups(evaluation_frame(results, config_keys=()), groups)
    if mean_of_tasks:
        frame[average] = frame[list(tasks)].mean(axis=1)
    methods = grouped_table(frame, [*tasks, average], rename={**task_labels(suite), average: "Avg."})
    save_table(methods, f"{suite}_methods", tables_dir)
    _display(methods)
    versus = None
    if baseline is not None:
        versus = baseline_table(frame, average, baseline)
        save_table(versus, f"{suite}_vs_baseline", tables_dir)
        _display(versus)
    return methods, versus


# Where a reader finds the verdicts when the runs at hand test nothing (the cpu-demo's, one seed each).
COMMITTED_VERDICTS = "docs/cpu-papers.md"
# How to read a claims table: said under every one the paper notebooks show (claims_cell), the study
# file's place filled in
CLAIMS_EXPLANATION = (
    "How to read the table: each row is one claim, fixed in the study file before any run ({study_file}, "
    "`claims:`), reduced to a paired difference over training seeds (variant − reference, the seeds both have): "
    "the paper's number, ours with its 95 % t-interval, the paired t-test's p and its Holm adjustment within the "
    "claim's family (the paper's claims; the workbench's own checks apart), the minimum detectable difference "
    "(power 0.8) at the level α/k the claim must clear, whether the paper's effect scaled to this backbone was "
    "detectable, and a verdict: *holds here*, *reversed*, *not detected* or *not testable at this scale*. Inside "
    "its study the numbers are the study's committed record; on other runs (the demo's) they come from the runs "
    "given, and claims whose variants are missing say so. The verdicts are about the scale the runs were made at, "
    "not the paper's.")


def study_file_words(study: str) -> str:
    """Where a study's file is, as a reader finds it: a shipped study's path in the checkout, else ``study``."""
    from .studies.spec import available_studies

    return f"cselab/workbench/studies/{study}.yaml" if study in available_studies() else str(study)


def claims_cell(study: str, profile: str, runs: Mapping | None, record: str | os.PathLike | None,
                tables_dir: str | os.PathLike, name: str = "claims") -> pd.DataFrame | None:
    """The paper notebooks' claims cell: the study file's claims for ``profile``
    (:func:`cselab.workbench.paper_tables.study_claims_table`: over the study's record when the engine passes
    one, else over the runs given), formatted, saved as ``<name>`` (.md and .csv) with the families
    and the source printed under it, then how to read it (:data:`CLAIMS_EXPLANATION`, the one copy the
    four paper notebooks share), and returned for display. When no claim could be tested (runs of
    one seed, as the cpu-demo's) one line says so and where the committed verdicts are, and nothing is
    shown: a table of claims without a number says nothing more."""
    from .paper_tables.claims import NoClaims, format_claims, study_claims_table

    try:
        table = study_claims_table(study, profile, runs, record)
    except NoClaims as e:   # the smoke profile: the code path without the statistics
        import pandas as pd

        print(f"No claims table: {e}")
        return pd.DataFrame()
    shown = format_claims(table)
    save_table(shown, name, tables_dir)
    if table["p"].notna().any():
        families = "; ".join(table.attrs.get("families", {}).values())
        print(f"{families}. Numbers from {table.attrs['source']}; Δ in the paper's direction over the seeds both "
              "have as one computation (CPU kind, precision, code), 95 % t-interval; MDE at the claim's Holm level α/k, power 0.8; at this profile's scale, not the "
              "paper's")
        _display(CLAIMS_EXPLANATION.format(study_file=study_file_words(study)), markdown=True)
        return shown
    from .comparisons import label_group

    stems = [label_group(label) for label in (runs or {})]
    if runs and (record is None or not Path(record).is_file()) and len(stems) == len(set(stems)):
        print(f"No claim can be tested on these runs, one seed per variant: a claim's paired t-test needs two or "
              f"more seeds that its two variants share. The committed verdicts, over the study's seeds, are in "
              f"{COMMITTED_VERDICTS}.")
    else:
        print(f"No claim tested here ({table.attrs['source']}): a paired t-test needs two or more seeds that a "
              f"claim's two variants share; the committed verdicts are in {COMMITTED_VERDICTS}")
    return None


# A cell that will take longer than this says so before it starts: Run All otherwise shows only
# `[*]` on the last cell while a busy cell above scores eight runs for twenty minutes.
SAY_COST_SECONDS = 60
COST_WORDS = {"cpu": "on 2 CPU cores", "cuda": "on one GPU"}


def sts_cost_note(runs: Mapping[str, Path], tasks: Sequence[str] | None, data_dir: str | os.PathLike | None = None,
                  parameter: str = "sts_tasks") -> str | None:
    """One line to print before a cell scores ``runs`` on the STS ``tasks`` (None: the seven), when
    some runs are not scored yet (no final table with those tasks, no cached entry) and the study cost
    model (:func:`cselab.workbench.studies.cost.encode_seconds`: the distinct sentences of the tasks'
    test pairs, each run's backbone) puts it over :data:`SAY_COST_SECONDS`:
    ``8 runs × 7 STS tasks to score: about 11 min on 2 CPU cores (...)``. None otherwise."""
    from .analysis.compare import runs_without_sts
    from .studies.cost import backbone_shape, encode_seconds, format_seconds
    from ..model.data.sts import STS_TASKS, load_sts_task
    from ..model.evaluate.sts import EVAL_SPLIT
    from ..model.rundir import read_config

    to_score = runs_without_sts(runs, tasks, data_dir)
    tasks = list(STS_TASKS if tasks is None else tasks)
    if not to_score:
        return None
    sentences = set()
    for task in tasks:
        splits = load_sts_task(task, data_dir)
        for pairs in ([splits[EVAL_SPLIT[task]]] if task in EVAL_SPLIT else splits.values()):
            sentences.update(pairs.sentences1)
            sentences.update(pairs.sentences2)
    import torch

    kind = "cuda" if torch.cuda.is_available() else "cpu"
    seconds = sum(encode_seconds(len(sentences), backbone_shape(str(read_config(path).get("model")))[0], kind)
                  for path in to_score)
    if seconds < SAY_COST_SECONDS:
        return None
    return (f"{len(to_score)} run{'s' if len(to_score) > 1 else ''} × {len(tasks)} STS task"
            f"{'s' if len(tasks) > 1 else ''} to score: about {format_seconds(seconds)} {COST_WORDS[kind]} (the study "
            f"cost model; cached in each run directory, so once)"
            + (f"; {parameter} = ['STSBenchmark'] is the demo's smaller set" if tasks != ["STSBenchmark"] else ""))
