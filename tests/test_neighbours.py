"""cselab.workbench.neighbours (similarities, neighbours, samples, aligned snapshot maps), its figures, and the
explorer's widget callbacks called directly (headless)."""
from __future__ import annotations

import numpy as np
import pytest
from toy_encoders import LookupEncoder

from cselab.workbench.neighbours import (checkpoint_folders, corpus_sample, labelled_sample, nearest_neighbours, over_snapshots,
                               procrustes_align, project_snapshots, similarity_matrix, snapshot_projections)
from cselab.workbench.plots import save_figure
from cselab.workbench.plots.similarity import plot_projection_grid, plot_similarity_heatmap

TABLE = {"a": [1.0, 0.0, 0.0], "b": [1.0, 1.0, 0.0], "c": [0.0, 0.0, 2.0], "d": [-1.0, 0.0, 0.0],
         "e": [3.0, 1.0, 0.0]}


def test_similarity_matrix_and_neighbours_by_hand():
    model = LookupEncoder(TABLE)
    matrix = similarity_matrix(model, ["a", "b", " ", "c"])   # the blank line is dropped
    s = 1 / np.sqrt(2)
    assert matrix == pytest.approx(np.array([[1, s, 0], [s, 1, 0], [0, 0, 1]]))
    table = nearest_neighbours(model, ["a"], ["b", "c", "d", "e"], k=3)
    # cos(a, e) = 3/√10 = 0.949 > cos(a, b) = 0.707 > cos(a, c) = 0 > cos(a, d) = −1
    assert list(table["neighbour"]) == ["e", "b", "c"] and list(table["rank"]) == [1, 2, 3]
    assert table["cosine"].tolist() == pytest.approx([3 / np.sqrt(10), s, 0.0])
    with pytest.raises(ValueError, match=r"k must be in \[1, 4\]"):
        nearest_neighbours(model, ["a"], ["b", "c", "d", "e"], k=5)
    with pytest.raises(ValueError, match="queries: need at least one"):
        nearest_neighbours(model, ["  "], ["b"], k=1)


def test_procrustes_recovers_a_rotated_scaled_shifted_copy():
    rng = np.random.default_rng(0)
    target = rng.normal(size=(30, 2))
    angle = 0.7
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    source = 3.0 * target @ rotation * np.array([1.0, -1.0]) + np.array([5.0, -2.0])   # with a reflection
    assert procrustes_align(source, target) == pytest.approx(target, abs=1e-9)


def test_snapshot_maps_are_aligned_across_snapshots():
    rng = np.random.default_rng(1)
    first = rng.normal(size=(40, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    # the same geometry in a rotated basis: each snapshot's own PCA differs by a rotation/flip,
    # which alignment must undo; one shared PCA of two rotated copies is not the same map
    coords, used = project_snapshots({"step 0": first, "step 5": first @ q}, method="pca", align="procrustes")
    assert used == "pca" and coords["step 0"] == pytest.approx(coords["step 5"], abs=1e-8)
    same, _ = project_snapshots({"step 0": first, "step 5": first.copy()}, method="pca", align="shared_pca")
    assert same["step 0"] == pytest.approx(same["step 5"])
    with pytest.raises(ValueError, match="align must be one of"):
        project_snapshots({"step 0": first}, align="nearest")
    with pytest.raises(ValueError, match="different numbers of sentences"):
        project_snapshots({"a": first, "b": first[:10]})


def test_samples(data_dir):
    sentences, labels = labelled_sample("DBpedia", 28, seed=0, data_dir=data_dir)
    assert len(sentences) == 28 and sorted(set(labels))[:3] == ["Album", "Animal", "Artist"]
    assert all(labels.count(name) == 2 for name in set(labels)) and len(set(labels)) == 14
    assert labelled_sample("DBpedia", 28, seed=0, data_dir=data_dir) == (sentences, labels)
    with pytest.raises(ValueError, match="number of classes of DBpedia \\(14\\)"):
        labelled_sample("DBpedia", 10, data_dir=data_dir)
    sample = corpus_sample("wiki1m-head", 50, seed=3, data_dir=data_dir, pool=500)
    assert len(sample) == len(set(sample)) == 50 and sample == corpus_sample("wiki1m-head", 50, 3, data_dir, 500)


def test_figures_draw_and_save_reproducibly(tmp_path):
    sentences = ["A man plays a guitar.", "Someone is playing music on a stringed instrument.", "It rains."]
    matrix = np.array([[1.0, 0.8, 0.1], [0.8, 1.0, 0.05], [0.1, 0.05, 1.0]])
    frames = {f"step {s}": __import__("pandas").DataFrame({"x": [0, 1, 2, s], "y": [1, 0, 2, 1],
                                                            "label": ["A", "B", "A", "C"]}) for s in (0, 5, 10, 15)}
    for name, build in {"heatmap": lambda: plot_similarity_heatmap(matrix, sentences, title="best"),
                        "grid": lambda: plot_projection_grid(frames, ncols=3)}.items():
        first = save_figure(build(), tmp_path / "a" / name)
        second = save_figure(build(), tmp_path / "b" / name)
        assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    heatmap = plot_similarity_heatmap(matrix, sentences, title="SimCSE, best")
    assert [t.get_text() for t in heatmap.axes[0].texts][:2] == ["1.00", "0.80"]
    # no white space beside the square: the row labels start near the figure's left edge, and the
    # square is as wide as it is tall (the height leaves room for the title and the column numbers)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(heatmap).get_renderer()
    heatmap.draw(renderer)
    left = min(t.get_window_extent(renderer).x0 for t in heatmap.axes[0].get_yticklabels()) / heatmap.dpi
    square = heatmap.axes[0].get_window_extent(renderer)
    assert left < 0.25 and square.width == pytest.approx(square.height, rel=0.02)
    # 4 maps asked 3 a row: a 2 × 3 grid at most a page wide, the classes' legend in the free cell
    grid = plot_projection_grid(frames, ncols=3)
    maps = [ax for ax in grid.axes if ax.get_title().startswith("step")]
    assert [ax.get_title() for ax in maps] == list(frames) and grid.get_figwidth() <= 7.2
    assert any(ax.get_legend() is not None for ax in grid.axes) or grid.legends
    with pytest.raises(ValueError, match="for 2 sentences"):
        plot_similarity_heatmap(matrix, sentences[:2])


def test_checkpoints_snapshots_and_measures_of_a_real_run(tiny_runs, data_dir):
    run = tiny_runs["simcse-s1"]
    assert list(checkpoint_folders(run)) == ["best", "last", "step 0", "step 3", "step 6"]
    frame = over_snapshots(run, lambda encoder: {"dim": encoder.embedding_dim()}, steps=[0, 6])
    assert frame.to_dict("list") == {"step": [0, 6], "dim": [32, 32]}
    with pytest.raises(ValueError, match="no snapshot at step"):
        over_snapshots(run, lambda encoder: {}, steps=[4])
    sentences, labels = labelled_sample("DBpedia", 28, data_dir=data_dir)
    maps = snapshot_projections({name: folder for name, folder in checkpoint_folders(run).items()
                                 if name.startswith("step")}, sentences, labels)
    assert list(maps) == ["step 0", "step 3", "step 6"]
    assert maps["step 6"].attrs["method"] == "pca" and len(maps["step 0"]) == 28


def test_widget_callbacks_headless(tiny_runs, data_dir):
    pytest.importorskip("ipywidgets")   # (in the dev extra, so CI has it)
    from cselab.workbench.widgets import SimilarityExplorer, SnapshotExplorer

    runs = {label: tiny_runs[label] for label in ("simcse-s1", "mixcse-s1")}
    corpus = corpus_sample("wiki1m-head", 40, data_dir=data_dir, pool=200)
    app = SimilarityExplorer(runs, corpus, ["A man plays a guitar.", "A woman is cooking."], k=3)
    app.refresh()
    assert app.last_matrix.shape == (2, 2) and len(app.last_neighbours) == 6
    assert app.last_neighbours["neighbour"].isin(corpus).all()
    assert app.last_figure.axes[0].get_title() == "simcse-s1 · best"
    app.checkpoint.value = "step 0"                 # the observer redraws with the model before training
    assert app.folder() == runs["simcse-s1"] / "snapshots" / "step-000000"
    assert np.array_equal(app.last_matrix, similarity_matrix(app.folder(), app.typed_sentences()))
    assert app.last_figure.axes[0].get_title() == "simcse-s1 · step 0 (before training)"
    assert dict(app.checkpoint.options)["step 0 (before training)"] == "step 0"
    app.run.value = "mixcse-s1"                     # same checkpoint kind kept, options of the new run
    assert app.checkpoint.value == "step 0"
    assert [name for _, name in app.checkpoint.options] == list(checkpoint_folders(runs["mixcse-s1"]))
    assert app.last_matrix == pytest.approx(similarity_matrix(runs["mixcse-s1"] / "snapshots" / "step-000000",
                                                              app.typed_sentences()))

    sentences, labels = labelled_sample("DBpedia", 28, data_dir=data_dir)
    slider = SnapshotExplorer(runs, sentences, labels, sample="DBpedia texts")
    assert list(slider.step.options) == [("step 0 (untrained)", "step 0"), ("step 3", "step 3"),
                                         ("step 6", "step 6")] and slider.step.value == "step 6"
    slider.step.value = "step 0"
    assert slider.last_figure.axes[0].get_title() == "step 0 (before training)"
    caption = slider.last_figure.texts[-1].get_text().replace("\n", " ")
    assert caption.startswith("PCA of 28 DBpedia texts (14 classes) embedded by simcse-s1's model at step 0 (before "
                              "training); each map fitted on its own and rotated")
    slider.run.value = "mixcse-s1"
    assert slider.step.value == "step 6" and slider.last_figure.get_suptitle() == "mixcse-s1"


class _Kernel:
    """What an ipywidgets Output area finds in a kernel: ``showtraceback`` (it prints an exception
    raised inside ``with output:`` and swallows it), so that headless tests meet the kernel's path."""

    def __init__(self):
        self.tracebacks = []

    def showtraceback(self, exc_tuple, tb_offset=None):
        self.tracebacks.append(exc_tuple[1])


def test_the_explorer_with_an_empty_sentence_box_says_so_in_one_line(tiny_runs, data_dir, monkeypatch):
    """Cleared, the sentence box gave a raw ValueError traceback and left "recomputing…" on screen: in a
    kernel the Output area printed the error and swallowed it, and the callback went on as if it
    had computed. Now one line replaces the view, and the status line is back to its hint."""
    pytest.importorskip("ipywidgets")
    from ipywidgets.widgets import widget_output

    from cselab.workbench import widgets

    kernel = _Kernel()
    monkeypatch.setattr(widget_output, "get_ipython", lambda: kernel)
    shown = []
    monkeypatch.setattr(widgets, "_show", lambda output, *objects: shown.append((output, objects)))
    corpus = corpus_sample("wiki1m-head", 40, data_dir=data_dir, pool=200)
    app = widgets.SimilarityExplorer({"simcse-s1": tiny_runs["simcse-s1"]}, corpus, ["A man plays a guitar."], k=3)
    app.refresh()
    drawn = app.last_figure
    for cleared in ("", "  \n \n"):
        app.sentences.value = cleared
        app.button.click()
        output, (message,) = shown[-1]
        assert output is app.output and "cselab-message" in message.data
        assert "No sentence to compare: type one or more, one a line, then Enter or compare." in message.data
        status = [objects for output, objects in shown if output is app.status][-1][0]
        assert "cselab-hint" in status.data                # no "recomputing…" left on screen
        assert app.last_figure is drawn and kernel.tracebacks == []
        assert not any(c.disabled for c in app.controls())
    # an error while computing: one line too, the controls on again, no traceback printed
    monkeypatch.setattr(app, "compute", lambda: (_ for _ in ()).throw(FileNotFoundError("gone")))
    app.sentences.value = "A cat."
    app.refresh()
    assert "cannot compare: gone" in shown[-1][1][0].data and kernel.tracebacks == []
    assert shown[-2][0] is app.status and "cselab-hint" in shown[-2][1][0].data
    assert not any(c.disabled for c in app.controls())


def test_enter_in_the_sentence_box_redraws(tiny_runs, data_dir):
    pytest.importorskip("ipywidgets")
    from cselab.workbench.widgets import SimilarityExplorer

    corpus = corpus_sample("wiki1m-head", 40, data_dir=data_dir, pool=200)
    app = SimilarityExplorer({"simcse-s1": tiny_runs["simcse-s1"]}, corpus, ["A man plays a guitar.",
                                                                               "A woman is cooking."], k=3)
    app.refresh()
    figure = app.last_figure
    app.sentences.value += "\n"                     # Enter after the last sentence: the same sentences
    for key in "A cat sleeps.":                       # typing: no redraw until Enter
        app.sentences.value += key
    assert app.last_figure is figure and app.last_matrix.shape == (2, 2)
    app.sentences.value += "\n"                     # Enter: the three sentences drawn
    assert app.last_figure is not figure and app.last_matrix.shape == (3, 3)
    assert list(app.last_neighbours["query"].unique()) == ["A man plays a guitar.", "A woman is cooking.",
                                                           "A cat sleeps."]
    figure = app.last_figure
    app.sentences.value += "\n"                     # another Enter on an empty line: nothing new to draw
    assert app.last_figure is figure


def test_widgets_are_busy_while_they_recompute(tiny_runs, data_dir, monkeypatch):
    """While a callback computes, its controls are disabled and the status line shows the
    "recomputing…" note (and the computation's progress bar) while the view keeps the old figure;
    afterwards the controls are enabled again (also when the computation fails), the status line
    shows its hint and the view the new figure."""
    pytest.importorskip("ipywidgets")
    from IPython.display import HTML

    from cselab.model import progress
    from cselab.workbench import widgets

    shown = []   # what each _show put in an output area, in order
    monkeypatch.setattr(widgets, "_show", lambda output, *objects: shown.append((output, objects)))
    runs = {label: tiny_runs[label] for label in ("simcse-s1", "mixcse-s1")}
    corpus = corpus_sample("wiki1m-head", 40, data_dir=data_dir, pool=200)
    app = widgets.SimilarityExplorer(runs, corpus, ["A man plays a guitar.", "A woman is cooking."], k=3)
    seen = []
    compute = app.compute

    def watched_compute():
        seen.append(([c.disabled for c in app.controls()], shown[-1], app.sentences.disabled))
        return compute()

    monkeypatch.setattr(app, "compute", watched_compute)
    app.checkpoint.value = "step 0"
    (disabled, (output, objects), typing_off), = seen
    assert all(disabled) and len(disabled) == 4 and not typing_off    # the sentence box keeps its focus
    assert output is app.status and isinstance(objects[0], HTML) and widgets.BUSY_NOTE in objects[0].data
    assert [o for o, _ in shown].count(app.output) == 1                 # the view: replaced once, at the end
    assert not any(c.disabled for c in app.controls())
    assert shown[-1][0] is app.output and shown[-1][1][0] is app.last_figure
    assert shown[-2][0] is app.status and "cselab-hint" in shown[-2][1][0].data

    # another run's maps: one progress bar over its snapshots, each encoded then projected
    bars = []
    made = progress.progress_bar

    def recorded(*args, **kwargs):
        bar = made(*args, **kwargs)
        bars.append((kwargs["total"], kwargs["enabled"], bar))
        return bar

    monkeypatch.setattr(progress, "progress_bar", recorded)
    sentences, labels = labelled_sample("DBpedia", 28, data_dir=data_dir)
    slider = widgets.SnapshotExplorer(runs, sentences, labels)
    frames = slider.frames
    monkeypatch.setattr(slider, "frames", lambda run: (seen.append((slider.run.disabled, slider.step.disabled,
                                                                     shown[-1])), frames(run))[1])
    slider.run.value = "mixcse-s1"
    assert seen[-2][:2] == (True, True) and seen[-2][2][0] is slider.status
    assert widgets.BUSY_NOTE in seen[-2][2][1][0].data
    assert [(total, enabled, bar.n) for total, enabled, bar in bars] == [(6, True, 6), (6, True, 6)]   # 3 snapshots
    assert not slider.run.disabled and not slider.step.disabled
    assert shown[-1][0] is slider.output and shown[-1][1][0] is slider.last_figure
    width, height = slider.last_figure.get_size_inches()
    assert height >= widgets.MAP_SIZE and width - widgets.MAP_SIZE < widgets.MAP_SIZE / 2   # a map, a slim legend
