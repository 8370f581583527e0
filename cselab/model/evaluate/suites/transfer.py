"""The transfer suite: SentEval's 7 transfer tasks, logistic-regression accuracy ×100 on frozen
embeddings (:mod:`cselab.model.evaluate.transfer`)."""
from __future__ import annotations

from .registry import Option, Ref, Suite, register_suite


def _table(r: dict, label: str) -> str:
    from tabulate import tabulate

    rows = [[t, d["acc"], d.get("f1", ""), d["seconds"]] for t, d in r["details"].items()]
    rows.append(["Avg.", r["avg"], "", r["seconds"]])
    return tabulate(rows, headers=["task", f"acc ({r['kfold']}-fold)", "F1", "seconds"], tablefmt="github",
                    floatfmt=".2f")


def _entry_key(options) -> dict:
    """The PyTorch probe trains on the batch-mean loss, as SentEval does (it summed before), so an
    older ``probe: pytorch`` entry is computed again rather than read back."""
    return {"probe_loss": "mean"} if options.get("probe") == "pytorch" else {}


register_suite(Suite(
    "transfer", Ref("cselab.model.evaluate.transfer", "evaluate_transfer"),
    "SentEval's 7 transfer tasks: logistic-regression accuracy ×100", "avg",
    options=(
        Option("--tasks", "a subset of MR CR SUBJ MPQA SST2 TREC MRPC (default: all)",
               Ref("cselab.model.data.transfer", "TRANSFER_TASKS"), {"nargs": "+"}),
        Option("--fast", "5-fold instead of 10-fold (SimCSE's fasttest)", False, {"action": "store_true"}),
        Option("--probe", "the classifier; pytorch = SentEval's PyTorch logistic regression as SimCSE ran it "
               "(Adam, batch 64, tenacity 5, epoch size 4; --fast: RMSprop, 128, 3, 2)", "sklearn",
               {"choices": ["sklearn", "pytorch"]}),
    ),
    table=_table, result_keys=("scores",), entry_key=_entry_key,
    columns=Ref("cselab.model.data.transfer", "TRANSFER_TASKS")))
