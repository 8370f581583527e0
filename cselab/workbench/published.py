"""The papers' published numbers as data, with their source, to put beside ours.

Every number here is copied from the paper's own table, cell by cell, **as printed** (``"71.71±4.04"``,
``"76.99(-0.56)"``, ``"0.7355"``): rows and columns are the paper's, column labels are cselab's
names for the same tasks (``STS-B``, ``SICK-R``, ``SST2``, ``Avg.``) so a published row lines up
with a row of :func:`cselab.workbench.tables.scores_table`. Each table names its source (``"ClusterNS Table
2"``); each row its backbone (the Hugging Face id the paper's model starts from) and, where cselab
can train the same model, the *variant* name the paper notebooks use for our runs (``"SimCSE"``,
``"MixCSE"``, ``"w/o hard negative"`` ...). tests/test_published.py checks every row against the
plain-text copies of the papers (../shared/papers).

Which tables exist: :func:`available`. Reading them:

* :func:`published_table` — the :class:`PublishedTable` itself;
* :func:`published_frame` — a DataFrame of one table (numbers, in cselab's units, or the printed
  text), optionally for one backbone and some variants;
* :func:`paper_backbone` — a run's ``model`` → the paper backbone it is (``None`` for anything
  else, e.g. the offline MiniLM: its numbers are not comparable with any paper's).

The MixCSE copy is a structured summary that numbers its items "Knowl 1–10" and the paper's tables
not at all, so its tables are named after the paper's sections: "Experiment Results (STS)",
"Experiment Results (transfer)" and "Ablation Study" (docs/glossary.md maps each to its Knowl
item). The APINCSE copy (in Chinese) describes Tables 3–5
and Figures 2–4 but does not contain their values (they are images in the source), so APINCSE has
no table here; :data:`APINCSE_CLAIMS` holds the few numbers its text states.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import pandas as pd

PAPERS = {"mixcse": "MixCSE", "gs_infonce": "GS-InfoNCE", "clusterns": "ClusterNS", "apincse": "APINCSE"}
# Hugging Face id → how the papers write it
BACKBONES = {"bert-base-uncased": "BERT-base", "bert-large-uncased": "BERT-large", "roberta-base": "RoBERTa-base",
             "roberta-large": "RoBERTa-large"}
# Organisation prefixes the Hub also accepts for the same checkpoints
_HUB_ORGS = ("google-bert/", "FacebookAI/", "facebookai/")

STS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R", "Avg.")
TRANSFER = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC", "Avg.")
SHORT_TEXT = ("AG", "Bio", "G-S", "G-T", "G-TS", "SS", "SO", "Tweet", "Avg.")


@dataclass(frozen=True)
class PublishedRow:
    label: str                      # the row as the paper names it (typography simplified)
    cells: tuple[str, ...]          # one per column, exactly as printed
    backbone: str | None = None     # Hugging Face id of the backbone; None when the columns are backbones
    variant: str | None = None      # cselab's name for the same model/setting, when cselab can train it
    tags: tuple[tuple[str, object], ...] = ()   # further keys of the row (e.g. ("bml", True))


@dataclass(frozen=True)
class PublishedTable:
    paper: str                      # key of PAPERS
    table: str                      # "Table 2", "Experiment Results (STS)"
    title: str
    columns: tuple[str, ...]        # cselab's labels for the printed columns
    rows: tuple[PublishedRow, ...]
    unit: str = "Spearman ×100"     # what the printed numbers are
    scale: float = 1.0              # printed × scale = cselab's unit (AMI printed in [0, 1] → ×100)
    column_backbones: dict = field(default_factory=dict)   # column → backbone, when columns are backbones
    note: str = ""

    @property
    def source(self) -> str:
        return f"{PAPERS[self.paper]} {self.table}"


def _rows(backbone: str | None, *rows: tuple) -> tuple[PublishedRow, ...]:
    """Rows ``(label, variant, cells...)`` [+ a trailing dict of tags] of one backbone."""
    out = []
    for row in rows:
        tags = row[-1] if isinstance(row[-1], dict) else {}
        body = row[:-1] if tags else row
        label, variant, *cells = body
        out.append(PublishedRow(label, tuple(cells), backbone, variant, tuple(tags.items())))
    return tuple(out)


BB, BL, RB, RL = "bert-base-uncased", "bert-large-uncased", "roberta-base", "roberta-large"

_TABLES = (
    # ------------------------------------------------------------------ MixCSE (AAAI 2022)
    PublishedTable(
        "mixcse", "Experiment Results (STS)", "STS test sets, Spearman ×100, mean ± std over 5 runs where given", STS,
        _rows(BB, ("BERTbase", None, "35.20", "59.53", "49.37", "63.39", "62.73", "48.18", "58.60", "53.86"),
              ("SimCSE-BERTbase", "SimCSE", "67.17±9.61", "79.79±2.72", "71.96±3.97", "80.21±1.42", "77.65±1.24",
               "76.46±1.44", "70.57±1.25", "74.83±2.32"),
              ("MixCSE-BERTbase", "MixCSE", "71.71±4.04", "83.14±0.72", "75.49±1.25", "83.64±2.32", "79.00±0.16",
               "78.48±0.82", "72.19±0.46", "77.66±0.61"))
        + _rows(BL, ("BERTlarge", None, "33.06", "57.64", "47.95", "55.83", "62.42", "49.66", "53.87", "51.49"),
                ("SimCSE-BERTlarge", "SimCSE", "70.21±1.49", "83.97±1.18", "75.92±0.56", "83.9±0.49", "78.87±0.75",
                 "79.0±1.0", "73.89±1.08", "77.97±0.7"),
                ("MixCSE-BERTlarge", "MixCSE", "72.55±0.49", "84.32±0.53", "76.69±0.76", "84.31±0.10", "79.67±0.28",
                 "79.90±0.18", "74.07±0.13", "78.80±0.09")),
        note="The untuned BERT rows are the baselines' numbers, not BERT's [CLS]."),
    PublishedTable(
        "mixcse", "Experiment Results (transfer)", "transfer tasks, accuracy, mean ± std over 5 runs where given", TRANSFER,
        _rows(BB, ("BERTbase", None, "78.66", "86.25", "94.37", "88.66", "84.40", "92.80", "69.54", "84.94"),
              ("SimCSE-BERTbase", "SimCSE", "71.12±5.94", "85.92±0.41", "98.56±2.05", "88.61±0.18", "85.34±0.37",
               "88.4±0.59", "73.48±1.26", "84.49±0.59"),
              ("MixCSE-BERTbase", "MixCSE", "81.3±1.75", "86.77±0.4", "99.64±0.01", "89.71±0.17", "85.87±0.49",
               "84.91±0.24", "76.08±0.68", "86.33±0.26"))
        + _rows(BL, ("BERTlarge", None, "60.89", "90.15", "99.62", "86.04", "89.95", "93.00", "69.86", "84.22"),
                ("SimCSE-BERTlarge", "SimCSE", "73.93±2.79", "88.87±0.75", "99.6±0", "89.49±0.16", "90.59±0.96",
                 "91.72±0.95", "75.49±0.88", "86.8±0.42"),
                ("MixCSE-BERTlarge", "MixCSE", "82.95±0.52", "89.57±0.05", "99.67±0.01", "90.14±0.02", "89.17±0.84",
                 "86.13±0.58", "76.74±0.16", "87.77±0.11")),
        unit="accuracy (%)"),
    PublishedTable(
        "mixcse", "Ablation Study", "ablation: STS average (Spearman ×100) and transfer average (accuracy)",
        ("STS Avg.", "transfer Avg."),
        _rows(BB, ("MixCSE-BERTbase", "MixCSE", "77.66±0.61", "86.33±0.26"),
              ("MixCSE_single-BERTbase", "MixCSE single", "76.43±0.11", "85.86±0.04"),
              ("MixCSE_wo sg-BERTbase", "MixCSE w/o stop-gradient", "75.74±0.87", "84.55±0.27"))
        + _rows(BL, ("MixCSE-BERTlarge", "MixCSE", "78.80±0.09", "87.77±0.11"),
                ("MixCSE_single-BERTlarge", "MixCSE single", "78.11±0.20", "87.21±0.23"),
                ("MixCSE_wo sg-BERTlarge", "MixCSE w/o stop-gradient", "77.61±0.45", "86.02±0.27")),
        unit="Spearman ×100 / accuracy (%)"),
    # ------------------------------------------------------------------ GS-InfoNCE (COLING 2022)
    PublishedTable(
        "gs_infonce", "Table 1", "batch size with and without GS-InfoNCE", ("SimCSE", "GS-InfoNCE"),
        _rows(BB, ("BERTbase", None, "64", "64")) + _rows(BL, ("BERTlarge", None, "64", "64"))
        + _rows(RB, ("RoBERTabase", None, "512", "64")) + _rows(RL, ("RoBERTalarge", None, "512", "64")),
        unit="batch size"),
    PublishedTable(
        "gs_infonce", "Table 2", "STS test sets, Spearman ×100 (SimCSE rows: the official SimCSE checkpoints)", STS,
        _rows(BB, ("SimCSE-BERTbase", "SimCSE", "68.40", "82.41", "74.38", "80.91", "78.56", "76.85", "72.23", "76.25"),
              ("+ GS-InfoNCE", "GS-InfoNCE", "70.12", "82.57", "75.21", "82.89", "80.23", "79.70", "72.70", "77.63"))
        + _rows(BL, ("SimCSE-BERTlarge", "SimCSE", "70.88", "84.16", "76.43", "84.50", "79.76", "79.26", "73.88", "78.41"),
                ("+ GS-InfoNCE", "GS-InfoNCE", "73.75", "85.09", "77.35", "84.44", "79.88", "79.94", "73.48", "78.96"))
        + _rows(RB, ("SimCSE-RoBERTabase", "SimCSE", "70.16", "81.77", "73.24", "81.36", "80.65", "80.22", "68.56",
                     "76.57"),
                ("+ GS-InfoNCE", "GS-InfoNCE", "71.12", "83.24", "75.00", "82.61", "81.36", "81.26", "69.62", "77.74"))
        + _rows(RL, ("SimCSE-RoBERTalarge", "SimCSE", "72.86", "83.99", "75.62", "84.77", "81.80", "81.98", "71.26",
                     "78.90"),
                ("+ GS-InfoNCE", "GS-InfoNCE", "71.76", "84.91", "76.79", "84.35", "81.74", "82.97", "71.71", "79.21")),
        note="The paper's fourth column is headed 'SICK15', a misprint for STS15."),
    PublishedTable(
        "gs_infonce", "Table 3", "STS average (Spearman ×100) against M, as a multiple of the batch size (64)",
        ("0×", "0.5×", "1×", "2×", "3×", "4×", "8×", "16×"),
        _rows(BB, ("BERTbase", "GS-InfoNCE", "76.25", "76.96", "76.90", "77.11", "77.63", "76.81", "76.94", "75.57")),
        note="0× is SimCSE without GS-InfoNCE; printed as two half rows (0×–2×, 3×–16×)."),
    # ------------------------------------------------------------------ ClusterNS (Findings of ACL 2023)
    PublishedTable(
        "clusterns", "Table 1", "STS test sets, Spearman ×100", STS,
        _rows(BB, ("BERTbase embeddings", None, "39.70", "59.38", "49.67", "66.03", "66.19", "53.87", "62.06", "56.70"),
              ("SimCSE-BERTbase", "SimCSE", "68.40", "82.41", "74.38", "80.91", "78.56", "76.85", "72.23", "76.25"),
              ("ClusterNS-BERTbase", "ClusterNS", "69.93", "83.57", "76.00", "82.44", "80.01", "78.85", "72.03", "77.55"))
        + _rows(RB, ("RoBERTabase embeddings", None, "32.11", "56.33", "45.22", "61.34", "61.98", "54.53", "62.03",
                     "53.36"),
                ("SimCSE-RoBERTabase", "SimCSE", "70.16", "81.77", "73.24", "81.36", "80.65", "80.22", "68.56", "76.57"),
                ("ClusterNS-RoBERTabase", "ClusterNS", "71.17", "83.53", "75.29", "82.47", "82.25", "81.95", "69.22",
                 "77.98"))
        + _rows(BL, ("SimCSE-BERTlarge", "SimCSE", "70.88", "84.16", "76.43", "84.50", "79.76", "79.26", "73.88", "78.41"),
                ("MixCSE-BERTlarge", "MixCSE", "72.55", "84.32", "76.69", "84.31", "79.67", "79.90", "74.07", "78.80"),
                ("ClusterNS-BERTlarge", "ClusterNS", "71.64", "85.97", "77.74", "83.48", "79.68", "80.80", "75.02",
                 "79.19"))
        + _rows(BB, ("PromptBERTbase", "PromptBERT", "71.56", "84.58", "76.98", "84.47", "80.60", "81.60", "69.87",
                     "78.54"),
                ("ClusterNS-BERTbase (prompt-based)", "ClusterNS (prompt)", "72.92", "84.86", "77.38", "84.52",
                 "80.23", "81.58", "69.53", "78.72"))
        + _rows(RB, ("PromptRoBERTabase", "PromptBERT", "73.94", "84.74", "77.28", "84.99", "81.74", "81.88", "69.50",
                     "79.15"),
                ("ClusterNS-RoBERTabase (prompt-based)", "ClusterNS (prompt)", "74.02", "85.12", "77.96", "84.47",
                 "82.84", "83.28", "70.47", "79.74"))
        + _rows(BL, ("PromptBERTlarge", "PromptBERT", "73.29", "86.39", "77.90", "85.18", "79.97", "81.92", "71.26",
                     "79.42"),
                ("ClusterNS-BERTlarge (prompt-based)", "ClusterNS (prompt)", "73.99", "87.53", "78.82", "85.47",
                 "80.84", "82.85", "72.59", "80.30")),
        note="Baselines ClusterNS compares with but cselab does not train (flow, whitening, ESimCSE, DCLR, ConPVP, "
             "SNCSE) are left out."),
    PublishedTable(
        "clusterns", "Table 2", "ablations of non-prompt ClusterNS, STS average (Spearman ×100; change vs ClusterNS)",
        ("BERT-base", "RoBERTa-base"),
        _rows(None, ("ClusterNS", "ClusterNS", "77.55", "77.98"),
              ("w/o false negative", "w/o false negative", "76.99(-0.56)", "77.83(-0.15)"),
              ("w/o hard negative", "w/o hard negative", "76.03(-1.52)", "77.22(-0.76)"),
              ("repl. harder negative", "repl. harder negative", "76.97(-0.58)", "77.84(-0.14)"),
              ("repl. random clusters", "repl. random clusters", "76.77(-0.78)", "77.85(-0.13)"),
              ("SimCSE", "SimCSE", "76.25", "76.57")),
        column_backbones={"BERT-base": BB, "RoBERTa-base": RB}),
    PublishedTable(
        "clusterns", "Table 3", "non-prompt ClusterNS-RoBERTa-base against the start threshold σ: hard-negative "
        "similarity at the last checkpoint and STS average", ("σ = 0.2", "σ = 0.4", "σ = 0.6"),
        _rows(RB, ("Similarity", "hard negative similarity", "0.1814", "0.1572", "0.1442", {"bml": True}),
              ("Avg. STS", "STS average", "77.02", "77.98", "77.30", {"bml": True}),
              ("Similarity", "hard negative similarity", "0.1797", "0.1574", "0.1453", {"bml": False}),
              ("Avg. STS", "STS average", "77.43", "77.83", "77.46", {"bml": False})),
        unit="cosine / Spearman ×100", note="Printed with σ as columns; the last two rows are 'σ wo. L_bml'."),
    PublishedTable(
        "clusterns", "Table 4", "false-negative handling, non-prompt ClusterNS-RoBERTa-base, STS average "
        "('w/o BML loss' is Table 2's 'w/o false negative')", ("Avg.",),
        _rows(RB, ("ClusterNS", "ClusterNS", "77.98"), ("w/o BML loss", "w/o false negative", "77.83"),
              ("Mask all false negatives", "mask false negatives", "77.40"),
              ("Use as positives", "false negatives as positives", "42.33"))),
    PublishedTable(
        "clusterns", "Table 5", "DBpedia K-means (K = 14) AMI, non-prompt models on RoBERTa-base",
        ("RoBERTa", "SimCSE", "ClusterNS"), _rows(RB, ("AMI", None, "0.6926", "0.7078", "0.7355")),
        unit="AMI (printed in [0, 1]; cselab reports ×100)", scale=100.0,
        note="Columns are models: untuned RoBERTa-base, SimCSE, ClusterNS."),
    PublishedTable(
        "clusterns", "Table 6", "short-text clustering accuracy (%), non-prompt models", SHORT_TEXT,
        _rows(BB, ("SimCSE-BERTbase", "SimCSE", "74.46", "35.64", "59.01", "57.92", "64.18", "67.09", "50.78", "54.71",
                   "57.97"),
              ("ClusterNS-BERTbase", "ClusterNS", "77.38", "37.29", "61.69", "59.37", "66.47", "69.65", "72.92",
               "53.71", "62.31"))
        + _rows(RB, ("SimCSE-RoBERTabase", "SimCSE", "69.71", "37.35", "60.89", "57.66", "65.05", "46.90", "69.00",
                     "51.89", "57.31"),
                ("ClusterNS-RoBERTabase", "ClusterNS", "65.00", "36.38", "58.58", "57.88", "65.54", "52.55", "74.38",
                 "51.63", "57.74")),
        unit="accuracy (%)", note="The paper heads the G-S column 'Go-S'."),
    PublishedTable(
        "clusterns", "Table 8", "transfer tasks, accuracy (%), non-prompt models", TRANSFER,
        _rows(BB, ("SimCSE-BERTbase", "SimCSE", "81.18", "86.46", "94.45", "88.88", "85.50", "89.80", "74.43", "85.81"),
              ("SimCSE-BERTbase w/ MLM", "SimCSE + MLM", "82.92", "87.23", "95.71", "88.73", "86.81", "87.01", "78.07",
               "86.64"),
              ("ClusterNS-BERTbase", "ClusterNS", "82.01", "85.46", "94.44", "89.09", "86.27", "88.80", "73.57",
               "85.66"),
              ("ClusterNS-BERTbase w/ MLM", "ClusterNS + MLM", "82.79", "86.84", "95.29", "88.04", "86.88", "91.80",
               "76.99", "86.95"))
        + _rows(RB, ("SimCSE-RoBERTabase", "SimCSE", "81.04", "87.74", "93.28", "86.94", "86.60", "84.60", "73.68",
                     "84.84"),
                ("SimCSE-RoBERTabase w/ MLM", "SimCSE + MLM", "83.37", "87.76", "95.05", "87.16", "89.02", "90.80",
                 "75.13", "86.90"),
                ("ClusterNS-RoBERTabase", "ClusterNS", "81.78", "86.65", "93.21", "87.85", "87.53", "84.00", "76.46",
                 "85.35"),
                ("ClusterNS-RoBERTabase w/ MLM", "ClusterNS + MLM", "83.51", "88.11", "94.56", "86.04", "88.85",
                 "92.40", "76.70", "87.17")),
        unit="accuracy (%)"),
    PublishedTable(
        "clusterns", "Table 9", "centroid initialisation, non-prompt ClusterNS-RoBERTa-base, STS average", ("Avg.",),
        _rows(RB, ("ClusterNS-RoBERTabase", "ClusterNS", "77.98"),
              ("Global ClusterNS-RoBERTabase", "global init", "77.81"))),
)

# APINCSE (2025, in Chinese): the text copy describes Tables 3–5 and Figures 2–4 without their values.
# What its text states in numbers (§ = section of the paper), for the notebook to quote:
APINCSE_CLAIMS = (
    {"section": "§2.3", "backbone": BB, "claim": "STS average over the strongest baseline (ClusterNS)", "value": "+1.09"},
    {"section": "§2.3", "backbone": BL, "claim": "STS average over the strongest baseline (ClusterNS)", "value": "+0.34"},
    {"section": "§2.3", "backbone": RL, "claim": "STS average over the strongest baseline", "value": "+0.08"},
    {"section": "§2.3", "backbone": RL, "claim": "STS15 Spearman", "value": "84.98"},
    {"section": "§2.6", "backbone": BB, "claim": "MRPC accuracy over the strongest baseline", "value": "+0.37"},
    {"section": "§2.6", "backbone": BB, "claim": "SUBJ accuracy over the strongest baseline", "value": "+0.39"},
)

_INDEX = {(t.paper, t.table): t for t in _TABLES}


def available(paper: str | None = None) -> list[tuple[str, str]]:
    """``(paper, table)`` of every stored table (of one paper)."""
    if paper is not None:
        _check_paper(paper)
    return [key for key in _INDEX if paper is None or key[0] == paper]


def _check_paper(paper: str) -> None:
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {sorted(PAPERS)}, got {paper!r}")


def published_table(paper: str, table: str) -> PublishedTable:
    """One stored table, e.g. ``published_table("clusterns", "Table 2")``."""
    _check_paper(paper)
    try:
        return _INDEX[(paper, table)]
    except KeyError:
        stored = ", ".join(t for p, t in _INDEX if p == paper) or "none"
        why = (" (the APINCSE text copy holds no table values; see APINCSE_CLAIMS)" if paper == "apincse" else "")
        raise KeyError(f"{PAPERS[paper]}: no published table {table!r}; stored: {stored}{why}") from None


_NUMBER = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*(?:±\s*(\d+(?:\.\d+)?))?\s*(?:\(\s*[-+]?\d+(?:\.\d+)?\s*\))?\s*$")


def parse_cell(text: str) -> tuple[float, float | None]:
    """``"71.71±4.04"`` → (71.71, 4.04); ``"76.99(-0.56)"`` → (76.99, None); ``"77.98"`` → (77.98, None)."""
    match = _NUMBER.match(text)
    if not match:
        raise ValueError(f"cannot read a number from the printed cell {text!r}")
    return float(match.group(1)), (float(match.group(2)) if match.group(2) else None)


def paper_backbone(model: str | None) -> str | None:
    """The paper backbone a run's ``model`` is (a key of :data:`BACKBONES`), or None (a local
    folder, an alias such as the offline ``all-minilm-l6``, any other Hub model)."""
    if not model:
        return None
    name = str(model)
    for org in _HUB_ORGS:
        if name.startswith(org):
            name = name[len(org):]
    return name if name in BACKBONES else None


def _selected_rows(table: PublishedTable, backbone: str | None, variants: Iterable[str] | None,
                   tags: dict | None) -> list[PublishedRow]:
    wanted = None if variants is None else list(variants)
    rows = [r for r in table.rows
            if (backbone is None or table.column_backbones or r.backbone == backbone)
            and (wanted is None or r.variant in wanted)
            and all(dict(r.tags).get(k) == v for k, v in (tags or {}).items())]
    if wanted is not None:   # in the order the caller listed the variants
        rows.sort(key=lambda r: wanted.index(r.variant))
    return rows


def published_frame(paper: str, table: str, backbone: str | None = None, variants: Sequence[str] | None = None,
                    numeric: bool = True, index: str = "label", tags: dict | None = None) -> pd.DataFrame:
    """One published table as a DataFrame.

    Args:
        backbone: keep the rows of this backbone (a Hugging Face id); for a table whose columns are
            backbones (ClusterNS Table 2) keep that column only.
        variants: keep the rows that cselab calls one of these variants (in this order).
        numeric: floats in cselab's units (the mean of a ``mean±std`` cell, × the table's
            ``scale``) — or False: the cells exactly as printed.
        index: ``"label"`` (the paper's row name) or ``"variant"`` (cselab's name).
        tags: keep rows with these tags (e.g. ``{"bml": True}`` for ClusterNS Table 3).

    ``frame.attrs`` holds ``source`` ("ClusterNS Table 2"), ``title``, ``unit`` and ``note``.
    """
    spec = published_table(paper, table)
    if index not in ("label", "variant"):
        raise ValueError(f"index must be 'label' or 'variant', got {index!r}")
    if backbone is not None and backbone not in BACKBONES:
        raise ValueError(f"backbone must be one of {sorted(BACKBONES)} (a paper backbone), got {backbone!r}")
    columns = list(spec.columns)
    if spec.column_backbones and backbone is not None:
        columns = [c for c, b in spec.column_backbones.items() if b == backbone]
    rows = _selected_rows(spec, backbone, variants, tags)
    data = []
    for row in rows:
        cells = dict(zip(spec.columns, row.cells))
        data.append({c: (parse_cell(cells[c])[0] * spec.scale if numeric else cells[c]) for c in columns})
    frame = pd.DataFrame(data, columns=columns,
                         index=pd.Index([getattr(r, index) or r.label for r in rows], name=index))
    frame.attrs.update(source=spec.source, title=spec.title, unit=spec.unit, note=spec.note)
    return frame
