"""A run's records read back: a last metrics line cut short by a kill or a full disk is left out
(with a warning) instead of making the run unreadable and unresumable; a run file that is not UTF-8 is
one error naming it."""
from __future__ import annotations

import json

import pytest

from cselab.model.config import load_config
from cselab.model.io import read_json, read_jsonl
from cselab.model.train import train

from test_run_safety import Crash, crash_at, short_dev_set  # noqa: F401  (autouse fixture)


def test_a_last_record_cut_short_is_left_out_with_a_warning(tmp_path, caplog):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 2}\n{"kind": "tr')
    with caplog.at_level("WARNING", logger="cselab.io"):
        assert read_jsonl(path) == [{"step": 1}, {"step": 2}]
    assert [r.getMessage() for r in caplog.records] == [f"{path}:3: a record cut short (an interrupted write); left out"]
    path.write_text('{"step": 1}\n{"kind": "tr\n{"step": 2}\n')           # a bad line inside: an error, as before
    with pytest.raises(ValueError, match=rf"^{path}:2: not valid JSON"):
        read_jsonl(path)
    path.write_text('{"step": 1}\n{"kind": "tr\n')                          # ended by a newline: not an append cut short
    with pytest.raises(ValueError, match=rf"^{path}:2: not valid JSON"):
        read_jsonl(path)
    path.write_text('{"s": "a\u2028b"}\n')                                  # a line separator inside a string
    assert read_jsonl(path) == [{"s": "a\u2028b"}]


def test_a_run_whose_last_record_was_cut_short_resumes_into_the_same_records(tiny_config, data_dir):
    settings = {**tiny_config, "max_steps": 4, "eval_every": 2, "log_every": 1, "run_name": "r"}
    straight = train(load_config({**settings, "output_dir": tiny_config["output_dir"] + "-straight"}),
                     data_dir=data_dir, progress=False)
    with pytest.raises(Crash):
        train(load_config(settings), data_dir=data_dir, progress=False, callbacks=[crash_at(3)])
    run = load_config(settings).output_dir + "/r"
    with open(run + "/metrics.jsonl", "a") as f:
        f.write('{"kind": "train", "step": 4, "lo')
    resumed = train(load_config(settings), data_dir=data_dir, resume=True, progress=False)
    strip = lambda records: [{k: v for k, v in r.items() if k != "seconds"} for r in records]   # noqa: E731
    assert strip(read_jsonl(resumed / "metrics.jsonl")) == strip(read_jsonl(straight / "metrics.jsonl"))


@pytest.mark.parametrize("reader", [read_json, read_jsonl])
def test_a_run_file_that_is_not_utf8_is_one_error_naming_it(reader, tmp_path):
    path = tmp_path / "results.json"
    path.write_bytes(b'{"steps": 4}\n\xff\xfe')
    with pytest.raises(ValueError) as err:
        reader(path)
    assert str(err.value) == f"{path}:2: not valid UTF-8 (byte 13 of the file); save it as UTF-8"
    assert json.loads(b'{"steps": 4}') == {"steps": 4}
