"""The lockfile of the tested environment: it parses, pins CPU torch, and its hash is recorded."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from cselab.model.config import load_config
from cselab.model.lockfile import LOCKFILE, lockfile_info, read_pins
from cselab.model.rundir import RunDir


def test_the_lockfile_pins_every_package_and_cpu_torch():
    pins = read_pins()
    assert pins["torch"] == "2.13.0+cpu" and len(pins) > 100
    assert "cselab" not in pins   # the project itself is installed from the tree (make install-locked)
    for name in ("transformers", "safetensors", "numpy", "scipy", "scikit-learn", "pytest", "papermill"):
        assert name in pins, name


def test_a_bad_line_is_refused_with_file_and_line(tmp_path):
    bad = tmp_path / "lock.txt"
    bad.write_text("# header\nnumpy==2.0.0\ntorch>=2\n")
    with pytest.raises(ValueError, match=r"lock\.txt:3: expected a pinned `name==version`, got 'torch>=2'"):
        read_pins(bad)


def test_info_reports_the_hash_and_the_differences(tmp_path):
    lock = tmp_path / "lock.txt"
    pytest_version = __import__("pytest").__version__
    lock.write_text(f"pytest=={pytest_version}\nno-such-package-xyz==1.0\n")
    info = lockfile_info(lock)
    assert info["sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert info["matches"] is False and info["differences"] == 1
    assert info["first_differences"] == ["no-such-package-xyz: locked 1.0, installed none"]
    lock.write_text(f"pytest=={pytest_version}\n")
    assert lockfile_info(lock)["matches"] is True
    assert lockfile_info(tmp_path / "missing.txt") is None


def test_every_run_records_the_lockfile_outside_its_hash(tmp_path):
    cfg = load_config(None, [f"output_dir={tmp_path}"])
    run = RunDir.for_config(cfg)
    run.prepare(cfg)
    saved = json.loads(run.config_file.read_text())
    assert saved["lockfile"]["sha256"] == hashlib.sha256(LOCKFILE.read_bytes()).hexdigest()
    assert saved["lockfile"]["file"] == "cselab/model/locks/cpu.txt"
    assert saved["config_hash"] == cfg.config_hash() and "lockfile" not in saved["config"]


@pytest.mark.slow
def test_the_lockfile_resolves_with_pip(tmp_path):
    """pip finds every pinned version (a dry run: nothing is installed; needs the package index)."""
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "-q",
                    "-r", str(LOCKFILE), "--report", str(report)], check=True, timeout=1200)
    installed = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert installed["torch"] == "2.13.0+cpu" and len(installed) == len(read_pins())
