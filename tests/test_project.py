"""The project root (cselab.model.project): relative notebook paths mean the checkout's folders wherever
the kernel starts; notebook-level errors are one line; the kernels `cselab reproduce` starts."""
from __future__ import annotations

import json

import pytest

from cselab import workbench
from cselab.model.project import find_checkout, project_path, project_root
from synthetic_runs import make_run


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout (pyproject.toml naming cselab) with notebooks/ and runs/, and an unrelated folder."""
    monkeypatch.delenv("CSELAB_ROOT", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("CSELAB_DATA", raising=False)
    root = tmp_path / "clone"
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "cselab"\nversion = "0"\n')
    (tmp_path / "elsewhere").mkdir()
    return root


def test_the_root_is_the_checkout_above_the_kernel(checkout, monkeypatch, tmp_path):
    monkeypatch.chdir(checkout / "notebooks")                 # where JupyterLab starts a notebook's kernel
    assert find_checkout(checkout / "notebooks") == checkout and project_root() == checkout
    assert project_path("runs") == checkout / "runs"
    assert project_path(tmp_path / "x") == tmp_path / "x"    # absolute: as given
    monkeypatch.chdir(checkout)
    assert project_path("runs").as_posix() == "runs"          # from the root itself: nothing to resolve


def test_other_projects_and_folders_are_not_roots(checkout, monkeypatch, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "cselab-plugins"\n')
    assert find_checkout(other) is None
    monkeypatch.chdir(tmp_path / "elsewhere")                # a project of one's own: the working directory
    assert project_root() == tmp_path / "elsewhere" and project_path("runs").as_posix() == "runs"


def test_notebook_location_and_override(checkout, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path / "elsewhere")
    # jupyter_server names the notebook of a kernel in JPY_SESSION_NAME, wherever the kernel runs
    monkeypatch.setenv("JPY_SESSION_NAME", str(checkout / "notebooks" / "explorer.py"))
    assert project_root() == checkout
    monkeypatch.setenv("CSELAB_ROOT", str(tmp_path / "elsewhere"))
    assert project_root() == tmp_path / "elsewhere"


def test_notebook_paths_resolve_against_the_root(checkout, monkeypatch):
    from cselab.model.data import data_root

    run = make_run(checkout / "runs" / "simcse-1", ["simcse"])
    monkeypatch.chdir(checkout / "notebooks")
    assert workbench.load_runs({"simcse": "runs/simcse-1"}) == {"simcse": run}
    assert data_root() == checkout / "data"
    monkeypatch.setenv("CSELAB_DATA", "mirror")
    assert data_root() == checkout / "mirror"
    md, csv = workbench.save_table("| a |\n|---|\n| 1 |", "t", "reports/x/tables")
    assert md == checkout / "reports" / "x" / "tables" / "t.md" and csv.read_text() == "a\n1\n"
    assert not (checkout / "notebooks" / "reports").exists()
    with pytest.raises(workbench.RunsNotFound, match=r"no config\.json\): gone: .*clone/runs/gone"):
        workbench.load_runs({"gone": "runs/gone"})


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    yield instance
    InteractiveShell.clear_instance()


def test_notebook_errors_are_one_line_and_still_fail_the_cell(shell, capsys):
    workbench.setup()
    result = shell.run_cell("from cselab.workbench import BadParameter\n"
                            "raise BadParameter(\"run = 'x' is not one of the runs\")")
    assert isinstance(result.error_in_exec, workbench.BadParameter) and not result.success
    assert capsys.readouterr().out == "BadParameter: run = 'x' is not one of the runs\n"
    result = shell.run_cell("raise ValueError('any other error')")   # others keep their traceback
    assert not result.success and "Traceback" in capsys.readouterr().out


def test_reproduce_kernels_are_encrypted_and_rooted_in_their_folder(tmp_path, capfd, monkeypatch):
    """ipykernel warns "Kernel is running over TCP without encryption" on stderr for every kernel
    jupyter_client starts without CurveZMQ keys (plain papermill does); the study engine's kernels
    get keys, and $CSELAB_ROOT = the folder they run in."""
    import jupytext
    import papermill
    from jupyter_client.manager import AsyncKernelManager

    from cselab.workbench.studies.execute import execute_notebook

    if not AsyncKernelManager.class_traits().get("transport_encryption"):
        pytest.skip("jupyter_client < 8.10 provisions no CurveZMQ keys (and its ipykernel does not warn)")
    monkeypatch.setenv("CSELAB_ROOT", "/somewhere/else")      # the command's cwd wins for its kernels
    source = tmp_path / "root.py"
    source.write_text("# %%\nimport os\nprint(os.environ['CSELAB_ROOT'])\n")
    papermill.execute_notebook(jupytext.read(source), str(tmp_path / "plain.ipynb"), kernel_name="python3",
                               progress_bar=False)
    assert "without encryption" in capfd.readouterr().err    # the warning, as a plain papermill run shows it
    output = execute_notebook(source, tmp_path / "out.ipynb", {}, cwd=tmp_path)
    assert "without encryption" not in capfd.readouterr().err
    printed = json.loads(output.read_text())["cells"][0]["outputs"][0]["text"]
    assert "".join(printed).strip() == str(tmp_path)
