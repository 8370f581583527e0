"""The papers' published numbers beside ours (:mod:`cselab.workbench.published`): the published rows that
match our groups (same variant, same backbone), published tables turned to our orientation, and
the note saying why a table has published numbers or none (only the papers' own backbones)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pandas as pd

from ..published import BACKBONES, paper_backbone, published_frame
from .backbones import group_model
from .variants import variant_of


def backbone_note(model: str, source: str) -> str:
    """Why a table has (or has no) published numbers beside ours."""
    backbone = paper_backbone(model)
    if backbone is None:
        return (f"Runs of `{model}`: not a backbone the papers train ({', '.join(BACKBONES.values())}), so no "
                f"published numbers of {source} are shown: numbers of different backbones are not comparable.")
    return f"Runs of `{model}` ({BACKBONES[backbone]}): the published numbers of {source} for {BACKBONES[backbone]} " \
           "are shown beside ours."

def published_notes(groups: Mapping[str, Mapping[str, Path]], source: str) -> str:
    """One line per backbone of the groups saying whether published numbers are shown and why."""
    models = list(dict.fromkeys(group_model(members) for members in groups.values()))
    return "\n".join(f"- {backbone_note(model, source)}" for model in models)

def published_beside(paper: str, table: str, groups: Mapping[str, Mapping[str, Path]],
                     as_column: str | None = None, numeric: bool = False) -> pd.DataFrame | None:
    """The published rows of ``table`` that match our groups — same variant, same backbone — indexed
    by our group names (cells as printed unless ``numeric``); None when no group has one (other
    backbones, variants the paper does not report). ``as_column`` renames the single column of a
    table whose columns are backbones (ClusterNS Table 2) to ours (e.g. ``Avg.``)."""
    rows = []
    for name, members in groups.items():
        backbone = paper_backbone(group_model(members))
        if backbone is None:
            continue
        frame = published_frame(paper, table, backbone=backbone, variants=[variant_of(name)], numeric=numeric,
                                index="variant")
        if frame.empty:
            continue
        if as_column is not None:
            if frame.shape[1] != 1:
                raise ValueError(f"as_column: {frame.attrs['source']} has {frame.shape[1]} columns for {backbone}")
            frame.columns = [as_column]
        rows.append(frame.set_axis([name]))
    if not rows:
        return None
    out = pd.concat(rows)
    out.attrs = dict(rows[0].attrs)
    return out

def published_transposed(paper: str, table: str, backbone: str | None = None, tags: dict | None = None,
                         numeric: bool = True, rename: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A published table printed with settings or models as columns (ClusterNS Tables 3 and 5),
    turned so they are rows like ours; ``rename`` renames those rows (e.g. ``{"RoBERTa": "untuned
    RoBERTa-base"}``). The frame keeps the table's ``attrs`` (source, unit)."""
    frame = published_frame(paper, table, backbone=backbone, numeric=numeric, index="variant", tags=tags)
    out = frame.T.rename(index=dict(rename or {}))
    out.columns.name = None
    out.attrs = dict(frame.attrs)
    return out

def with_published_column(table: pd.DataFrame, published: Mapping | pd.Series | None, label: str) -> pd.DataFrame:
    """``table`` (one row per setting, e.g. per M) with the published value of each setting in a
    column ``label`` (``–`` where the paper has none)."""
    out = table.copy()
    values = dict(published or {})
    out[label] = [values.get(key, "–") for key in out.index]
    return out
