"""Figure creation and byte-for-byte reproducible saving.

Figures are plain :class:`matplotlib.figure.Figure` objects (no pyplot state, so a notebook that
draws hundreds of them leaks nothing and a script needs no display). :func:`save_figure` writes PNG
and PDF without the metadata that changes from run to run or machine to machine (creation date,
producer/software version), so re-drawing a figure from the same data gives identical files.
"""
from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Iterable, Sequence

import matplotlib
from matplotlib.figure import Figure

from .palettes import OTHER_COLORS, categorical_colours
from .rc import PAGE_WIDTH, STYLE, style   # the rc settings (also what the checker draws with)

FORMATS = ("png", "pdf")


class TooFewPoints(ValueError):
    """A sweep, trend or curve over training asked for with fewer than 2 x values: one point is
    not a figure. Notebooks catch it and print its one line instead of drawing."""

# One column of a two-column paper is ~3.3 in wide: a single-panel figure is drawn at that width,
# so it is printed at 100 % and its 8–9 pt text stays 8–9 pt.
COLUMN_WIDTH = 3.3
# Series that are neither methods nor statistics nor steps (ω, loss parts, a sweep's one series):
# Tol's muted colours that no method slot uses, in order (a method that declares no slot gets one of
# them by hash: cselab.workbench.plots.style.method_color). Methods with a slot take theirs from
# cselab.workbench.plots.style.method_color, statistics from cselab.workbench.plots.palettes.statistic_colour, steps
# from step_colours, so that a colour means one thing in every figure.
PALETTE = OTHER_COLORS
NOTE_FONTSIZE = 7   # a figure's note (what a value is, over what n), under its panels
LEGEND_CHAR_WIDTH = 0.065   # inches per character of an 8-pt legend label
# Keys matplotlib would fill with a version or a timestamp.
PNG_METADATA = {"Software": None}
PDF_METADATA = {"Creator": None, "Producer": None, "CreationDate": None}


def styled(function):
    """Run a plotting function inside :func:`style`: titles, labels and legends take their sizes
    from the rc settings when they are created, so a legend made outside it would be 10 pt and a
    title 12 pt, whatever STYLE says."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with style():
            result = function(*args, **kwargs)
            if isinstance(result, Figure):
                ticks_on_logged_steps(result)
                fit_tick_labels(result)
            return result
    return wrapper


MIN_TICKS = 2
MAX_GRID_TICKS = 6   # ticks put on a grid of measured steps: every k-th step, at most this many


def ticks_on_logged_steps(fig: Figure) -> None:
    """Put the x ticks of every panel whose automatic ticks fall between its measurements (data on a
    sparse regular grid of steps, e.g. every 4 from 0 to 16, ticked at 2.5, 5, 7.5, ...: the checker's
    ``ticks_off_grid``) on every k-th measured step, k the smallest of 1, 2, 5, 10, ... steps that
    keeps at most :data:`MAX_GRID_TICKS`; lines with markers too (the checker accepts any ticks there,
    but 2.5, 7.5 over probes every 4 steps is not what a paper prints). Axes with fixed ticks are left
    as they are."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    from .check import ticks_off_grid_of

    for ax in fig.axes:
        if not ax.get_visible() or not isinstance(ax.xaxis.get_major_locator(), MaxNLocator):
            continue
        found = ticks_off_grid_of(ax, marked=True)
        if found is None:
            continue
        grid = found[1]
        k = next(k for k in (1, 2, 5, 10, 20, 50, 100) if -(-len(grid) // k) <= MAX_GRID_TICKS or k == 100)
        ax.xaxis.set_major_locator(FixedLocator(grid[::k]))


def fit_tick_labels(fig: Figure) -> None:
    """Fewer ticks on any x axis whose tick labels collide as drawn (long numbers such as −0.00011
    in a narrow panel): where the ticks fall depends on the numbers, so a figure whose values move
    in the third decimal (bf16 against fp32, another machine) must not break on it. Axes with
    fixed ticks (categories, log₂ batch sizes) are left as they are."""
    from matplotlib.ticker import MaxNLocator

    from .check import boxes_overlap, draw, drawn_ticks, text_box

    renderer = None
    for ax in fig.axes:
        axis = ax.xaxis
        locator = axis.get_major_locator()
        if not ax.get_visible() or not isinstance(locator, MaxNLocator):
            continue
        renderer = renderer or draw(fig)   # one draw for every axis; again only after thinning one
        nbins = len(drawn_ticks(axis))
        while nbins > MIN_TICKS:
            boxes = [b for tick in drawn_ticks(axis) if (b := text_box(tick.label1, renderer)) is not None]
            if not any(boxes_overlap(a, b, 0.5) for a, b in zip(boxes, boxes[1:])):
                break
            nbins -= 1
            locator.set_params(nbins=nbins)
            renderer = draw(fig)


def new_figure(n_panels: int = 1, panel_size: tuple[float, float] = (COLUMN_WIDTH, 2.5), ncols: int | None = None,
               sharey: bool = False):
    """A Figure with ``n_panels`` axes in a row (or ``ncols`` columns; ``ncols=1`` stacks them for a
    single column); returns (fig, list of axes). No row is wider than a printed page
    (:data:`cselab.workbench.plots.rc.PAGE_WIDTH`): panels that would not fit wrap into rows of about equal
    length, and a single panel wider than the page is narrowed to it."""
    if n_panels < 1:
        raise ValueError(f"n_panels must be >= 1, got {n_panels}")
    panel_size = (min(panel_size[0], PAGE_WIDTH), panel_size[1])
    ncols = fitting_columns(n_panels, panel_size[0], ncols)
    nrows = -(-n_panels // ncols)
    if panel_size[0] * ncols > PAGE_WIDTH:   # a row of panels never wider than a page: narrower panels
        panel_size = (PAGE_WIDTH / ncols, panel_size[1])
    with style():
        fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows), layout="constrained")
        axes = fig.subplots(nrows, ncols, sharey=sharey, squeeze=False).ravel().tolist()
    for ax in axes[n_panels:]:
        ax.set_visible(False)
    return fig, axes[:n_panels]


def fitting_columns(n_panels: int, panel_width: float, ncols: int | None = None) -> int:
    """Columns for ``n_panels`` panels of ``panel_width`` inches: ``ncols`` (all in a row when
    ``None``), at most as many as a printed page holds, the rows balanced (5 panels that fit 2 a row:
    2 + 2 + 1; 4 that fit 3 a row: 2 + 2, not 3 + 1)."""
    wanted = min(n_panels, ncols or n_panels)
    most = max(1, int((PAGE_WIDTH + 1e-9) // panel_width))
    if wanted <= most:
        return wanted
    rows = -(-n_panels // most)
    return -(-n_panels // rows)
def add_note(fig: Figure, text: str) -> None:
    """A note under everything else in the figure (panels, legends under them) in 7-pt text,
    wrapped to the figure's width: what a value is and over how many measurements (a saved PNG
    stands alone, without the notebook's text around it). The figure grows by the note's height
    and constrained layout keeps that strip free (and a legend under the panels above it), so that
    the panels keep their size and nothing overlaps the note. A second note is added under the
    first. Call it last (after any legend that widens the figure)."""
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    wrapped = "\n".join(textwrap.fill(part, max(20, int(fig.get_figwidth() * 16.5)))   # ~16 characters an inch
                         for part in str(text).split("\n"))
    earlier = getattr(fig, "_cselab_note", None)
    if earlier is not None:
        wrapped = f"{earlier.get_text()}\n{wrapped}"
        earlier.remove()
    strip = 0.08 + 0.135 * (wrapped.count("\n") + 1)   # inches: the lines and a margin
    height = fig.get_figheight() - getattr(fig, "_cselab_note_strip", 0.0) + strip
    fig.set_figheight(height)
    # A legend placed "outside lower" is put at the figure's bottom edge by constrained layout,
    # whatever its rect: it is anchored above the note instead, and the rect starts above it.
    lower = [leg for leg in fig.legends if getattr(leg, "_outside_loc", None) == "lower"]
    legend_height = 0.0
    if lower:
        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        with style():
            legend_height = max(leg.get_window_extent(canvas.get_renderer()).height for leg in lower) / fig.dpi + 0.06
        for leg in lower:
            leg.set_bbox_to_anchor((0, strip / height, 1, legend_height / height), transform=fig.transFigure)
    engine = fig.get_layout_engine()
    if engine is not None and hasattr(engine, "set"):
        bottom = (strip + legend_height) / height
        engine.set(rect=(0, bottom, 1, 1 - bottom))
    with style():
        fig._cselab_note = fig.text(0.5, 0.03 / height, wrapped, ha="center", va="bottom", fontsize=NOTE_FONTSIZE,
                                    linespacing=1.25, color="0.25")
    fig._cselab_note_strip = strip


WARNING_WIDTH = 14.5   # characters an inch of a figure's warning (8 pt, bold)


def add_warning(fig: Figure, text: str) -> None:
    """A warning on the figure's face, above its panels in bold (not in the note under them, which a
    reader may skip): e.g. that every line is one seed's run while the record over seeds reads
    otherwise. :func:`figure_warning` reads it back."""
    import textwrap

    wrapped = textwrap.fill(str(text), max(20, int(fig.get_figwidth() * WARNING_WIDTH)))
    with style():
        fig.suptitle(wrapped, fontsize=8, fontweight="bold", color="0.1")
    fig._cselab_warning = str(text)


def figure_warning(fig: Figure) -> str:
    """The text of the warning :func:`add_warning` put over ``fig`` ("" without one)."""
    return getattr(fig, "_cselab_warning", "")


def figure_note(fig: Figure) -> str:
    """The text of the note :func:`add_note` put under ``fig`` ("" without one)."""
    note = getattr(fig, "_cselab_note", None)
    return note.get_text() if note is not None else ""


def require_columns(frame, columns: Sequence[str], what: str) -> None:
    """Refuse a frame that has no value for one of ``columns``, naming ``what`` drew it and the
    columns it has (a figure of a run that logged other keys)."""
    missing = [c for c in columns if c not in frame or frame[c].isna().all()]
    if missing:
        available = sorted(c for c in frame.columns if c not in ("run", "kind", "step"))
        raise ValueError(f"{what}: no values for {missing}; available: {available}")


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def legend_if_several(ax, **kwargs) -> None:
    """A legend only when the axes has more than one labelled series (one series needs none: the
    axis labels or the title name it)."""
    handles, labels = ax.get_legend_handles_labels()
    if len(handles) > 1:
        ax.legend(handles, labels, **{"frameon": False, **kwargs})
    elif ax.get_legend() is not None:
        ax.get_legend().remove()


PROBLEMS_SUFFIX = ".problems.json"
log = logging.getLogger("cselab.workbench.plots")


def problems_path(path: str | os.PathLike) -> Path:
    """Where :func:`save_figure` records the checker's problems of the figure saved as ``path``
    (``figures/x.png`` → ``figures/x.problems.json``)."""
    path = Path(path)
    return path.with_name(path.with_suffix("").name + PROBLEMS_SUFFIX)


def save_figure(fig: Figure, path: str | os.PathLike, formats: Iterable[str] = FORMATS, dpi: int = 200,
                check: bool = True, source: str | None = None) -> list[Path]:
    """Save ``fig`` as ``path`` with each suffix in ``formats`` (``path``'s own suffix is replaced);
    returns the files written. Same figure → same bytes (no dates, no software versions): where it
    came from — commit, command, ``source`` (what it is drawn from), CPU kind, date, drawing code —
    goes into the folder's ``provenance.json`` (:mod:`cselab.workbench.plots.provenance`).

    With ``check`` the figure checker (:func:`cselab.workbench.plots.check.check_figure`) runs first: each
    problem is logged as a warning and all are recorded in ``<path>.problems.json`` next to the
    figure (a study's index lists them beside it); a sound figure leaves no such file (an earlier
    one, about the figure this one replaces, is removed)."""
    from ...model.io import atomic_write_with
    from .provenance import record_provenance

    path = Path(path)
    formats = list(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats must be a non-empty subset of {FORMATS}, got {formats}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if check:
        record_problems(fig, path)
    written = []
    with style():
        for fmt in formats:
            target = path.with_suffix(f".{fmt}")
            metadata = PNG_METADATA if fmt == "png" else PDF_METADATA
            # through a temporary file: a figure half-written by a kill never stands under its name,
            # and a link left in its place is replaced, never written through
            atomic_write_with(target, lambda tmp: fig.savefig(tmp, format=fmt, dpi=dpi, metadata=metadata))
            written.append(target)
    record_provenance(written, source)
    return written


def record_problems(fig: Figure, path: str | os.PathLike) -> list[str]:
    """Run the figure checker on ``fig`` (to be saved as ``path``): log each problem as a warning,
    write them to :func:`problems_path` (atomically) or remove a stale record; returns them."""
    from ...model.io import atomic_write_json
    from .check import check_figure

    problems = check_figure(fig)
    record = problems_path(path)
    for problem in problems:
        log.warning("figure %s: %s", Path(path).with_suffix("").name, problem)
    if problems:
        atomic_write_json(record, {"figure": Path(path).with_suffix("").name, "problems": problems})
    elif record.exists():
        record.unlink()
    return problems


def distinct_colors(n: int) -> list[str]:
    """``n`` colours a reader tells apart, for categories (e.g. DBpedia's 14 classes):
    :func:`cselab.workbench.plots.palettes.categorical_colours` (14 colours at least CIEDE2000 22 apart; beyond,
    a sample of ``turbo``)."""
    return categorical_colours(n)
