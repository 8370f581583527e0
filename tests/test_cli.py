"""The command line: train, eval, data fetch, info, and errors that name the culprit."""
from __future__ import annotations

import json
import subprocess
import sys

import yaml

from cselab.cli import main


def test_train_then_eval_a_run(tiny_config, data_dir, tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config))
    assert main(["train", str(config), "max_steps=4", "run_name=cli", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    run = tmp_path / "runs" / "cli"
    assert f"run: {run}" in out and "best/ chosen by stsb_dev: step 4 (STS-B dev " in out
    assert main(["eval", str(run), "--tasks", "STS13", "STS16", "--data-dir", str(data_dir),
                 "--output", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "STS13" in out and "STS16" in out and "STS12" not in out
    result = json.loads((tmp_path / "r.json").read_text())
    assert set(result["scores"]) == {"STS13", "STS16"}


def test_train_errors_name_the_key(tiny_config, tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config))
    assert main(["train", str(config), "batchsize=3"]) == 2
    assert "unknown key 'batchsize' (did you mean 'batch_size'?)" in capsys.readouterr().err


def test_print_config(capsys):
    assert main(["train", "quickstart", "lr=1e-4", "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["lr"] == 1e-4 and printed["corpus"] == "wiki1m-head"


def test_eval_plain_backbone_with_pooler(tiny_model, data_dir, capsys):
    assert main(["eval", str(tiny_model), "--pooler", "avg", "--tasks", "STS13", "--aggregate", "mean",
                 "--data-dir", str(data_dir)]) == 0
    assert "(avg)" in capsys.readouterr().out


def test_data_fetch_from_mirror(data_dir, tmp_path, capsys):
    import shutil

    mirror = tmp_path / "mirror"
    shutil.copytree(data_dir / "downstream" / "SICK", mirror / "downstream" / "SICK")
    assert main(["data", "fetch", "--mirror", str(mirror), "--data-dir", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "downstream" / "SICK" / "SICK_test_annotated.txt").is_file()
    assert main(["data", "fetch", "--mirror", str(tmp_path / "nothing"), "--data-dir", str(tmp_path / "d")]) == 2
    assert "not a data mirror" in capsys.readouterr().err


def test_info_as_a_module(data_dir):
    out = subprocess.run([sys.executable, "-m", "cselab", "info", "--data-dir", str(data_dir)],
                         capture_output=True, text=True, check=True).stdout
    assert "torch:" in out and "transformers:" in out and "simcse" in out and "quickstart" in out
    assert "has downstream, corpus, clustering" in out
    assert "evaluation suites (cselab eval --suite):\n  clustering: DBpedia AMI" in out and "\n  sts: STS12-16" in out


def test_quiet_and_verbose(tiny_model, data_dir, capsys, monkeypatch):
    import logging
    import os

    package = logging.getLogger("cselab")                   # level and handler restored by conftest
    monkeypatch.setenv("TQDM_DISABLE", "0")                 # --quiet sets it; restored after the test
    command = ["eval", str(tiny_model), "--pooler", "avg", "--tasks", "STS13", "--data-dir", str(data_dir)]
    assert main(command) == 0
    err = capsys.readouterr().err
    assert "INFO cselab.model.evaluate.sts: STS (all): average" in err and "encoding" in err   # a log line and a bar
    assert main(["--quiet", *command]) == 0
    err = capsys.readouterr().err
    assert os.environ["TQDM_DISABLE"] == "1" and "INFO" not in err and "encoding" not in err
    assert main(["-v", "info", "--data-dir", str(data_dir)]) == 0
    assert package.getEffectiveLevel() == logging.DEBUG
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_warning()
