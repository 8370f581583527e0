"""The clustering suite: DBpedia (AMI) and the 8 short-text sets (Hungarian accuracy), K-means over
seeds (ClusterNS's tables, :mod:`cselab.model.evaluate.clustering`); the user's own labelled texts beside them."""
from __future__ import annotations

from .registry import Option, Ref, Suite, Table, register_suite

# The column labels of ClusterNS's tables (Table 5: DBpedia AMI; Table 6: the short-text sets).
COLUMNS = {"DBpedia": "DBpedia (AMI)", "AgNews": "AG", "Biomedical": "Bio", "GoogleNews-S": "G-S",
           "GoogleNews-T": "G-T", "GoogleNews-TS": "G-TS", "SearchSnippets": "SS", "StackOverflow": "SO",
           "Tweet": "Tweet"}


def _table(r: dict, label: str) -> str:
    from tabulate import tabulate

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


def _fill(options: dict) -> dict:
    """``--tasks``, else every standard set; with ``--texts`` and no ``--tasks``, only the user's texts
    (the standard sets cost minutes; ``--tasks`` adds them back)."""
    from ..clustering import CLUSTERING_TASKS, DEFAULT_SEEDS

    texts = options.get("texts")
    tasks = options["tasks"] if options.get("tasks") is not None else ([] if texts else list(CLUSTERING_TASKS))
    seeds = options["seeds"] if options.get("seeds") is not None else list(DEFAULT_SEEDS)
    return {"tasks": tasks, "seeds": seeds, **({"texts": texts} if texts else {})}


register_suite(Suite(
    "clustering", Ref("cselab.model.evaluate.clustering", "evaluate_clustering"),
    "DBpedia AMI and 8 short-text sets' Hungarian accuracy, over K-means seeds", "short_text_avg",
    options=(
        Option("--tasks", "a subset of DBpedia and the 8 short-text sets (default: all; with --texts: none)",
               None, {"nargs": "+"}),
        Option("--seeds", "K-means seeds (default 0 1 2 3 4)", None, {"type": int, "nargs": "+"}),
        Option("--texts", "your own labelled texts (label<TAB>text, header optional), clustered with K = their "
               "number of labels and reported beside the standard sets (named by file stem); without --tasks "
               "only these are clustered", None, {"nargs": "+", "metavar": "TSV"}),
    ),
    fill_options=_fill, table=_table, result_keys=("scores",),
    columns=COLUMNS,
    tables={"short_text": Table(Ref("cselab.model.data.clustering", "SHORT_TEXT_SETS")),
            "dbpedia": Table(("DBpedia",), average=False)}))
