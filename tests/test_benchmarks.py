"""The prepared GPU check and the benchmarks run (on the CPU, tiny sizes): the shell script parses, and
the Python parts produce every section with real numbers. Speed itself is never asserted."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_script_parses():
    subprocess.run(["bash", "-n", str(BENCHMARKS / "gpu_check.sh")], check=True)


def test_gpu_check_measurements_run_on_the_cpu(tiny_model, data_dir, tmp_path):
    gpu_check = load("gpu_check")
    assert gpu_check.main(["--device", "cpu", "--dry-run", "--model", str(tiny_model), "--data-dir", str(data_dir),
                           "--output-dir", str(tmp_path), "--only", "env", "mfu", "memory"]) == 0
    data = json.loads((tmp_path / "gpu_check.json").read_text())
    mfu = data["MFU and peak memory of the SimCSE step (bf16)"]
    assert [(r["batch"], r["mini_batch_size"]) for r in mfu] == [(8, None), (16, None), (16, 8)]
    assert all(r["flops_counted"] > 0 and r["seconds"] > 0 and r["mfu"] is None for r in mfu)   # no GPU peak
    # the counted FLOPs of batch 16 are about twice those of batch 8 (matmuls dominate)
    assert 1.5 < mfu[1]["flops_counted"] / mfu[0]["flops_counted"] < 2.5
    memory = data["ClusterNS RoBERTa-base preset shape: memory of one step"]
    assert [row[0] for row in memory] == [8, "uncached"]
    text = (tmp_path / "gpu_check.txt").read_text()
    assert "## Environment" in text and "FAILED" not in text


@pytest.mark.slow
def test_gpu_check_dry_run_every_section(tiny_model, data_dir, tmp_path):
    subprocess.run([sys.executable, str(BENCHMARKS / "gpu_check.py"), "--device", "cpu", "--dry-run", "--model",
                    str(tiny_model), "--data-dir", str(data_dir), "--output-dir", str(tmp_path), "--steps", "2"],
                   check=True, capture_output=True)
    data = json.loads((tmp_path / "gpu_check.json").read_text())
    speed = data["Speed table (benchmarks/speed.py, bf16)"]
    assert len(speed["settings"]) == 11 and all(s["median_s"] > 0 for s in speed["settings"])
    assert speed["sts_suite"]["tasks"] == ["STS16"] and abs(speed["sts_suite"]["cselab_avg"]
                                                            - speed["sts_suite"]["st_avg"]) < 1.0
    assert data["SimCSE training run (2 steps, offline backbone)"]["steps"] == 2


def test_activation_estimate_scales_the_measurement():
    estimate = load("activation_memory").estimate(rows_measured=64, bytes_measured=64 * 2 ** 20, batch=512,
                                                  chunks=(64,))
    # 1 MiB a row: 1024 rows = 1 GiB uncached, 128 rows = 0.125 GiB per chunk, + 16 bytes × 124.6 M parameters
    assert [row[1] for row in estimate] == [1024, 128]
    assert estimate[0][2] == pytest.approx(1.0) and estimate[1][2] == pytest.approx(0.125)
    assert estimate[0][3] - estimate[0][2] == pytest.approx(124_645_632 * 16 / 2 ** 30)
