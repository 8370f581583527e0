"""The papers' figures a record can draw at the cpu scale (issue 53): the alignment–uniformity plane
(``kind: plane``), one variant's statistics in one panel (``together: true``) and a per-layer probe
statistic (``kind: profile``, issue 56)."""
from __future__ import annotations

import numpy as np
import pytest

from cselab.workbench.paper_tables import record_report
from cselab.workbench.plots.check import check_figure
from cselab.workbench.plots.plane import plot_seed_plane
from cselab.workbench.studies.spec import StudyError, load_study, resolve_study_path
from synthetic_records import record


def _marker_xy(fig, label_start: str) -> tuple[float, float]:
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label().startswith(label_start)]
    return float(line.get_xdata()[0]), float(line.get_ydata()[0])


def test_the_plane_draws_each_variant_at_its_mean_over_seeds():
    points = {"SimCSE": [(0.12, -2.5), (0.14, -2.6), (0.13, -2.55)],
              "untuned MiniLM": [(0.0856, -1.85)] * 3}
    fig = plot_seed_plane(points, "alignment", "uniformity", hollow=["untuned MiniLM"])
    assert _marker_xy(fig, "SimCSE") == pytest.approx((0.13, -2.55))
    assert _marker_xy(fig, "untuned MiniLM") == pytest.approx((0.0856, -1.85))
    ax = fig.axes[0]
    (untuned,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("untuned")]
    assert untuned.get_markerfacecolor() == "none"          # hollow: the backbone before training
    # error bars for SimCSE only (the untuned point is the same for every seed: no zero-length bar)
    bars = [c for c in ax.containers]
    assert len(bars) == 1
    # the t-interval of 0.12, 0.14, 0.13 along x: mean ± t(0.975, 2) × 0.01 / √3 = ± 0.02484
    (xbar,) = [seg for seg in bars[0].lines[2] if seg.get_segments()[0][0][1] == seg.get_segments()[0][1][1]]
    (x0, _), (x1, _) = xbar.get_segments()[0]
    assert (x1 - x0) / 2 == pytest.approx(0.024841, abs=1e-5)
    assert check_figure(fig) == []


def test_the_plane_draws_each_method_in_its_own_marker():
    """ClusterNS was a circle in the record's Fig. 6 and ◆ in every other figure: each point takes its
    method's marker from the one-place encoding, the untuned backbone its own."""
    from cselab.workbench.plots.style import method_marker

    points = {"untuned MiniLM": [(0.0856, -1.85)] * 3, "SimCSE": [(0.12, -2.5), (0.14, -2.6)],
              "ClusterNS": [(0.125, -2.52), (0.126, -2.51)]}
    ax = plot_seed_plane(points, "alignment", "uniformity", hollow=["untuned MiniLM"]).axes[0]
    markers = {ln.get_label().split(" (")[0]: ln.get_marker() for ln in ax.get_lines() if ln.get_label()[0] != "_"}
    assert markers == {"untuned MiniLM": method_marker("untuned MiniLM"), "SimCSE": "o", "ClusterNS": "D"}
    assert markers["ClusterNS"] == method_marker("clusterns") and markers["untuned MiniLM"] == "x"


def test_a_record_draws_the_plane_with_the_sts_average_in_each_label():
    records = []
    for seed, (align, uniform) in enumerate([(0.12, -2.5), (0.14, -2.6)], start=1):
        for variant, shift in (("simcse", 0.0), ("mixcse", -0.01)):
            r = record(f"{variant}-s{seed}", "paper-mixcse", 76.0 + seed + (variant == "mixcse"), seed)
            r["probe"]["alignment"] = [0.0856] + [align + shift] * 8
            r["probe"]["uniformity"] = [-1.85] + [uniform] * 8
            records.append(r)
    frame = record_report.records_frame(records)
    spec = {"kind": "plane", "x_key": "alignment", "y_key": "uniformity", "untuned": "untuned MiniLM",
            "variants": {"SimCSE": "simcse", "MixCSE": "mixcse"}}
    fig = record_report._figure(None, spec, records, frame)
    legend = fig.axes[0].get_legend() or fig.legends[0]   # inside the panel or beside it, where it fits
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[0] == "untuned MiniLM (step 0)"
    # the STS avg of each variant's record lines: SimCSE 77 and 78 (mean 77.5), MixCSE 78 and 79
    assert any(lab.startswith("SimCSE: STS avg 77.50 (n 2)") for lab in labels)
    assert any(lab.startswith("MixCSE: STS avg 78.50 (n 2)") for lab in labels)
    assert _marker_xy(fig, "MixCSE") == pytest.approx((0.12, -2.55))
    assert _marker_xy(fig, "untuned") == pytest.approx((0.0856, -1.85))


def test_together_draws_one_variants_statistics_as_the_lines_of_one_panel():
    records = [record(f"mixcse-s{s}", "paper-mixcse", 76.0, s) for s in (1, 2, 3)]
    frame = record_report.records_frame(records)
    spec = {"kind": "curves", "part": "train", "together": True, "y": "mean cosine",
            "keys": {"sim/pos_cos": "positive pairs", "sim/neg_cos": "in-batch negatives"},
            "variants": {"MixCSE": "mixcse"}}
    fig = record_report._figure(None, spec, records, frame)
    assert len(fig.axes) == 1
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert set(lines) == {"positive pairs", "in-batch negatives"}
    # synthetic neg_cos is 0.6 / √step for every seed: the line is that curve
    steps = np.asarray(lines["in-batch negatives"].get_xdata(), dtype=float)
    assert np.asarray(lines["in-batch negatives"].get_ydata()) == pytest.approx(0.6 / np.sqrt(steps))


def test_a_profile_draws_the_last_probe_steps_per_layer_statistic_over_seeds():
    records = [record(f"{v}-s{s}", "paper-apincse", 76.0, s) for v in ("simcse", "apincse") for s in (1, 2, 3)]
    spec = {"kind": "profile", "key": "layer_cls_sim", "variants": {"SimCSE": "simcse", "APINCSE": "apincse"}}
    fig = record_report._figure(None, spec, records, record_report.records_frame(records))
    (simcse,) = [c for c in fig.axes[0].containers if c.get_label() == "SimCSE"]
    # every seed's last profile is the synthetic one; the last layer (1 by definition) is left out
    assert np.asarray(simcse.lines[0].get_ydata()) == pytest.approx([0.6, 0.65, 0.66, 0.66, 0.67, 0.66])


@pytest.mark.parametrize("old, new, message", [
    ("    y_key: uniformity\n", "", "a plane needs x_key and y_key"),
    ("variants: {MixCSE: mixcse}\n  - name: anisotropy", "variants: {MixCSE: mixcse, SimCSE: simcse}\n  - name: anisotropy",
     "together: draws one variant"),
])
def test_a_study_file_with_a_broken_record_figure_is_refused(tmp_path, old, new, message):
    text = resolve_study_path("paper-mixcse").read_text()
    assert old in text
    study = tmp_path / "paper-mixcse.yaml"
    study.write_text(text.replace(old, new, 1))
    with pytest.raises(StudyError, match=message):
        load_study(study, "cpu", notebooks=False)


def test_a_profile_without_a_probe_key_is_refused(tmp_path):
    text = resolve_study_path("paper-apincse").read_text()
    old = "    kind: profile\n    key: layer_cls_sim\n"
    assert old in text
    study = tmp_path / "paper-apincse.yaml"
    study.write_text(text.replace(old, "    kind: profile\n    part: train\n    key: layer_cls_sim\n", 1))
    with pytest.raises(StudyError, match="a profile needs key"):
        load_study(study, "cpu", notebooks=False)
