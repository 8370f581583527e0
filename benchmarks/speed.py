"""Training-step and evaluation speed of cselab against sentence-transformers, every setting
interleaved in one process (a benchmark that prints tables, not a test).

    python benchmarks/speed.py [--rounds 3] [--device auto] [--precision auto] [--data-dir DIR] [--output r.json]
    python benchmarks/speed.py --steps-only --rounds 6   # the same-precision ratios only, a few minutes

Settings (the offline default backbone, max_len 32, AdamW, clipping at 1.0 — the loop's per-step work
on a non-logging step):

* cselab's SimCSE step (pooler cls, batch 64) in fp32 and bf16, and sentence-transformers'
  ``MultipleNegativesRankingLoss`` step on the same backbone folder (its own mean pooling, scale 20 =
  1/τ, each sentence as its own positive: SimCSE through MNRL) in fp32 and bf16;
* each method's step as a ratio of SimCSE's in ``--precision`` (MixCSE, GS-InfoNCE and APINCSE
  — pooler layer_attention, augmented_positive with a full queue of 1024, interlayer_negative — at
  batch 64; ClusterNS with K = 128 against SimCSE at batch 256);
* SimCSE at batch 512, uncached and with gradient caching (``mini_batch_size`` 64);
* the 7-task STS suite: ``cselab.model.evaluate.evaluate_sts`` (pooler avg) against
  sentence-transformers' ``EmbeddingSimilarityEvaluator`` on the same pairs, same precision;
* the process's peak resident memory (and peak CUDA memory per setting on a GPU).

Every round times one step of every setting in turn (the order rotates each round) after two
warm-up rounds, so that the load of a shared machine hits all settings alike; the tables give
medians. ``--dry-run`` shrinks everything (batches, rounds, one STS task) for a smoke test.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from tabulate import tabulate

from cselab.model.config import load_config
from cselab.model.data import STS_TASKS, load_corpus, load_sts_task
from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder.backbone import resolve_backbone
from cselab.model.evaluate import evaluate_sts
from cselab.model.evaluate.sts import EVAL_SPLIT
from cselab.model.methods import build_loss
from cselab.model.train.step import training_loss
from cselab.model.utils import autocast, cpu_supports_bf16, precision_name, resolve_device, resolve_precision

GOALS = {"simcse_vs_mnrl": 0.55, "method_vs_simcse": 1.05, "sts_suite_seconds": 30.0,
         # issue 57: cselab's step against MNRL's in the same precision (bf16 at most half; fp32 not above 0.38)
         "same_precision": {"bf16": 0.5, "fp32": 0.38}}


@dataclass
class Setting:
    name: str
    batch: int
    precision: str
    step: Callable[[list[str]], None]
    seconds: list[float] = field(default_factory=list)
    peak_cuda_bytes: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ----------------------------------------------------------------------------- steps
def adamw(params, device: torch.device) -> torch.optim.AdamW:
    """The optimizer of every setting: cselab's (cselab.model.train.training.adamw: fused on CPU and CUDA), for
    sentence-transformers too, so that the comparison is about the step, not the optimizer."""
    return torch.optim.AdamW(params, lr=3e-5, fused=device.type in ("cpu", "cuda"))


def cselab_step(encoder, loss_fn, optimizer, amp_dtype, mini_batch_size=None) -> Callable[[list[str]], None]:
    params = [p for p in encoder.parameters() if p.requires_grad] + [p for p in loss_fn.parameters() if p.requires_grad]
    counter = iter(range(10 ** 9))

    def step(sentences: list[str]) -> None:
        out = training_loss(encoder, encoder, loss_fn, sentences, step=next(counter), max_len=32, amp_dtype=amp_dtype,
                            compute_stats=False, mini_batch_size=mini_batch_size)
        if not torch.isfinite(out.result.loss):
            raise FloatingPointError("non-finite loss in the benchmark")
        out.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def sentence_transformer(model: str, device: torch.device):
    from sentence_transformers import SentenceTransformer

    path, _ = resolve_backbone(model)
    st = SentenceTransformer(path, device=str(device))
    st.max_seq_length = 32
    return st


def mnrl_step(st, optimizer, amp_dtype, device) -> Callable[[list[str]], None]:
    try:
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:   # sentence-transformers < 6
        from sentence_transformers.losses import MultipleNegativesRankingLoss
    loss_fn = MultipleNegativesRankingLoss(st, scale=20.0)

    def step(sentences: list[str]) -> None:
        st.train()
        raw = st.preprocess(sentences) if hasattr(st, "preprocess") else st.tokenize(sentences)   # ST ≥ 6 / older
        features = {k: v.to(device) if torch.is_tensor(v) else v for k, v in raw.items()}
        with autocast(device, amp_dtype):
            loss = loss_fn([features, dict(features)], None)
        loss.float().backward()
        torch.nn.utils.clip_grad_norm_(st.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def method_loss(encoder, keys: dict, batch: int):
    cfg = load_config({"model": "unused", **keys, "batch_size": batch})
    loss_fn = build_loss(cfg).to(encoder.device)
    loss_fn.setup(encoder, None)
    return loss_fn


def simcse_step(model: str, amp_dtype, batch: int, adapt: Callable[[SentenceEncoder], None] = lambda encoder: None):
    """``(step, encoder)``: cselab's SimCSE step (:func:`cselab_step`) on a fresh CPU encoder of
    ``model`` (seed 0, pooler cls, training mode, its own fused AdamW); ``adapt(encoder)`` runs first
    (what a benchmark compares: a compiled backbone, torch's dropout masks)."""
    torch.manual_seed(0)
    encoder = SentenceEncoder.from_pretrained(model, pooler="cls").train()
    adapt(encoder)
    loss_fn = method_loss(encoder, {"method": "simcse"}, batch)
    optimizer = adamw([p for p in encoder.parameters() if p.requires_grad], torch.device("cpu"))
    return cselab_step(encoder, loss_fn, optimizer, amp_dtype), encoder


def seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def interleaved_seconds(steps: dict[str, Callable[[list[str]], None]], batches: list[list[str]]) -> dict[str, list[float]]:
    """Each step's time on every batch, the steps taking turns in alternating order (a shared
    machine's load then hits them alike)."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for i, batch in enumerate(batches):
        for name in (list(steps) if i % 2 == 0 else list(steps)[::-1]):
            times[name].append(seconds(lambda: steps[name](batch)))
    return times


# ----------------------------------------------------------------------------- STS suite
def st_sts_suite(st, data_dir, tasks, amp_dtype, device, batch_size: int) -> tuple[float, float]:
    """sentence-transformers' EmbeddingSimilarityEvaluator on each task's pairs (STS12-16: every
    subset concatenated, as cselab's "all"; STS-B and SICK-R: test): (seconds, mean Spearman × 100)."""
    try:
        from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator
    except ImportError:
        from sentence_transformers.evaluation import EmbeddingSimilarityEvaluator
    start = time.perf_counter()
    scores = []
    st.eval()
    for task in tasks:
        subsets = load_sts_task(task, data_dir)
        if task in EVAL_SPLIT:
            subsets = {EVAL_SPLIT[task]: subsets[EVAL_SPLIT[task]]}
        s1 = [s for p in subsets.values() for s in p.sentences1]
        s2 = [s for p in subsets.values() for s in p.sentences2]
        gold = [float(x) for p in subsets.values() for x in p.scores]
        evaluator = EmbeddingSimilarityEvaluator(s1, s2, gold, batch_size=batch_size, main_similarity="cosine",
                                                 similarity_fn_names=["cosine"], write_csv=False)
        with autocast(device, amp_dtype):
            result = evaluator(st)
        scores.append(100 * next(v for k, v in result.items() if k.endswith("spearman_cosine")))
    sync(device)
    return time.perf_counter() - start, sum(scores) / len(scores)


# ----------------------------------------------------------------------------- the run
def training_sentences(data_dir, n: int) -> list[str]:
    try:
        return load_corpus("wiki1m-head", n, data_dir)
    except (FileNotFoundError, OSError, ValueError):
        print("note: no wiki1m-head corpus under the data root; timing on synthetic sentences", flush=True)
        g = torch.Generator().manual_seed(0)
        words = [f"w{i}" for i in range(500)]
        return [" ".join(words[j] for j in torch.randint(500, (int(torch.randint(8, 30, (1,), generator=g)),),
                                                         generator=g).tolist()) for _ in range(n)]


def run_benchmark(model: str = "all-minilm-l6", device: str = "auto", precision: str = "auto", rounds: int = 3,
                  data_dir=None, dry_run: bool = False, with_st: bool = True, with_eval: bool = True,
                  eval_rounds: int = 2, steps_only: bool = False) -> dict:
    """Time every setting, interleaved; returns the measurements (see :func:`format_report`).
    ``steps_only``: only the four batch-64 steps (cselab and MNRL, fp32 and bf16) and no STS suite: the
    same-precision ratios in a few minutes."""
    device = resolve_device(device)
    amp = resolve_precision(precision, device)
    eval_amp = resolve_precision(precision, device, evaluation=True)
    fp32, bf16 = None, torch.bfloat16
    small, medium, large, mini, k = (8, 16, 32, 8, 4) if dry_run else (64, 256, 512, 64, 128)
    rounds, warmup = (1, 1) if dry_run else (rounds, 2)
    eval_tasks = ["STS16"] if dry_run else list(STS_TASKS)
    load_start = os.getloadavg()

    corpus = training_sentences(data_dir, 4 * large * (rounds + warmup))
    torch.manual_seed(0)
    enc = SentenceEncoder.from_pretrained(model, pooler="cls").to(device).train()
    enc_la = SentenceEncoder.from_pretrained(model, pooler="layer_attention").to(device).train()
    opt = adamw(enc.parameters(), device)
    simcse = method_loss(enc, {"method": ["simcse"]}, small)
    settings = [
        Setting("cselab SimCSE", small, "fp32", cselab_step(enc, simcse, opt, fp32)),
        Setting("cselab SimCSE", small, "bf16", cselab_step(enc, simcse, opt, bf16)),
    ]
    if with_st:
        st = sentence_transformer(model, device)
        st_opt = adamw(st.parameters(), device)
        settings += [Setting("sentence-transformers MNRL", small, "fp32", mnrl_step(st, st_opt, fp32, device)),
                     Setting("sentence-transformers MNRL", small, "bf16", mnrl_step(st, st_opt, bf16, device))]
    p = precision_name(amp)
    if steps_only:
        with_eval = False
    if p not in ("fp32", "bf16") and not steps_only:
        settings.append(Setting("cselab SimCSE", small, p, cselab_step(enc, simcse, opt, amp)))
    apincse = method_loss(enc_la, {"pooler": "layer_attention",
                                   "method": ["augmented_positive", "interlayer_negative"]}, small)
    queue = apincse.components[0].queue      # full from the start: l_P on every timed step
    queue.push(torch.nn.functional.normalize(torch.randn(queue.size, queue.dim, device=device), dim=-1))
    opt_la = adamw(enc_la.parameters(), device)
    clusterns = method_loss(enc, {"method": ["clusterns"], "clusterns": {"num_clusters": k, "start_threshold": 1.0}},
                            medium)   # clustering starts on the first (warm-up) step
    settings += [] if steps_only else [
        Setting("method: MixCSE", small, p, cselab_step(enc, method_loss(enc, {"method": ["mixcse"]}, small), opt, amp)),
        Setting("method: GS-InfoNCE", small, p,
                cselab_step(enc, method_loss(enc, {"method": ["gs_infonce"]}, small), opt, amp)),
        Setting("method: APINCSE", small, p, cselab_step(enc_la, apincse, opt_la, amp)),
        Setting("cselab SimCSE", medium, p, cselab_step(enc, simcse, opt, amp)),
        Setting(f"method: ClusterNS K={k}", medium, p, cselab_step(enc, clusterns, opt, amp)),
        Setting("SimCSE uncached", large, p, cselab_step(enc, simcse, opt, amp)),
        Setting(f"SimCSE cached (mini_batch_size {mini})", large, p, cselab_step(enc, simcse, opt, amp, mini)),
    ]

    for r in range(warmup + rounds):
        shift = r % len(settings)
        for setting in settings[shift:] + settings[:shift]:
            sentences = corpus[r * setting.batch:(r + 1) * setting.batch]
            if device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
            sync(device)
            start = time.perf_counter()
            setting.step(sentences)
            sync(device)
            if r >= warmup:
                setting.seconds.append(time.perf_counter() - start)
            if device.type == "cuda":
                setting.peak_cuda_bytes = max(setting.peak_cuda_bytes, torch.cuda.max_memory_allocated(device))
        print(f"round {r + 1}/{warmup + rounds} done", file=sys.stderr, flush=True)
    rss_after_steps = peak_rss_mib()

    suite = {}
    if with_eval:
        evaluator = SentenceEncoder.from_pretrained(model, pooler="avg").to(device)
        evaluator.eval_precision = precision
        times = {"cselab": [], "sentence-transformers": []}
        for _ in range(1 if dry_run else eval_rounds):
            res = evaluate_sts(evaluator, tasks=eval_tasks, data_dir=data_dir)
            times["cselab"].append(res["seconds"])
            suite["cselab_avg"] = res["avg"]
            if with_st:
                seconds, avg = st_sts_suite(st, data_dir, eval_tasks, eval_amp, device, 128)
                times["sentence-transformers"].append(seconds)
                suite["st_avg"] = avg
        suite.update({name: statistics.median(t) for name, t in times.items() if t},
                     tasks=eval_tasks, sentences=res["sentences_encoded"], precision=precision_name(eval_amp))
    return {"device": str(device), "precision": p, "torch": torch.__version__, "threads": torch.get_num_threads(),
            "cpu_native_bf16": cpu_supports_bf16(), "rounds": rounds, "load_before": load_start,
            "load_after": os.getloadavg(),
            "settings": [{"name": s.name, "batch": s.batch, "precision": s.precision, "median_s": s.median,
                          "all_s": s.seconds, "peak_cuda_mib": s.peak_cuda_bytes / 2 ** 20} for s in settings],
            "sts_suite": suite, "peak_rss_mib_steps": rss_after_steps, "peak_rss_mib": peak_rss_mib()}


def format_report(r: dict) -> str:
    """The benchmark's tables and goals as text."""
    def find(name: str, batch: int, precision: str) -> float | None:
        hit = [s["median_s"] for s in r["settings"] if s["name"] == name and s["batch"] == batch
               and s["precision"] == precision]
        return hit[0] if hit else None

    small = min(s["batch"] for s in r["settings"])
    p = r["precision"]
    mnrl = find("sentence-transformers MNRL", small, "fp32")
    lines = [f"device {r['device']}, torch {r['torch']}, {r['threads']} threads, CPU native bf16: "
             f"{r['cpu_native_bf16']}; load average before {r['load_before'][0]:.1f}, after {r['load_after'][0]:.1f}; "
             f"median of {r['rounds']} interleaved rounds", ""]
    rows = []
    for s in r["settings"]:
        base = find("cselab SimCSE", s["batch"], s["precision"])
        if s["name"].startswith("method:"):
            ratio, ref = s["median_s"] / base, "SimCSE, same batch"
        elif s["name"].startswith("SimCSE cached"):
            ratio, ref = s["median_s"] / find("SimCSE uncached", s["batch"], s["precision"]), "uncached"
        elif s["batch"] == small and mnrl:
            ratio, ref = s["median_s"] / mnrl, "MNRL fp32"
        else:
            ratio, ref = None, ""
        row = [s["name"], s["batch"], s["precision"], s["median_s"], ratio, ref]
        if any(x["peak_cuda_mib"] for x in r["settings"]):
            row.append(s["peak_cuda_mib"])
        rows.append(row)
    headers = ["setting", "batch", "precision", "s/step (median)", "ratio", "ratio to"]
    if len(rows[0]) > len(headers):
        headers.append("peak CUDA MiB")
    lines.append(tabulate(rows, headers=headers, tablefmt="github", floatfmt=".3f"))
    goals = []
    ours = find("cselab SimCSE", small, p)
    if mnrl and ours:
        goals.append([f"SimCSE step ({p}) / MNRL fp32 step", ours / mnrl, f"≤ {GOALS['simcse_vs_mnrl']}",
                      ours / mnrl <= GOALS["simcse_vs_mnrl"]])
    for precision, target in GOALS["same_precision"].items():   # the peer in the same precision (issue 57)
        theirs, mine = find("sentence-transformers MNRL", small, precision), find("cselab SimCSE", small, precision)
        if theirs and mine:
            goals.append([f"SimCSE step / MNRL step, both {precision}", mine / theirs, f"≤ {target}",
                          mine / theirs <= target])
    methods = [(s["median_s"] / find("cselab SimCSE", s["batch"], s["precision"]), s["name"])
               for s in r["settings"] if s["name"].startswith("method:")]
    if methods:
        worst = max(methods)
        goals.append([f"slowest method / SimCSE ({worst[1][8:]})", worst[0], f"≤ {GOALS['method_vs_simcse']}",
                      worst[0] <= GOALS["method_vs_simcse"]])
    suite = r["sts_suite"]
    if suite:
        lines += ["", tabulate([[name, suite[name], suite[avg]] for name, avg in
                                (("cselab", "cselab_avg"), ("sentence-transformers", "st_avg")) if name in suite],
                               headers=[f"STS suite ({len(suite['tasks'])} tasks, {suite['precision']})",
                                        "seconds (median)",
                                        "avg Spearman ×100"], tablefmt="github", floatfmt=".2f")]
        goals.append([f"{len(suite['tasks'])}-task STS suite seconds", suite["cselab"],
                      f"≤ {GOALS['sts_suite_seconds']:.0f}", suite["cselab"] <= GOALS["sts_suite_seconds"]])
    lines += ["", tabulate(goals, headers=["goal", "measured", "target", "met"], tablefmt="github", floatfmt=".3f"),
              "", f"peak RSS: {r['peak_rss_mib_steps']:.0f} MiB after the training steps, {r['peak_rss_mib']:.0f} MiB "
              "in all"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--precision", default="auto", help="of the method, batch-size and STS settings")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval-rounds", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--no-st", action="store_true", help="skip sentence-transformers")
    parser.add_argument("--no-eval", action="store_true", help="skip the STS suite")
    parser.add_argument("--dry-run", action="store_true", help="tiny batches, one round, one STS task")
    parser.add_argument("--steps-only", action="store_true", help="only the batch-64 steps of cselab and "
                        "sentence-transformers in fp32 and bf16 (the same-precision ratios), no STS suite")
    parser.add_argument("--output", default=None, help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    result = run_benchmark(args.model, args.device, args.precision, args.rounds, args.data_dir, args.dry_run,
                           not args.no_st, not args.no_eval, args.eval_rounds, args.steps_only)
    print(format_report(result))
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
