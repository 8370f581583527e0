"""Training and evaluation throughput of a backbone on this machine (a benchmark, not a test).

    python benchmarks/throughput.py [--model all-minilm-l6] [--steps 20] [--data-dir DIR]

Prints a table: training steps/s (SimCSE, batch 64, max_len 32: one forward/backward over 2×64 rows,
AdamW step) and evaluation sentences/s (encode() over the deduplicated sentences of the 7 STS
tasks), with the device and torch's thread count.
"""
from __future__ import annotations

import argparse
import time

import torch
from tabulate import tabulate

from cselab.model.data import STS_TASKS, load_corpus, load_sts_task
from cselab.model.encoder import SentenceEncoder
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.utils import resolve_device, seed_everything


def training_steps_per_second(model: str, device, steps: int, batch_size: int, max_len: int, data_dir) -> float:
    seed_everything(42)
    encoder = SentenceEncoder.from_pretrained(model, pooler="cls").to(device).train()
    loss_fn = ContrastiveLoss(0.05)
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=3e-5, weight_decay=0.0)
    corpus = load_corpus("wiki1m-head", max_sentences=batch_size * (steps + 3), data_dir=data_dir)

    def step(i: int) -> None:
        sentences = corpus[i * batch_size:(i + 1) * batch_size]
        out = encoder(encoder.training_inputs(sentences, max_len))
        loss = loss_fn(ContrastiveBatch(out.embeddings[:batch_size], out.embeddings[batch_size:]),
                       compute_stats=False).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for i in range(3):  # warm-up
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(3, 3 + steps):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - start)


def eval_sentences_per_second(model: str, device, batch_size: int, data_dir) -> tuple[float, int]:
    encoder = SentenceEncoder.from_pretrained(model, pooler="avg").to(device)
    sentences = sorted({s for task in STS_TASKS for p in load_sts_task(task, data_dir).values()
                        for s in (*p.sentences1, *p.sentences2)})
    start = time.perf_counter()
    encoder.encode(sentences, batch_size=batch_size, show_progress_bar=False)
    return len(sentences) / (time.perf_counter() - start), len(sentences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="all-minilm-l6")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len", type=int, default=32)
    parser.add_argument("--eval-batch-size", type=int, default=128)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    device = resolve_device(args.device)
    train_sps = training_steps_per_second(args.model, device, args.steps, args.batch_size, args.max_len, args.data_dir)
    eval_sps, n = eval_sentences_per_second(args.model, device, args.eval_batch_size, args.data_dir)
    rows = [
        ["train (SimCSE, fp32)", f"batch {args.batch_size}, max_len {args.max_len}", f"{train_sps:.2f} steps/s",
         f"{train_sps * args.batch_size:.0f} sentences/s"],
        ["evaluate (7 STS tasks)", f"{n} unique sentences, batch {args.eval_batch_size}", f"{eval_sps:.0f} sentences/s",
         f"{n / eval_sps:.1f} s for the suite"],
    ]
    print(f"model: {args.model}   device: {device}   torch threads: {torch.get_num_threads()}   "
          f"torch {torch.__version__}")
    print(tabulate(rows, headers=["what", "setting", "throughput", ""], tablefmt="github"))


if __name__ == "__main__":
    main()
