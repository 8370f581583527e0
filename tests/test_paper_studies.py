"""The paper studies (cselab/workbench/studies/paper-*.yaml, profile gpu): each validates, its dry run lists
every run with an estimate and writes nothing, its runs start from the paper's backbones with the
paper's settings, and its labels are exactly what its paper notebook's default variants expect."""
from __future__ import annotations

import dataclasses
import io
import os

import jupytext
import pytest

from conftest import REPO

from cselab.workbench.paper_tables import assign_variants, unmatched
from cselab.workbench.studies import load_study, reproduce

STUDIES = {"paper-mixcse": ("paper_mixcse", 34, ["lambda_sweep"]),
           "paper-gs-infonce": ("paper_gs_infonce", 33, ["m_sweep"]),
           "paper-clusterns": ("paper_clusterns", 57, ["threshold_sweep", "batch_sweep", "k_sweep"]),
           "paper-apincse": ("paper_apincse", 45, ["topk_sweep", "layer_sweep", "queue_sweep"])}


DEMO_ONLY_VARIANTS = {"APINCSE pooler only"}


def notebook_defaults(name: str) -> dict:
    """The values of a notebook's parameters cell, as the notebook itself would see them."""
    cell = next(c for c in jupytext.read(REPO / "notebooks" / f"{name}.py").cells
                if "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(cell.source, {}, values)
    return values


def dry_run(study: str, profile: str, tmp_path) -> tuple[int, str, list[str]]:
    """``cselab reproduce --dry-run`` of ``study`` from ``tmp_path``: its exit code, its text and the
    labels of its run table."""
    stream = io.StringIO()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = reproduce(study, profile=profile, dry_run=True, runs_dir=tmp_path / "runs", stream=stream,
                         progress="lines")
    finally:
        os.chdir(old)
    text = stream.getvalue()
    return code, text, run_table_labels(text)


def run_table_labels(text: str) -> list[str]:
    """The labels of the dry run's run table: the first Markdown table whose header names a label (the
    power plan's table, printed after it, lists claims)."""
    labels, inside = [], False
    for line in text.splitlines():
        if not inside:
            inside = line.startswith("| ") and "label" in line.split("|")[1]
        elif not line.startswith("|"):
            break
        elif not line.startswith("|-") and not line.startswith("|:"):
            labels.append(line.split("|")[1].strip())
    return labels


@pytest.mark.parametrize("study", list(STUDIES))
def test_paper_study_dry_run_lists_every_run_and_writes_nothing(study, tmp_path):
    notebook, count, sweeps = STUDIES[study]
    spec = load_study(study, "gpu", runs_root=tmp_path / "runs")
    assert len(spec.runs) == count
    assert [n.name for n in spec.notebooks] == [notebook, "explorer"]
    code, text, labels = dry_run(study, "gpu", tmp_path)
    assert code == 0 and list(tmp_path.iterdir()) == []
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.split("|")[1].strip() in labels]
    assert labels == [run.label for run in spec.runs]
    assert all(row.split("|")[5].strip() == "new" for row in rows)
    assert "ESTIMATED total: " in text and f"for the {count} runs to train or resume" in text
    # every run is one of the notebook's variants or sweeps; every variant the study trains is found
    defaults = notebook_defaults(notebook)
    prefixes = {**defaults["variants"], **{name: defaults[name] for name in sweeps}}
    labels = [run.label for run in spec.runs]
    assert unmatched(dict.fromkeys(labels), prefixes) == []
    # the notebook's one default the paper's study does not train: the cpu-demo's pooler-only control
    # (the paper's -bs64 plays that part at the paper's scale)
    assert set(prefixes) - set(assign_variants(labels, prefixes)) <= DEMO_ONLY_VARIANTS


def test_paper_studies_use_the_papers_backbones_and_settings(tmp_path):
    mixcse = load_study("paper-mixcse", "gpu", runs_root=tmp_path)
    assert {r.config.model for r in mixcse.runs} == {"bert-base-uncased", "bert-large-uncased"}
    main = mixcse.run("mixcse-s1").config
    assert (main.batch_size, main.lr, main.temperature, main.method_params["mixcse"].mix_lambda) == (64, 3e-5, 0.05, 0.2)
    assert mixcse.run("mixcse-large-s2").config.lr == 1e-5 and mixcse.run("simcse-large-s1").config.lr == 1e-5
    assert mixcse.run("mixcse-single-s1").config.method_params["mixcse"].single
    assert mixcse.run("mixcse-no_sg-s3").config.method_params["mixcse"].no_stop_grad
    assert mixcse.run("mixcse-s1").config.snapshot_every == 3125 and mixcse.run("mixcse-s2").config.snapshot_every is None
    # the snapshot setting only records: it does not make seed 1 another run
    snapshotted = mixcse.run("mixcse-s1").config
    assert snapshotted.config_hash() == dataclasses.replace(snapshotted, snapshot_every=None).config_hash()

    gs = load_study("paper-gs-infonce", "gpu", runs_root=tmp_path)
    assert {r.config.model for r in gs.runs} == {"bert-base-uncased", "roberta-base"}
    ratios = sorted({r.config.method_params["gs_infonce"].noise_ratio for r in gs.runs if r.group == "gs_infonce-m"})
    assert ratios == [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]   # Table 3's multiples (3: the gs_infonce runs)
    assert gs.run("simcse-roberta-s1").config.batch_size == 512 and gs.run("gs_infonce-roberta-s1").config.batch_size == 64

    clusterns = load_study("paper-clusterns", "gpu", runs_root=tmp_path)
    ablations = {r.group: r.config.method_params["clusterns"] for r in clusterns.runs if "clusterns" in r.config.method}
    assert ablations["clusterns-no_hn"].hard_negatives is False
    assert ablations["clusterns-harder"].hard_negative_centroid == "nearest"
    assert ablations["clusterns-random"].random_clusters and ablations["clusterns-global"].init == "global"
    assert {ablations[g].false_negatives for g in ("clusterns-no_fn", "clusterns-mask", "clusterns-as_pos")} == {
        "none", "mask", "positive"}
    assert all(r.config.model == "roberta-base" for r in clusterns.runs if r.group.startswith("clusterns-")
               and r.group != "clusterns-prompt")
    assert clusterns.run("promptbert-s1").config.pooler == "prompt" and clusterns.run("promptbert-s1").config.method == ["simcse"]

    apincse = load_study("paper-apincse", "gpu", runs_root=tmp_path)
    config = apincse.run("apincse-s1").config
    assert (config.pooler, config.method, config.dropout, config.batch_size) == (
        "layer_attention", ["augmented_positive", "interlayer_negative"], 0.05, 64)
    assert apincse.run("apincse-last-s1").config.pooler == "cls_before_pooler"
    assert apincse.run("apincse-bs128-s2").config.batch_size == 128 and apincse.run("apincse-bs64-s1").config.method == ["simcse"]
