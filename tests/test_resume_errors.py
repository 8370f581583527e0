"""A resume that cannot continue says so in one line naming the file or the key: a damaged
trainer_state.json, a checkpoint of another config's shapes, a config that changed since the run."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from cselab.cli import main
from cselab.model.config import load_config
from cselab.workbench.studies.status import checkpoint_step
from cselab.model.train import train

from test_run_safety import Crash, crash_at, error_line, short_dev_set  # noqa: F401  (autouse fixture)
from test_export_resume_and_bad_input import tree


@pytest.fixture
def killed(tiny_config, data_dir, tmp_path):
    """An ESimCSE run (queue 32) killed after its step-2 checkpoint, and its config file."""
    settings = {**tiny_config, "max_steps": 4, "eval_every": 2, "method": "esimcse", "esimcse": {"queue_size": 32},
                "run_name": "r"}
    with pytest.raises(Crash):
        train(load_config(settings), data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    config = tmp_path / "r.yaml"
    config.write_text(yaml.safe_dump(settings))
    return load_config(settings), config


@pytest.mark.parametrize("content, problem", [
    ("[]", 'not a cselab checkpoint structure (expected an object {"__dict__": [[key, value], ...]}, got [])'),
    ('"hello"', 'not a cselab checkpoint structure (expected an object {"__dict__": [[key, value], ...]}, got '
                '"hello")'),
    ('{"__dict__": []}', "not a cselab checkpoint (no 'optimizer', 'scheduler', 'scaler', 'loss', 'train_state', "
                         "'rng' entry)"),
])
def test_a_damaged_trainer_state_json_is_one_line_naming_it(content, problem, killed, data_dir, capsys):
    cfg, config = killed
    state = cfg.output_dir + "/r/last/trainer_state.json"
    with open(state, "w") as f:
        f.write(content)
    assert main(["train", str(config), "--resume", "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == f"cselab train: error: {state}: {problem}"


def test_a_study_reading_a_damaged_checkpoints_step_names_the_file(killed):
    cfg, _ = killed
    run = cfg.output_dir + "/r"
    with open(run + "/last/trainer_state.json", "w") as f:
        f.write('{"__dict__": [["train_state", {"__dict__": [["step", "two"]]}]]}')
    with pytest.raises(ValueError) as err:
        checkpoint_step(run)
    assert str(err.value) == f"{run}/last/trainer_state.json: not a cselab checkpoint (its train_state has no step)"
    with open(run + "/last/trainer_state.json", "w") as f:
        f.write("[]")
    with pytest.raises(ValueError, match=r"^.*/last/trainer_state\.json: not a cselab checkpoint structure"):
        checkpoint_step(run)


def test_a_checkpoint_of_another_queue_size_is_one_line_naming_it(killed, tiny_config, data_dir, tmp_path, capsys):
    cfg, config = killed
    other = load_config({**tiny_config, "max_steps": 4, "eval_every": 2, "method": "esimcse",
                         "esimcse": {"queue_size": 64}, "run_name": "o", "output_dir": str(tmp_path / "other")})
    with pytest.raises(Crash):
        train(other, data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    last = tmp_path / "other" / "o" / "last"
    mine = f"{cfg.output_dir}/r/last"
    for name in ("trainer_state.json", "trainer_state.safetensors"):   # last/ copied from another run
        shutil.copy(last / name, f"{mine}/{name}")
    assert main(["train", str(config), "--resume", "--data-dir", str(data_dir)]) == 2
    assert error_line(capsys) == (
        f"cselab train: error: {mine}/trainer_state.json: its loss state does not fit this run's config (size "
        "mismatch for components.0.queue.entries: copying a param with shape torch.Size([64, 32]) from checkpoint, "
        "the shape in current model is torch.Size([32, 32]).); was last/ copied from another run?")


def test_a_resume_refused_for_a_changed_key_names_the_key(killed, data_dir, capsys):
    cfg, config = killed
    before = tree(Path(cfg.output_dir))
    assert main(["train", str(config), "esimcse.queue_size=48", "--resume", "--data-dir", str(data_dir)]) == 2
    line = error_line(capsys)
    assert line.startswith(f"cselab train: error: {cfg.output_dir}/r: cannot resume, its config (hash ")
    assert line.endswith(" in esimcse.queue_size (32 → 48); resume with the run's own config, or train a new run")
    assert tree(Path(cfg.output_dir)) == before
