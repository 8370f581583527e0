"""The paper studies' ``cpu`` profiles: each runs its paper's central analyses on the
offline backbone at cpu-compare's scale with the seeds its power plan gives (at least three a run
group, seeds 1 … n), every sweep with at least three values
(the main runs count as one), and shares cpu-compare's runs wherever the configs agree, so no run
is trained twice. Their dry run lists both profiles; ``smoke-cpu`` shrinks the cpu grid."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest

from conftest import REPO

from cselab.workbench.paper_tables import assign_variants, unmatched
from cselab.workbench.studies.record import computation, read_record, record_path
from cselab.workbench.studies import load_study, reproduce
from test_paper_studies import STUDIES, dry_run, notebook_defaults

# each study's swept key, the notebook parameter naming its runs, and the value its main runs hold
SWEEPS = {"paper-mixcse": [("lambda_sweep", "mixcse.mix_lambda", "mixcse")],
          "paper-gs-infonce": [("m_sweep", "gs_infonce.noise_ratio", "gs_infonce")],
          "paper-clusterns": [("threshold_sweep", "clusterns.start_threshold", "clusterns")],
          "paper-apincse": [("topk_sweep", "augmented_positive.top_k", "apincse")]}
# the ablation labels each cpu profile must hold (the list), besides the baseline and the method
ABLATIONS = {"paper-mixcse": ["mixcse-single", "mixcse-no_sg"],
             "paper-gs-infonce": ["simcse-bs128", "gs_infonce-bs128"],
             "paper-clusterns": ["clusterns-no_fn", "clusterns-no_hn"],
             "paper-apincse": ["apincse-no_ap", "apincse-no_in", "apincse-bs64"]}


# run groups at explicit seeds (not the power plan's 1 … n): the equal-data batch runs, at the seeds of
# their reference's runs of one computation → that reference
EXPLICIT_SEEDS = {"paper-gs-infonce": {"simcse-bs128-equal": "gs_infonce"},
                  "paper-apincse": {"apincse-bs128-equal": "apincse"}}


def _value(cfg, dotted: str):
    section, key = dotted.split(".")
    return getattr(cfg.method_params[section], key)


@pytest.mark.parametrize("study", list(STUDIES))
def test_cpu_profile_covers_the_papers_analyses_with_the_planned_seeds(study, tmp_path):
    spec = load_study(study, "cpu", runs_root=tmp_path, notebooks=False)
    groups = defaultdict(set)
    for run in spec.runs:
        groups[run.group].add(run.config.seed)
        assert run.config.model == "all-minilm-l6" and run.config.corpus == "wiki1m-head"
    planned = spec.claims.planned_seeds()
    explicit = EXPLICIT_SEEDS.get(study, {})
    for group, seeds in groups.items():
        if group in explicit:
            continue
        n = max(seeds)
        assert n >= 3 and seeds == set(range(1, n + 1)), (group, seeds)
        if group in planned:
            assert n == planned[group], (group, n, planned[group])
    # a group at explicit seeds is there to pair with its reference's runs of one computation: each of
    # its seeds has the reference's line in the record, and where its own line is recorded, the two
    # are one computation (the same code, CPU kind and precisions)
    lines = {r["label"]: r for r in read_record(record_path(REPO / spec.figures_dir, spec.name))}
    for group, reference in explicit.items():
        assert groups[group], group
        for seed in sorted(groups[group]):
            partner = lines.get(f"{reference}-s{seed}")
            assert partner is not None, (group, seed, f"no recorded {reference}-s{seed} to pair with")
            own = lines.get(f"{group}-s{seed}")
            if own is not None:
                assert computation(own) == computation(partner), (group, seed)
    assert {"simcse", *ABLATIONS[study]} <= set(groups)
    notebook = STUDIES[study][0]
    given = load_study(study, "cpu", runs_root=tmp_path).notebooks[0].parameters   # the cpu notebook's own
    for parameter, key, main in SWEEPS[study]:
        prefixes = tuple(given.get(parameter, notebook_defaults(notebook)[parameter]))
        values = {_value(r.config, key) for r in spec.runs if r.group == main or r.group.startswith(prefixes)}
        if study == "paper-gs-infonce":
            values.add(0.0)   # SimCSE stands for M = 0 (the notebook's rule; the same maths without noise)
        assert len(values) >= 3, (study, key, values)
    if study == "paper-mixcse":
        assert 0.2 in {_value(r.config, "mixcse.mix_lambda") for r in spec.runs if "mixcse" in r.config.method}
    if study == "paper-apincse":   # the pooler-only control: the layer-attention pooler with neither term
        control = spec.run("apincse-bs64-s1").config
        assert control.pooler == "layer_attention" and control.method == ["simcse"]


@pytest.mark.parametrize("study", list(STUDIES))
def test_cpu_profile_shares_cpu_compares_runs(study, tmp_path):
    compare = {r.label: r.run_dir for r in load_study("cpu-compare", "cpu", runs_root=tmp_path, notebooks=False).runs}
    spec = load_study(study, "cpu", runs_root=tmp_path, notebooks=False)
    shared = [r.label for r in spec.runs if r.label in compare]
    main = STUDIES[study][0].removeprefix("paper_")
    assert {f"simcse-s{s}" for s in (1, 2, 3)} | {f"{main}-s{s}" for s in (1, 2, 3)} <= set(shared)
    assert all(compare[label] == spec.run(label).run_dir for label in shared)   # the same folder: trained once


@pytest.mark.parametrize("study", list(STUDIES))
def test_cpu_dry_run_lists_the_grid_both_profiles_and_matches_the_notebook(study, tmp_path):
    notebook, _, sweeps = STUDIES[study]
    spec = load_study(study, "cpu", runs_root=tmp_path / "runs")
    assert [n.name for n in spec.notebooks] == [notebook]   # the explorer needs snapshots: gpu only
    code, text, rows = dry_run(study, "cpu", tmp_path)
    assert code == 0 and list(tmp_path.iterdir()) == []
    assert rows == [run.label for run in spec.runs]
    gpu_runs = len(load_study(study, "gpu", runs_root=tmp_path / "runs", notebooks=False).runs)
    assert f"profile gpu (not run now): {gpu_runs} runs" in text and "estimated" in text
    prefixes = {**notebook_defaults(notebook)["variants"], **spec.notebooks[0].parameters.get("variants", {}),
                **{name: spec.notebooks[0].parameters.get(name, notebook_defaults(notebook)[name]) for name in sweeps}}
    labels = [run.label for run in spec.runs]
    assert unmatched(dict.fromkeys(labels), prefixes) == []


def test_smoke_cpu_shrinks_the_cpu_grid(tmp_path, monkeypatch):
    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(tmp_path / "smoke"))
    cpu = load_study("paper-apincse", "cpu", runs_root=tmp_path / "runs", notebooks=False)
    smoke = load_study("paper-apincse", "smoke-cpu", runs_root=tmp_path / "runs", notebooks=False)
    # the smoke profile trains the first seed of each run group the power plan sizes (it checks the
    # code path, not the statistics), every other run of the grid as it is
    assert smoke.smoke and {r.group for r in smoke.runs} == {r.group for r in cpu.runs}
    assert {r.label for r in smoke.runs} <= {r.label for r in cpu.runs}
    assert all(r.config.max_steps == 2 and r.config.model.startswith(str(tmp_path / "smoke")) for r in smoke.runs)
    params = {r.label: r.config.method_params for r in cpu.runs}
    assert all(r.config.method_params == params[r.label] for r in smoke.runs)


CPU_SMOKE_DEFAULT = "paper-apincse"   # one study in the default run; the other three are slow tests


@pytest.mark.parametrize("study", [s if s == CPU_SMOKE_DEFAULT else pytest.param(s, marks=pytest.mark.slow)
                                   for s in STUDIES])
def test_smoke_cpu_runs_the_cpu_grid_and_its_notebook(study, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CSELAB_SMOKE_DIR", str(tmp_path / "smoke"))
    monkeypatch.chdir(tmp_path)
    code = reproduce(study, profile="smoke-cpu", runs_dir=tmp_path / "runs", data_dir=str(data_dir),
                     reports_dir=tmp_path / "reports", figures_dir=tmp_path / "figures", progress="lines")
    summary = json.loads((tmp_path / "reports" / study / "study.json").read_text())
    assert code == 0 and summary["ok"], [r for r in summary["runs"] if r["error"]] or summary["notebooks"]
    assert [nb["status"] for nb in summary["notebooks"]] == ["ok"]
    smoke = load_study(study, "smoke-cpu", runs_root=tmp_path / "x", notebooks=False)
    assert len(summary["runs"]) == len(smoke.runs)
    # the smoke grid: every run group of the cpu grid (its first planned seed where the plan sizes it)
    assert {r.group for r in smoke.runs} == {r.group for r in load_study(study, "cpu", runs_root=tmp_path / "x",
                                                                            notebooks=False).runs}
