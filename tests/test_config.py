"""Config loading, validation errors that name the key, overrides and the run identity hash."""
from __future__ import annotations

import pytest

from cselab.model.config import ConfigError, TrainConfig, load_config, presets


def test_defaults_are_simcse_unsup_bert_base_hyperparameters():
    cfg = TrainConfig()
    assert (cfg.pooler, cfg.mlp_only_train, cfg.temperature, cfg.dropout) == ("cls", True, 0.05, 0.1)
    assert (cfg.lr, cfg.batch_size, cfg.max_len, cfg.epochs, cfg.seed) == (3e-5, 64, 32, 1, 42)
    assert (cfg.weight_decay, cfg.warmup_ratio, cfg.max_grad_norm, cfg.eval_every) == (0.0, 0.0, 1.0, 125)
    assert cfg.method == ["simcse"]


def test_yaml_file_and_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("batch_size: 32\nlr: 1.0e-5\nmethod: simcse\n")
    cfg = load_config(path, ["batch_size=8", "pooler=avg", "max_steps=3", "run_name=x"])
    assert (cfg.batch_size, cfg.lr, cfg.pooler, cfg.max_steps, cfg.run_name) == (8, 1e-5, "avg", 3, "x")


def test_json_config(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"temperature": 0.1}')
    assert load_config(path).temperature == 0.1


@pytest.mark.parametrize("override, message", [
    (["bach_size=8"], r"override: unknown key 'bach_size' \(did you mean 'batch_size'\?\)"),
    (["lr=abc"], r"lr: expected a number, got 'abc'"),
    (["batch_size=1"], r"batch_size: must be >= 2"),
    (["pooler=max"], r"pooler: must be one of"),
    (["precision=fp8"], r"precision: must be one of"),
    (["mlp_only_train=maybe"], r"mlp_only_train: expected true/false"),
    (["method=nope"], r"method: unknown method 'nope'"),
    (["simcse.x=1"], r"simcse: unknown key 'x'"),
    (["dropout=1.0"], r"dropout: must be in \[0, 1\)"),
    (["novalue"], r"expected key=value"),
])
def test_bad_values_name_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, override)


def test_unknown_key_in_file_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("lr: 1.0e-5\ntemprature: 0.05\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: unknown key 'temprature' \(did you mean 'temperature'\?\)"):
        load_config(path)


def test_unparsable_yaml_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("lr: 1\nbatch_size: [1, 2\n")
    with pytest.raises(ConfigError, match=r"broken\.yaml:\d+: cannot parse"):
        load_config(path)


def test_missing_file_and_presets():
    with pytest.raises(ConfigError, match="no such config file or preset"):
        load_config("nowhere.yaml")
    assert {"quickstart", "simcse-bert-base"} <= set(presets())
    assert load_config("simcse-bert-base").model == "bert-base-uncased"


def test_hash_is_stable_and_ignores_output_location():
    a = load_config(None, ["output_dir=/x", "run_name=a"])
    b = load_config(None, ["output_dir=/y"])
    assert a.config_hash() == b.config_hash() == TrainConfig().config_hash()
    assert load_config(None, ["lr=1e-5"]).config_hash() != a.config_hash()
    # explicit defaults and implicit defaults are the same run
    assert load_config({"method": "simcse", "simcse": {}}).config_hash() == a.config_hash()
    assert a.default_run_name() == f"simcse-{a.config_hash()}"


def test_round_trip_through_to_dict():
    cfg = load_config(None, ["batch_size=8"])
    from cselab.model.config import parse_mapping

    assert parse_mapping(cfg.to_dict()).config_hash() == cfg.config_hash()
