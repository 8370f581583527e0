"""Every committed figure says, in a generated file, where it came from; none predates its drawing code.

The provenance is written by save_figure itself (cselab/workbench/plots/provenance.py); these tests
check that it is written, and that each committed PNG was drawn at a commit that already holds the
last change to the code that drew it (else: `make findings` / `make demo-figures` draws it again).
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cselab.workbench.plots.core import save_figure  # noqa: E402
from cselab.workbench.plots.provenance import (PLOTS_PACKAGE, PROVENANCE_FILE, SOURCE_ENV, read_provenance,  # noqa: E402
                                               source_environment)

ROOT = Path(__file__).resolve().parents[1]
COMMITTED_PNGS = sorted(p for p in (ROOT / "figures").rglob("*.png"))
KEYS = {"commit", "command", "source", "cpu", "date", "drawn_by"}


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def _figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.scatter([0, 1, 2], [1, 2, 3], label="a")
    ax.set_xlabel("step")
    ax.set_ylabel("score")
    return fig


def test_save_figure_writes_where_the_figure_came_from(tmp_path, monkeypatch):
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    save_figure(_figure(), tmp_path / "one.png", formats=("png",), source="record of study x")
    entry = read_provenance(tmp_path)["one.png"]
    assert set(entry) == KEYS
    assert entry["source"] == "record of study x"
    assert PLOTS_PACKAGE in entry["drawn_by"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", entry["commit"])
    assert re.fullmatch(r"\w+/\w+", entry["cpu"])
    # a second figure in the folder keeps the first one's entry; a notebook's kernel names its notebook
    monkeypatch.setenv(*next(iter(source_environment("notebooks/x.py on 2 run(s): a, b", ["notebooks/x.py"]).items())))
    save_figure(_figure(), tmp_path / "two.png", formats=("png",))
    figures = read_provenance(tmp_path)
    assert set(figures) == {"one.png", "two.png"}
    assert figures["two.png"]["source"] == "notebooks/x.py on 2 run(s): a, b"
    assert "notebooks/x.py" in figures["two.png"]["drawn_by"]
    assert json.loads((tmp_path / PROVENANCE_FILE).read_text())["format"] == 1


def test_every_committed_png_has_generated_provenance():
    assert len(COMMITTED_PNGS) > 20
    missing, incomplete = [], []
    for png in COMMITTED_PNGS:
        entry = read_provenance(png.parent).get(png.name)
        if entry is None:
            missing.append(str(png.relative_to(ROOT)))
        elif set(entry) != KEYS or not re.fullmatch(r"[0-9a-f]{40}", entry["commit"] or ""):
            incomplete.append(f"{png.relative_to(ROOT)}: {entry}")   # -dirty: drawn by uncommitted code
    assert not missing, f"no provenance for {len(missing)} committed PNG(s), e.g. {missing[:3]}"
    assert not incomplete, f"provenance without a clean commit: {incomplete[:3]}"


def stale_figures(pngs: list[Path], shown_from: Path = ROOT) -> list[str]:
    """The PNGs whose provenance commit does not contain the last change to their drawing code."""
    stale, last_change = [], {}
    for png in pngs:
        entry = read_provenance(png.parent)[png.name]
        code = tuple(entry["drawn_by"])
        if code not in last_change:
            last_change[code] = git("log", "-1", "--format=%H", "--", *code).stdout.strip()
        last = last_change[code]
        if git("merge-base", "--is-ancestor", last, entry["commit"]).returncode != 0:
            stale.append(f"{png.relative_to(shown_from)}: drawn at {entry['commit'][:10]}, its drawing code last "
                         f"changed in {last[:10]}")
    return stale


def _full_history() -> None:
    if git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.fail("the provenance check needs the full git history: clone without --depth")


def test_no_committed_png_predates_its_drawing_code():
    _full_history()
    stale = stale_figures(COMMITTED_PNGS)
    assert not stale, f"{len(stale)} figure(s) older than their drawing code (make findings / make " \
                      f"demo-figures): {stale[:5]}"


def test_the_check_finds_a_figure_drawn_before_its_code_changed(tmp_path):
    """A planted defect: a figure whose provenance names the repository's first commit."""
    _full_history()
    first = git("rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    fake = tmp_path / "figures" / "old.png"
    fake.parent.mkdir(parents=True)
    fake.write_bytes(b"")
    (fake.parent / PROVENANCE_FILE).write_text(json.dumps({"format": 1, "figures": {"old.png": {
        "commit": first, "command": "x", "source": "x", "cpu": "x/x", "date": "x", "drawn_by": [PLOTS_PACKAGE]}}}))
    stale = stale_figures([fake], shown_from=tmp_path)
    assert len(stale) == 1 and stale[0].startswith("figures/old.png: drawn at " + first[:10])


def test_the_command_a_figure_names_keeps_no_path_of_this_machine(tmp_path, monkeypatch):
    from cselab.cli import _portable

    monkeypatch.chdir(tmp_path)
    assert _portable(str(tmp_path / "data")) == "data"
    assert _portable(f"--data-dir={tmp_path / 'data'}") == "--data-dir=data"
    assert _portable("figures") == "figures" and _portable(str(tmp_path)) == "."
    assert _portable("--profile") == "--profile" and _portable("2") == "2"
