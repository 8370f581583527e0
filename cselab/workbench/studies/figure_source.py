"""What a study's notebook kernels are told about the figures they save: the notebook and the runs
they are drawn from, in one environment variable that :mod:`cselab.workbench.plots.provenance` reads
into each figure's provenance entry (studies sit below plots: the name lives here)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

SOURCE_ENV = "CSELAB_FIGURE_SOURCE"   # JSON: {"source": what the figures are drawn from, "code": [notebook]}


def checkout_root() -> Path:
    """The folder that holds the ``cselab`` package (the checkout, for an editable install)."""
    return Path(__file__).resolve().parents[3]


def source_environment(source: str, code: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a notebook's kernel gets so that its figures name what they are drawn from."""
    return {SOURCE_ENV: json.dumps({"source": source, "code": list(code)})}


def figure_source(source: Path, parameters: Mapping) -> dict[str, str]:
    """The kernel's environment for a notebook ``source`` run with ``parameters``: the notebook (as a
    checkout-relative path, so that its changes count as the figures' drawing code) and the run
    folders it reads."""
    try:
        notebook, code = source.resolve().relative_to(checkout_root()).as_posix(), True
    except ValueError:   # a study's own notebook outside the checkout: its name is what is known
        notebook, code = source.name, False
    runs = parameters.get("runs")
    folders = sorted(Path(str(r)).name for r in (runs.values() if isinstance(runs, Mapping) else []))
    drawn_from = f"{notebook} on {len(folders)} run(s): {', '.join(folders)}" if folders else notebook
    return source_environment(drawn_from, [notebook] if code else [])


__all__ = ["SOURCE_ENV", "checkout_root", "figure_source", "source_environment"]
