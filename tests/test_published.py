"""cselab.workbench.published: every stored row is checked against the plain-text copies of the papers
(../shared/papers), a few cells by hand, and the frames the notebooks put beside ours."""
from __future__ import annotations

import re

import pytest

from conftest import REPO

from cselab.workbench.published import (APINCSE_CLAIMS, BACKBONES, PAPERS, available, paper_backbone, parse_cell,
                              published_frame, published_table)

PAPERS_DIR = REPO.parent / "shared" / "papers"
FILES = {"mixcse": "mixcse.txt", "gs_infonce": "gs-infonce.txt", "clusterns": "clusterns.txt",
         "apincse": "apincse.txt"}
DECIMAL = re.compile(r"\d+\.\d+")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.fixture(scope="module")
def paper_text():
    if not PAPERS_DIR.is_dir():
        raise RuntimeError(f"paper copies not found at {PAPERS_DIR} (every developer and CI has ../shared/papers)")
    return {paper: (PAPERS_DIR / name).read_text(encoding="utf-8") for paper, name in FILES.items()}


def contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


@pytest.mark.parametrize("paper,table", available())
def test_every_row_is_printed_in_the_paper_in_this_order(paper_text, paper, table):
    """The numbers of each row, in order, occur one after the other in the paper's text (the same
    tokenisation on both sides: decimals when the row has any, else integers too)."""
    spec = published_table(paper, table)
    for row in spec.rows:
        assert len(row.cells) == len(spec.columns), (spec.source, row.label)
        joined = " ".join(row.cells)
        pattern = DECIMAL if DECIMAL.search(joined) else NUMBER
        assert contains_run(pattern.findall(paper_text[paper]), pattern.findall(joined)), (spec.source, row.label)
        for cell in row.cells:
            parse_cell(cell)   # every cell reads as a number


def test_spot_checks_by_hand(paper_text):
    # MixCSE Experiment Results (STS): MixCSE-BERT-base's STS-B and average, as printed with their std
    mixcse = published_frame("mixcse", "Experiment Results (STS)", backbone="bert-base-uncased", variants=["MixCSE"], numeric=False)
    assert mixcse.loc["MixCSE-BERTbase", "STS-B"] == "78.48±0.82"
    assert mixcse.loc["MixCSE-BERTbase", "Avg."] == "77.66±0.61"
    assert "78.48±\\pm0.82" in paper_text["mixcse"] and "77.66±\\pm0.61" in paper_text["mixcse"]
    # GS-InfoNCE Table 3: M = 3 × batch is the best, 16 × the worst
    m_sweep = published_frame("gs_infonce", "Table 3").iloc[0]
    assert (m_sweep["3×"], m_sweep["16×"]) == (77.63, 75.57)
    assert "3$\\times$\t4$\\times$\t8$\\times$\t16$\\times$\nBERTbase\t77.63\t76.81\t76.94\t75.57" in paper_text["gs_infonce"]
    # ClusterNS Table 2 (RoBERTa-base column) and Table 5 (AMI printed in [0, 1], ×100 in cselab's units)
    ablation = published_frame("clusterns", "Table 2", backbone="roberta-base", index="variant")
    assert list(ablation.columns) == ["RoBERTa-base"]
    assert ablation.loc["w/o hard negative", "RoBERTa-base"] == 77.22
    lines = [line.strip() for line in paper_text["clusterns"].splitlines() if line.strip()]
    row = lines.index("w/o hard negative")
    assert lines[row + 1:row + 3] == ["76.03(-1.52)", "77.22(-0.76)"]
    ami = published_frame("clusterns", "Table 5")
    assert ami.loc["AMI", "ClusterNS"] == pytest.approx(73.55)
    assert published_frame("clusterns", "Table 5", numeric=False).loc["AMI", "ClusterNS"] == "0.7355"
    # APINCSE: no table values in the text copy; the claims' numbers are in its text
    with pytest.raises(KeyError, match="no table values"):
        published_table("apincse", "Table 3")
    for claim in APINCSE_CLAIMS:
        assert claim["value"].lstrip("+") in paper_text["apincse"], claim


def test_frames_select_backbone_variants_and_tags():
    sts = published_frame("gs_infonce", "Table 2", backbone="roberta-base", index="variant")
    assert list(sts.index) == ["SimCSE", "GS-InfoNCE"]
    assert list(sts.columns) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R", "Avg."]
    assert sts.loc["GS-InfoNCE", "Avg."] == 77.74 and sts.attrs["source"] == "GS-InfoNCE Table 2"
    ordered = published_frame("clusterns", "Table 1", backbone="bert-base-uncased", variants=["ClusterNS", "SimCSE"],
                              index="variant")
    assert list(ordered.index) == ["ClusterNS", "SimCSE"] and ordered.loc["ClusterNS", "Avg."] == 77.55
    without_bml = published_frame("clusterns", "Table 3", tags={"bml": False}, index="variant")
    assert without_bml.loc["STS average", "σ = 0.4"] == 77.83
    assert published_frame("mixcse", "Experiment Results (STS)", backbone="bert-large-uncased").loc["SimCSE-BERTlarge", "STS-B"] == 79.0
    assert published_frame("mixcse", "Experiment Results (STS)", backbone="roberta-base").empty   # MixCSE reports no RoBERTa


def test_parse_cell_and_errors():
    assert parse_cell("71.71±4.04") == (71.71, 4.04)
    assert parse_cell("99.6±0") == (99.6, 0.0)
    assert parse_cell("76.99(-0.56)") == (76.99, None)
    assert parse_cell("64") == (64.0, None)
    with pytest.raises(ValueError, match="'n/a'"):
        parse_cell("n/a")
    with pytest.raises(ValueError, match="paper must be one of"):
        published_table("simcse", "Table 1")
    with pytest.raises(KeyError, match="stored: Table 1, Table 2, Table 3"):
        published_table("gs_infonce", "Table 4")
    with pytest.raises(ValueError, match="a paper backbone"):
        published_frame("mixcse", "Experiment Results (STS)", backbone="all-minilm-l6")


def test_paper_backbone():
    assert paper_backbone("bert-base-uncased") == "bert-base-uncased"
    assert paper_backbone("FacebookAI/roberta-base") == "roberta-base"
    assert paper_backbone("google-bert/bert-large-uncased") == "bert-large-uncased"
    assert paper_backbone("all-minilm-l6") is None
    assert paper_backbone("/tmp/tiny-bert") is None
    assert paper_backbone("bert-base-cased") is None   # a different checkpoint than the papers'
    assert set(PAPERS) == set(FILES) and "roberta-large" in BACKBONES
