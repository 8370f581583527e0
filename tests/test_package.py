"""cselab as a built package: the wheel carries the notebooks (copied from the top-level
``notebooks/`` by setup.py), and an installed copy runs ``cselab info`` and a study's dry run from an
empty directory, finding its notebooks inside the package."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the source tree (nothing is written into the repository)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "cselab", src / "cselab", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "notebooks").mkdir()
    for notebook in (REPO / "notebooks").glob("*.py"):
        shutil.copy2(notebook, src / "notebooks" / notebook.name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                    "-w", str(out), str(src)], check=True, capture_output=True, text=True)
    (built,) = out.glob("cselab-*.whl")
    return built


def test_the_wheel_carries_every_notebook_and_the_shipped_yaml(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        notebooks = sorted((REPO / "notebooks").glob("*.py"))
        assert len(notebooks) >= 10 and {"train.py", "quickstart.py"} <= {p.name for p in notebooks}
        for notebook in notebooks:
            assert archive.read(f"cselab/notebooks/{notebook.name}") == notebook.read_bytes()
    assert not any(n.startswith("notebooks/") for n in names)   # inside the package, not a top-level folder
    assert {"cselab/workbench/studies/cpu-demo.yaml", "cselab/model/configs/quickstart.yaml", "cselab/model/export.py"} <= names


@pytest.mark.slow
def test_the_installed_package_works_from_an_empty_directory(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # The dependencies (torch, transformers, ...) from this environment, as --system-site-packages
    # would give them; a path listed in a .pth file is not itself scanned for .pth files, so this
    # environment's editable cselab stays out.
    Path(site, "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel],
                   check=True, capture_output=True, text=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CSELAB_DATA")}
    env["HF_HUB_OFFLINE"] = "1"

    def cselab(*args: str) -> str:
        done = subprocess.run([bin_dir / "cselab", *args], cwd=empty, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    where = subprocess.run([python, "-c", "import cselab.workbench.studies.spec as s; print(s.__file__); print(s.NOTEBOOKS_DIR)"],
                           cwd=empty, env=env, check=True, capture_output=True, text=True).stdout.split()
    assert Path(where[0]).is_relative_to(env_dir) and Path(where[1]) == Path(where[0]).parents[1] / "notebooks"
    assert "studies: cpu-compare, cpu-demo" in cselab("info")
    plan = cselab("reproduce", "cpu-demo", "--dry-run")
    assert "dry run: nothing was trained, executed or written" in plan
    assert "1. dynamics (dynamics.py)" in plan and "explorer (explorer.py)" in plan
    assert list(empty.iterdir()) == []
