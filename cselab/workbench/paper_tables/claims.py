"""A paper's claims checked on a notebook's runs: the study file's claims, the record's numbers.

The claims, their families and the power rule are the study file's (``claims:``, ``power:``; see
:mod:`cselab.workbench.claims`), fixed before any run: a notebook does not define its own. Their numbers come
from the study's record (:mod:`cselab.workbench.studies.record`): when the notebook runs inside its study the
engine passes the record, so the notebook shows exactly the committed verdicts; on other runs (the
demo's, your own) the same record lines are built from the run folders it is given.

:func:`study_claims_table` is what the paper notebooks' claims cell calls. The statistics
(:func:`claims_table`, :func:`format_claims`, :class:`Claim`) are :mod:`cselab.workbench.claims`'; they are
re-exported here for the notebooks (``pt.Claim``).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..claims import (HOLDS, REVERSED, Claim, PowerRule, claims_table, format_claims, mechanism_readings, tally,
                      verdict, with_computation)
from ...model.rundir import RunDir
from ..studies.record import computation_columns, read_record, records_frame, run_record, variant_of_label
from ..studies.spec import read_study_plan


def as_variants(frame: pd.DataFrame, column: str, words: str) -> pd.DataFrame:
    """Rows of a sweep frame (:func:`cselab.workbench.paper_tables.sweep_results`) as variants named by their
    swept value, e.g. ``words="λ = {:g}"`` → ``variant`` "λ = 0.1"; so sweep points can be claimed about."""
    out = frame.copy()
    out["variant"] = [words.format(v) for v in out[column]]
    return out


def records_of_runs(runs: Mapping[str, str | os.PathLike], study: str, profile: str) -> list[dict]:
    """Record lines built from finished run folders (the labels are the runs' labels)."""
    return [run_record(path, label, study, profile) for label, path in runs.items()
            if RunDir(Path(path)).results_file.is_file()]


class NoClaims(ValueError):
    """The study file states no claim for this profile (e.g. the smoke profile, which checks the code
    path at two steps a run)."""


def study_claims_table(study: str, profile: str, runs: Mapping[str, str | os.PathLike] | None = None,
                       record: str | os.PathLike | None = None) -> pd.DataFrame:
    """The study's claims table (:func:`cselab.workbench.claims.claims_table`) for ``profile``: over the
    record file ``record`` when given (and present), else over record lines built from ``runs``.
    Its ``attrs`` say the families, where the numbers came from and how many runs. The study file
    is read as a record is read against it (:func:`cselab.workbench.studies.spec.read_study_plan`: its
    claims and power plan, no run config resolved)."""
    spec = read_study_plan(study, profile)
    if not spec.claims.claims:
        raise NoClaims(f"study {study!r} declares no claims for profile {profile!r}")
    if record is not None and Path(record).is_file():
        records, source = read_record(record), f"the study's record {record}"
    else:
        records, source = records_of_runs(runs or {}, study, profile), "the runs given"
    frame = records_frame(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["variant", "seed", "avg"])
    else:   # the pairing rule reads each run's computation (CPU kind, precision, code) from its line
        frame = with_computation(frame, records, of=computation_columns)
    table = claims_table(frame, spec.claims.claims, spec.claims.rule,
                         inert=mechanism_readings(spec.claims.claims, records))
    table.attrs["source"] = f"{source} ({len(records)} runs)"
    return table


__all__ = ["Claim", "HOLDS", "NoClaims", "PowerRule", "REVERSED", "as_variants", "claims_table", "format_claims",
           "records_of_runs", "study_claims_table", "tally", "variant_of_label", "verdict"]
