"""The prepared GPU check and the benchmarks run (on the CPU, tiny sizes): the shell script parses, and
the Python parts produce every section with real numbers. Speed itself is never asserted."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # dataclasses look their module up there
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


def test_limits_counts_the_encoder_flops_torch_counts(tiny_model):
    """The analytic matrix-product FLOPs of benchmarks/limits.py against torch's own counter on a
    real forward pass of mixed lengths (what it leaves out: the pooler's one product). Eager
    attention, because the counter does not see the CPU's fused attention kernel."""
    from torch.utils.flop_counter import FlopCounterMode

    from cselab.model.encoder import SentenceEncoder

    limits = load("limits")
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="avg")
    encoder.backbone.pooler = None   # HF's BERT pooler (one H×H product per row) is not an encoder product
    encoder.backbone.config._attn_implementation = "eager"   # QKᵀ and AV as bmm, which the counter counts
    recorder = limits.ShapeRecorder().watch_encoder(encoder)
    sentences = ["a cat", "a dog runs across the wide green field", "the sky", "two men ride their bikes home"]
    with FlopCounterMode(display=False) as counter:
        encoder.encode(sentences, batch_size=2)
    shapes = recorder.take()
    assert [n for n, _ in shapes] == [2, 2] and shapes[0][1] > shapes[1][1]   # longest batch first, padded apart
    counted = limits.encoder_flops(encoder.backbone.config, shapes)
    assert counted == pytest.approx(counter.get_total_flops(), rel=1e-6)
    assert limits.encoder_flops(encoder.backbone.config, shapes, backward=True) == 3 * counted
    # by hand, one row of width 8 in a 2-layer, H=32, F=64 encoder: 2·(8·8·32² + 4·8·32·64 + 4·64·32)
    assert limits.encoder_flops(encoder.backbone.config, [(1, 8)]) == 2 * (8 * 8 * 1024 + 4 * 8 * 32 * 64 + 4 * 64 * 32)


def test_limits_measures_every_job_against_its_own_round(tiny_model, data_dir):
    limits = load("limits")
    r = limits.measure(str(tiny_model), data_dir, sentences=24, rounds=1, bf16="on", mm_size=64)
    assert set(r["limits_gflops"]) == {"fp32", "bf16"} and all(v[0] > 0 for v in r["limits_gflops"].values())
    assert [j["precision"] for j in r["jobs"]] == ["fp32"] * 4 + ["bf16"] * 4 + ["fp32"] * 2 + ["bf16"] * 2
    assert all(j["gflop"] > 0 and j["fraction"] > 0 for j in r["jobs"])
    encode, st_encode, step, mnrl = r["jobs"][0], r["jobs"][1], r["jobs"][8], r["jobs"][9]
    assert "24 sentences" in encode["name"] and step["name"].startswith("training step: cselab")
    # sentence-transformers encodes the same sentences through the same backbone: the same FLOPs
    # (both sort by length; cselab also drops duplicates, none here)
    assert st_encode["name"].startswith(limits.ST_ENCODE) and st_encode["gflop"] == pytest.approx(encode["gflop"])
    ratios = limits.encode_ratios(r)
    assert [row[0] for row in ratios] == ["fp32", "bf16"]
    assert ratios[0][3] == pytest.approx(encode["seconds"][0] / st_encode["seconds"][0])
    assert next(limits.st_encoder(str(tiny_model), "cpu", "bf16")[0].parameters()).dtype == torch.bfloat16
    # the same 64 sentences at max_len 32 through the same backbone: the steps count the same FLOPs
    assert step["gflop"] == pytest.approx(mnrl["gflop"], rel=0.2)
    assert "% of the limit" in limits.format_report(r)


def test_transfer_protocols_encodes_every_sentence_once_and_keeps_the_vectors(tmp_path):
    from toy_encoders import HashedBagOfWords

    bench = load("transfer_protocols")
    inner = HashedBagOfWords(dim=16)
    store = tmp_path / "vectors.npz"
    model = bench.EncodeOnce(inner, str(store))
    first = model.encode(["a b", "c", "a b"])
    again = model.encode(["c", "a b", "d"])
    assert inner.calls == [2, 1]                      # "a b" and "c" once, then only the new "d"
    assert (again[1] == first[0]).all() and (again[0] == first[1]).all()
    reread = bench.EncodeOnce(HashedBagOfWords(dim=16), str(store))   # a second process: read back, no encode
    assert (reread.encode(["d", "c"]) == again[[2, 0]]).all() and reread.encoder.calls == []


@pytest.mark.slow   # three tiny runs in worker processes (about a minute on 2 cores)
def test_run_workers_benchmark_prints_its_table(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(tmp_path / "smoke"))
    assert load("run_workers").main(["--pairs", "1", "--data-dir", str(data_dir)]) == 0
    printed = capsys.readouterr().out
    assert "| fresh process per run " in printed and "saved per run:" in printed


@pytest.mark.slow   # compiling even a tiny BERT takes tens of seconds
def test_compile_step_benchmark_prints_its_table(tiny_model, data_dir, capsys):
    assert load("compile_step").main(["--model", str(tiny_model), "--steps", "2", "--data-dir", str(data_dir)]) == 0
    printed = capsys.readouterr().out
    assert "| eager " in printed and "| torch.compile " in printed and "first torch.compile step (compiling):" in printed


def test_cpu_dropout_benchmark_prints_its_tables(tiny_model, data_dir, capsys):
    assert load("cpu_dropout").main(["--model", str(tiny_model), "--steps", "2", "--precision", "fp32",
                                     "--data-dir", str(data_dir)]) == 0
    printed = capsys.readouterr().out
    assert "| torch (bernoulli_) " in printed and "| cselab (cpu_dropout: fast) " in printed
    assert "| cselab (cpu_dropout) " in printed and "% of the step's CPU time drawing masks" in printed
    shares = [float(line.split("|")[2]) for line in printed.splitlines()
              if line.startswith(("| torch (bernoulli_) ", "| cselab (cpu_dropout: fast) ")) and line.count("|") == 3]
    assert len(shares) == 2 and all(0 < s < 100 for s in shares)   # each step draws masks with its own op


def _setting(name, precision, median, batch=64):
    return {"name": name, "batch": batch, "precision": precision, "median_s": median, "all_s": [median],
            "peak_cuda_mib": 0}


def test_speed_report_states_the_same_precision_ratios_against_their_targets():
    """Issue 57's goals: cselab's step over MNRL's in the same precision (bf16 ≤ 0.5, fp32 ≤ 0.38)."""
    speed = load("speed")
    report = {"device": "cpu", "precision": "bf16", "torch": "x", "threads": 1, "cpu_native_bf16": True,
              "rounds": 3, "load_before": (0.0, 0, 0), "load_after": (0.0, 0, 0), "sts_suite": {},
              "peak_rss_mib_steps": 1.0, "peak_rss_mib": 1.0,
              "settings": [_setting("cselab SimCSE", "fp32", 3.0), _setting("cselab SimCSE", "bf16", 1.5),
                           _setting("sentence-transformers MNRL", "fp32", 10.0),
                           _setting("sentence-transformers MNRL", "bf16", 2.0)]}
    rows = {cells[0]: cells[1:] for line in speed.format_report(report).splitlines()
            if (cells := [c.strip() for c in line.strip("|").split("|")]) and cells[0].startswith("SimCSE step")}
    assert rows["SimCSE step / MNRL step, both bf16"] == ["0.750", "≤ 0.5", "False"]
    assert rows["SimCSE step / MNRL step, both fp32"] == ["0.300", "≤ 0.38", "True"]
    assert rows["SimCSE step (bf16) / MNRL fp32 step"] == ["0.150", "≤ 0.55", "True"]
    assert "slowest method" not in speed.format_report(report)   # --steps-only times no method


def test_speed_steps_only_times_the_four_batch_64_steps(tiny_model, data_dir):
    speed = load("speed")
    result = speed.run_benchmark(str(tiny_model), "cpu", "bf16", data_dir=data_dir, dry_run=True, steps_only=True)
    assert [(s["name"], s["precision"]) for s in result["settings"]] == [
        ("cselab SimCSE", "fp32"), ("cselab SimCSE", "bf16"), ("sentence-transformers MNRL", "fp32"),
        ("sentence-transformers MNRL", "bf16")]
    assert result["sts_suite"] == {} and all(s["median_s"] > 0 for s in result["settings"])
    assert "SimCSE step / MNRL step, both bf16" in speed.format_report(result)
