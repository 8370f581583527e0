"""Checkpoint state without pickle: nested structures survive a safetensors + JSON round trip."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from cselab.model.rundir import load_state, save_state
from cselab.model.utils import rng_state, set_rng_state


def test_optimizer_and_rng_round_trip(tmp_path):
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    state = {"optimizer": opt.state_dict(), "rng": rng_state(), "counter": {"step": 7, "best": -1.5}}
    save_state(state, tmp_path)
    back = load_state(tmp_path)
    assert back["counter"] == {"step": 7, "best": -1.5}
    assert set(back["optimizer"]["state"]) == {0, 1}  # integer keys survive
    for k in (0, 1):
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(back["optimizer"]["state"][k][name], opt.state_dict()["state"][k][name])
    opt2 = torch.optim.AdamW(model.parameters(), lr=1e-3)
    opt2.load_state_dict(back["optimizer"])

    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    set_rng_state(back["rng"])
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected


def test_no_pickle_files(tmp_path):
    save_state({"x": torch.ones(2)}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trainer_state.json", "trainer_state.safetensors"]


def test_load_plain_entry_reads_counters_without_tensors(tmp_path):
    from cselab.model.rundir.state import load_plain_entry

    save_state({"weights": torch.ones(3), "train_state": {"step": 7, "best_score": 81.5, "stopped_early": False}},
               tmp_path)
    assert load_plain_entry(tmp_path, "train_state") == {"step": 7, "best_score": 81.5, "stopped_early": False}
    with pytest.raises(ValueError, match="entry 'weights' holds tensors"):
        load_plain_entry(tmp_path, "weights")
    with pytest.raises(KeyError, match="no entry 'rng'"):
        load_plain_entry(tmp_path, "rng")
    with pytest.raises(FileNotFoundError, match="checkpoint file missing"):
        load_plain_entry(tmp_path / "none", "train_state")
