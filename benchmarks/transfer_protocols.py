"""The 7 SentEval transfer tasks of one model in both classifier protocols, side by side (a
benchmark-style script that prints a table, not a test).

    python benchmarks/transfer_protocols.py [--model all-minilm-l6] [--pooler avg] [--full] [--output x.json]

``sklearn`` is scikit-learn's logistic regression with SentEval's C grids (cselab's default);
``pytorch`` is SentEval's PyTorch logistic regression as SimCSE and the four papers ran it
(cselab/model/evaluate/torch_probe.py). Default: SimCSE's ``fasttest`` settings (5 folds; RMSprop, batch
128, tenacity 3, epoch size 2 for pytorch); ``--full`` its ``test`` mode (10 folds; Adam, 64, 5, 4).
Every sentence is encoded once: the second protocol reads the first one's embeddings, so the two
columns differ only by the classifier. docs/evaluation.md reports the table.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

from cselab.model.data.transfer import TRANSFER_TASKS
from cselab.model.encoder import SentenceEncoder
from cselab.model.evaluate.transfer import evaluate_transfer
from cselab.model.io import atomic_write_json
from cselab.model.utils import resolve_device


class EncodeOnce:
    """Wraps an encoder: a sentence already encoded is read back, not encoded again; with ``store``
    (an .npz of sentences and vectors, no pickles) the vectors outlive the process, so an
    interrupted comparison does not encode again."""

    def __init__(self, encoder, store: str | None = None):
        self.encoder, self.vectors, self.store = encoder, {}, store
        if store and Path(store).is_file():
            with np.load(store, allow_pickle=False) as saved:
                self.vectors = dict(zip(saved["sentences"].tolist(), saved["vectors"]))

    def encode(self, sentences, batch_size: int = 128, **kwargs):
        new = [s for s in dict.fromkeys(sentences) if s not in self.vectors]
        if new:
            for s, v in zip(new, np.asarray(self.encoder.encode(new, batch_size=batch_size, **kwargs))):
                self.vectors[s] = v
            if self.store:
                tmp = f"{self.store}.tmp.npz"
                np.savez(tmp, sentences=np.array(list(self.vectors)), vectors=np.stack(list(self.vectors.values())))
                os.replace(tmp, self.store)
        return np.stack([self.vectors[s] for s in sentences])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="all-minilm-l6")
    ap.add_argument("--pooler", default="avg")
    ap.add_argument("--tasks", nargs="+", default=list(TRANSFER_TASKS))
    ap.add_argument("--full", action="store_true", help="SimCSE's test mode (10 folds) instead of fasttest")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--output", default=None, help="write both results as JSON here")
    ap.add_argument("--store", default=None, help="keep the embeddings in this .npz (resumable)")
    args = ap.parse_args(argv)

    encoder = SentenceEncoder.from_pretrained(args.model, pooler=args.pooler)
    model = EncodeOnce(encoder.to(resolve_device("auto")), args.store)
    results, seconds = {}, {}
    for probe in ("sklearn", "pytorch"):
        start = time.perf_counter()
        results[probe] = evaluate_transfer(model, args.tasks, args.data_dir, fast=not args.full, probe=probe)
        seconds[probe] = time.perf_counter() - start
    rows = [[t, results["sklearn"]["scores"][t], results["pytorch"]["scores"][t],
             results["pytorch"]["scores"][t] - results["sklearn"]["scores"][t]] for t in args.tasks]
    rows.append(["Avg.", results["sklearn"]["avg"], results["pytorch"]["avg"],
                 results["pytorch"]["avg"] - results["sklearn"]["avg"]])
    mode = "test (10 folds)" if args.full else "fasttest (5 folds)"
    print(f"{args.model} ({args.pooler}), SimCSE's {mode}; accuracy ×100 (MRPC: accuracy)")
    print(tabulate(rows, headers=["task", "sklearn", "pytorch (SentEval)", "pytorch − sklearn"], tablefmt="github",
                   floatfmt=".2f"))
    print(f"seconds: sklearn {seconds['sklearn']:.0f} (with the one encode), pytorch {seconds['pytorch']:.0f}")
    if args.output:
        atomic_write_json(args.output, {"model": args.model, "pooler": args.pooler, "mode": mode,
                                        "results": results, "seconds": seconds})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
