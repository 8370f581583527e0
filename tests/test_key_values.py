"""One key=value parser (cselab.model.options.parse_key_values) for config overrides and ``--slurm``."""
from __future__ import annotations

import pytest

from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.options import ConfigError, parse_key_values


def test_values_are_read_as_yaml_and_keys_stripped():
    assert parse_key_values(["batch_size=32", " mixcse.mix_lambda =0.3", "method=[mixcse, gs_infonce]",
                             "run_name=", "tag=a=b"], "override") == {
        "batch_size": 32, "mixcse.mix_lambda": 0.3, "method": ["mixcse", "gs_infonce"], "run_name": None,
        "tag": "a=b"}


@pytest.mark.parametrize("item, message", [
    ("novalue", "--slurm 'novalue': expected key=value"),
    ("=3", "--slurm '=3': expected key=value"),
    ("partition=[gpu", "--slurm partition: cannot parse value '[gpu'"),
])
def test_bad_items_are_one_error_naming_the_source(item, message):
    with pytest.raises(ConfigError) as e:
        parse_key_values([item], "--slurm")
    assert str(e.value) == message


def test_config_overrides_and_the_cli_use_it(capsys):
    assert load_config(None, ["batch_size=8", "mixcse.mix_lambda=0.3", "method=mixcse"]).batch_size == 8
    with pytest.raises(ConfigError, match=r"^override 'novalue': expected key=value$"):
        load_config(None, ["novalue"])
    # a value YAML cannot read is bad input (exit 2, one line), not a crash
    assert main(["reproduce", "cpu-demo", "--dry-run", "--slurm", "partition=[gpu"]) == 2
    assert capsys.readouterr().err.strip() == "cselab reproduce: error: --slurm partition: cannot parse value '[gpu'"
