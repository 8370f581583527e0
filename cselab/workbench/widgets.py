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

from .neighbours import (checkpoint_folders, encode, nearest_neighbours, similarity_matrix, snapshot_folders,
                         snapshot_projections)
from .labels import display_name
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


@contextlib.contextmanager
def busy(output, controls: Sequence, note: str = BUSY_NOTE):
    """While a callback recomputes (seconds: encoding a corpus, fitting maps): its controls are
    disabled, the old view in ``output`` is replaced by a spinning "recomputing…" note, and what the
    computation displays or prints (its progress bars) goes to ``output`` under the note. Without
    this, the old figure stayed on screen and the bars went to JupyterLab's hidden Log Console (a
    callback runs outside any cell's output). The controls are enabled again whatever happens."""
    from IPython.display import HTML

    for control in controls:
        control.disabled = True
    try:
        _show(output, HTML(BUSY_HTML.format(note=note)))
        with output:
            yield
    finally:
        for control in controls:
            control.disabled = False


class SimilarityExplorer:
    """Run + checkpoint + sentences → similarity heat-map and nearest neighbours in ``corpus``."""

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
        self.checkpoint = w.Dropdown(options=list(folders), value=checkpoint, description="checkpoint")
        self.sentences = w.Textarea(value="\n".join(sentences), rows=max(4, len(sentences) + 1),
                                    description="sentences", layout=w.Layout(width="95%"))
        self.k = w.BoundedIntText(value=k, min=1, max=max(1, len(self.corpus)), description="neighbours")
        self.button = w.Button(description="compare", button_style="primary")
        self.output = w.Output()
        self.last_matrix = self.last_neighbours = self.last_figure = None
        self.run.observe(self.on_run, names="value")
        self.checkpoint.observe(self.refresh, names="value")
        self.button.on_click(self.refresh)
        self.widget = w.VBox([w.HBox([self.run, self.checkpoint]), self.sentences, w.HBox([self.k, self.button]),
                              self.output])

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
            self.checkpoint.options = folders
            self.checkpoint.value = keep
        finally:
            self.checkpoint.observe(self.refresh, names="value")
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
        return [self.run, self.checkpoint, self.sentences, self.k, self.button]

    def refresh(self, *_) -> None:
        """Recompute and redraw the heat-map and the neighbour table (errors are shown, not raised);
        busy (:func:`busy`) meanwhile."""
        try:
            with busy(self.output, self.controls()):
                matrix, sentences, neighbours = self.compute()
        except (ValueError, FileNotFoundError) as e:
            _show(self.output, f"cannot compare: {e}")
            return
        title = f"{display_name(self.run.value)} · {self.checkpoint.value}"
        self.last_matrix, self.last_neighbours = matrix, neighbours
        self.last_figure = plot_similarity_heatmap(matrix, sentences, title=title)
        _show(self.output, self.last_figure, neighbours)


# inches: 500 pixels at the notebooks' inline 100 dpi (cselab.workbench.INLINE_DPI), a map to look
# into; a grid's 2.6-inch panels are for print
MAP_SIZE = 5.0


class SnapshotExplorer:
    """Run + slider over its snapshots → the aligned 2-D map of a labelled sample at that step."""

    def __init__(self, runs: Mapping[str, Path], sentences: Sequence[str], labels: Sequence, run: str | None = None,
                 method: str = "auto", align: str = "procrustes"):
        w = _widgets()
        self.runs = {label: Path(p) for label, p in runs.items() if snapshot_folders(p)}
        if not self.runs:
            raise ValueError("SnapshotExplorer: none of the runs has snapshots (train with snapshot_every)")
        self.sentences, self.labels = list(sentences), list(labels)
        self.method, self.align = method, align
        self._frames: dict[str, dict] = {}
        run = run if run is not None else next(iter(self.runs))
        if run not in self.runs:
            raise ValueError(f"run {run!r} has no snapshots or is not one of {list(self.runs)}")
        self.run = w.Dropdown(options=list(self.runs), value=run, description="run")
        names = list(self.frames(run))
        self.step = w.SelectionSlider(options=names, value=names[-1], description="snapshot",
                                      continuous_update=False, layout=w.Layout(width="60%"))
        self.output = w.Output()
        self.last_figure = None
        self.run.observe(self.on_run, names="value")
        self.step.observe(self.on_step, names="value")
        self.widget = w.VBox([w.HBox([self.run, self.step]), self.output])

    def frames(self, run: str) -> dict:
        """The run's aligned maps, computed once per run."""
        if run not in self._frames:
            self._frames[run] = snapshot_projections(snapshot_folders(self.runs[run]), self.sentences, self.labels,
                                                     self.method, self.align)
        return self._frames[run]

    def on_run(self, change=None) -> None:
        with busy(self.output, [self.run, self.step]):   # a new run's maps: every snapshot encoded, projected
            names = list(self.frames(self.run.value))
        self.step.unobserve(self.on_step, names="value")
        try:
            self.step.options = names
            self.step.value = names[-1]
        finally:
            self.step.observe(self.on_step, names="value")
        self.on_step()

    def on_step(self, change=None) -> None:
        """Draw the map of the chosen snapshot (:data:`MAP_SIZE`), busy (:func:`busy`) meanwhile."""
        with busy(self.output, [self.run, self.step]):
            frame = self.frames(self.run.value)[self.step.value]
            self.last_figure = plot_projection_grid({self.step.value: frame}, ncols=1, title=self.run.value,
                                                    panel_size=MAP_SIZE)
        _show(self.output, self.last_figure)
