"""A notebook stopped by bad input shows one line, as the command line does: a config value the
train notebook refuses (papermill's ``-y "overrides: {max_steps: -5}"``) and runs that make none of a
paper notebook's variants (paper_mixcse on one ESimCSE run) were 8–10-line tracebacks into cselab."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import REPO


def execute_failing(name: str, tmp_path: Path, monkeypatch, parameters: dict) -> dict:
    """Execute notebooks/<name>.py with papermill; it must fail. Returns the error output of the cell that failed."""
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    source = tmp_path / f"{name}.ipynb"
    jupytext.write(jupytext.read(REPO / "notebooks" / f"{name}.py"), source)
    executed = tmp_path / f"{name}.executed.ipynb"
    with pytest.raises(PapermillExecutionError):
        papermill.execute_notebook(str(source), str(executed), kernel_name="python3", progress_bar=False,
                                   cwd=str(tmp_path), parameters=parameters)
    errors = [o for c in json.loads(executed.read_text())["cells"] if c["cell_type"] == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert len(errors) == 1
    return errors[0]


def test_the_train_notebook_shows_a_refused_config_value_as_one_line(tmp_path, monkeypatch):
    error = execute_failing("train", tmp_path, monkeypatch,
                            {"config": "quickstart", "overrides": {"max_steps": -5}, "output_dir": str(tmp_path)})
    assert error["ename"] == "ConfigError" and error["traceback"] == ["ConfigError: max_steps: must be >= 1, got -5"]


def test_paper_mixcse_on_runs_of_no_variant_is_one_line(tiny_model, data_dir, tmp_path, monkeypatch):
    from cselab.model.config import load_config
    from cselab.model.train import train

    cfg = load_config({"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 32, "batch_size": 16,
                       "max_steps": 2, "eval_every": 2, "final_eval": False, "dev_max_pairs": 100, "method": "esimcse",
                       "esimcse": {"queue_size": 16}, "output_dir": str(tmp_path / "runs"), "run_name": "e"})
    run = train(cfg, data_dir=data_dir, progress=False)
    error = execute_failing("paper_mixcse", tmp_path, monkeypatch,
                            {"runs": {"esimcse-s1": str(run)}, "data_dir": str(data_dir),
                             "figures_dir": str(tmp_path / "figures"), "tables_dir": str(tmp_path / "tables")})
    assert error["ename"] == "VariantError"
    assert error["traceback"] == [
        "VariantError: no run matches the variants {'SimCSE': ['simcse', 'simcse-large'], 'MixCSE': ['mixcse', "
        "'mixcse-large'], 'MixCSE single': 'mixcse-single', 'MixCSE w/o stop-gradient': 'mixcse-no_sg'}; runs: "
        "['esimcse-s1']"]


def test_the_train_notebook_shows_a_diverged_run_as_one_line(tiny_model, data_dir, tmp_path, monkeypatch):
    """A run whose model diverges (lr 1e30: the first STS-B dev score is NaN) stops with NonFiniteLossError,
    whose message names the step, the value and the checkpoint: it was a 29-line traceback."""
    config = {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 64, "batch_size": 16,
              "max_steps": 3, "eval_every": 1, "final_eval": False, "dev_max_pairs": 50, "lr": 1e30}
    error = execute_failing("train", tmp_path, monkeypatch, {"config": config, "output_dir": str(tmp_path / "runs"),
                                                             "data_dir": str(data_dir), "progress": False})
    assert error["ename"] == "NonFiniteLossError" and len(error["traceback"]) == 1
    last = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir()) / "last"
    assert error["traceback"] == [
        "NonFiniteLossError: step 1: the STS-B dev score is nan (the model diverged); stopping. No checkpoint was "
        f"written before it, so there is nothing to resume ({last} does not exist)."]


def test_a_kernel_that_never_started_is_started_again_and_a_notebooks_own_error_is_not(tmp_path, monkeypatch, caplog):
    """Two kernels started at once can race for a port ("Address already in use", then "Kernel didn't
    respond in 60 seconds": `make demo` stopped on it); the study starts another kernel for that
    notebook. A kernel that answered and then failed, or any other error, is not retried. A kernel that
    never started in three attempts, or died under a cell, fails that notebook (NotebookFailed, which the
    study reports and goes on from), not the whole study with an "unexpected RuntimeError"."""
    import papermill

    from cselab.workbench.studies import execute

    source = tmp_path / "n.py"
    source.write_text("# %%\nx = 1 + 1\nprint(x)\n")
    real, calls = papermill.execute_notebook, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return real(*args, **kwargs)

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    output = execute.execute_notebook(source, tmp_path / "out.ipynb", {}, cwd=tmp_path)
    assert len(calls) == 2 and "".join(json.loads(output.read_text())["cells"][0]["outputs"][0]["text"]).strip() == "2"
    assert "its kernel did not start (Kernel didn't respond in 60 seconds); starting another (attempt 2 of 3)" in caplog.text

    calls.clear()
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(
        RuntimeError("Kernel didn't respond in 60 seconds")))
    # after the last attempt it is that notebook's failure (the study goes on to its other notebooks), in one line
    with pytest.raises(execute.NotebookFailed) as failed:
        execute.execute_notebook(source, tmp_path / "out2.ipynb", {}, cwd=tmp_path)
    assert len(calls) == execute.KERNEL_START_ATTEMPTS == 3
    assert str(failed.value) == (f"{tmp_path / 'out2.ipynb'}: its kernel did not start in 3 attempts "
                                 "(Kernel didn't respond in 60 seconds)")

    # a kernel that died under a cell: that notebook failed, once, not retried
    from nbclient.exceptions import DeadKernelError

    calls.clear()
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(
        DeadKernelError("Kernel died")))
    with pytest.raises(execute.NotebookFailed, match=r"out4.ipynb: its kernel died \(Kernel died\)$"):
        execute.execute_notebook(source, tmp_path / "out4.ipynb", {}, cwd=tmp_path)
    assert len(calls) == 1

    calls.clear()
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(
        RuntimeError("something else")))
    with pytest.raises(RuntimeError, match="something else"):
        execute.execute_notebook(source, tmp_path / "out3.ipynb", {}, cwd=tmp_path)
    assert len(calls) == 1


def test_a_kernel_that_ran_a_cell_is_not_taken_for_one_that_never_started(tmp_path):
    from cselab.workbench.studies.execute import kernel_never_started

    partial = tmp_path / ".p.partial.ipynb"
    error = RuntimeError("Kernel died before replying to kernel_info")
    assert kernel_never_started(error, partial)   # no partial notebook yet
    partial.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None}]}))
    assert kernel_never_started(error, partial)
    partial.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": 1}]}))
    assert not kernel_never_started(error, partial)
    assert not kernel_never_started(RuntimeError("Kernel died"), tmp_path / "none.ipynb")
