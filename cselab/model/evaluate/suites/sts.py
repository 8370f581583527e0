"""The STS suite: STS12-16, STS-B and SICK-R test, Spearman ×100 of cosine similarities (SimCSE's
protocol, :mod:`cselab.model.evaluate.sts`). The default suite, the one training's dev evaluation scores
STS-B dev with, and the one training's final evaluation writes into ``results.json``."""
from __future__ import annotations

from .registry import Option, Ref, Suite, register_suite


def _table(r: dict, label: str) -> str:
    from tabulate import tabulate

    from ..sts import format_sts_table

    table = format_sts_table({label: r})
    if "custom" in r:   # the user's own pairs, beside (never inside) the standard average
        custom = r["custom"]
        table += "\n\n" + tabulate([[name, d["pairs"], custom["scores"][name], d["file"]]
                                    for name, d in custom["details"].items()],
                                   headers=["your pairs", "pairs", "Spearman ×100", "file"], tablefmt="github",
                                   floatfmt=".2f")
    return (table + "\n" + f"{r['sentences_encoded']} unique sentences in {r['seconds']:.1f}s; "
            f"aggregate={r['aggregate']}; precision={r['precision']}")


register_suite(Suite(
    "sts", Ref("cselab.model.evaluate.sts", "evaluate_sts"),
    "STS12-16, STS-B and SICK-R test: Spearman ×100 of cosine similarities (SimCSE's protocol)", "avg",
    default=True,
    options=(
        Option("--tasks", "a subset of STS12 STS13 STS14 STS15 STS16 STSBenchmark SICKRelatedness (default: all)",
               Ref("cselab.model.data.sts", "STS_TASKS"), {"nargs": "+"}),
        Option("--aggregate", "the STS12-16 summary: all = SimCSE (default), mean = SentEval's default", "all",
               {"choices": ["all", "mean", "wmean"]}),
        Option("--pairs", "your own scored pairs (sentence1<TAB>sentence2<TAB>score, header optional), scored with "
               "the STS protocol and reported beside the standard tasks (named by file stem)", None,
               {"nargs": "+", "metavar": "TSV"}),
    ),
    table=_table, score_pairs=Ref("cselab.model.evaluate.sts", "evaluate_pairs"),
    result_keys=("scores",), final_eval=True, extras=("per_pair",),
    columns=Ref("cselab.model.evaluate.sts", "TASK_LABELS")))
