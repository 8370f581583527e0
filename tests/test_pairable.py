"""A continuation's seeds named by hand: a run whose every claim partner ran as another computation
is found before it trains (cselab/workbench/studies/pairable.py), and the seeds that would pair are named."""
import pytest

from cselab.workbench.claims import Claim
from cselab.workbench.studies import reproduce
from cselab.workbench.studies.pairable import pairable_seeds, partners, unpaired_runs
from cselab.workbench.studies.record import computation, write_record
from tests.synthetic_records import record

CLAIMS = [Claim("beats SimCSE", "clusterns", "simcse"),
          Claim("−HN is worse", "clusterns-no_hn", "clusterns", direction=-1),
          Claim("σ 0.4 is best", "clusterns", "clusterns-sigma0.2", test="optimum",
                neighbours=("clusterns-sigma0.2", "clusterns-sigma0.6"))]


def line(label, native="avx512_bf16", sha="c"):
    r = record(label, "paper-clusterns", 76.0, int(label.rsplit("-s", 1)[1]))
    r["cpu"] = {"capability": "AVX512", "native_bf16": native}
    r["code"] = {**r["code"], "sha256": sha * 64}
    return r


HERE = computation(line("x-s1"))   # this machine: AVX-512 BF16, bf16/bf16, code ccc…


def test_partners_are_every_variant_a_claim_compares_it_with_both_ways():
    assert partners(CLAIMS, "clusterns") == ["simcse", "clusterns-no_hn", "clusterns-sigma0.2", "clusterns-sigma0.6"]
    assert partners(CLAIMS, "clusterns-no_hn") == ["clusterns"]
    assert partners(CLAIMS, "clusterns-sigma0.6") == ["clusterns"]
    assert partners(CLAIMS, "esimcse") == []


def test_a_run_whose_only_partner_ran_on_a_gpu_buys_no_pair():
    records = {r["label"]: r for r in [line("clusterns-s15", native="cuda"), line("clusterns-s9"),
                                       line("clusterns-s10", sha="d"), line("clusterns-s11", native="amx")]}
    labels = ["clusterns-no_hn-s15", "clusterns-no_hn-s9", "clusterns-no_hn-s10", "clusterns-no_hn-s11",
              "clusterns-no_hn-s27"]
    found = unpaired_runs(labels, CLAIMS, records, HERE)
    assert set(found) == {"clusterns-no_hn-s15", "clusterns-no_hn-s10", "clusterns-no_hn-s11"}
    assert found["clusterns-no_hn-s15"] == "clusterns-s15 ran as AVX512/cuda, bf16/bf16, code cccccccc"
    assert "code dddddddd" in found["clusterns-no_hn-s10"] and "AVX512/amx" in found["clusterns-no_hn-s11"]


def test_a_partner_trained_in_the_same_call_or_one_pairable_partner_is_enough():
    # the GPU's clusterns-s15 is blocked, but clusterns-s15 cannot be trained again; simcse-s16 (GPU) and
    # clusterns-sigma0.2-s16 (here) leave clusterns-s16 one pairable partner
    records = {r["label"]: r for r in [line("simcse-s16", native="cuda"), line("clusterns-sigma0.2-s16")]}
    assert unpaired_runs(["clusterns-s16"], CLAIMS, records, HERE) == {}
    records = {r["label"]: r for r in [line("clusterns-s20", native="cuda")]}
    assert unpaired_runs(["clusterns-no_hn-s20"], CLAIMS, records, HERE, training=["clusterns-s20"]) == {}


def test_a_legacy_line_pairs_with_nothing_new():
    old = line("clusterns-s3")
    del old["code"]
    old["commit"] = "f" * 40
    assert "legacy, by commit" in unpaired_runs(["clusterns-no_hn-s3"], CLAIMS, {"clusterns-s3": old}, HERE)[
        "clusterns-no_hn-s3"]


def test_pairable_seeds_skip_recorded_seeds_and_seeds_whose_partners_ran_elsewhere():
    records = {r["label"]: r for r in [*(line(f"clusterns-s{s}", native="cuda") for s in (15, 16, 17)),
                                       line("clusterns-s14"), line("clusterns-no_hn-s14")]}
    assert pairable_seeds("clusterns-no_hn", CLAIMS, records, HERE, range(14, 30)) == [18, 19, 20]
    assert pairable_seeds("clusterns-no_hn", CLAIMS, records, HERE, range(14, 30), count=1) == [18]


def test_reproduce_refuses_a_run_that_pairs_with_nothing_and_its_dry_run_lists_it(tmp_path, capsys):
    """The committed paper-clusterns study with a record whose clusterns-s15 and -s16 ran on a GPU:
    --only clusterns-no_hn-s15 is refused in one line naming the partner and the seeds that would pair."""
    from cselab.workbench.studies.pairable import this_machine
    from cselab.workbench.studies.runner import expected_execution
    from cselab.workbench.studies.spec import load_study

    study = load_study("paper-clusterns", "cpu", tmp_path / "runs", notebooks=False, up_to_cap=True)
    planned = {r.label: r for r in study.runs}
    lines = []
    for label, native in (("clusterns-s15", "cuda"), ("clusterns-s16", "cuda"), ("clusterns-s1", None)):
        r = line(label, native=native or "avx512_bf16")
        r["config_hash"] = planned[label].config.config_hash()
        r["run"] = planned[label].run_dir.name
        if native is None:   # this machine's computation exactly: a pair is possible
            r.update(this_machine(planned[label].config, expected_execution(planned[label].config, 1, "local")))
        lines.append(r)
    write_record(tmp_path / "figures" / "paper-clusterns" / "record.jsonl", lines)
    kwargs = dict(profile="cpu", runs_dir=tmp_path / "runs", figures_dir=tmp_path / "figures",
                  reports_dir=tmp_path / "reports", notebooks=False, replan=True)
    only = ["clusterns-no_hn-s15", "clusterns-no_hn-s1"]
    assert reproduce("paper-clusterns", dry_run=True, only=only, **kwargs) == 0
    out = capsys.readouterr().out
    assert "pairs with nothing: clusterns-no_hn-s15: clusterns-s15 ran as AVX512/cuda" in out
    assert "clusterns-no_hn-s1:" not in out   # its partner clusterns-s1 ran here
    with pytest.raises(ValueError, match=r"^--only: 1 run\(s\) would pair with nothing: clusterns-no_hn-s15: "
                                         r"clusterns-s15 ran as AVX512/cuda.*seeds of clusterns-no_hn that would "
                                         r"pair: 1, 2, 3; pass --allow-unpaired"):
        reproduce("paper-clusterns", dry_run=False, only=only, **kwargs)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
