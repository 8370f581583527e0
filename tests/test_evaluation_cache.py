"""Evaluations of runs are computed once and kept in the run directory."""
from __future__ import annotations

import pytest

from cselab.model.encoder import SentenceEncoder
from cselab.model.evaluate import evaluate_run, evaluate_runs, evaluate_sts, evaluation_frame
from cselab.model.evaluate.cache import evaluation_file


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
    from cselab.model.evaluate.cache import options_key
    from cselab.model.evaluate.suites import SUITES

    entry_key = SUITES["transfer"].entry_key   # the transfer suite declares it; the cache adds it to the entry's name
    pytorch, sklearn = {"tasks": ["MR"], "probe": "pytorch"}, {"tasks": ["MR"], "probe": "sklearn"}
    assert options_key({**pytorch, **entry_key(pytorch)}) != options_key(pytorch)
    assert entry_key(sklearn) == {} and [s for s in SUITES if SUITES[s].entry_key is not None] == ["transfer"]


class OtherProcess:
    """Holds an entry's lock from another thread (as another process would), then writes ``result``
    as the entry and lets go once ``until()`` is true (or after 30 s)."""

    def __init__(self, entry, result, until=lambda: True):
        import threading

        from filelock import FileLock

        from cselab.model.rundir import RunDir

        self.entry, self.result, self.until, self.saw = entry, result, until, None
        self.lock = FileLock(RunDir(entry.parent.parent).evaluation_lock(entry))
        self.holding, self.go = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold)
        self.thread.start()
        self.holding.wait()

    def _hold(self):
        import time

        from cselab.model.io import atomic_write_json

        with self.lock:
            self.holding.set()
            self.go.wait()
            deadline = time.monotonic() + 30
            while not self.until() and time.monotonic() < deadline:
                time.sleep(0.05)
            self.saw = self.until()
            time.sleep(0.2)
            atomic_write_json(self.entry, self.result)

    def finish(self):
        self.go.set()
        return self

    def join(self):
        self.go.set()
        self.thread.join()


def test_an_entry_another_process_is_computing_is_waited_for_then_read(tiny_runs, data_dir, monkeypatch):
    """Two notebooks asking for one evaluation at once: the second waits for the first's entry and
    reads it (a planted result proves it was not computed again), or with wait=False says it is busy."""
    from cselab.model.data import data_root
    from cselab.model.evaluate.cache import EvaluationBusy

    run = tiny_runs["gs_infonce-s1"]
    entry = evaluation_file(run, "sts", tasks=["STS14"])
    planted = {"scores": {"STS14": 12.5}, "avg": 12.5, "data_root": str(data_root(data_dir).resolve())}
    other = OtherProcess(entry, planted)   # "another process" is computing STS14
    try:
        with pytest.raises(EvaluationBusy, match="another process is computing this evaluation"):
            evaluate_run(run, "sts", tasks=["STS14"], data_dir=data_dir, wait=False)
        monkeypatch.setattr(SentenceEncoder, "from_pretrained", lambda *a, **k: pytest.fail("computed twice"))
        other.finish()
        assert evaluate_run(run, "sts", tasks=["STS14"], data_dir=data_dir)["scores"] == {"STS14": 12.5}
    finally:
        other.join()
        entry.unlink(missing_ok=True)


def test_evaluate_runs_takes_up_the_runs_nobody_is_computing_first(tiny_runs, data_dir):
    """Run A's entry is being computed elsewhere: evaluate_runs computes B meanwhile, then reads A's."""
    from cselab.model.data import data_root

    a, b = tiny_runs["clusterns-s1"], tiny_runs["apincse-s1"]
    entry_a, entry_b = (evaluation_file(r, "sts", tasks=["STS15"]) for r in (a, b))
    # finishes A only once B's entry exists: B was not queued behind A
    other = OtherProcess(entry_a, {"scores": {"STS15": 7.0}, "avg": 7.0,
                                   "data_root": str(data_root(data_dir).resolve())}, until=entry_b.is_file).finish()
    try:
        results = evaluate_runs({"A": a, "B": b}, "sts", tasks=["STS15"], data_dir=data_dir, progress=False)
    finally:
        other.join()
        for entry in (entry_a, entry_b):
            entry.unlink(missing_ok=True)
    assert other.saw is True and list(results) == ["A", "B"]
    assert results["A"]["scores"] == {"STS15": 7.0}
    assert len(results["B"]["per_pair"]["STS15"]["pred"]) > 0 and results["B"]["scores"]["STS15"] != 7.0


@pytest.mark.parametrize("edit, problem", [
    ('"seventy"', "'scores.STS13' is a string, not a number"),
    ("[70.0]", "'scores.STS13' is a list, not a number"),
    ("NaN", "'scores.STS13' is nan, not a finite number"),
    ("1e308", "'scores.STS13' is 1e+308, beyond ±180, where no score, cosine or angle lies"),
])
def test_an_edited_score_in_a_cached_entry_is_computed_again(edit, problem, tiny_model, tmp_path, data_dir, caplog):
    """A cached number that no evaluation gives (a string, a list, NaN, 1e308) is not trusted and shown:
    the entry is computed again, with one warning naming it and the key."""
    import json
    import re

    run = _finished(tiny_model, tmp_path, data_dir)
    first = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    entry = evaluation_file(run, "sts", tasks=["STS13"])
    text = entry.read_text()
    entry.write_text(re.sub(r'"STS13": [-0-9.e]+', f'"STS13": {edit}', text, count=1))
    assert json.loads(entry.read_text())["scores"]["STS13"] != first["scores"]["STS13"]
    with caplog.at_level("WARNING", logger="cselab.evaluate"):
        again = evaluate_run(run, "sts", tasks=["STS13"], data_dir=data_dir)
    assert again["scores"] == pytest.approx(first["scores"])
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"{entry}: not a cached sts result ({problem}); computing it again"]


def _finished(tiny_model, tmp_path, data_dir):
    """A finished 2-step tiny run of its own (the cache tests edit its entries)."""
    from cselab.model.config import load_config
    from cselab.model.train import train

    cfg = load_config({"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 32,
                       "batch_size": 16, "max_steps": 2, "eval_every": 2, "final_eval": False,
                       "dev_max_pairs": 100, "output_dir": str(tmp_path / "runs"), "run_name": "r"})
    return train(cfg, data_dir=data_dir, progress=False)
