"""Browser tests: JupyterLab in Debian's Chromium, driven by Playwright, the way a person uses it.

A session-scoped fixture builds a project as a person has it after `make demo` (this checkout's
pyproject.toml as the root marker, its jupytext.toml and Jupyter settings; the repository's notebooks
as they are, and beside them ``small_<name>.py`` copies with small parameters for the tests that look
at one thing; a run at every run folder of the cpu-demo study; an executed notebook of the study in
reports/cpu-demo/) and starts JupyterLab on it with `make lab`, on 127.0.0.1 with a token. The runs
are tiny runs trained here with each demo label's method and pooler, read with a fiftieth of the
evaluation sets; with ``$CSELAB_DEMO_RUNS`` set to a runs folder that ``cselab reproduce cpu-demo
--profile cpu`` filled, they are those runs (linked file by file: what the notebooks cache goes into
the copies) read with the whole data mirror. Without a Chromium every browser test is skipped, and
one line says how to get one. Screenshots go to a temporary folder (``$CSELAB_BROWSER_SHOTS`` to
choose it).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

# not `from conftest import REPO`: without packages both conftest files are the module "conftest", and
# the test modules' `from conftest import REPO` finds this one once it is loaded, so it defines the same
REPO = Path(__file__).resolve().parents[2]

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
HOW_TO_GET_ONE = ("browser tests skipped: no Chromium found (apt-get install chromium, or set "
                  "CSELAB_CHROMIUM=/path/to/chromium)")
SERVER_START_SECONDS = 120
SHADOWING_NOTEBOOK = "umap"   # the name of an installed package (umap-learn)
AUTOSAVE_SECONDS = 3           # JupyterLab's autosave interval in the tests (default 120)


def chromium_path() -> str | None:
    given = os.environ.get("CSELAB_CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else None
    for candidate in CHROMIUM_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium")


def _missing_tools() -> str | None:
    for module in ("playwright", "jupyterlab", "jupytext", "ipywidgets"):
        try:
            __import__(module)
        except ImportError:
            return f"browser tests skipped: {module} is not installed (pip install -e '.[dev]')"
    return None if chromium_path() else HOW_TO_GET_ONE


def pytest_collection_modifyitems(config, items):
    reason = _missing_tools()
    browser = [item for item in items if "browser" in item.keywords]
    if reason and browser:
        for item in browser:
            item.add_marker(pytest.mark.skip(reason=reason))
        config._cselab_browser_skip = reason


def pytest_terminal_summary(terminalreporter, config):
    reason = getattr(config, "_cselab_browser_skip", None)
    if reason:   # one line, even under -q (skip reasons are only listed with -rs)
        terminalreporter.write_line(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


# ------------------------------------------------------------------- the project
def set_parameters(source: str, values: dict[str, str]) -> str:
    """``source`` with ``name = <value>`` lines of its parameters cell replaced (each must exist once)."""
    start = source.index('# %% tags=["parameters"]')
    end = source.index("# %%", start + 1)
    cell = source[start:end]
    for name, value in values.items():
        cell, count = re.subn(rf"^{name} = .*?(  #.*)?$", lambda m: f"{name} = {value}{m.group(1) or ''}", cell,
                              count=1, flags=re.MULTILINE)
        assert count == 1, f"no parameter {name!r} in the parameters cell"
    return source[:start] + cell + source[end:]


DEMO_RUNS = "CSELAB_DEMO_RUNS"   # a runs folder of the cpu-demo study (profile cpu), instead of tiny runs
DEMO_STUDY = REPO / "cselab" / "workbench" / "studies" / "cpu-demo.yaml"
# The demo's settings that a tiny run cannot take as they are: a K-means of 4 centroids that starts at
# once (16 need more sentences than 6 steps of 16 give), a neighbour queue a few batches long.
TINY_SECTIONS = {"clusterns": {"num_clusters": 4, "start_threshold": 1.0},
                 "augmented_positive": {"queue_size": 32, "top_k": 4}}


def demo_runs_given() -> Path | None:
    given = os.environ.get(DEMO_RUNS)
    return Path(given) if given else None


def _tiny_demo_runs(root: Path, tiny_model: Path, data_dir: Path) -> dict[str, Path]:
    """A tiny run for each label of the cpu-demo study, trained with the label's settings (method,
    pooler, method sections; TINY_SECTIONS where a tiny run needs its own)."""
    import yaml

    from cselab.model.config import load_config
    from cselab.model.train import train

    base = {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 160, "batch_size": 16,
            "max_steps": 6, "eval_every": 6, "log_every": 1, "probe_every": 3, "probe_sentences": 32,
            "log_embedding_grad_norm": True, "snapshot_every": 3, "final_eval": False, "lr": 1e-4,
            "dev_max_pairs": 200, "output_dir": str(root)}
    runs = {}
    for group in yaml.safe_load(DEMO_STUDY.read_text())["runs"]:
        settings = dict(group.get("set") or {})
        for section, values in TINY_SECTIONS.items():
            if section in settings or section in ([settings.get("method")] if isinstance(settings.get("method"), str)
                                                  else settings.get("method") or []):
                settings[section] = {**(settings.get(section) or {}), **values}
        cfg = load_config({**base, **settings, "run_name": group["label"]})
        runs[group["label"]] = train(cfg, data_dir=data_dir, progress=False)
    return runs


def _link_tree(source: Path, target: Path) -> None:
    """``source`` copied to ``target`` with hard links (no bytes copied; cselab replaces a file it
    rewrites, so the source's files stay as they were), or copied where links cannot be made."""
    try:
        shutil.copytree(source, target, copy_function=os.link, symlinks=True)
    except OSError:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)


@pytest.fixture(scope="session")
def lab_data(request) -> Path:
    """The data the project's notebooks read: the whole mirror for the demo's own runs, else a
    fiftieth of its evaluation sets (the tiny runs' numbers mean nothing; the code paths are the same)."""
    return request.getfixturevalue("data_dir" if demo_runs_given() else "thin_data")


@pytest.fixture(scope="session")
def lab_project(tmp_path_factory, tiny_model, data_dir, lab_data) -> Path:
    """A project as a person has it after `make demo`: every run of the cpu-demo study in runs/ at the
    folder the study computes for it, the repository's notebooks in notebooks/, and one notebook the
    study executed in reports/cpu-demo/ (compare, with the study's parameters, by the study's code)."""
    from cselab.workbench.studies.execute import execute_notebook
    from cselab.workbench.studies.spec import load_study

    root = tmp_path_factory.mktemp("lab-project")
    for name in ("pyproject.toml", "jupytext.toml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / ".jupyter", root / ".jupyter")   # `make lab` reads the project's Jupyter settings
    spec = load_study("cpu-demo", "cpu", runs_root=root / "runs", notebooks=True)
    given = demo_runs_given()
    if given is not None:
        sources = {run.label: given / run.run_dir.name for run in spec.runs}
        missing = [label for label, path in sources.items() if not (path / "results.json").is_file()]
        if missing:
            pytest.fail(f"{DEMO_RUNS}={given}: no finished run of {missing} there (cselab reproduce cpu-demo "
                        f"--profile cpu --runs-dir {given})")
    else:
        sources = _tiny_demo_runs(tmp_path_factory.mktemp("tiny-demo-runs"), tiny_model, data_dir)
    for run in spec.runs:
        _link_tree(sources[run.label], run.run_dir)

    notebooks = root / "notebooks"
    shutil.copytree(REPO / "notebooks", notebooks, ignore=shutil.ignore_patterns("executed", ".*"))
    small = {
        "quickstart": {"model": repr(str(tiny_model)), "max_steps": "4", "batch_size": "16", "eval_every": "2",
                       "sts_tasks": '["STSBenchmark"]'},
        "dynamics": {"score_sentences": "32", "score_batch_size": "16", "top4_batch_sizes": "[8, 16]",
                     "top4_batches": "2", "top4_sentences": "64"},
        # UMAP's maps, not PCA's (the default for fewer than 100 points): the Snapshots cell and the maps
        # notebook import umap-learn, as they do on the demo's runs
        # 700 corpus sentences: 6 batches, over the few (cselab.model.encoder.batching.FEW_BATCHES) that
        # encode shows no progress bar for; a new checkpoint's corpus encoding shows one
        "explorer": {"corpus_size": "700", "labelled_size": "42", "neighbours": "3", "projection": '"umap"'},
        "embedding_maps": {"per_class": "4", "max_length": "32", "projection": '"umap"'},
        "train": {"overrides": repr({"model": str(tiny_model), "max_steps": 4, "batch_size": 16, "eval_every": 4,
                                     "max_sentences": 128, "final_eval": False, "log_every": 1})},
    }
    for name, values in small.items():
        source = (REPO / "notebooks" / f"{name}.py").read_text()
        (notebooks / f"small_{name}.py").write_text(set_parameters(source, values))
    bad = set_parameters((notebooks / "small_explorer.py").read_text(), {"run": repr("no-such-run")})
    (notebooks / "explorer_unknown_run.py").write_text(bad)
    # a person's own notebook named like a package, beside the others (the repository had one:
    # notebooks/umap.py): kernels started in notebooks/ must still import umap-learn, not this file
    (notebooks / f"{SHADOWING_NOTEBOOK}.py").write_text((notebooks / "small_embedding_maps.py").read_text())

    # what `make demo` leaves in reports/cpu-demo/: a notebook the study executed (its own function,
    # its parameters), opened later from JupyterLab's file browser
    compare = next(entry for entry in spec.notebooks if entry.name == "compare")
    executed = root / "reports" / "cpu-demo" / "compare.ipynb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CSELAB_DATA", str(lab_data))
        patch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
        patch.setenv("MPLBACKEND", "agg")
        execute_notebook(REPO / "notebooks" / "compare.py", executed,
                         {"runs": {run.label: str(run.run_dir) for run in spec.runs}, **compare.parameters,
                          "figures_dir": str(root / "reports" / "figures" / "cpu-demo" / "compare"),
                          "tables_dir": str(root / "reports" / "cpu-demo" / "compare" / "tables")}, cwd=root)
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab_server(lab_project, lab_data, tmp_path_factory):
    """JupyterLab on the project, started by `make lab` as a person starts it (the Makefile's settings,
    --allow-root when the tests run as root, the kernels' environment); yields its base URL, token, log
    and root; stopped (with its kernels) at the end."""
    state = tmp_path_factory.mktemp("lab-state")
    port, token = _free_port(), uuid.uuid4().hex
    venv = Path(sys.executable).parent.parent   # the Makefile's VENV: the one running the tests
    if not (venv / "bin" / "jupyter").is_file():
        pytest.skip(f"browser tests skipped: `make lab` runs {venv}/bin/jupyter, which does not exist")
    env = {key: value for key, value in os.environ.items()
           if key not in ("CSELAB_ROOT", "TQDM_DISABLE", "JUPYTER_CONFIG_PATH", "PYTHONSAFEPATH", "MAKEFLAGS",
                          "MAKELEVEL")}
    env.update({
        "JUPYTER_CONFIG_DIR": str(state / "config"),        # not the user's ~/.jupyter
        "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(state / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
        "CSELAB_DATA": str(lab_data),   # the tiny runs: a fiftieth of the evaluation sets
        "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "MPLBACKEND": "agg",
    })
    settings = state / "settings" / "@jupyterlab"
    # every cell in the page (JupyterLab may leave off-screen cells out of the DOM otherwise)
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    # autosave within seconds, so that a test sees whether merely opening a notebook rewrites it
    (settings / "docmanager-extension").mkdir(parents=True)
    (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
        f'{{"autosaveInterval": {AUTOSAVE_SECONDS}}}')
    log = open(state / "server.log", "w")
    lab_args = [f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                "--no-browser", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    # -o: the Makefile's install step counts as done (this environment is installed; make must not pip)
    command = ["make", "--no-print-directory", "-f", str(REPO / "Makefile"), "-C", str(lab_project), "lab",
               f"VENV={venv}", "-o", f"{venv}/.installed-notebooks", f"LAB_ARGS={' '.join(lab_args)}"]
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"`make lab` exited with {server.returncode}: {(state / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_SECONDS} s: {state / 'server.log'}")
            time.sleep(0.5)
        yield {"base": base, "token": token, "log": state / "server.log", "root": lab_project,
               "autosave_seconds": AUTOSAVE_SECONDS, "shadowing": SHADOWING_NOTEBOOK}
    finally:
        # make, jupyter lab and its kernels: the session started for make (SIGTERM: the server shuts its
        # kernels down)
        _stop_group(server)
        log.close()


def _stop_group(leader: subprocess.Popen, seconds: float = 20) -> None:
    """SIGTERM to the process group ``leader`` started, SIGKILL to what is left of it after ``seconds``."""
    def signal_group(sig) -> bool:
        leader.poll()   # reaped once it exits: a zombie would keep the group alive
        try:
            os.killpg(leader.pid, sig)
            return True
        except ProcessLookupError:   # nobody left
            return False

    signal_group(signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while signal_group(0):
        if time.monotonic() > deadline:
            signal_group(signal.SIGKILL)
            break
        time.sleep(0.2)
    leader.wait()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    given = os.environ.get("CSELAB_BROWSER_SHOTS")
    folder = Path(given) if given else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, lab_server, screenshots, request):
    """A fresh page; a screenshot when the test fails (tests take their own on success)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    yield tab
    call = getattr(request.node, "report_call", None)
    if call is not None and call.failed:
        tab.screenshot(path=str(screenshots / f"{request.node.name}-failed.png"), full_page=True)
    context.close()
    _shut_down_kernels(lab_server)   # the next test starts from no running kernel (2 cores)


def _shut_down_kernels(lab_server) -> None:
    import json

    auth = {"Authorization": f"token {lab_server['token']}"}
    with urllib.request.urlopen(urllib.request.Request(f"{lab_server['base']}/api/sessions", headers=auth)) as reply:
        sessions = json.load(reply)
    for session in sessions:
        request = urllib.request.Request(f"{lab_server['base']}/api/sessions/{session['id']}", headers=auth,
                                         method="DELETE")
        urllib.request.urlopen(request).close()
