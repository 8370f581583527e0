"""The evaluation suites as a registry, as methods and poolers are (modelled on sentence-transformers'
evaluators): a suite has a name, a function that scores any model with ``encode(sentences,
batch_size)`` and returns a results dict, the options ``cselab eval``'s arguments give it, its
primary metric and the table ``cselab eval`` prints; a suite that scores sets of pairs also says
how it scores one given set (``score_pairs``). ``cselab eval --suite``, the evaluation cache
(:func:`cselab.evaluate.cache.evaluate_run`) and training's dev evaluation (the ``sts`` suite's
``score_pairs`` on STS-B dev, :mod:`cselab.train.dev_evaluation`) read :data:`SUITES`; a new suite
is its function in its own module and one :func:`register_suite` below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tabulate import tabulate

from ..data.sts import STS_TASKS
from ..data.transfer import TRANSFER_TASKS
from .clustering import CLUSTERING_TASKS, DEFAULT_SEEDS, evaluate_clustering
from .geometry import evaluate_alignment_uniformity
from .sts import evaluate_pairs, evaluate_sts, format_sts_table
from .transfer import evaluate_transfer

GEOMETRY_KEYS = ("alignment", "uniformity", "mean_cos", "largest_angle")


@dataclass(frozen=True)
class Suite:
    name: str
    run: Callable[..., dict]               # run(model, data_dir=..., batch_size=..., **options) -> results
    summary: str
    primary: str                           # the results key of the primary metric
    higher_is_better: bool
    cli_options: Callable[[Any], dict]     # `cselab eval`'s parsed arguments -> the suite's options
    table: Callable[[dict, str], str]      # results and the model's label -> the table `cselab eval` prints
    # score_pairs(model, pairs, batch_size=..., show_progress_bar=...) -> the suite's score of one set of
    # pairs (training's dev evaluation); None for a suite that scores no pairs
    score_pairs: Callable[..., float] | None = None
    # keys a stored result must have to be trusted from the evaluation cache (cselab.evaluate.cache)
    result_keys: tuple[str, ...] = ()

    def primary_metric(self, result: dict) -> float:
        return result[self.primary]


SUITES: dict[str, Suite] = {}


def register_suite(suite: Suite) -> Suite:
    if suite.name in SUITES:
        raise ValueError(f"suite {suite.name!r} is registered twice")
    SUITES[suite.name] = suite
    return suite


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise ValueError(f"suite must be one of {tuple(SUITES)}, got {name!r}")
    return SUITES[name]


def _sts_table(r: dict, label: str) -> str:
    table = format_sts_table({label: r})
    if "custom" in r:   # the user's own pairs, beside (never inside) the standard average
        custom = r["custom"]
        table += "\n\n" + tabulate([[name, d["pairs"], custom["scores"][name], d["file"]]
                                    for name, d in custom["details"].items()],
                                   headers=["your pairs", "pairs", "Spearman ×100", "file"], tablefmt="github",
                                   floatfmt=".2f")
    return (table + "\n" + f"{r['sentences_encoded']} unique sentences in {r['seconds']:.1f}s; "
            f"aggregate={r['aggregate']}; precision={r['precision']}")


def _transfer_table(r: dict, label: str) -> str:
    rows = [[t, d["acc"], d.get("f1", ""), d["seconds"]] for t, d in r["details"].items()]
    rows.append(["Avg.", r["avg"], "", r["seconds"]])
    return tabulate(rows, headers=["task", f"acc ({r['kfold']}-fold)", "F1", "seconds"], tablefmt="github",
                    floatfmt=".2f")


def _clustering_table(r: dict, label: str) -> str:
    headers = ["task", "metric", "mean ×100", f"std ({len(r['seeds'])} seeds)", "NMI ×100", "seconds"]
    rows = [[t, r["metric"][t], 100 * d[r["metric"][t]]["mean"], 100 * d[r["metric"][t]]["std"],
             100 * d["nmi"]["mean"], d["seconds"]] for t, d in r["details"].items()]
    table = tabulate(rows, headers=headers, tablefmt="github", floatfmt=".2f") if rows else ""
    if "custom" in r:   # the user's own labelled texts, beside (never inside) the short-text average
        own = [[n, "acc", 100 * d["acc"]["mean"], 100 * d["acc"]["std"], 100 * d["nmi"]["mean"], d["n"],
                d["n_clusters"], d["file"]] for n, d in r["custom"]["details"].items()]
        table += ("\n\n" if table else "") + tabulate(
            own, headers=["your texts", *headers[1:5], "texts", "K", "file"], tablefmt="github", floatfmt=".2f")
    return table


def _geometry_table(r: dict, label: str) -> str:
    return tabulate([[k, r[k]] for k in GEOMETRY_KEYS], headers=["STS-B " + r["split"], "value"],
                    tablefmt="github", floatfmt=".4f")


def _clustering_tasks(args) -> list[str]:
    """``--tasks``, else every standard set; with ``--texts`` and no ``--tasks``, only the user's texts
    (the standard sets cost minutes; ``--tasks`` adds them back)."""
    if args.tasks:
        return args.tasks
    return [] if args.texts else list(CLUSTERING_TASKS)


register_suite(Suite(
    "sts", evaluate_sts, "STS12-16, STS-B and SICK-R test: Spearman ×100 of cosine similarities (SimCSE's protocol)",
    "avg", True, lambda a: {"tasks": a.tasks or STS_TASKS, "aggregate": a.aggregate, "pairs": a.pairs}, _sts_table,
    score_pairs=evaluate_pairs, result_keys=("scores",)))
register_suite(Suite(
    "transfer", evaluate_transfer, "SentEval's 7 transfer tasks: logistic-regression accuracy ×100",
    "avg", True, lambda a: {"tasks": a.tasks or TRANSFER_TASKS, "fast": a.fast, "probe": a.probe}, _transfer_table,
    result_keys=("scores",)))
register_suite(Suite(
    "clustering", evaluate_clustering, "DBpedia AMI and 8 short-text sets' Hungarian accuracy, over K-means seeds",
    "short_text_avg", True, lambda a: {"tasks": _clustering_tasks(a), "seeds": a.seeds or list(DEFAULT_SEEDS),
                                       **({"texts": a.texts} if a.texts else {})},
    _clustering_table, result_keys=("scores",)))
register_suite(Suite(
    "geometry", evaluate_alignment_uniformity, "alignment and uniformity (Wang & Isola) on STS-B",
    "uniformity", False, lambda a: {"split": a.split}, _geometry_table, result_keys=GEOMETRY_KEYS))
