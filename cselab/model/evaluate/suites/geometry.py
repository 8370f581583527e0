"""The geometry suite: alignment and uniformity (Wang & Isola), anisotropy and the largest angle on
STS-B (:mod:`cselab.model.evaluate.geometry`)."""
from __future__ import annotations

from .registry import Option, Ref, Suite, register_suite

GEOMETRY_KEYS = ("alignment", "uniformity", "mean_cos", "largest_angle")


def _table(r: dict, label: str) -> str:
    from tabulate import tabulate

    return tabulate([[k, r[k]] for k in GEOMETRY_KEYS], headers=["STS-B " + r["split"], "value"],
                    tablefmt="github", floatfmt=".4f")


register_suite(Suite(
    "geometry", Ref("cselab.model.evaluate.geometry", "evaluate_alignment_uniformity"),
    "alignment and uniformity (Wang & Isola) on STS-B", "uniformity", higher_is_better=False,
    options=(Option("--split", "the STS-B split (default: all three)", "all",
                    {"choices": ["train", "dev", "test", "all"]}),),
    table=_table, result_keys=GEOMETRY_KEYS, frame_keys=GEOMETRY_KEYS))
