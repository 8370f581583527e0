"""report_to: [tensorboard] writes the scalars of metrics.jsonl into an event file in the run directory."""
from __future__ import annotations

import pytest

from cselab.model.config import ConfigError, load_config
from cselab.model.io import read_jsonl
from cselab.model.train import train
from cselab.model.train.reporting import scalars


def read_events(run) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the run directory's event files, as TensorBoard reads them back."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def expected_events(run) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for record in read_jsonl(run / "metrics.jsonl"):
        for tag, value in scalars(record).items():
            out.setdefault(tag, []).append((record["step"], value))
    return out


def assert_same(events, expected):
    assert sorted(events) == sorted(expected)
    for tag, values in expected.items():
        assert [step for step, _ in events[tag]] == [step for step, _ in values], tag
        # TensorBoard stores float32
        assert [v for _, v in events[tag]] == pytest.approx([v for _, v in values], rel=1e-6, abs=1e-7), tag


def test_scalars_of_a_record():
    record = {"kind": "eval", "step": 4, "stsb_dev": 55.5, "best_stsb_dev": 55.5, "improved": True,
              "layer_cls_sim": [0.1, 0.2], "note": "text"}
    assert scalars(record) == {"eval/stsb_dev": 55.5, "eval/best_stsb_dev": 55.5}


def test_tensorboard_event_file_holds_the_metrics_jsonl_scalars(tiny_config, data_dir):
    run = train(load_config({**tiny_config, "report_to": ["tensorboard"], "probe_every": 4, "probe_sentences": 16}),
                data_dir=data_dir, progress=False)
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    events = read_events(run)
    assert {"train/loss", "train/loss/info_nce", "train/sim/pos_cos", "train/lr", "eval/stsb_dev",
            "probe/alignment"} <= set(events)
    assert [step for step, _ in events["eval/stsb_dev"]] == [0, 4, 8]   # 0: before training
    assert_same(events, expected_events(run))


def test_resumed_run_hides_what_the_killed_run_logged_after_its_checkpoint(tiny_config, data_dir):
    class Crash(Exception):
        pass

    def kill_at_step_6(state, record):
        if state.step == 6:
            raise Crash

    cfg = load_config({**tiny_config, "report_to": "tensorboard", "log_every": 1})   # a string is a list of one
    assert cfg.report_to == ["tensorboard"]
    with pytest.raises(Crash):
        train(cfg, data_dir=data_dir, callbacks=[kill_at_step_6], progress=False)   # checkpoint at step 4
    run = train(cfg, data_dir=data_dir, resume=True, progress=False)
    events = read_events(run)
    assert [step for step, _ in events["train/loss"]] == list(range(1, 9))   # steps 5-6 once, from the resumed run
    assert_same(events, expected_events(run))


def test_report_to_is_validated_and_not_part_of_the_run_identity(tiny_config):
    with pytest.raises(ConfigError, match=r"report_to: must be a list of distinct values from \['tensorboard'\], "
                                          r"got \['wandb'\]"):
        load_config({**tiny_config, "report_to": ["wandb"]})
    with pytest.raises(ConfigError, match="report_to: must be a list of distinct values"):
        load_config({**tiny_config, "report_to": ["tensorboard", "tensorboard"]})
    plain = load_config(tiny_config)
    assert plain.report_to == []
    assert load_config({**tiny_config, "report_to": ["tensorboard"]}).config_hash() == plain.config_hash()
