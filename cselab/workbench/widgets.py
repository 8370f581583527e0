"""The ``explorer`` notebook's widgets (ipywidgets): the computations are :mod:`cselab.workbench.neighbours`'s,
the figures :mod:`cselab.workbench.plots.similarity`'s; this module only wires them.

* :class:`SimilarityExplorer` — choose a run and a checkpoint (best/, last/ or a snapshot), type
  sentences (one a line) → their cosine heat-map and each one's nearest neighbours in a corpus sample.
* :class:`SnapshotExplorer` — choose a run, slide over its training snapshots → the 2-D map of a
  labelled sample at that snapshot (maps aligned across snapshots, so points move, axes do not).

Each has a ``widget`` to display and callbacks (``on_run``, ``refresh``, ``on_step``) that the
widgets call and that tests can call directly; the last views are kept in ``last_matrix``,
``last_neighbours``, ``last_figure``.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..model.io import first_line
from .labels import display_name
from .neighbours import (ALIGNMENT_WORDS, checkpoint_folders, encode, nearest_neighbours, similarity_matrix,
                         snapshot_folders, snapshot_projections)
from .plots import add_note
from .plots.similarity import plot_projection_grid, plot_similarity_heatmap
from ..model.rundir import BEST


def _widgets():
    try:
        import ipywidgets
    except ImportError as e:   # pragma: no cover - ipywidgets is in the notebooks and dev extras
        raise ImportError("the explorer's widgets need ipywidgets: pip install 'cselab[notebooks]'") from e
    return ipywidgets


def _show(output, *objects) -> None:
    from IPython.display import clear_output, display

    with output:
        clear_output(wait=True)
        for obj in objects:
            display(obj)


BUSY_NOTE = "recomputing…"
BUSY_HTML = ('<div class="cselab-busy" style="padding: 0.5em 0; color: var(--jp-ui-font-color2, #666)">'
             '<i class="fa fa-spinner fa-spin"></i> {note}</div>')
HINT_HTML = '<div class="cselab-hint" style="padding: 0.5em 0; color: var(--jp-ui-font-color2, #666)">{note}</div>'
MESSAGE_HTML = '<div class="cselab-message" style="padding: 0.5em 0">{note}</div>'
# The status line between a widget box's controls and its view holds the busy note and one progress
# bar: its height is kept whatever it shows, so that the view under it does not move when they come
# and go.
STATUS_HEIGHT = "6.5em"


def _html(template: str, note: str):
    import html

    from IPython.display import HTML

    return HTML(template.format(note=html.escape(note)))


def _status_line(w, hint: str):
    status = w.Output(layout=w.Layout(min_height=STATUS_HEIGHT))
    _show(status, _html(HINT_HTML, hint))
    return status


@contextlib.contextmanager
def busy(status, controls: Sequence, note: str = BUSY_NOTE, hint: str = ""):
    """While a callback recomputes (seconds: encoding a corpus, fitting maps): ``controls`` are
    disabled, the ``status`` line shows a spinning "recomputing…" note, and what the computation
    displays or prints (its progress bars) goes there under the note; afterwards it shows ``hint``
    again and the controls are enabled, whatever happened. The view (another output area) keeps the
    last figure until the callback replaces it: the page does not jump. A callback's progress would
    otherwise go to JupyterLab's hidden Log Console (it runs outside any cell's output).

    An exception is raised on, after the note is gone: an Output area would catch it, print its
    traceback and let the callback go on as if it had finished."""
    for control in controls:
        control.disabled = True
    error = None
    try:
        _show(status, _html(BUSY_HTML, note))
        with status:
            try:
                yield
            except Exception as e:   # raised below, outside the Output (see the docstring)
                error = e
    finally:
        _show(status, _html(HINT_HTML, hint))
        for control in controls:
            control.disabled = False
    if error is not None:
        raise error


def _say(output, note: str) -> None:
    """One line in place of a view: why there is nothing to draw."""
    _show(output, _html(MESSAGE_HTML, note))


def _before_training(name: str) -> str:
    """A checkpoint or snapshot as the explorer names it: ``step 0`` is the model before training."""
    return f"{name} (before training)" if name == "step 0" else name


class SimilarityExplorer:
    """Run + checkpoint + sentences → similarity heat-map and nearest neighbours in ``corpus``.
    The view is redrawn by "compare", by Enter in the sentences (when they changed), and by a new run
    or checkpoint."""

    def __init__(self, runs: Mapping[str, Path], corpus: Sequence[str], sentences: Sequence[str], k: int = 5,
                 run: str | None = None, checkpoint: str = BEST):
        w = _widgets()
        if not runs:
            raise ValueError("SimilarityExplorer: no runs")
        self.runs = {label: Path(path) for label, path in runs.items()}
        self.corpus = list(corpus)
        self._corpus_embeddings: dict[Path, np.ndarray] = {}
        run = run if run is not None else next(iter(self.runs))
        if run not in self.runs:
            raise ValueError(f"run {run!r} is not one of {list(self.runs)}")
        self.run = w.Dropdown(options=list(self.runs), value=run, description="run")
        folders = checkpoint_folders(self.runs[run])
        if checkpoint not in folders:
            raise ValueError(f"checkpoint {checkpoint!r} of run {run!r} does not exist; choose one of {list(folders)}")
        self.checkpoint = w.Dropdown(options=self._checkpoint_options(folders), value=checkpoint,
                                     description="checkpoint")
        self.sentences = w.Textarea(value="\n".join(sentences), rows=max(4, len(sentences) + 1),
                                    description="sentences", layout=w.Layout(width="95%"))
        self.k = w.BoundedIntText(value=k, min=1, max=max(1, len(self.corpus)), description="neighbours")
        self.button = w.Button(description="compare", button_style="primary")
        self.status = _status_line(w, self.hint())
        self.output = w.Output()
        self.last_matrix = self.last_neighbours = self.last_figure = None
        self.drawn: list[str] | None = None   # the sentences of the view shown
        self.run.observe(self.on_run, names="value")
        self.checkpoint.observe(self.refresh, names="value")
        self.sentences.observe(self.on_typing, names="value")
        self.button.on_click(self.refresh)
        self.widget = w.VBox([w.HBox([self.run, self.checkpoint]), self.sentences, w.HBox([self.k, self.button]),
                              self.status, self.output])

    @staticmethod
    def _checkpoint_options(folders) -> list[tuple[str, str]]:
        return [(_before_training(name), name) for name in folders]

    def hint(self) -> str:
        return (f"One sentence a line; Enter after one, or compare, redraws. A new checkpoint encodes the "
                f"{len(self.corpus)} corpus sentences first.")

    def folder(self) -> Path:
        return checkpoint_folders(self.runs[self.run.value])[self.checkpoint.value]

    def typed_sentences(self) -> list[str]:
        return [line.strip() for line in self.sentences.value.splitlines() if line.strip()]

    def on_run(self, change=None) -> None:
        """A new run: offer its checkpoints (keeping the chosen kind when it has one), then redraw."""
        folders = list(checkpoint_folders(self.runs[self.run.value]))
        keep = self.checkpoint.value if self.checkpoint.value in folders else folders[0]
        self.checkpoint.unobserve(self.refresh, names="value")   # one redraw below, not one per change
        try:
            self.checkpoint.options = self._checkpoint_options(folders)
            self.checkpoint.value = keep
        finally:
            self.checkpoint.observe(self.refresh, names="value")
        self.refresh()

    def on_typing(self, change) -> None:
        """Enter (a new line: the text has more line breaks than before) redraws when the sentences
        are not those drawn; other keys only type."""
        old, new = change.get("old") or "", change.get("new") or ""
        if new.count("\n") > old.count("\n") and self.typed_sentences() != self.drawn:
            self.refresh()

    def compute(self):
        """(matrix, sentences, neighbours) of the current choice; corpus embeddings are kept per model."""
        folder, sentences = self.folder(), self.typed_sentences()
        if folder not in self._corpus_embeddings:
            self._corpus_embeddings[folder] = encode(folder, self.corpus)
        matrix = similarity_matrix(folder, sentences)
        neighbours = nearest_neighbours(folder, sentences, self.corpus, k=int(self.k.value),
                                        corpus_embeddings=self._corpus_embeddings[folder])
        return matrix, sentences, neighbours

    def controls(self) -> list:
        """What is disabled while it recomputes: not the sentences, which keep the keyboard's focus
        (a disabled text box loses it) and whose Enter waits for the recompute."""
        return [self.run, self.checkpoint, self.k, self.button]

    def refresh(self, *_) -> None:
        """Recompute and redraw the heat-map and the neighbour table, busy (:func:`busy`) meanwhile;
        with no sentence, or when the model cannot be read, one line says so in place of the view."""
        if not self.typed_sentences():
            self.drawn = []
            _say(self.output, "No sentence to compare: type one or more, one a line, then Enter or compare.")
            return
        try:
            with busy(self.status, self.controls(), hint=self.hint()):
                matrix, sentences, neighbours = self.compute()
                model = f"{display_name(self.run.value)}'s {_before_training(self.checkpoint.value)}"
                figure = plot_similarity_heatmap(matrix, sentences, title=model.replace("'s ", " · ", 1))
                add_note(figure, f"Each cell: the cosine of two sentences' embeddings under {model} model (one run); "
                                 f"below, each sentence's {int(self.k.value)} nearest of {len(self.corpus)} corpus "
                                 "sentences.")
        except (ValueError, OSError) as e:
            _say(self.output, f"cannot compare: {first_line(e)}")
            return
        self.drawn = sentences
        self.last_matrix, self.last_neighbours, self.last_figure = matrix, neighbours, figure
        _show(self.output, figure, neighbours.style.hide(axis="index").format({"cosine": "{:.3f}"}))


# inches: 500 pixels at the notebooks' inline 100 dpi (cselab.workbench.INLINE_DPI), a map to look
# into; a grid's 2.6-inch panels are for print
MAP_SIZE = 5.0


class SnapshotExplorer:
    """Run + slider over its snapshots → the aligned 2-D map of a labelled sample at that step.
    ``sample``: what the sentences are, for the map's caption (e.g. "DBpedia texts")."""

    def __init__(self, runs: Mapping[str, Path], sentences: Sequence[str], labels: Sequence, run: str | None = None,
                 method: str = "auto", align: str = "procrustes", sample: str = "texts"):
        w = _widgets()
        self.runs = {label: Path(p) for label, p in runs.items() if snapshot_folders(p)}
        if not self.runs:
            raise ValueError("SnapshotExplorer: none of the runs has snapshots (train with snapshot_every)")
        self.sentences, self.labels = list(sentences), list(labels)
        self.method, self.align, self.sample = method, align, sample
        self._frames: dict[str, dict] = {}
        run = run if run is not None else next(iter(self.runs))
        if run not in self.runs:
            raise ValueError(f"run {run!r} has no snapshots or is not one of {list(self.runs)}")
        self.run = w.Dropdown(options=list(self.runs), value=run, description="run")
        self.status = _status_line(w, self.hint())
        names = list(self.frames(run))
        self.step = w.SelectionSlider(options=self._step_options(names), value=names[-1], description="snapshot",
                                      continuous_update=False, layout=w.Layout(width="60%"))
        self.output = w.Output()
        self.last_figure = None
        self.run.observe(self.on_run, names="value")
        self.step.observe(self.on_step, names="value")
        self.widget = w.VBox([w.HBox([self.run, self.step]), self.status, self.output])

    @staticmethod
    def _step_options(names) -> list[tuple[str, str]]:
        # the slider's readout shows about 20 characters: "step 0 (before training)" lost its ")"; the map's
        # caption says "before training" in full
        return [("step 0 (untrained)" if name == "step 0" else name, name) for name in names]

    def hint(self) -> str:
        return ("Slide over the run's snapshots; choosing another run first encodes and projects the sample at "
                "each of its snapshots, once per run: about a minute on 2 CPU cores for the demo's runs.")

    def frames(self, run: str) -> dict:
        """The run's aligned maps, computed once per run (a progress bar over its snapshots)."""
        if run not in self._frames:
            self._frames[run] = snapshot_projections(snapshot_folders(self.runs[run]), self.sentences, self.labels,
                                                     self.method, self.align, progress=True)
        return self._frames[run]

    def caption(self, run: str, step: str, frame) -> str:
        method = str(frame.attrs.get("method", self.method)).upper()
        return (f"{method} of {len(self.sentences)} {self.sample} ({len(set(self.labels))} classes) embedded by "
                f"{display_name(run)}'s model at {_before_training(step)}; {ALIGNMENT_WORDS[self.align]}.")

    def on_run(self, change=None) -> None:
        with busy(self.status, [self.run, self.step], hint=self.hint()):   # every snapshot encoded, projected
            names = list(self.frames(self.run.value))
        self.step.unobserve(self.on_step, names="value")
        try:
            self.step.options = self._step_options(names)
            self.step.value = names[-1]
        finally:
            self.step.observe(self.on_step, names="value")
        self.on_step()

    def on_step(self, change=None) -> None:
        """Draw the map of the chosen snapshot (:data:`MAP_SIZE`) with its caption, busy (:func:`busy`)
        meanwhile."""
        with busy(self.status, [self.run, self.step], hint=self.hint()):
            run, step = self.run.value, self.step.value
            frame = self.frames(run)[step]
            figure = plot_projection_grid({_before_training(step): frame}, ncols=1, title=run, panel_size=MAP_SIZE)
            add_note(figure, self.caption(run, step, frame))
        self.last_figure = figure
        _show(self.output, figure)
