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
