"""Evaluations of runs are computed once and kept in the run directory."""
from __future__ import annotations

import pytest

from cselab.encoder import SentenceEncoder
from cselab.evaluate import evaluate_run, evaluate_runs, evaluate_sts, evaluation_frame
from cselab.evaluate.cache import evaluation_file


def test_evaluate_run_caches_in_the_run_directory(tiny_runs, data_dir, monkeypatch):
    run = tiny_runs["simcse-s1"]
    first = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    direct = evaluate_sts(SentenceEncoder.from_pretrained(run / "best"), tasks=["STS13"], data_dir=data_dir,
                          per_pair=True)
    direct_pairs = direct["per_pair"]["STS13"]
    assert first["scores"] == pytest.approx(direct["scores"]) and first["options"] == {"tasks": ["STS13"]}
    assert evaluation_file(run, "sts", tasks=["STS13"]).is_file()
    # the second call reads the file: encoding is not even attempted
    monkeypatch.setattr(SentenceEncoder, "from_pretrained", lambda *a, **k: pytest.fail("re-evaluated"))
    assert evaluate_run(run, "sts", tasks=("STS13",), data_dir=data_dir)["scores"] == first["scores"]
    # the pairs' cosines (the paired bootstrap) come from the same entry: one encode per run
    pairs = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir, per_pair=True)["per_pair"]["STS13"]
    assert pairs == direct_pairs and len(pairs["pred"]) == 1500
    with pytest.raises(ValueError, match="suite must be one of"):
        evaluate_run(run, "glue")
    with pytest.raises(FileNotFoundError, match="no best/ model"):
        evaluate_run(run.parent / "missing", "sts")


def test_frame_of_several_runs(tiny_runs, data_dir):
    runs = {k: tiny_runs[k] for k in ("simcse-s1", "mixcse-s1")}
    results = evaluate_runs(runs, "sts", tasks=["STS13"], data_dir=data_dir, progress=False)
    frame = evaluation_frame(results, runs)
    assert list(frame["run"]) == ["simcse-s1", "mixcse-s1"] and list(frame["method"]) == ["simcse", "mixcse"]
    assert list(frame["seed"]) == [1, 1] and frame["STS13"].notna().all()
    assert frame["avg"].tolist() == pytest.approx(frame["STS13"].tolist())


def test_an_entry_of_another_data_root_is_computed_again(tiny_runs, data_dir, tmp_path, monkeypatch):
    import shutil

    run = tiny_runs["mixcse-s1"]
    first = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    other = tmp_path / "data"
    shutil.copytree(data_dir / "downstream" / "STS" / "STS13-en-test", other / "downstream" / "STS" / "STS13-en-test")
    loads = []
    real = SentenceEncoder.from_pretrained
    monkeypatch.setattr(SentenceEncoder, "from_pretrained", lambda *a, **k: loads.append(a) or real(*a, **k))
    again = evaluate_run(run, "sts", tasks=["STS13"], data_dir=other)   # same options, other data: computed
    assert len(loads) == 1 and again["data_root"] == str(other.resolve())
    assert again["scores"] == pytest.approx(first["scores"])            # (the same files, so the same score)
    evaluate_run(run, "sts", tasks=["STS13"], data_dir=other)           # and then read from its entry
    assert len(loads) == 1


def test_a_pytorch_transfer_entry_of_the_summed_loss_is_not_read_back():
    """The PyTorch probe's loss became SentEval's batch mean: its entries get a new key, the others keep theirs."""
    from cselab.evaluate.cache import _code_changes, options_key

    pytorch, sklearn = {"tasks": ["MR"], "probe": "pytorch"}, {"tasks": ["MR"], "probe": "sklearn"}
    assert options_key({**pytorch, **_code_changes("transfer", pytorch)}) != options_key(pytorch)
    assert _code_changes("transfer", sklearn) == {} and _code_changes("sts", {"tasks": ["STS12"]}) == {}
