"""cselab.model.timing: the encode/fit totals a study reads back from each notebook's kernel."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cselab.model import timing
from cselab.model.encoder import SentenceEncoder
from cselab.model.evaluate.clustering import kmeans_labels


def test_encoding_and_fits_are_timed_and_written_where_the_study_asks(tiny_model, tmp_path, monkeypatch):
    target = tmp_path / "timings.json"
    monkeypatch.setenv(timing.ENV, str(target))
    monkeypatch.setattr(timing, "_last_write", 0.0)
    timing.reset()
    assert timing.totals() == {"encode": 0.0, "fit": 0.0}
    SentenceEncoder.from_pretrained(tiny_model, pooler="avg").encode(["a cat", "a dog runs", "the sky"], batch_size=2)
    encoded = timing.totals()["encode"]
    assert encoded > 0 and timing.totals()["fit"] == 0.0
    written = json.loads(target.read_text())   # the first batch's update; the second within a second is not
    assert 0 < written["encode"] < encoded and written["fit"] == 0.0
    kmeans_labels(np.random.default_rng(0).normal(size=(20, 3)), 2, seed=0)
    assert timing.totals()["fit"] > 0 and timing.totals()["encode"] == encoded
    timing.flush()   # what the kernel does at exit
    assert json.loads(target.read_text()) == timing.totals()
    with pytest.raises(ValueError, match="timing kind must be one of"):
        timing.add("drawing", 1.0)
    timing.reset()
