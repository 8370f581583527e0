"""Notebook helpers: Figures shown inline as PNG, figures and tables saved, the runs parameter."""
from __future__ import annotations

import base64
import json
import struct

import pandas as pd
import pytest

from conftest import REPO
from synthetic_runs import make_runs

from cselab import workbench
from cselab.workbench.plots import new_figure


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def shell():
    """An in-process IPython shell whose display outputs are captured."""
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    instance.display_pub = CapturingDisplayPublisher()
    yield instance
    InteractiveShell.clear_instance()


def small_figure():
    fig, (ax,) = new_figure()
    ax.plot([0, 1, 2], [1.0, 0.5, 0.25])
    return fig


def test_setup_registers_a_png_formatter_for_figures(shell):
    fig = small_figure()
    assert "image/png" not in shell.display_formatter.format(fig)[0]   # the reported problem: text only
    assert workbench.setup() is True
    data, _ = shell.display_formatter.format(fig)
    assert png_size(data["image/png"]) == (330, 250)                   # 3.3 × 2.5 in at 100 dpi
    assert data["text/plain"].startswith("<Figure size 330x250")
    workbench.setup(dpi=50)
    assert png_size(shell.display_formatter.format(fig)[0]["image/png"]) == (165, 125)


def test_tables_show_no_row_numbers_and_no_scientific_notation(shell):
    """A notebook's DataFrames were shown with pandas' row numbers as a first column and numbers such
    as 1.23e-07; after setup, neither."""
    import re

    frame = pd.DataFrame({"run": ["simcse", "mixcse"], "p": [1.23e-07, 0.0412], "avg": [81.391234, 79.5],
                          "steps": [16, 16]})
    assert "1.230000e-07" in shell.display_formatter.format(frame)[0]["text/html"]   # pandas' own
    workbench.setup()
    html = shell.display_formatter.format(frame)[0]["text/html"]
    cells = re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", html)
    assert cells == ["run", "p", "avg", "steps", "simcse", "0.000000123", "81.391", "16", "mixcse", "0.0412",
                     "79.5", "16"]
    # a named index is kept, its numbers in the same notation
    cells = re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", shell.display_formatter.format(frame.set_index("run"))[0]
                       ["text/html"])
    assert cells[cells.index("simcse"):] == ["simcse", "0.000000123", "81.391", "16", "mixcse", "0.0412", "79.5",
                                             "16"]
    assert [workbench.plain_number(x) for x in (1234567.8, -3.45678, 100.0, float("nan"), float("inf"))] == [
        "1234568", "-3.4568", "100", "", "inf"]


def test_setup_outside_ipython_is_a_no_op():
    from IPython import get_ipython

    assert get_ipython() is None
    assert workbench.setup() is False


def test_show_saves_png_and_pdf_and_displays(shell, tmp_path):
    written = workbench.show(small_figure(), tmp_path / "figs" / "curve")
    assert [p.name for p in written] == ["curve.png", "curve.pdf"]
    assert png_size((tmp_path / "figs" / "curve.png").read_bytes()) == (660, 500)   # saved at 200 dpi
    assert (tmp_path / "figs" / "curve.pdf").read_bytes().startswith(b"%PDF")
    (shown,) = shell.display_pub.outputs
    assert png_size(shown["data"]["image/png"]) == (330, 250)
    workbench.setup(dpi=50)                      # show() keeps an earlier setup's resolution
    workbench.show(small_figure(), tmp_path / "figs" / "small")
    assert png_size(shell.display_pub.outputs[-1]["data"]["image/png"]) == (165, 125)


def test_save_table_from_a_dataframe(tmp_path):
    frame = pd.DataFrame({"run": ["simcse-s1", "mixcse-s1"], "STS-B": [81.25, 80.5]}).set_index("run")
    md, csv = workbench.save_table(frame, "sts", tmp_path / "tables")
    assert (md.name, csv.name) == ("sts.md", "sts.csv")
    assert csv.read_text() == "run,STS-B\nsimcse-s1,81.25\nmixcse-s1,80.5\n"
    assert md.read_text().splitlines() == ["| run       |   STS-B |", "|:----------|--------:|",
                                           "| simcse-s1 |   81.25 |", "| mixcse-s1 |   80.5  |"]
    # a plain range index is not written
    workbench.save_table(frame.reset_index(), "plain", tmp_path / "tables")
    assert (tmp_path / "tables" / "plain.csv").read_text().splitlines()[0] == "run,STS-B"
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == ["plain.csv", "plain.md", "sts.csv", "sts.md"]


def test_save_table_from_markdown(tmp_path):
    from cselab.model.evaluate import format_sts_table

    markdown = format_sts_table({"run-a": {"scores": {"STS12": 70.0, "STSBenchmark": 80.125}, "avg": 75.0625}})
    md, csv = workbench.save_table("Intro line\n\n" + markdown + "\n\nfootnote", "sts", tmp_path)
    assert csv.read_text() == "model,STS12,STS-B,Avg.\nrun-a,70.00,80.12,75.06\n"
    assert md.read_text().startswith("Intro line")
    with pytest.raises(ValueError, match="no Markdown pipe table"):
        workbench.save_table("just text", "x", tmp_path)
    with pytest.raises(ValueError, match="bare file name"):
        workbench.save_table(markdown, "sub/x.md", tmp_path)
    with pytest.raises(TypeError, match="expected a DataFrame or a Markdown table"):
        workbench.save_table([1, 2], "x", tmp_path)


def test_load_runs(tmp_path):
    runs = make_runs(tmp_path)
    as_strings = {label: str(path) for label, path in runs.items()}
    assert workbench.load_runs(as_strings) == runs
    assert workbench.load_runs([runs["simcse-s1"], runs["mixcse-s2"]]) == {
        "simcse-s1": runs["simcse-s1"], "mixcse-s2": runs["mixcse-s2"]}
    assert workbench.load_runs(str(runs["simcse-s2"])) == {"simcse-s2": runs["simcse-s2"]}
    with pytest.raises(FileNotFoundError) as error:
        workbench.load_runs({"a": tmp_path / "gone", "b": runs["simcse-s1"], "c": tmp_path / "also-gone"})
    assert str(error.value) == (f"runs: not a run directory (no config.json): a: {tmp_path / 'gone'}; "
                                f"c: {tmp_path / 'also-gone'}")
    with pytest.raises(ValueError, match="no run directory given"):
        workbench.load_runs({})
    with pytest.raises(ValueError, match=r"the label\(s\) \['simcse-s1'\] name more than one run"):
        workbench.load_runs([runs["simcse-s1"], runs["simcse-s1"]])


@pytest.mark.parametrize("runs, message", [
    ({"a": 5}, "runs: a run directory is a path, got 5 (int)"),
    ([None], "runs: a run directory is a path, got None (NoneType)"),
    (5, "runs: expected {label: run directory}, a list of run directories or one, got 5"),
])
def test_load_runs_of_something_else_than_paths_is_one_line(runs, message):
    with pytest.raises(workbench.BadParameter) as error:   # was a TypeError from os.fspath
        workbench.load_runs(runs)
    assert str(error.value) == message


def test_an_executed_notebook_holds_its_figures_as_png(tmp_path):
    """The test notebook shows one figure three ways: a cell ending in `fig`, display(fig), show()."""
    import jupytext
    import papermill

    runs = make_runs(tmp_path / "runs")
    output = tmp_path / "summary.ipynb"
    papermill.execute_notebook(jupytext.read(REPO / "tests" / "notebooks" / "summary.py"), str(output),
                               kernel_name="python3", progress_bar=False,
                               parameters={"runs": {k: str(v) for k, v in runs.items()},
                                           "figures_dir": str(tmp_path / "figures"),
                                           "tables_dir": str(tmp_path / "tables")})
    cells = json.loads(output.read_text())["cells"]
    images = [(i, base64.b64decode(out["data"]["image/png"])) for i, cell in enumerate(cells)
              for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]
    sources = ["".join(cells[i]["source"]).strip().splitlines()[-1] for i, _ in images]
    assert sources == ["fig", "display(fig)", 'print(sorted(p.name for p in written))']
    assert all(png_size(data) == (330, 250) for _, data in images)
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == ["loss.pdf", "loss.png", "provenance.json"]
    # synthetic runs: best STS-B dev 80.0 + offset (0.1 for MixCSE)
    assert (tmp_path / "tables" / "best_dev.csv").read_text() == (
        "run,best STS-B dev\nsimcse-s1,80.0\nsimcse-s2,80.0\nmixcse-s1,80.1\nmixcse-s2,80.1\n")
