"""The notebooks as a person uses them: opened from their .py files in JupyterLab, run, looked at.

Each test opens /lab/tree/notebooks/<name>.py (the repository's settings make it a notebook, not
a text file), runs all cells from the Run menu and waits on the kernel: no ``[*]`` prompt left and
the execution indicator idle for a couple of seconds (the status text can read "Idle" while a
cell is still queued). What the page shows is then checked: figures as <img>, no error output,
widgets that react.
"""
from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.browser

QUIET_SECONDS = 2.0
RUN_SECONDS = 900        # a bound, not a measurement: the loaded 2-core machine is slow

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


def open_notebook(page, lab_server, name: str):
    """Open notebooks/<name>.py by its URL, as a person following a link or the README does, and wait
    for its kernel. On a fresh server JupyterLab sometimes asks which kernel to start (the kernel
    list arrives after the notebook): the test answers as a person would, with the preferred one."""
    # reset: not the tabs of the previous tests (JupyterLab restores its workspace otherwise)
    page.goto(f"{lab_server['base']}/lab/tree/notebooks/{name}.py?reset&token={lab_server['token']}")
    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell",   # a notebook, not the editor
                           timeout=120_000)
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


def run_all(page) -> dict:
    """Run → Run All Cells, again when no cell started (a menu click is sometimes lost on this loaded
    machine, as a person's can be), then wait on the kernel."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

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
    return wait_for_kernel(page)


def outputs(page) -> list[dict]:
    notebook = page.evaluate(NOTEBOOK_JS)
    return [out for cell in notebook["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", [])]


def errors(page) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for o in outputs(page) if o["output_type"] == "error"]


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
def test_quickstart_shows_its_figures_and_saves_unchanged(page, lab_server, screenshots):
    source = lab_server["root"] / "notebooks" / "quickstart.py"
    original = source.read_text()
    open_notebook(page, lab_server, "quickstart")
    run_all(page)
    assert errors(page) == []
    assert shown_images(page) >= 1                       # the loss figure, drawn as an image
    assert "<Figure size" not in page_text(page)
    assert (lab_server["root"] / "figures" / "quickstart" / "loss.png").is_file()   # the project root's figures/
    assert list((lab_server["root"] / "runs" / "quickstart").glob("simcse-*/results.json"))
    shot(page, screenshots, "quickstart", page.locator(".jp-OutputArea-output img").first)
    # saving a notebook nobody edited leaves its .py byte for byte as it was (no header churn)
    assert save_and_read(page, source) == original


@pytest.mark.slow   # default run: the quickstart and explorer browser tests drive the same lab
def test_dynamics_on_runs_none_draws_its_figures(page, lab_server, screenshots):
    open_notebook(page, lab_server, "dynamics")
    run_all(page)
    assert errors(page) == []
    text = page_text(page)
    assert "<Figure size" not in text
    figures = sorted(p.name for p in (lab_server["root"] / "figures" / "dynamics").glob("*.png"))
    assert len(figures) >= 3 and shown_images(page) >= len(figures)
    shot(page, screenshots, "dynamics", page.locator(".jp-OutputArea-output img").first)


def _similarity_state(page) -> dict:
    box = page.locator(".widget-vbox", has=page.locator("textarea")).first
    image = box.locator(".jp-OutputArea-output img").first
    return {"src": image.get_attribute("src"), "rows": box.locator("table tbody tr").count(),
            "table": box.locator("table").first.inner_text()}


def test_explorer_widgets_react(page, lab_server, screenshots):
    open_notebook(page, lab_server, "explorer")
    run_all(page)
    assert errors(page) == []
    assert page.locator(".widget-dropdown select").count() >= 3          # run, checkpoint; run of the maps
    textarea = page.locator(".widget-textarea textarea").first
    assert textarea.is_visible()
    page.locator(".widget-vbox", has=page.locator("textarea")).first.locator(
        ".jp-OutputArea-output img").first.wait_for()
    before = _similarity_state(page)
    shot(page, screenshots, "explorer-before", textarea)

    added = "A cat is sleeping on the sofa."
    textarea.fill(textarea.input_value() + "\n" + added)
    page.locator("button.jupyter-button", has_text="compare").click()
    page.wait_for_function("""(src) => { const b = [...document.querySelectorAll('.widget-vbox')]
        .find(v => v.querySelector('textarea')); const i = b && b.querySelector('.jp-OutputArea-output img');
        return i && i.getAttribute('src') !== src; }""", arg=before["src"], timeout=120_000)
    wait_for_kernel(page)
    after = _similarity_state(page)
    assert after["src"] != before["src"]                                   # a new heat-map (5 × 5)
    assert after["rows"] > before["rows"] and added in after["table"]      # the new sentence's neighbours
    shot(page, screenshots, "explorer-sentence-added", page.locator("button.jupyter-button", has_text="compare"))

    slider_box = page.locator(".widget-vbox", has=page.locator(".widget-hslider")).first
    map_before = slider_box.locator(".jp-OutputArea-output img").first.get_attribute("src")
    shown_step = slider_box.locator(".widget-readout").first.inner_text()
    slider_box.locator(".noUi-handle").first.focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("""(src) => { const b = [...document.querySelectorAll('.widget-vbox')]
        .find(v => v.querySelector('.widget-hslider')); const i = b && b.querySelector('.jp-OutputArea-output img');
        return i && i.getAttribute('src') !== src; }""", arg=map_before, timeout=120_000)
    wait_for_kernel(page)
    assert slider_box.locator(".widget-readout").first.inner_text() != shown_step
    shot(page, screenshots, "explorer-slider-moved", slider_box)


@pytest.mark.slow   # default run: the quickstart and explorer browser tests drive the same lab
def test_training_progress_bar_is_a_widget(page, lab_server, screenshots):
    finished_before = set((lab_server["root"] / "runs").glob("simcse-*/results.json"))
    open_notebook(page, lab_server, "train")
    run_all(page)
    assert errors(page) == []
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


@pytest.mark.slow   # default run: the quickstart and explorer browser tests drive the same lab
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
