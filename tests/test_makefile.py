"""What the Makefile's entry points run (``make -n``: printed, not run)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None or shutil.which("git") is None,
                                reason="needs make and git")


def recipe(target: str, *variables: str) -> str:
    """The commands `make <target>` would run, continuation lines joined; its prerequisites (install,
    data) taken as done."""
    done = ["-o", "data", "-o", ".venv/.installed-notebooks", "-o", ".venv/.installed-dev", "-o", ".venv/bin/python"]
    printed = subprocess.run(["make", "--no-print-directory", "-n", target, *done, *variables], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    return printed.replace("\\\n", " ")


def figures_dir(commands: str) -> str:
    reproduce = next(line for line in commands.splitlines() if "cselab reproduce cpu-demo" in line)
    return re.search(r'--figures-dir "([^"]+)"', reproduce).group(1)


def ignored(path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO).returncode == 0


def test_make_demo_writes_only_what_git_ignores():
    """A user's first command leaves their clone's tracked files as they were: the demo's runs,
    reports and figures all go to ignored folders (not figures/cpu-demo/, whose PNGs are committed)."""
    if subprocess.run(["git", "rev-parse"], cwd=REPO, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    figures = figures_dir(recipe("demo"))
    for output in (f"{figures}/cpu-demo/dynamics/loss_parts.png", "reports/cpu-demo/index.md",
                   "runs/simcse-0123456789ab/results.json"):
        assert ignored(output), f"make demo writes {output}, which git tracks or would"
    assert not ignored("figures/cpu-demo/dynamics/loss_parts.png")   # the committed ones


def test_make_demo_figures_updates_the_committed_figures():
    assert "make demo DEMO_FIGURES=figures" in recipe("demo-figures").replace("$(MAKE)", "make")
    assert figures_dir(recipe("demo", "DEMO_FIGURES=figures")) == "figures"


def test_make_docs_installs_the_docs_extra_alone_and_builds(tmp_path):
    """`make docs` on a fresh clone installed torch and all of cselab first (and failed offline on
    umap-learn after 186 s); the site needs the docs extra only (mkdocstrings reads the source)."""
    import ast

    fresh = recipe("docs", f"VENV={tmp_path / 'no-venv'}", f"DOCS_VENV={tmp_path / 'docs-venv'}")
    lines = fresh.splitlines()
    assert lines[0] == f"python3 -m venv {tmp_path / 'docs-venv'}"
    assert lines[1].startswith(f"{tmp_path / 'docs-venv'}/bin/pip install $(python3 -c ")
    assert lines[2] == f"NO_MKDOCS_2_WARNING=1 {tmp_path / 'docs-venv'}/bin/mkdocs build --strict --site-dir site"
    assert len(lines) == 3 and "torch" not in fresh and " -e " not in fresh
    # what the install line's $(...) prints: the docs extra of pyproject.toml, one argument each
    listed = subprocess.run(["sh", "-c", lines[1].split("pip install ", 1)[1].strip().removeprefix("$(").removesuffix(")")],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    extra = re.search(r"^docs = (\[.*\])$", (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert listed == ast.literal_eval(extra) == ["mkdocs>=1.6,<2", "mkdocs-material>=9.5", "mkdocstrings[python]>=1.0",
                                                 "mkdocs-jupyter>=0.25"]
    # a .venv with mkdocs (the dev or docs extra) builds with it, installing nothing
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "mkdocs").write_text("")
    assert recipe("docs", f"VENV={venv}").splitlines() == [
        f"NO_MKDOCS_2_WARNING=1 {venv}/bin/mkdocs build --strict --site-dir site"]
