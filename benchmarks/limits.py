"""How close the main jobs come to this CPU's own limit (a benchmark that prints a table, not a test).

    python benchmarks/limits.py [--sentences 2000 | --full] [--rounds 2] [--threads N] [--bf16 auto|on|off]
                                [--data-dir DIR] [--output limits.json]

The limit is the dense matrix-product rate of this machine, measured in the same process: a
2048 × 2048 ``torch.mm`` in fp32 and in bf16 with torch's configured threads. Each job's achieved
rate is its *model* FLOPs over its time, where the FLOPs are those of the encoder's matrix products
at the padded lengths its batches actually had (recorded from every backbone pass, see
:func:`encoder_flops`): the fraction holds from machine to machine, seconds do not.

Jobs (the offline default backbone, all-MiniLM-L6-v2):

* the STS suite's encode: the distinct sentences of the 7 STS tasks (a seeded sample of
  ``--sentences``; ``--full``: all of them), pooler ``avg``, batch 128, as ``evaluate_sts``;
* one training step: cselab's SimCSE (batch 64, max_len 32, AdamW, clipping) and
  sentence-transformers' MultipleNegativesRankingLoss step on the same backbone (benchmarks/speed.py's
  settings); backward counted as twice the forward;
* the demo notebooks' encodes (cselab/workbench/studies/cpu-demo.yaml): STS-B test with the demo's ``cls``
  pooler, and DBpedia's 400-text clustering sample at max_length 64.

Each round measures both limits and then every job once, and every fraction is taken against the
limit of its own round, so a shared machine's load hits both alike; the table gives medians.
bf16 jobs (evaluation in bf16 weights, the training step under autocast) run by default only where
the CPU has native bf16 (``cselab.model.utils.native_bf16``): elsewhere bf16 is emulated and a job takes
minutes; ``--bf16 on`` runs them anyway (with ``--sentences`` small).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import adamw, cselab_step, method_loss, mnrl_step, sentence_transformer, training_sentences  # noqa: E402

from cselab.model.data import STS_TASKS, load_sts_task  # noqa: E402
from cselab.model.data.clustering import load_clustering_task  # noqa: E402
from cselab.model.encoder import SentenceEncoder  # noqa: E402
from cselab.model.utils import cpu_has_amx, cpu_supports_bf16, native_bf16, resolve_device  # noqa: E402

MM_SIZE = 2048


# ----------------------------------------------------------------------------- the limit
def mm_rate(dtype: torch.dtype, size: int = MM_SIZE, repeats: int = 3) -> float:
    """GFLOP/s of a ``size``² × ``size``² product (2·size³ FLOPs), the best of ``repeats`` after a warm-up."""
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(size, size, generator=g).to(dtype) for _ in range(2))
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


# ----------------------------------------------------------------------------- model FLOPs
def encoder_flops(config, shapes: list[tuple[int, int]], backward: bool = False) -> float:
    """Matrix-product FLOPs of a BERT-type encoder over backbone passes of ``(rows, padded width)``:
    per layer and row of width T, the Q, K, V and output projections 4 · 2TH², the feed-forward
    2 · 2THF, and attention's QKᵀ and AV 2 · 2T²H (2 FLOPs a multiply-add); the backward pass costs
    twice the forward. Embedding look-ups, layer norms, softmax and the pooler are left out (a
    fraction of a percent for MiniLM; tests/test_benchmarks.py checks it against torch's counter)."""
    h, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    forward = sum(n * layers * (8 * t * h * h + 4 * t * h * f + 4 * t * t * h) for n, t in shapes)
    return forward * (3 if backward else 1)


class ShapeRecorder:
    """Records ``(rows, width)`` of every backbone pass of an encoder (cselab's or a Hugging Face
    model inside sentence-transformers) while installed."""

    def __init__(self):
        self.shapes: list[tuple[int, int]] = []

    def watch_encoder(self, encoder: SentenceEncoder) -> "ShapeRecorder":
        run_backbone = encoder.run_backbone

        def recording(inputs, output_hidden_states=False):
            self.shapes.append(tuple(inputs["input_ids"].shape))
            return run_backbone(inputs, output_hidden_states)

        encoder.run_backbone = recording   # an instance attribute: forward() and forward_eval() call it
        return self

    def watch_module(self, model: torch.nn.Module) -> "ShapeRecorder":
        """On a Hugging Face model: a hook on its embeddings (sentence-transformers calls the model's
        ``forward`` directly, which skips hooks on the model itself)."""
        def hook(_module, args, kwargs):
            ids = kwargs.get("input_ids", args[0] if args else None)
            self.shapes.append(tuple(ids.shape))

        model.embeddings.register_forward_pre_hook(hook, with_kwargs=True)
        return self

    def take(self) -> list[tuple[int, int]]:
        shapes, self.shapes = self.shapes, []
        return shapes


# ----------------------------------------------------------------------------- jobs
@dataclass
class Job:
    name: str
    precision: str                          # fp32 | bf16: which limit it is compared with
    run: Callable[[], None]
    recorder: ShapeRecorder
    config: object                          # the backbone's config (FLOPs)
    backward: bool = False
    seconds: list[float] = field(default_factory=list)
    fractions: list[float] = field(default_factory=list)
    flops: float = 0.0


def sts_sentences(data_dir, n: int | None) -> list[str]:
    """The distinct sentences of the 7 STS tasks (a seeded sample of ``n``; None: all)."""
    unique = sorted({s for task in STS_TASKS for p in load_sts_task(task, data_dir).values()
                     for s in (*p.sentences1, *p.sentences2)})
    return unique if n is None or n >= len(unique) else random.Random(0).sample(unique, n)


def stsb_test_sentences(data_dir, n: int | None) -> list[str]:
    pairs = load_sts_task("STSBenchmark", data_dir)["test"]
    unique = list(dict.fromkeys((*pairs.sentences1, *pairs.sentences2)))
    return unique if n is None else unique[:n]


def encode_job(name: str, encoder: SentenceEncoder, recorder: ShapeRecorder, sentences: list[str], precision: str,
               **kwargs) -> Job:
    def run() -> None:
        encoder.eval_precision = precision
        encoder.encode(sentences, batch_size=128, show_progress_bar=False, **kwargs)

    return Job(name, precision, run, recorder, encoder.backbone.config)


ST_ENCODE = "STS suite encode, sentence-transformers"


def st_encoder(model: str, device, precision: str):
    """sentence-transformers on the same backbone with the ``avg`` pooler's mean pooling (the
    backbone's own modules.json), its weights in ``precision``: what a user of the exported model
    runs, the reference for cselab's encode."""
    from sentence_transformers import SentenceTransformer

    from cselab.model.encoder.backbone import resolve_backbone

    path, _ = resolve_backbone(model)
    kwargs = {"model_kwargs": {"dtype": torch.bfloat16}} if precision == "bf16" else {}
    st = SentenceTransformer(path, device=str(device), **kwargs)
    return st, ShapeRecorder().watch_module(st[0].auto_model)


def build_jobs(model: str, data_dir, n: int | None, bf16: bool, device) -> list[Job]:
    avg = SentenceEncoder.from_pretrained(model, pooler="avg").to(device)
    cls = SentenceEncoder.from_pretrained(model, pooler="cls").to(device)
    suite = sts_sentences(data_dir, n)
    stsb = stsb_test_sentences(data_dir, n)
    dbpedia = list(load_clustering_task("DBpedia", data_dir).subsample(400 if n is None else min(400, n), 0).texts)
    # one recorder per encoder, emptied after every job (run_rounds)
    avg_shapes, cls_shapes = ShapeRecorder().watch_encoder(avg), ShapeRecorder().watch_encoder(cls)
    jobs = []
    for p in ("fp32", "bf16") if bf16 else ("fp32",):
        st, st_shapes = st_encoder(model, device, p)
        jobs += [encode_job(f"STS suite encode ({len(suite)} sentences)", avg, avg_shapes, suite, p),
                 Job(f"{ST_ENCODE} ({len(suite)} sentences)", p,
                     lambda st=st: st.encode(suite, batch_size=128, show_progress_bar=False), st_shapes,
                     st[0].auto_model.config),
                 encode_job(f"demo: STS-B test encode ({len(stsb)} sentences, cls)", cls, cls_shapes, stsb, p),
                 encode_job(f"demo: DBpedia clustering encode ({len(dbpedia)} texts, max_length 64)", cls,
                            cls_shapes, dbpedia, p, max_length=64)]

    corpus = training_sentences(data_dir, 64 * 8)
    batches = iter(range(10 ** 9))

    def batch() -> list[str]:
        i = next(batches) % 8
        return corpus[64 * i:64 * (i + 1)]

    torch.manual_seed(0)
    enc = SentenceEncoder.from_pretrained(model, pooler="cls").to(device).train()
    opt = adamw(enc.parameters(), device)
    simcse = method_loss(enc, {"method": ["simcse"]}, 64)
    recorder = ShapeRecorder().watch_encoder(enc)
    st = sentence_transformer(model, device)
    st_recorder = ShapeRecorder().watch_module(st[0].auto_model)
    st_opt = adamw(st.parameters(), device)
    for p, dtype in (("fp32", None), ("bf16", torch.bfloat16)) if bf16 else (("fp32", None),):
        step, st_step = cselab_step(enc, simcse, opt, dtype), mnrl_step(st, st_opt, dtype, device)
        jobs += [Job(f"training step: cselab SimCSE (batch 64, max_len 32{', autocast' if dtype else ''})", p,
                     lambda step=step: step(batch()), recorder, enc.backbone.config, backward=True),
                 Job(f"training step: sentence-transformers MNRL (batch 64{', autocast' if dtype else ''})", p,
                     lambda st_step=st_step: st_step(batch()), st_recorder, st[0].auto_model.config, backward=True)]
    return jobs


def run_rounds(jobs: list[Job], rounds: int, mm_size: int, with_bf16_limit: bool, warmup: bool = True) -> dict:
    limits = {"fp32": [], "bf16": []}
    for job in jobs if warmup else []:   # first-call costs (the bf16 copy, oneDNN primitives) stay out of the times
        job.run()
        job.recorder.take()
    for r in range(rounds):
        limits["fp32"].append(mm_rate(torch.float32, mm_size))
        if with_bf16_limit:
            limits["bf16"].append(mm_rate(torch.bfloat16, mm_size, repeats=1 if native_bf16() == "none" else 3))
        shift = r % len(jobs)
        for job in jobs[shift:] + jobs[:shift]:
            start = time.perf_counter()
            job.run()
            seconds = time.perf_counter() - start
            job.flops = encoder_flops(job.config, job.recorder.take(), job.backward)
            job.seconds.append(seconds)
            job.fractions.append(job.flops / seconds / 1e9 / limits[job.precision][-1])
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return limits


def measure(model: str = "all-minilm-l6", data_dir=None, sentences: int | None = 2000, rounds: int = 2,
            bf16: str = "auto", mm_size: int = MM_SIZE, device: str = "cpu", warmup: bool = True) -> dict:
    device = resolve_device(device)
    run_bf16 = {"on": True, "off": False, "auto": native_bf16() != "none"}[bf16]
    load_before = os.getloadavg()
    jobs = build_jobs(model, data_dir, sentences, run_bf16, device)
    limits = run_rounds(jobs, rounds, mm_size, with_bf16_limit=bf16 != "off", warmup=warmup)
    return {"date": datetime.date.today().isoformat(), "cpu": platform.processor() or platform.machine(),
            "torch": torch.__version__, "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "native_bf16": native_bf16(),
            "avx512_bf16": cpu_supports_bf16() and not cpu_has_amx(), "amx": cpu_has_amx(),
            "mm_size": mm_size, "rounds": rounds, "warmup": warmup, "load_before": load_before, "load_after": os.getloadavg(),
            "limits_gflops": {k: v for k, v in limits.items() if v},
            "jobs": [{"name": j.name, "precision": j.precision, "gflop": j.flops / 1e9, "seconds": j.seconds,
                      "median_s": statistics.median(j.seconds),
                      "gflops": j.flops / statistics.median(j.seconds) / 1e9,
                      "fraction": statistics.median(j.fractions), "fractions": j.fractions} for j in jobs]}


def encode_ratios(r: dict) -> list[list]:
    """cselab's STS-suite encode time over sentence-transformers' for each precision, per round
    (the two ran in the same round, one after the other) and their median: < 1 is cselab faster."""
    rows = []
    for p in ("fp32", "bf16"):
        ours = [j for j in r["jobs"] if j["precision"] == p and j["name"].startswith("STS suite encode (")]
        theirs = [j for j in r["jobs"] if j["precision"] == p and j["name"].startswith(ST_ENCODE)]
        if ours and theirs:
            ratios = [a / b for a, b in zip(ours[0]["seconds"], theirs[0]["seconds"])]
            rows.append([p, " / ".join(f"{s:.2f}" for s in theirs[0]["seconds"]),
                         " / ".join(f"{s:.2f}" for s in ours[0]["seconds"]), statistics.median(ratios)])
    return rows


def format_report(r: dict) -> str:
    limits = r["limits_gflops"]
    head = (f"{r['date']}; torch {r['torch']}, {r['threads']} threads, CPU capability {r['cpu_capability']}, "
            f"native bf16: {r['native_bf16']}; load average before {r['load_before'][0]:.1f}, after "
            f"{r['load_after'][0]:.1f}; medians of {r['rounds']} interleaved rounds")
    limit_rows = [[f"{r['mm_size']}² torch.mm, {p}", statistics.median(v), min(v), max(v)] for p, v in limits.items()]
    rows = [[j["name"], j["precision"], j["gflop"], j["median_s"], j["gflops"], 100 * j["fraction"]]
            for j in r["jobs"]]
    return "\n".join([head, "", tabulate(limit_rows, headers=["limit", "GFLOP/s (median)", "min", "max"],
                                         tablefmt="github", floatfmt=".1f"), "",
                      tabulate(rows, headers=["job", "precision", "model GFLOP", "s (median)", "GFLOP/s",
                                              "% of the limit"], tablefmt="github", floatfmt=".1f"), "",
                      "STS suite encode, interleaved in each round (batch 128; goal: cselab ≤ 0.8 × "
                      "sentence-transformers' time):", "",
                      tabulate(encode_ratios(r), headers=["precision", "sentence-transformers s (each round)",
                                                          "cselab s (each round)", "cselab / ST (median)"],
                               tablefmt="github", floatfmt=".2f")])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sentences", type=int, default=2000, help="sample of the STS sentences (default 2000)")
    parser.add_argument("--full", action="store_true", help="every distinct sentence of the 7 STS tasks")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--bf16", choices=("auto", "on", "off"), default="auto",
                        help="bf16 jobs: auto = only where the CPU has native bf16")
    parser.add_argument("--mm-size", type=int, default=MM_SIZE)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed first pass of every job")
    parser.add_argument("--output", default=None, help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    result = measure(args.model, args.data_dir, None if args.full else args.sentences, args.rounds, args.bf16,
                     args.mm_size, args.device, not args.no_warmup)
    print(format_report(result))
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
