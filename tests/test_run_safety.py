"""Runs survive failures: diverged runs never overwrite the last good checkpoint, an overwrite never
destroys a finished run before the new one has finished, runs are locked, every bad file gives one
line naming it, degenerate training is refused, interrupted checkpoint swaps are recovered, failed
starts leave nothing behind, and ``eval`` on a run without ``best/`` says what to do."""
from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from cselab.cli import main
from cselab.model.config import ConfigError, load_config
from cselab.model.data.errors import DataError
from cselab.model.io import COMPLETE_MARKER, is_complete, mark_complete, recover_dir, staging_dir
from cselab.model.train import NonFiniteLossError, RunDir, RunExistsError, RunLockedError, train
from cselab.model.train.loop import batches_per_epoch
from cselab.model.rundir import load_state



@pytest.fixture(autouse=True)
def short_dev_set(monkeypatch):
    """These tests are about files, not scores: score STS-B dev on its first 100 pairs (the
    evaluations then cost little), the same pairs at every evaluation so runs stay comparable."""
    import dataclasses

    import cselab.model.train.guards as guards

    def first_100(data_dir=None):
        dev = real(data_dir)["dev"]
        return {"dev": dataclasses.replace(dev, sentences1=dev.sentences1[:100], sentences2=dev.sentences2[:100],
                                           scores=dev.scores[:100])}

    real = guards.load_stsb
    monkeypatch.setattr(guards, "load_stsb", first_100)


class Crash(Exception):
    pass


def crash_at(step):
    def callback(state, record):
        if state.step == step:
            raise Crash

    return callback


def first_steps(seen):
    """A callback recording the step counter after every step (to see where a resumed run starts)."""
    def callback(state, record):
        seen.append(state.step)

    return callback


def non_finite(folder: Path) -> int:
    return sum(int((~torch.isfinite(t)).sum()) for f in folder.glob("*.safetensors")
               for t in load_file(str(f)).values() if t.is_floating_point())


def tmp_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.tmp") if p.is_dir())


INFO_LOG = re.compile(r"^\d\d:\d\d:\d\d (INFO|DEBUG) cselab\.")   # the CLI's progress messages


def error_line(capsys) -> str:
    """The CLI's stderr apart from the training progress bar and its INFO messages, checked to be
    exactly one line."""
    err = [line for line in capsys.readouterr().err.splitlines()
           if line.strip() and not line.startswith("training:") and not INFO_LOG.match(line)]
    assert len(err) == 1, err
    return err[0]


# --------------------------------------------------------------------------- 1. divergence
def test_diverged_first_step_saves_nothing_and_says_so(tiny_config, data_dir):
    # The case: lr=inf, eval_every=1. The config refuses lr=inf (item 5); setting it on the
    # loaded config stands for any divergence, which the loop must survive on its own.
    cfg = load_config({**tiny_config, "eval_every": 1, "max_steps": 3})
    cfg.lr = math.inf
    with pytest.raises(NonFiniteLossError) as err:
        train(cfg, data_dir=data_dir, progress=False)
    run = RunDir.for_config(cfg)
    assert str(err.value).startswith("step 1: the weights hold ")
    assert "non-finite values" in str(err.value)
    assert f"No checkpoint was written before it, so there is nothing to resume ({run.last_dir} does not exist)" \
        in str(err.value)
    assert not run.last_dir.exists() and not run.best_dir.exists() and not tmp_dirs(run.path)


class DivergingAdamW(torch.optim.AdamW):
    """AdamW whose 6th step runs with lr=inf: the weights become non-finite while that step's loss is
    finite, so the evaluation at step 6 is the first to see it."""

    def step(self, closure=None):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls != 6:
            return super().step(closure)
        saved = [g["lr"] for g in self.param_groups]
        for g in self.param_groups:
            g["lr"] = math.inf
        try:
            return super().step(closure)
        finally:
            for g, lr in zip(self.param_groups, saved):
                g["lr"] = lr


@pytest.mark.parametrize("poison", ["weights", "dev score"])
def test_divergence_keeps_the_last_good_checkpoint_and_resume_continues_from_it(poison, tiny_config, data_dir,
                                                                                 monkeypatch):
    import dataclasses

    from cselab.model.evaluate.suites import SUITES

    cfg = load_config({**tiny_config, "max_steps": 6, "eval_every": 3, "log_every": 1})   # evaluations at 3, 6
    run = RunDir.for_config(cfg)
    with monkeypatch.context() as m:
        if poison == "weights":
            m.setattr(torch.optim, "AdamW", DivergingAdamW)
            expected = r"step 6: the weights hold [\d,]+ non-finite values"
        else:
            real, calls = SUITES["sts"].score_pairs, []   # training's dev score (cselab.model.train.dev_evaluation)

            def nan_at_second(*args, **kwargs):   # the third call: step 0 (before training), 3, then 6
                calls.append(1)
                return math.nan if len(calls) == 3 else real(*args, **kwargs)

            m.setitem(SUITES, "sts", dataclasses.replace(SUITES["sts"], score_pairs=nan_at_second))
            expected = r"step 6: the STS-B dev score is nan"
        with pytest.raises(NonFiniteLossError, match=expected) as err:
            train(cfg, data_dir=data_dir, progress=False)
    assert f"The last good checkpoint ({run.last_dir}, step 3) is intact." in str(err.value)
    assert load_state(run.last_dir)["train_state"]["step"] == 3
    assert non_finite(run.last_dir) == 0 and non_finite(run.best_dir) == 0
    assert json.loads((run.best_dir / "cselab.json").read_text())["step"] == 3
    assert not tmp_dirs(run.path)

    seen = []
    train(cfg, data_dir=data_dir, resume=True, progress=False, callbacks=[first_steps(seen)])
    assert seen == [4, 5, 6]                                     # continued from the step-3 checkpoint
    assert json.loads(run.results_file.read_text())["steps"] == 6
    assert non_finite(run.last_dir) == 0 and non_finite(run.best_dir) == 0


def test_count_non_finite_counts_nan_and_both_infinities():
    from cselab.model.train.guards import count_non_finite

    tensors = [torch.tensor([1.0, math.nan, math.inf]), torch.tensor([[-math.inf], [0.0]]), torch.tensor([7, 8]),
               torch.zeros(4)]
    assert count_non_finite(tensors) == 3 and count_non_finite(tensors[3:]) == 0 and count_non_finite([]) == 0


# --------------------------------------------------------------------------- 2. overwrite
def test_failed_overwrite_leaves_the_finished_run_untouched(tiny_config, data_dir, capsys):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2, "log_every": 1})
    run = RunDir.for_config(cfg)
    train(cfg, data_dir=data_dir, progress=False)
    before = {p.relative_to(run.path): p.read_bytes() for p in run.path.rglob("*") if p.is_file()}
    assert Path("results.json") in before and Path("best/model.safetensors") in before

    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, overwrite=True, progress=False, callbacks=[crash_at(1)])
    after = {p.relative_to(run.path): p.read_bytes() for p in run.path.rglob("*") if p.is_file()}
    assert after == before                                          # byte for byte
    staging = run.overwrite_staging()
    assert [r["step"] for r in staging.metrics()] == [0, 1]        # the failed attempt (step 0's eval, step 1), kept aside
    assert (f"note: the existing run {run.path} is untouched; the failed replacement is in {staging.path}"
            in capsys.readouterr().err)

    seen = []
    train(cfg, data_dir=data_dir, overwrite=True, progress=False, callbacks=[first_steps(seen)])
    assert seen == [1, 2] and not staging.path.exists()
    assert not run.path.with_name(run.path.name + ".old").exists()
    assert [(r["kind"], r["step"]) for r in run.metrics()] == [("eval", 0), ("train", 1), ("train", 2), ("eval", 2)]
    assert json.loads(run.results_file.read_text())["steps"] == 2


def test_interrupted_overwrite_swap_is_finished_on_the_next_start(tiny_config, data_dir):
    # A crash after the replacement finished, between its two renames: <run>.old + complete <run>.overwrite.
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    train(cfg, data_dir=data_dir, progress=False)
    staging = run.overwrite_staging().path
    shutil.copytree(run.path, staging)
    (staging / "results.json").write_text('{"steps": 2, "marker": "new"}')
    mark_complete(staging)
    os.replace(run.path, run.path.with_name(run.path.name + ".old"))
    with pytest.raises(RunExistsError, match="finished run is already there"):
        train(cfg, data_dir=data_dir, progress=False)
    assert json.loads(run.results_file.read_text())["marker"] == "new" and not staging.exists()


# --------------------------------------------------------------------------- 3. lock
# The other process takes the run's lock file with filelock itself (no torch import: it starts fast).
HOLD_LOCK = textwrap.dedent("""
    import sys
    from filelock import FileLock
    with FileLock(sys.argv[1], timeout=0):
        print("locked", flush=True)
        sys.stdin.read()
""")
PROBE_LOCK = textwrap.dedent("""
    import sys
    from filelock import FileLock, Timeout
    try:
        with FileLock(sys.argv[1], timeout=0):
            print("free")
    except Timeout:
        print("held")
""")


def test_a_second_process_on_the_same_run_refuses_at_once(tiny_config, data_dir, tmp_path, capsys):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    run.path.parent.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(run.lock_file)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match="another process is using this run"):
            train(cfg, data_dir=data_dir, progress=False)
        assert not run.path.exists()                           # refused before touching anything
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(cfg.to_dict()))
        assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
        assert error_line(capsys) == (f"cselab train: error: {run.path}: another process is using this run (it "
                                      f"holds the lock {run.lock_file}); wait for it to finish or stop it")
    finally:
        holder.kill()                                          # kill -9: the OS releases the lock
        holder.wait()
    assert train(cfg, data_dir=data_dir, progress=False) == run.path
    assert [r["step"] for r in run.metrics() if r["kind"] == "eval"] == [0, 2]


def test_the_lock_is_held_for_the_whole_run(tiny_config, data_dir):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    answers = []

    def ask_another_process(state=None, record=None):
        if state is None or state.step == 1:
            out = subprocess.run([sys.executable, "-c", PROBE_LOCK, str(run.lock_file)], capture_output=True,
                                 text=True, check=True)
            answers.append(out.stdout.strip())

    train(cfg, data_dir=data_dir, progress=False, callbacks=[ask_another_process])
    ask_another_process()
    assert answers == ["held", "free"]                          # held while training, released at the end


# --------------------------------------------------------------------------- 4. one clear line
@pytest.fixture
def model_copy(tiny_model, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model, folder)
    return folder


def eval_args(model, data_dir, *extra):
    return ["eval", str(model), "--tasks", "STS13", "--data-dir", str(data_dir), *extra]


@pytest.mark.parametrize("damage, message", [
    ("truncated", "cannot load the weights (Error while deserializing header: incomplete metadata"),
    ("random", "cannot load the weights (Error while deserializing header"),
])
def test_damaged_weights_are_one_line(damage, message, model_copy, data_dir, capsys):
    weights = model_copy / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:len(data) // 2] if damage == "truncated" else os.urandom(4096))
    assert main(eval_args(model_copy, data_dir)) == 2
    assert error_line(capsys).startswith(f"cselab eval: error: {weights}: {message}")


def test_wrong_hidden_size_is_one_line(model_copy, data_dir, capsys):
    config = json.loads((model_copy / "config.json").read_text())
    (model_copy / "config.json").write_text(json.dumps({**config, "hidden_size": 48}))
    assert main(eval_args(model_copy, data_dir)) == 2
    line = error_line(capsys)
    assert line.startswith(f"cselab eval: error: {model_copy / 'model.safetensors'}: the weights do not match "
                           "config.json (")
    assert "is [32] in the file but [48] by config.json" in line


@pytest.mark.parametrize("content, message", [
    ("", "not valid JSON"),
    ("garbage{", "not valid JSON"),
    ("[]", "expected a JSON object with the saved pooler, got list"),
    ('{"pooler": 3}', "missing or invalid 'pooler'"),
])
def test_damaged_cselab_json_is_one_line(content, message, model_copy, data_dir, capsys):
    (model_copy / "cselab.json").write_text(content)
    assert main(eval_args(model_copy, data_dir)) == 2
    line = error_line(capsys)
    assert line.startswith(f"cselab eval: error: {model_copy / 'cselab.json'}") and message in line


def test_damaged_model_config_is_one_line(model_copy, data_dir, capsys):
    (model_copy / "config.json").write_text("{}")
    assert main(eval_args(model_copy, data_dir)) == 2
    assert error_line(capsys).startswith(f"cselab eval: error: {model_copy / 'config.json'}: not a usable model "
                                         "config (Unrecognized model")


def test_eval_batch_size_zero_and_debug_traceback(tiny_model, data_dir, capsys):
    assert main(eval_args(tiny_model, data_dir, "--batch-size", "0")) == 2
    assert error_line(capsys) == "cselab eval: error: --batch-size: must be >= 1, got 0"
    assert main(eval_args(tiny_model, data_dir, "--batch-size", "0", "--debug")) == 2
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "ValueError" in err
    assert err.strip().splitlines()[-1] == "cselab eval: error: --batch-size: must be >= 1, got 0"


def test_hub_id_offline_is_one_line(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(eval_args("no-such-org/no-such-model", data_dir)) == 2
    line = error_line(capsys)
    assert line.startswith("cselab eval: error: no-such-org/no-such-model: cannot load it from the Hugging Face Hub (")
    assert line.endswith("without network access, use a local model folder or the alias all-minilm-l6")


def test_config_file_not_utf8_is_one_line(tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"lr: 1.0e-5\nmodel: caf\xe9\n")
    assert main(["train", str(path)]) == 2
    assert error_line(capsys) == f"cselab train: error: {path}:2: not valid UTF-8 (byte 21 of the file); save it " \
                                 "as UTF-8"


@pytest.mark.parametrize("content, message", [("{}", "expected a JSON object with 'config_hash'; got {}"),
                                              ("[]", "expected a JSON object with 'config_hash'; got []"),
                                              ("{", "not valid JSON")])
def test_damaged_run_config_is_one_line(content, message, tiny_config, data_dir, tmp_path, capsys):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[crash_at(1)])
    run.config_file.write_text(content)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(cfg.to_dict()))
    assert main(["train", str(config), "--resume", "--data-dir", str(data_dir)]) == 2
    line = error_line(capsys)
    assert line.startswith(f"cselab train: error: {run.config_file}") and message in line


def test_full_disk_while_checkpointing_is_one_line_and_leaves_no_staging(tiny_config, data_dir, tmp_path, capsys,
                                                                         monkeypatch):
    import cselab.model.rundir.state as state

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(state, "save_file", no_space)        # the optimizer state: the largest write
    cfg = load_config({**tiny_config, "max_steps": 4})
    run = RunDir.for_config(cfg)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(cfg.to_dict()))
    assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == f"cselab train: error: {run.last_dir}: cannot write (no space left on device)"
    assert not tmp_dirs(run.path) and not run.last_dir.exists()
    assert is_complete(run.best_dir)                           # written before last/, intact


@pytest.mark.parametrize("damaged", ["trainer_state.safetensors", "model.safetensors", "trainer_state.json"])
def test_damaged_checkpoint_on_resume_is_one_line(damaged, tiny_config, data_dir, tmp_path, capsys):
    cfg = load_config({**tiny_config, "max_steps": 4, "eval_every": 2})
    run = RunDir.for_config(cfg)
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    target = run.last_dir / damaged
    target.write_bytes(target.read_bytes()[:100])
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(cfg.to_dict()))
    assert main(["train", str(config), "--resume", "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys).startswith(f"cselab train: error: {target}")
    assert run.last_dir.is_dir()                                 # nothing deleted


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    where.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


def test_full_disk_on_a_real_small_filesystem(tiny_config, data_dir, tmp_path, capsys):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "3m"):
        pytest.skip("mounting a tmpfs needs root (the ENOSPC case is simulated in the test above)")
    try:
        cfg = load_config({**tiny_config, "max_steps": 4, "output_dir": str(disk / "runs")})
        config = tmp_path / "c.yaml"
        config.write_text(yaml.safe_dump(cfg.to_dict()))
        assert main(["train", str(config), "--data-dir", str(data_dir)]) == 2
        line = error_line(capsys)
        assert line.startswith(f"cselab train: error: {disk / 'runs'}") and \
            line.endswith("cannot write (no space left on device)")
        assert not tmp_dirs(disk)
    finally:
        subprocess.run(["umount", str(disk)], check=True)


# --------------------------------------------------------------------------- 5. degenerate training
@pytest.mark.parametrize("override, message", [
    ("temperature=inf", "temperature: expected a finite number, got inf"),
    ("temperature=.nan", "temperature: expected a finite number, got nan"),
    ("lr=inf", "lr: expected a finite number, got inf"),
    ("lr=.nan", "lr: expected a finite number, got nan"),
    ("lr=-.inf", "lr: expected a finite number, got -inf"),
    ("max_sentences=1", "max_sentences: must be >= 2"),
])
def test_non_finite_hyperparameters_are_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


@pytest.mark.parametrize("content, message", [
    ("", "config file is empty"),
    ("# only a comment\n", "config file is empty"),
    ("- lr: 1\n", "expected a mapping of keys at the top level, got a list"),
    ("just text\n", "expected a mapping of keys at the top level, got a str"),
])
def test_empty_or_non_mapping_config_file_is_refused(content, message, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=f"{path}: {message}"):
        load_config(path)


def test_one_sentence_corpus_is_refused_before_a_run_folder_exists(tiny_config, data_dir, tmp_path):
    corpus = tmp_path / "one.txt"
    corpus.write_text("\njust one sentence\n\n")
    cfg = load_config({**tiny_config, "corpus": str(corpus)})
    with pytest.raises(DataError, match=f"{corpus}: the corpus has 1 sentence; contrastive training needs at least 2"):
        train(cfg, data_dir=data_dir, progress=False)
    assert not RunDir.for_config(cfg).path.exists()


def test_a_final_one_sentence_batch_is_dropped_with_a_note(tiny_config, data_dir, caplog):
    assert batches_per_epoch(33, 16, False) == 2 and batches_per_epoch(34, 16, False) == 3
    assert batches_per_epoch(32, 16, False) == 2 and batches_per_epoch(33, 16, True) == 2
    cfg = load_config({**tiny_config, "max_sentences": 33, "epochs": 2, "eval_every": 100, "log_every": 1})
    with caplog.at_level("WARNING", logger="cselab.model.train"):
        run = train(cfg, data_dir=data_dir, progress=False)
    assert "33 sentences = 2 batches of 16 + 1; the final 1-sentence batch of each epoch is dropped" in caplog.text
    records = [r for r in RunDir(run).metrics() if r["kind"] == "train"]
    assert [(r["step"], r["epoch"]) for r in records] == [(1, 0), (2, 0), (3, 1), (4, 1)]
    assert all(math.isfinite(r["sim/neg_cos"]) and r["loss"] > 0 for r in records)


# --------------------------------------------------------------------------- 6. interrupted swap
def _folder(path: Path, step: int | None, text: str) -> Path:
    path.mkdir()
    (path / "data.txt").write_text(text)
    if step is not None:
        mark_complete(path, {"step": step})
    return path


def test_recover_dir_keeps_the_newest_complete_copy(tmp_path):
    final = tmp_path / "last"
    _folder(tmp_path / "last.old", 4, "old")
    _folder(tmp_path / "last.tmp", 8, "new")
    assert recover_dir(final) == final and (final / "data.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]          # the swap finished: old superseded

    os.replace(final, tmp_path / "last.old")
    _folder(tmp_path / "last.tmp", None, "half-written")                 # no marker: incomplete
    assert recover_dir(final) == final and (final / "data.txt").read_text() == "new"
    assert (tmp_path / "last.tmp" / "data.txt").read_text() == "half-written"   # ignored, cleared later

    shutil.rmtree(tmp_path / "last.tmp")
    _folder(tmp_path / "last.tmp", 2, "stale")                            # complete but older than last/
    assert recover_dir(final) == final and (final / "data.txt").read_text() == "new"
    assert staging_dir(final) == tmp_path / "last.tmp" and not any((tmp_path / "last.tmp").iterdir())

    empty = tmp_path / "none"
    _folder(tmp_path / "none.tmp", None, "half-written")
    assert recover_dir(empty) is None and not empty.exists()


@pytest.mark.parametrize("staged", ["complete", "incomplete"])
def test_crash_between_the_two_renames_of_a_checkpoint_swap(staged, tiny_config, data_dir, monkeypatch):
    import cselab.model.io as io

    # 32 sentences / 16 = 2 steps an epoch, 3 epochs = 6 steps; checkpoints at 2, 4, 6
    cfg = load_config({**tiny_config, "max_sentences": 32, "epochs": 3, "eval_every": 2, "log_every": 1})
    run = RunDir.for_config(cfg)
    real_replace = os.replace

    def crash_before_the_second_rename(src, dst):
        src = Path(src)
        if src.name == "last.tmp" and json.loads((src / COMPLETE_MARKER).read_text())["step"] == 4:
            raise Crash
        return real_replace(src, dst)

    with monkeypatch.context() as m, pytest.raises(Crash):
        m.setattr(io.os, "replace", crash_before_the_second_rename)
        train(cfg, data_dir=data_dir, progress=False)
    old, tmp = run.path / "last.old", run.path / "last.tmp"
    assert not run.last_dir.exists() and is_complete(old) and is_complete(tmp)   # the state of the issue
    assert load_state(old)["train_state"]["step"] == 2 and load_state(tmp)["train_state"]["step"] == 4
    if staged == "incomplete":
        (tmp / COMPLETE_MARKER).unlink()

    seen = []
    train(cfg, data_dir=data_dir, resume=True, progress=False, callbacks=[first_steps(seen)])
    assert seen == ([5, 6] if staged == "complete" else [3, 4, 5, 6])   # from step 4, or from step 2
    assert load_state(run.last_dir)["train_state"]["step"] == 6
    assert [r["step"] for r in run.metrics() if r["kind"] == "eval"] == [0, 2, 4, 6]
    assert not old.exists() and not tmp.exists()


# --------------------------------------------------------------------------- 7. failed starts
def test_a_data_error_leaves_no_run_folder_and_a_plain_rerun_works(tiny_config, data_dir, tmp_path):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    (tmp_path / "empty-data").mkdir()
    with pytest.raises(DataError, match="corpus/wiki1m-head.txt: file not found"):
        train(cfg, data_dir=tmp_path / "empty-data", progress=False)
    assert not run.path.exists()
    assert train(cfg, data_dir=data_dir, progress=False) == run.path


def test_a_model_error_removes_what_the_start_created(tiny_config, data_dir, model_copy):
    cfg = load_config({**tiny_config, "model": str(model_copy), "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    weights = model_copy / "model.safetensors"
    good = weights.read_bytes()
    weights.write_bytes(good[:1000])
    with pytest.raises(ValueError, match=f"{weights}: cannot load the weights"):
        train(cfg, data_dir=data_dir, progress=False)
    assert not run.path.exists()
    weights.write_bytes(good)
    assert train(cfg, data_dir=data_dir, progress=False) == run.path


def test_a_run_folder_holding_only_config_json_does_not_block(tiny_config, data_dir):
    cfg = load_config({**tiny_config, "max_steps": 2, "eval_every": 2})
    run = RunDir.for_config(cfg)
    run.path.mkdir(parents=True)
    run.config_file.write_text("{}")                      # what a failed start of an older version left
    assert train(cfg, data_dir=data_dir, progress=False) == run.path
    assert run.saved_config()["config_hash"] == cfg.config_hash()


# --------------------------------------------------------------------------- 8. eval of a run without best/
def test_eval_of_a_run_without_best_says_what_it_has(tiny_config, data_dir, capsys):
    cfg = load_config({**tiny_config, "eval_every": 2})
    run = RunDir.for_config(cfg)
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, progress=False, callbacks=[crash_at(1)])
    assert main(eval_args(run.path, data_dir)) == 2
    assert error_line(capsys) == (f"cselab eval: error: {run.path}: this run has no best/ model yet (nor a last/ "
                                  "checkpoint: it has not reached its first evaluation)")

    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, resume=True, progress=False, callbacks=[crash_at(3)])
    shutil.rmtree(run.best_dir)
    assert main(eval_args(run.path, data_dir)) == 2
    assert error_line(capsys) == (f"cselab eval: error: {run.path}: this run has no best/ model yet (it has last/, "
                                  f"the checkpoint of step 2: evaluate that with `cselab eval {run.last_dir}`)")
    assert main(eval_args(run.last_dir, data_dir)) == 0
    assert "STS13" in capsys.readouterr().out
