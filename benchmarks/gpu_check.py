"""The Python part of the prepared GPU check (benchmarks/gpu_check.sh runs it; see docs/performance.md).

    python benchmarks/gpu_check.py --device cuda --output-dir DIR [--data-dir DIR]
    python benchmarks/gpu_check.py --device cpu --dry-run --model TINY_FOLDER --output-dir DIR   # smoke test

Each section is appended to ``DIR/gpu_check.txt`` as soon as it is done (a timeout keeps what was
finished) and its numbers to ``DIR/gpu_check.json``:

1. environment: GPU, memory, torch / CUDA versions, bf16 support;
2. the interleaved speed table of ``benchmarks/speed.py`` in bf16;
3. MFU and peak memory of the SimCSE step of the offline backbone (batch 64 and 512; 512 also
   with ``mini_batch_size`` 64), and the same for a random BERT of bert-base's shape (12 layers,
   hidden 768: the papers' backbone, whose weights a closed machine cannot download; FLOPs and
   time do not depend on the weights' values). FLOPs are **counted**, not estimated: ``torch.utils.flop_counter.
   FlopCounterMode`` over one forward + backward (every matmul and attention kernel, 2 FLOPs per
   multiply-add; elementwise work is not counted), divided by the median step time and by the
   GPU's dense bf16 peak (table below, or ``--peak-tflops``). The usual 6 × parameters × tokens
   rule (forward + backward, attention excluded) is printed next to it as a cross-check;
4. ClusterNS's RoBERTa-base preset shape (K = 128, batch 512; a random BERT with RoBERTa-base's
   dimensions) — peak CUDA memory of one step uncached and with ``mini_batch_size`` 64;
5. a 500-step SimCSE run of the offline backbone in bf16 (STS-B dev every 100 steps, the 7-task STS
   table at the end).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import activation_memory  # noqa: E402
import speed  # noqa: E402

from cselab.model.config import load_config  # noqa: E402
from cselab.model.encoder import SentenceEncoder  # noqa: E402
from cselab.model.methods import build_loss  # noqa: E402
from cselab.model.train import train  # noqa: E402
from cselab.model.train.step import training_loss  # noqa: E402
from cselab.model.utils import resolve_device  # noqa: E402

# Dense bf16 tensor-core peak (no sparsity), TFLOP/s, by a substring of torch.cuda.get_device_name().
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "L4": 121.0, "A10": 125.0,
                    "RTX 4090": 165.0, "V100": 125.0}


class Report:
    """Appends each section to the text file as it finishes; collects numbers for the JSON file."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.text, self.json, self.data = folder / "gpu_check.txt", folder / "gpu_check.json", {}

    def section(self, title: str, body: str, data=None) -> None:
        with self.text.open("a") as f:
            f.write(f"\n## {title}\n\n{body}\n")
        print(f"\n## {title}\n\n{body}", flush=True)
        if data is not None:
            self.data[title] = data
            self.json.write_text(json.dumps(self.data, indent=1, default=str))


def environment(device: torch.device) -> tuple[str, dict]:
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": str(device)}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(name=props.name, memory_gib=props.total_memory / 2 ** 30, bf16=torch.cuda.is_bf16_supported(),
                    gpus=torch.cuda.device_count())
    return "\n".join(f"- {k}: {v}" for k, v in info.items()), info


def peak_tflops(device: torch.device, given: float | None) -> float | None:
    if given is not None:
        return given
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)


def measure_step(encoder, loss_fn, sentences_for, steps: int, amp, mini_batch_size=None) -> dict:
    """FLOPs of one step (counted), median seconds of ``steps`` further steps, peak CUDA memory."""
    from torch.utils.flop_counter import FlopCounterMode

    device = encoder.device
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-5, fused=device.type in ("cpu", "cuda"))

    def step(i: int) -> None:
        out = training_loss(encoder, encoder, loss_fn, sentences_for(i), step=i, max_len=32, amp_dtype=amp,
                            compute_stats=False, mini_batch_size=mini_batch_size)
        out.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step(0)   # warm-up (kernels, allocator)
    counter = FlopCounterMode(display=False)
    with counter:
        step(1)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    times = []
    for i in range(2, 2 + steps):
        start = time.perf_counter()
        step(i)
        speed.sync(device)
        times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30 if device.type == "cuda" else None
    return {"flops": counter.get_total_flops(), "seconds": statistics.median(times), "peak_gib": peak}


def mfu_section(model: str, device, amp, data_dir, steps: int, batches: tuple[int, ...], mini: int,
                peak: float | None) -> tuple[str, list]:
    corpus = speed.training_sentences(data_dir, max(batches) * (steps + 2))
    encoder = SentenceEncoder.from_pretrained(model, pooler="cls").to(device).train()
    try:
        return _mfu_rows(encoder, corpus, device, amp, steps, batches, mini, peak)
    finally:
        del encoder
        if device.type == "cuda":
            torch.cuda.empty_cache()


def bert_base_mfu_section(device, amp, data_dir, steps: int, batches: tuple[int, ...], mini: int,
                          peak: float | None, dims: dict) -> tuple[str, list]:
    """:func:`mfu_section` on a random model of bert-base's shape (the papers' backbone)."""
    with tempfile.TemporaryDirectory() as folder:
        model = activation_memory.bert_base_shaped(folder, **dims)
        body, rows = mfu_section(model, device, amp, data_dir, steps, batches, mini, peak)
    shape = dims or "12 layers, hidden 768, 12 heads, FFN 3072"
    return f"A random BERT of shape {shape} (max_len 32).\n\n{body}", rows


def _mfu_rows(encoder, corpus, device, amp, steps, batches, mini, peak) -> tuple[str, list]:
    loss_fn = build_loss(load_config({"method": ["simcse"]}))
    n_params = sum(p.numel() for p in encoder.parameters())
    rows = []
    for batch, chunk in [(b, None) for b in batches] + [(max(batches), mini)]:
        tokens = encoder.training_inputs(corpus[batch:2 * batch], 32)["input_ids"].numel()   # the counted step's
        m = measure_step(encoder, loss_fn, lambda i, b=batch: corpus[i * b:(i + 1) * b], steps, amp, chunk)
        achieved = m["flops"] / m["seconds"] / 1e12
        rows.append({"batch": batch, "mini_batch_size": chunk, "tokens": tokens, "flops_counted": m["flops"],
                     "flops_6N": 6 * n_params * tokens, "seconds": m["seconds"], "tflops": achieved,
                     "mfu": achieved / peak if peak else None, "peak_gib": m["peak_gib"]})
    table = tabulate([[r["batch"], r["mini_batch_size"] or "", r["tokens"], r["flops_counted"] / 1e9,
                       r["flops_6N"] / 1e9, r["seconds"], r["batch"] / r["seconds"], r["tflops"],
                       f"{100 * r['mfu']:.1f}%" if r["mfu"] is not None else "n/a", r["peak_gib"]] for r in rows],
                     headers=["batch", "mini_batch", "tokens", "GFLOP counted", "GFLOP 6·N·tokens", "s/step",
                              "sentences/s", "TFLOP/s", f"MFU (peak {peak} TFLOP/s)", "peak GiB"], tablefmt="github", floatfmt=".3f")
    return (f"{n_params / 1e6:.1f} M parameters; FLOPs counted with torch.utils.flop_counter.FlopCounterMode "
            "(forward + backward + optimizer step; matmuls and attention; with mini_batch_size the executed FLOPs, "
            f"which include the extra graph-free forward pass).\n\n{table}"), rows


def roberta_memory_section(device, amp, data_dir, batch: int, mini: int, dims: dict) -> tuple[str, list]:
    with tempfile.TemporaryDirectory() as folder:
        encoder = SentenceEncoder.from_pretrained(activation_memory.bert_base_shaped(folder, **dims),
                                                  pooler="cls").to(device).train()
    corpus = speed.training_sentences(data_dir, 3 * batch)
    rows = []
    for chunk in (mini, None):   # cached first: if uncached runs out of memory, the cached number is kept
        loss_fn = build_loss(load_config({"method": ["clusterns"], "batch_size": batch,
                                          "clusterns": {"num_clusters": min(128, batch), "start_threshold": 1.0}}))
        loss_fn.setup(encoder, None)
        try:
            m = measure_step(encoder, loss_fn, lambda i: corpus[i * batch:(i + 1) * batch], 1, amp, chunk)
            rows.append([chunk or "uncached", m["peak_gib"], m["seconds"]])
        except torch.OutOfMemoryError:
            rows.append([chunk or "uncached", "out of memory", None])
            torch.cuda.empty_cache()
    table = tabulate(rows, headers=["mini_batch_size", "peak GiB", "s/step"], tablefmt="github", floatfmt=".2f")
    shape = dims or "12 layers, hidden 768, 12 heads, FFN 3072"
    return f"ClusterNS K = {min(128, batch)}, batch {batch}, a random model of shape {shape}.\n\n{table}", rows


def training_section(model: str, device, data_dir, output_dir: Path, steps: int, dry_run: bool) -> tuple[str, dict]:
    overrides = {"model": model, "max_steps": steps, "eval_every": max(1, steps // 5), "log_every": 10,
                 "precision": "bf16" if device.type == "cuda" else "auto", "final_eval": True,
                 "output_dir": str(output_dir / "runs"), "device": str(device), "corpus": "enwiki",
                 "max_sentences": 64 * steps}
    if dry_run:
        overrides.update(batch_size=8, max_sentences=8 * steps, corpus="wiki1m-head", final_eval=False)
    cfg = load_config("quickstart", overrides)
    start = time.perf_counter()
    run = train(cfg, data_dir=data_dir, overwrite=True, progress=False)
    results = json.loads((run / "results.json").read_text())
    evals = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    dev = [(r["step"], round(r["stsb_dev"], 2)) for r in evals if r["kind"] == "eval"]
    sts = results.get("sts", {})
    body = (f"{steps} steps in {results['train_seconds']:.0f} s of training ({time.perf_counter() - start:.0f} s "
            f"with evaluation); precision {results['precision']}; STS-B dev by step: {dev}\n\n"
            + tabulate([[*sts.get("scores", {}).values(), sts.get("avg")]], headers=[*sts.get("scores", {}), "Avg."],
                       tablefmt="github", floatfmt=".2f"))
    return body, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output-dir", default="gpu_check")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the GPU's dense bf16 peak, if not in the table")
    parser.add_argument("--steps", type=int, default=500, help="of the SimCSE training run")
    parser.add_argument("--only", nargs="+", default=["env", "speed", "mfu", "mfu-base", "memory", "train"])
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes (a smoke test on the CPU)")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    amp = torch.bfloat16
    report = Report(Path(args.output_dir))
    failures = 0

    def attempt(name: str, title: str, fn) -> None:
        nonlocal failures
        if name not in args.only:
            return
        try:
            body, data = fn()
            report.section(title, body, data)
        except Exception:   # one failing section must not cost the others in a short GPU window
            failures += 1
            report.section(title, "FAILED:\n\n" + traceback.format_exc())

    attempt("env", "Environment", lambda: environment(device))

    def speed_table():
        r = speed.run_benchmark(args.model, str(device), "bf16", rounds=3, data_dir=args.data_dir, dry_run=args.dry_run)
        return speed.format_report(r), r

    attempt("speed", "Speed table (benchmarks/speed.py, bf16)", speed_table)
    batches = (8, 16) if args.dry_run else (64, 512)
    attempt("mfu", "MFU and peak memory of the SimCSE step (bf16)",
            lambda: mfu_section(args.model, device, amp, args.data_dir, 2 if args.dry_run else 10, batches,
                                8 if args.dry_run else 64, peak_tflops(device, args.peak_tflops)))
    dims = {"layers": 2, "hidden": 32, "heads": 2, "ffn": 64} if args.dry_run else {}
    attempt("mfu-base", "MFU and peak memory of the SimCSE step, bert-base shape (bf16)",
            lambda: bert_base_mfu_section(device, amp, args.data_dir, 2 if args.dry_run else 10, batches,
                                          8 if args.dry_run else 64, peak_tflops(device, args.peak_tflops), dims))
    attempt("memory", "ClusterNS RoBERTa-base preset shape: memory of one step",
            lambda: roberta_memory_section(device, amp, args.data_dir, 16 if args.dry_run else 512,
                                           8 if args.dry_run else 64, dims))
    attempt("train", f"SimCSE training run ({args.steps} steps, offline backbone)",
            lambda: training_section(args.model, device, args.data_dir, Path(args.output_dir), args.steps,
                                     args.dry_run))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
