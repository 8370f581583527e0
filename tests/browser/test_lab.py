"""The notebooks as a person uses them: JupyterLab started by `make lab`, each notebook opened from
the file browser (double-click notebooks/, then the .py: the repository's settings make it a
notebook, and JupyterLab starts its kernel in notebooks/), run, looked at.

Each test runs all cells from the Run menu and waits on the kernel: no ``[*]`` prompt left and the
execution indicator idle for a couple of seconds (the status text can read "Idle" while a cell is
still queued). What the page shows is then checked: every cell's outputs for errors (error outputs,
tracebacks on stderr) and stray values, figures as <img>, widgets that react and say when they are
busy. The project's runs have snapshots, and notebooks/ also holds a notebook named like an
installed package (umap.py). Each Run All's seconds are printed and written to run_all_seconds.json
beside the screenshots.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

QUIET_SECONDS = 2.0
RUN_SECONDS = 900        # a bound, not a measurement: the loaded 2-core machine is slow
DEFAULTS_SECONDS = 3600  # the same for a notebook on its defaults (quickstart trains 60 steps of MiniLM)

STATE_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return null;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent);
  const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return {busy: prompts.some(t => t.includes('*')), numbered: prompts.filter(t => /\\[\\d+\\]/.test(t)).length,
          cells: prompts.length, status: indicator ? indicator.getAttribute('data-status') : null};
}"""
NOTEBOOK_JS = "() => window.jupyterapp.shell.currentWidget.context.model.toJSON()"


KERNEL_JS = """() => { const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.connectionStatus + '/' + k.status : null; }"""


def listed(page, name: str):
    """The file browser's entry called ``name``."""
    text = page.locator(".jp-DirListing-itemText", has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))
    return page.locator(".jp-FileBrowser .jp-DirListing-item", has=text).first


def open_notebook(page, lab_server, name: str):
    """Open notebooks/<name>.py the way a person does: JupyterLab at the project root, a double-click
    on notebooks/ in the file browser, then one on the file; wait for its kernel. On a fresh server
    JupyterLab sometimes asks which kernel to start (the kernel list arrives after the notebook): the
    test answers as a person would, with the preferred one."""
    # reset: not the tabs of the previous tests (JupyterLab restores its workspace otherwise)
    page.goto(f"{lab_server['base']}/lab?reset&token={lab_server['token']}")
    listed(page, "notebooks").dblclick()
    page.wait_for_function("() => window.jupyterapp.serviceManager && document.querySelector("
                           "'.jp-FileBrowser .jp-BreadCrumbs').textContent.includes('notebooks')")
    listed(page, f"{name}.py").dblclick()
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell",   # a notebook, not the editor
                           timeout=120_000)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path") == f"notebooks/{name}.py"
    deadline = time.monotonic() + 120
    while page.evaluate(KERNEL_JS) != "connected/idle":
        accept = page.locator(".jp-Dialog .jp-mod-accept")
        if accept.count() and accept.first.is_visible():
            accept.first.click()
        assert time.monotonic() < deadline, f"no kernel for {name}: {page.evaluate(KERNEL_JS)}"
        time.sleep(0.25)


def menu(page, top: str, item: str):
    page.locator(".lm-MenuBar-itemLabel", has_text=top).first.click()
    entry = page.locator(".lm-Menu .lm-Menu-itemLabel", has_text=item).first
    entry.wait_for(state="visible")
    time.sleep(0.5)   # a click while the menu is still opening is lost (seen: Run All did nothing)
    entry.click()


def wait_for_kernel(page, seconds: float = RUN_SECONDS, started: int = 1) -> dict:
    """Until no cell is queued or running and the kernel has been idle for QUIET_SECONDS."""
    deadline, quiet_since = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        state = page.evaluate(STATE_JS)
        if state and not state["busy"] and state["status"] == "idle" and state["numbered"] >= started:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= QUIET_SECONDS:
                return state
        else:
            quiet_since = None
        time.sleep(0.25)
    raise AssertionError(f"the kernel was still busy after {seconds} s: {page.evaluate(STATE_JS)}")


def run_all(page, screenshots=None, name: str | None = None, seconds: float = RUN_SECONDS) -> dict:
    """Run → Run All Cells, again when no cell started (a menu click is sometimes lost on this loaded
    machine, as a person's can be), then wait on the kernel. With ``name``, the seconds from the click
    to the idle kernel are printed and kept in ``screenshots``/run_all_seconds.json."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = time.monotonic()
    for attempt in range(3):
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.click()   # the notebook has focus
        page.keyboard.press("Escape")
        menu(page, "Run", "Run All Cells")
        try:
            page.wait_for_function(f"() => {{ const s = ({STATE_JS})(); return s && (s.busy || s.numbered > 0); }}",
                                   timeout=20_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    else:
        raise AssertionError("Run All Cells started no cell, three times")
    state = wait_for_kernel(page, seconds)
    if name is not None:
        seconds = round(time.monotonic() - started - QUIET_SECONDS, 1)
        print(f"Run All of {name}: {seconds} s")
        record = screenshots / "run_all_seconds.json"
        times = json.loads(record.read_text()) if record.exists() else {}
        record.write_text(json.dumps({**times, name: seconds}, indent=1))
    return state


def outputs(page) -> list[dict]:
    notebook = page.evaluate(NOTEBOOK_JS)
    return [out for cell in notebook["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", [])]


def errors(page) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for o in outputs(page) if o["output_type"] == "error"]


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def problems(page) -> list[str]:
    """What no cell of a notebook that ran should show: error outputs, a traceback printed to stderr,
    and stray values (a result shown only as its plain-text repr, e.g. `368` from write_text)."""
    found = []
    for o in outputs(page):
        if o["output_type"] == "error":
            found.append(f"error output {o['ename']}: {o['evalue']}")
        elif o["output_type"] == "stream" and o.get("name") == "stderr" and "Traceback (most recent call last)" in \
                _text(o.get("text")):
            found.append(f"traceback on stderr: {_text(o.get('text'))[-300:]}")
        elif o["output_type"] == "execute_result" and set(o.get("data", {})) == {"text/plain"}:
            found.append(f"stray value: {_text(o['data']['text/plain'])[:100]}")
    return found


def kernel_prints(page, code: str) -> str:
    """What ``code``, run in the open notebook's kernel outside any cell, prints (or its error)."""
    return page.evaluate("""async (code) => {
      const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
      let text = '';
      const future = kernel.requestExecute({code, store_history: false});
      future.onIOPub = (msg) => {
        if (msg.header.msg_type === 'stream') text += msg.content.text;
        if (msg.header.msg_type === 'error') text += msg.content.ename + ': ' + msg.content.evalue;
      };
      await future.done;
      return text; }""", code)


def shown_images(page) -> int:
    """<img> outputs that the browser has loaded (naturalWidth > 0)."""
    return page.evaluate("() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                         ".jp-OutputArea-output img')].filter(i => i.complete && i.naturalWidth > 0).length")


def page_text(page) -> str:
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").inner_text()


def shot(page, screenshots, name: str, element=None):
    if element is not None:
        element.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshots / f"{name}.png"))


def save_and_read(page, path) -> str:
    """Save from JupyterLab (Ctrl+S) and return the file once written."""
    before = path.stat().st_mtime_ns
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while path.stat().st_mtime_ns == before:
        assert time.monotonic() < deadline, f"{path} was not saved"
        time.sleep(0.2)
    return path.read_text()


# ------------------------------------------------------------------- the tests
def test_make_lab_runs_as_root_and_says_so(lab_server):
    """`make lab` started the server the tests use; as root (containers, CI) it passed --allow-root,
    which jupyter lab needs there, and said so."""
    log = lab_server["log"].read_text()
    if os.geteuid() != 0:
        pytest.skip("not root: the --allow-root branch of `make lab` is not taken")
    # the server answered the fixture: as root, jupyter lab starts only when given --allow-root
    assert "running as root: passing --allow-root to jupyter lab" in log
    assert "Running as root is not recommended. Use --allow-root to bypass." not in log


def test_opening_a_notebook_leaves_it_clean(page, lab_server, screenshots):
    """Opened and given its kernel, a notebook nobody edited shows no unsaved dot, and autosave
    (every few seconds here) leaves its file alone: JupyterLab filled in `language_info`,
    which the .py files do not carry, and the kernel changed it again (cselab.workbench.jupyterlab)."""
    source = lab_server["root"] / "notebooks" / "explorer.py"
    before = source.stat().st_mtime_ns
    open_notebook(page, lab_server, "explorer")
    time.sleep(3 * lab_server["autosave_seconds"])
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty") is False
    tab = page.locator(".lm-TabBar-tab.lm-mod-current", has_text="explorer.py").first
    assert "jp-mod-dirty" not in (tab.get_attribute("class") or "")
    assert source.stat().st_mtime_ns == before, "opening the notebook rewrote it"
    shot(page, screenshots, "explorer-opened-clean", tab)


def test_quickstart_shows_its_figures_and_saves_unchanged(page, lab_server, screenshots):
    source = lab_server["root"] / "notebooks" / "small_quickstart.py"
    original = source.read_text()
    open_notebook(page, lab_server, "small_quickstart")
    run_all(page, screenshots, "small_quickstart")
    assert problems(page) == []                           # no error, no stray `368` from write_text
    assert shown_images(page) >= 1                       # the loss figure, drawn as an image
    assert "<Figure size" not in page_text(page)
    assert (lab_server["root"] / "figures" / "quickstart" / "loss.png").is_file()   # the project root's figures/
    assert list((lab_server["root"] / "runs" / "quickstart").glob("simcse-*/results.json"))
    shot(page, screenshots, "quickstart", page.locator(".jp-OutputArea-output img").first)
    # saving a notebook nobody edited leaves its .py byte for byte as it was (no header churn)
    assert save_and_read(page, source) == original


@pytest.mark.slow   # default run: the quickstart, explorer and embedding_maps browser tests
def test_dynamics_on_runs_none_draws_its_figures(page, lab_server, screenshots):
    open_notebook(page, lab_server, "small_dynamics")
    run_all(page, screenshots, "small_dynamics")
    assert problems(page) == []
    text = page_text(page)
    assert "<Figure size" not in text
    figures = sorted(p.name for p in (lab_server["root"] / "figures" / "dynamics").glob("*.png"))
    assert len(figures) >= 3 and shown_images(page) >= len(figures)
    shot(page, screenshots, "dynamics", page.locator(".jp-OutputArea-output img").first)


def test_embedding_maps_beside_a_notebook_named_umap(page, lab_server, screenshots):
    """The UMAP maps notebook (notebooks/umap.py until it was renamed) runs in a kernel started in
    notebooks/, where a notebook called umap.py sits too: `import umap` is umap-learn's."""
    assert (lab_server["root"] / "notebooks" / f"{lab_server['shadowing']}.py").is_file()
    open_notebook(page, lab_server, "small_embedding_maps")
    run_all(page, screenshots, "small_embedding_maps")
    assert problems(page) == []
    figures = sorted((lab_server["root"] / "figures" / "embedding_maps").glob("umap_*.png"))
    assert figures and shown_images(page) >= len(figures)
    used = kernel_prints(page, "print(sorted({frame.attrs['method'] for frame in frames.values()}))")
    assert used.strip() == "['umap']"                                   # umap-learn's UMAP drew every panel
    shot(page, screenshots, "embedding-maps", page.locator(".jp-OutputArea-output img").first)


def _box(page, inside: str):
    """The explorer's widget box that holds ``inside`` (textarea: sentences; .widget-hslider: snapshots)."""
    return page.locator(".widget-vbox", has=page.locator(inside)).first


# Records, from before an action until it is done, what a widget box showed: whether its busy note
# appeared in its status line (the box's first output area), whether all its controls but the
# sentence box were disabled at some moment while it was shown (the state updates and the note arrive
# as separate messages, in either order on the page), whether a progress widget appeared there, and
# how far the view (the box's last output area) moved or shrank meanwhile: the page must not jump.
WATCH_JS = """(inside) => {
  const box = [...document.querySelectorAll('.widget-vbox')].find(v => v.querySelector(inside));
  const areas = () => box.querySelectorAll('.jp-OutputArea');
  const view = () => {   // within the box: the page may scroll meanwhile
    const r = areas()[areas().length - 1].getBoundingClientRect();
    return {top: r.top - box.getBoundingClientRect().top, height: r.height};
  };
  const start = view();
  const seen = window._seen = {busy: false, disabledWhileBusy: false, progress: false, moved: 0, shrank: 0};
  const look = () => {
    const output = areas()[0];
    if (output && output.querySelector('.cselab-busy')) {
      seen.busy = true;
      const controls = [...box.querySelectorAll('select, button, input, .noUi-target')];
      seen.disabledWhileBusy ||= controls.every(c => c.disabled || c.hasAttribute('disabled'));
      const now = view();
      seen.moved = Math.max(seen.moved, Math.abs(now.top - start.top));
      seen.shrank = Math.max(seen.shrank, start.height - now.height);
    }
    if (output && output.querySelector('.widget-hprogress')) seen.progress = true;
  };
  window._watch && window._watch.disconnect();
  window._watch = new MutationObserver(look);
  window._watch.observe(box, {subtree: true, childList: true, attributes: true});
}"""


def _image_changed(page, inside: str, src: str):
    page.wait_for_function("""([inside, src]) => { const b = [...document.querySelectorAll('.widget-vbox')]
        .find(v => v.querySelector(inside)); const i = b && b.querySelector('.jp-OutputArea-output img');
        return i && i.getAttribute('src') !== src && !b.querySelector('.cselab-busy'); }""",
                           arg=[inside, src], timeout=240_000)


def _similarity_state(page) -> dict:
    box = _box(page, "textarea")
    image = box.locator(".jp-OutputArea-output img").first
    return {"src": image.get_attribute("src"), "rows": box.locator("table tbody tr").count(),
            "table": box.locator("table").first.inner_text()}


def test_explorer_widgets_react(page, lab_server, screenshots):
    open_notebook(page, lab_server, "small_explorer")
    run_all(page, screenshots, "small_explorer")
    assert problems(page) == []                           # the Snapshots cell included
    # the kernel a person gets: in notebooks/, where umap.py sits, importing umap-learn all the same
    where = kernel_prints(page, "import os, umap; print(os.getcwd()); print(umap.__file__)").split("\n")
    assert where[0] == str(lab_server["root"] / "notebooks")
    assert "site-packages" in where[1] and not where[1].startswith(where[0]), where
    assert page.locator(".widget-dropdown select").count() >= 3          # run, checkpoint; run of the maps
    textarea = page.locator(".widget-textarea textarea").first
    assert textarea.is_visible()
    _box(page, "textarea").locator(".jp-OutputArea-output img").first.wait_for()
    before = _similarity_state(page)
    shot(page, screenshots, "explorer-before", textarea)

    added = "A cat is sleeping on the sofa."
    textarea.fill(textarea.input_value() + "\n" + added)
    page.evaluate(WATCH_JS, "textarea")
    page.locator("button.jupyter-button", has_text="compare").click()
    _image_changed(page, "textarea", before["src"])
    wait_for_kernel(page)
    after = _similarity_state(page)
    assert after["src"] != before["src"]                                   # a new heat-map (5 × 5)
    assert after["rows"] > before["rows"] and added in after["table"]      # the new sentence's neighbours
    seen = page.evaluate("() => window._seen")
    assert seen["busy"] and seen["disabledWhileBusy"], seen                # "recomputing…", controls off
    assert not page.locator(".widget-textarea textarea").first.is_disabled()   # and on again
    shot(page, screenshots, "explorer-sentence-added", page.locator("button.jupyter-button", has_text="compare"))

    # another checkpoint: the corpus is encoded again, its progress bar shown in the box (not in
    # JupyterLab's hidden Log Console), under the busy note
    before = _similarity_state(page)
    page.evaluate(WATCH_JS, "textarea")
    _box(page, "textarea").locator(".widget-dropdown select").nth(1).select_option("step 0 (before training)")
    page.wait_for_function("() => window._seen.busy", timeout=60_000)
    shot(page, screenshots, "explorer-checkpoint-recomputing", _box(page, "textarea"))
    _image_changed(page, "textarea", before["src"])
    wait_for_kernel(page)
    seen = page.evaluate("() => window._seen")
    assert seen["busy"] and seen["disabledWhileBusy"] and seen["progress"], seen
    assert seen["moved"] <= 1 and seen["shrank"] <= 1, seen               # the old view stays until replaced

    slider_box = _box(page, ".widget-hslider")
    image = slider_box.locator(".jp-OutputArea-output img").first
    width = page.evaluate("(i) => i.naturalWidth", image.element_handle())
    assert width >= 450, f"the snapshot map is {width} px wide"            # 5 inches at 100 dpi, and its legend
    map_before = image.get_attribute("src")
    shown_step = slider_box.locator(".widget-readout").first.inner_text()
    page.evaluate(WATCH_JS, ".widget-hslider")
    slider_box.locator(".noUi-handle").first.focus()
    page.keyboard.press("ArrowLeft")
    _image_changed(page, ".widget-hslider", map_before)
    wait_for_kernel(page)
    assert slider_box.locator(".widget-readout").first.inner_text() != shown_step
    assert page.evaluate("() => window._seen")["busy"]
    assert problems(page) == []
    shot(page, screenshots, "explorer-slider-moved", slider_box)

    # another run: its maps are computed (every snapshot encoded and projected), busy meanwhile
    map_before = slider_box.locator(".jp-OutputArea-output img").first.get_attribute("src")
    page.evaluate(WATCH_JS, ".widget-hslider")
    runs = slider_box.locator(".widget-dropdown select").first
    other = [o for o in runs.locator("option").all_inner_texts() if o != runs.input_value()][0]
    runs.select_option(other)
    page.wait_for_function("() => window._seen.busy", timeout=60_000)
    shot(page, screenshots, "explorer-snapshots-recomputing", slider_box)
    _image_changed(page, ".widget-hslider", map_before)
    wait_for_kernel(page)
    seen = page.evaluate("() => window._seen")
    assert seen["busy"] and seen["disabledWhileBusy"] and seen["progress"], seen   # a bar over its snapshots
    assert seen["moved"] <= 1 and seen["shrank"] <= 1, seen               # the map stays until replaced
    assert problems(page) == []
    shot(page, screenshots, "explorer-snapshots-other-run", slider_box)


@pytest.mark.slow   # default run: the quickstart, explorer and embedding_maps browser tests
def test_training_progress_bar_is_a_widget(page, lab_server, screenshots):
    finished_before = set((lab_server["root"] / "runs").glob("simcse-*/results.json"))
    open_notebook(page, lab_server, "small_train")
    run_all(page, screenshots, "small_train")
    assert problems(page) == []
    bar = page.locator(".jp-OutputArea-output .widget-hprogress").first
    assert bar.is_visible()
    widget_line = page.locator(".jp-OutputArea-output .widget-hbox",
                               has=page.locator(".widget-hprogress")).first.inner_text()
    assert "training" in widget_line and "4/4" in widget_line
    bars = [o for o in outputs(page) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert bars, "the progress bar is not a widget output"
    # the new run went to the project root's runs/, not notebooks/runs/ where the kernel started
    assert len(set((lab_server["root"] / "runs").glob("simcse-*/results.json")) - finished_before) == 1
    assert not (lab_server["root"] / "notebooks" / "runs").exists()
    shot(page, screenshots, "train-progress", bar)


@pytest.mark.slow   # default run: the quickstart, explorer and embedding_maps browser tests
def test_unknown_run_label_is_one_readable_line(page, lab_server, screenshots):
    open_notebook(page, lab_server, "explorer_unknown_run")
    run_all(page)
    failures = [o for o in outputs(page) if o["output_type"] == "error"]
    assert len(failures) == 1
    error = failures[0]
    assert error["ename"] == "BadParameter" and "run = 'no-such-run' is not one of the runs" in error["evalue"]
    assert len(error["traceback"]) == 1 and "\n" not in error["traceback"][0]
    shown = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                         has_text="BadParameter").first
    text = shown.inner_text().strip()
    assert text == error["traceback"][0] and "Traceback" not in text and "cselab/" not in text
    shot(page, screenshots, "explorer-unknown-run", shown)
    print(json.dumps(error["traceback"]))


REPOSITORY_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", sorted(p.stem for p in REPOSITORY_NOTEBOOKS.glob("*.py")))
def test_saving_an_unedited_notebook_leaves_the_checkout_clean(page, lab_server, name):
    """Every repository notebook, opened from the file browser and saved (Ctrl+S, as autosave does
    during Run All) without an edit, is written back byte for byte as the checkout has it: `git status`
    stays clean (notebooks/dynamics.py came back with a blank line of a markdown cell as `#`)."""
    source = lab_server["root"] / "notebooks" / f"{name}.py"
    open_notebook(page, lab_server, name)
    assert save_and_read(page, source) == (REPOSITORY_NOTEBOOKS / f"{name}.py").read_text()


# ------------------------------------------------------------------- after `make demo`, as a person
# The repository's notebooks, each opened from the file browser and run on its defaults (runs = None:
# the demo's runs in runs/), not through papermill with the study's parameters. The two whose
# defaults failed on the demo's runs run by default; the others (minutes each; quickstart and train
# train a model of their own) with -m slow.
DEFAULTS = {"paper_apincse": (), "compare": (), **{name: (pytest.mark.slow,) for name in (
    "quickstart", "train", "dynamics", "geometry", "clustering", "embedding_maps", "explorer", "paper_mixcse",
    "paper_gs_infonce", "paper_clusterns")}}


def test_every_repository_notebook_is_in_the_defaults_test():
    from conftest import REPO

    assert sorted(DEFAULTS) == sorted(p.stem for p in (REPO / "notebooks").glob("*.py"))


@pytest.mark.parametrize("name", [pytest.param(name, marks=marks) for name, marks in DEFAULTS.items()])
def test_a_notebook_runs_on_its_defaults_after_the_demo(page, lab_server, screenshots, name):
    """paper_apincse stopped at cell 2 ("variant 'APINCSE': runs 'apincse' and 'apincse-pooler' differ
    in augmented_positive"); compare took the pooler-only control for a second SimCSE seed, then
    stopped ("two runs of group='SimCSE' with seed=42"); later it skipped the ablation ("variants is
    empty") and printed its sources as a dict."""
    open_notebook(page, lab_server, name)
    run_all(page, screenshots, f"defaults-{name}", DEFAULTS_SECONDS)
    assert problems(page) == []
    state = page.evaluate(STATE_JS)
    assert state["numbered"] == state["cells"]                          # every cell ran
    text = page_text(page)
    assert "<Figure size" not in text
    shown = "".join(_text(o.get("text")) + _text(o.get("data", {}).get("text/plain")) for o in outputs(page))
    if name == "compare":   # the pooler-only control is a group of its own, SimCSE one run
        groups = kernel_prints(page, "print(sts_frame[['run', 'group']].to_dict('list'))")
        assert "'APINCSE pooler only'" in groups and groups.count("'SimCSE'") == 1, groups
        # the ablation found from the labels, against the pooler alone (it said "variants is empty")
        assert ("the ablation in the run labels: SimCSE, APINCSE, APINCSE-AP, APINCSE-IN, APINCSE pooler only; "
                "control APINCSE pooler only") in shown
        assert (lab_server["root"] / "figures" / "compare" / "ablation.png").is_file()
        assert "{'" not in shown and "(n 1; test pairs)" not in shown        # no raw dict, no repeated suffix
    if name == "paper_apincse":   # one seed a variant: one line, not a table of "no runs" rows
        assert "No claim can be tested on these runs, one seed per variant" in shown and "no runs" not in shown
    if name == "paper_apincse":
        found = kernel_prints(page, "print({v: list(m) for v, m in found.items()})")
        assert "'APINCSE': ['apincse']" in found and "'APINCSE pooler only': ['apincse-pooler']" in found, found
    if name not in ("train",):
        assert shown_images(page) >= 1
    shot(page, screenshots, f"defaults-{name}", page.locator(".jp-OutputArea-output").first)   # the runs it took


def test_an_executed_notebook_of_the_demo_opens_with_its_outputs(page, lab_server, screenshots):
    """Double-clicking a notebook in reports/cpu-demo/ gave "File Load Error … Unable to read paired
    notebook … matches none of the export formats: py:percent" and an empty tab."""
    page.goto(f"{lab_server['base']}/lab?reset&token={lab_server['token']}")
    for folder in ("reports", "cpu-demo"):
        listed(page, folder).dblclick()
        page.wait_for_function(f"() => document.querySelector('.jp-FileBrowser .jp-BreadCrumbs')"
                               f".textContent.includes('{folder}')")
    listed(page, "compare.ipynb").dblclick()
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell", timeout=120_000)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path") == "reports/cpu-demo/compare.ipynb"
    assert page.locator(".jp-Dialog").count() == 0                         # no File Load Error
    page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
                           ".jp-OutputArea-output img').length > 0")
    assert shown_images(page) >= 2                                         # its figures, as executed
    assert problems(page) == [] and "SimCSE" in page_text(page)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty") is False
    shot(page, screenshots, "executed-compare-opened", page.locator(".jp-OutputArea-output img").first)


def _view(page, inside: str):
    """The view of the explorer's box holding ``inside``: its last output area."""
    return _box(page, inside).locator(".jp-OutputArea").last


def test_the_explorer_with_an_empty_sentence_box_and_enter(page, lab_server, screenshots):
    """Cleared, the sentence box gave a raw ValueError traceback and left "recomputing…" on screen;
    typed sentences were drawn only by "compare", not by Enter."""
    open_notebook(page, lab_server, "explorer")
    run_all(page, screenshots, "explorer-defaults")
    assert problems(page) == []
    textarea = page.locator(".widget-textarea textarea").first
    _view(page, "textarea").locator("img").first.wait_for()
    textarea.fill("")
    page.locator("button.jupyter-button", has_text="compare").click()
    message = _view(page, "textarea").locator(".cselab-message")
    message.wait_for(timeout=60_000)
    wait_for_kernel(page)
    assert message.inner_text().strip() == ("No sentence to compare: type one or more, one a line, then Enter or "
                                            "compare.")
    box = _box(page, "textarea")
    assert box.locator(".cselab-busy").count() == 0                         # no spinner left
    assert box.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert problems(page) == []
    assert "Traceback" not in box.inner_text() and "ValueError" not in box.inner_text()
    shot(page, screenshots, "explorer-empty-sentence-box", box)

    # typed, then Enter: drawn without "compare"
    textarea.click()
    page.keyboard.type("A man is playing a guitar.")
    page.keyboard.press("Enter")
    page.keyboard.type("Someone plays music.")
    page.keyboard.press("Enter")
    image = _view(page, "textarea").locator(".jp-OutputArea-output img").first
    image.wait_for(timeout=120_000)
    wait_for_kernel(page)
    page.wait_for_function("""() => [...document.querySelectorAll('.widget-vbox')].find(v => v.querySelector(
        'textarea')).querySelectorAll('table tbody tr').length > 0""", timeout=60_000)
    table = box.locator("table").first.inner_text()
    assert "A man is playing a guitar." in table and "Someone plays music." in table
    assert page.evaluate("() => document.activeElement && document.activeElement.tagName") == "TEXTAREA"
    assert problems(page) == []
    shot(page, screenshots, "explorer-typed-then-enter", box)
