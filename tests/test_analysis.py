"""Analyses that are not training runs: GS-InfoNCE top-4 curve, MixCSE spherical cap and λ bound,
the ClusterNS case study, UMAP/PCA maps, run readers and result tables."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from synthetic_runs import STS, make_runs
from toy_encoders import LookupEncoder

from cselab.workbench.analysis.clusterns import cluster_case_study, load_run_centroids, run_case_study
from cselab.workbench.analysis.gs_infonce import top4_curve, top4_curve_from_embeddings, top_k_negative_mean
from cselab.workbench.analysis.mixcse import (cap_cosine_moments, cap_geometry_table, cap_pair_cosines,
                                             lambda_bound_curve, mixed_closer_share, sample_cap)
from cselab.model.rundir import read_metrics, read_results
from cselab.workbench.analysis.umap import project_2d, umap_frame, umap_frames
from cselab.model.encoder import SentenceEncoder
from cselab.workbench.tables import format_table, runs_table, scores_table, summarise, to_latex, to_markdown
from cselab.model.config import load_config
from cselab.model.rundir import RunDir
from cselab.model.train import train


# ------------------------------------------------------------------ GS-InfoNCE Fig. 1
def _unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def test_top_k_negative_mean_by_hand():
    x = np.array([_unit(a) for a in (0, 10, 20, 90)]) * np.array([[1], [2], [3], [4]])
    # pair angles 10, 20, 90, 10, 80, 70 → the four largest cosines: cos10, cos10, cos20, cos70
    expected = (2 * math.cos(math.radians(10)) + math.cos(math.radians(20)) + math.cos(math.radians(70))) / 4
    assert top_k_negative_mean(x, 4) == pytest.approx(expected)
    assert top_k_negative_mean(x, 1) == pytest.approx(math.cos(math.radians(10)))
    with pytest.raises(ValueError, match="3 negative pairs, fewer than k = 4"):
        top_k_negative_mean(x[:3], 4)


def test_top4_curve_draws_batches_and_encodes_only_what_they_use():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16))
    corpus = [f"s{i}" for i in range(300)]
    model = LookupEncoder(dict(zip(corpus, vectors)))
    curve = top4_curve(model, corpus, batch_sizes=(8, 64), n_batches=20, seed=3)
    same = top4_curve_from_embeddings(vectors, (8, 64), n_batches=20, seed=3)
    pd.testing.assert_frame_equal(curve, same)
    assert curve["top_k_mean"].iloc[1] > curve["top_k_mean"].iloc[0]   # bigger batches hold harder negatives
    full = top4_curve_from_embeddings(vectors[:10], (10,), n_batches=3)
    assert full["top_k_mean"].iloc[0] == pytest.approx(top_k_negative_mean(vectors[:10]))
    assert full["std"].iloc[0] == pytest.approx(0.0)
    with pytest.raises(ValueError, match="exceeds the corpus"):
        top4_curve_from_embeddings(vectors[:10], (11,), n_batches=1)


def test_top4_curve_counts_a_repeated_text_once():
    """A text the corpus holds twice is one sentence, not a negative pair of cosine 1 (planted: 40
    copies of one sentence among 60 distinct ones; with them, every batch of 50 would score 1)."""
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(61, 16))
    corpus = [f"s{i}" for i in range(60)] + ["again"] * 40
    model = LookupEncoder(dict(zip([*corpus[:60], "again"], vectors)))
    curve = top4_curve(model, corpus, batch_sizes=(50,), n_batches=5, seed=0)
    distinct = top4_curve_from_embeddings(vectors, (50,), n_batches=5, seed=0)   # the 61 distinct texts
    pd.testing.assert_frame_equal(curve, distinct)
    assert curve["top_k_mean"].iloc[0] < 0.9
    with pytest.raises(ValueError, match="exceeds the corpus"):   # 61 distinct sentences, not 100
        top4_curve(model, corpus, batch_sizes=(62,), n_batches=1)


# ------------------------------------------------------------------ MixCSE spherical cap (section Distribution of BERT Embeddings)
def test_cap_moments_in_three_dimensions_match_archimedes():
    # On S², the height t of a uniform cap point is uniform on [cos ω, 1] (Archimedes), so with
    # m1 = E t = (1 + c)/2 and m2 = E t² = (1 + c + c²)/3:  E cos θ = m1², E cos²θ = m2² + (1 − m2)²/2.
    for omega in (np.radians(40), np.radians(90), np.pi):
        c = math.cos(omega)
        m1, m2 = (1 + c) / 2, (1 + c + c * c) / 3
        moments = cap_cosine_moments(3, omega, n_pairs=400_000, seed=1)
        assert moments["mean_cos"] == pytest.approx(m1 ** 2, abs=4e-3)
        assert moments["var_cos"] == pytest.approx(m2 ** 2 + (1 - m2) ** 2 / 2 - m1 ** 4, abs=4e-3)


def test_whole_sphere_cosine_variance_is_one_over_d():
    for d in (16, 768):
        moments = cap_cosine_moments(d, np.pi, n_pairs=200_000, seed=2)
        assert moments["mean_cos"] == pytest.approx(0.0, abs=5e-3)
        assert moments["var_cos"] == pytest.approx(1 / d, rel=0.03)


def test_explicit_cap_vectors_agree_with_the_scalar_simulation():
    d, omega = 8, np.radians(60)
    x = sample_cap(4000, d, omega, seed=0)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert x[:, 0].min() >= math.cos(omega) - 1e-12             # every point within ω of the pole
    cos = x[:2000] @ x[2000:].T                                   # independent pairs
    simulated = cap_pair_cosines(400_000, d, omega, seed=1)
    assert cos.mean() == pytest.approx(simulated.mean(), abs=5e-3)
    assert cos.var() == pytest.approx(simulated.var(), rel=0.05)


def test_cap_table_variance_shrinks_with_dimension():
    table = cap_geometry_table(dims=(16, 256), omegas_deg=(60, 180), n_pairs=50_000)
    assert list(table.columns) == ["d", "omega_deg", "mean_cos", "var_cos"] and len(table) == 4
    for omega, group in table.groupby("omega_deg"):
        assert group.sort_values("d")["var_cos"].is_monotonic_decreasing
    with pytest.raises(ValueError, match="omega must be in"):
        cap_cosine_moments(16, 4.0)
    with pytest.raises(ValueError, match="d must be >= 3"):
        sample_cap(3, 2, 1.0)


# ------------------------------------------------------------------ MixCSE λ bound (section MixCSE)
def _materialised_share(z1: torch.Tensor, z2: torch.Tensor, lam: float) -> float:
    h1, h2 = torch.nn.functional.normalize(z1, dim=1), torch.nn.functional.normalize(z2, dim=1)
    closer, total = 0, 0
    for i in range(len(z1)):
        positive = float(h1[i] @ h2[i])
        for j in range(len(z1)):
            if j != i:
                mixed = torch.nn.functional.normalize(lam * h2[i] + (1 - lam) * h2[j], dim=0)
                closer += float(h1[i] @ mixed) > positive
                total += 1
    return closer / total


def test_mixed_closer_share_against_materialised_mixtures():
    torch.manual_seed(0)
    z2 = torch.randn(7, 6, dtype=torch.float64)
    z1 = z2 + 0.9 * torch.randn(7, 6, dtype=torch.float64)    # noisy views: some mixtures beat the positive
    for lam in (0.0, 0.2, 0.5, 0.9):
        assert mixed_closer_share(z1, z2, lam) == pytest.approx(_materialised_share(z1, z2, lam))
    assert 0.0 < mixed_closer_share(z1, z2, 0.5) < 1.0
    assert mixed_closer_share(z2, z2, 0.3) == 0.0                 # identical views: nothing beats cos = 1


def test_lambda_bound_curve_on_a_model_leaves_the_rng_alone(tiny_model, data_dir):
    from cselab.model.data import load_stsb

    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls")
    sentences = list(load_stsb(data_dir)["dev"].sentences1[:24])
    torch.manual_seed(5)
    expected_next = torch.rand(1)
    torch.manual_seed(5)
    curve = lambda_bound_curve(encoder, sentences, lambdas=(0.1, 0.5, 0.9), batch_size=8, seed=0)
    assert torch.equal(torch.rand(1), expected_next)
    assert list(curve["lambda"]) == [0.1, 0.5, 0.9]
    assert curve["closer_share"].between(0, 1).all()
    again = lambda_bound_curve(encoder, sentences, lambdas=(0.1, 0.5, 0.9), batch_size=8, seed=0)
    pd.testing.assert_frame_equal(curve, again)


# ------------------------------------------------------------------ ClusterNS Table 10
def test_cluster_case_study_groups_by_nearest_centroid():
    centroids = np.eye(3, 4)
    embeddings = np.array([[5, 0.1, 0, 0], [0, 2, 0.1, 0], [0.1, 3, 0, 0], [4, 0, 0.5, 0], [1, 0, 0, 0],
                           [0, 0, 1, 0]])
    sentences = [f"s{i}" for i in range(6)]
    table = cluster_case_study(embeddings, sentences, centroids, n_clusters=2, per_cluster=2, pick="nearest")
    # cluster 0: s0, s3, s4 (cos .9998, .992, 1); cluster 1: s1, s2 (cos .9988, .9994); nearest first
    assert table["cluster"].tolist() == [0, 0, 1, 1]
    assert table["members"].tolist() == [3, 3, 2, 2]
    assert table["sentence"].tolist() == ["s4", "s0", "s2", "s1"]
    assert table["cos_to_centroid"].iloc[0] == pytest.approx(1.0)
    sampled = cluster_case_study(embeddings, sentences, centroids, n_clusters=3, per_cluster=5, seed=1)
    assert sorted(sampled["sentence"]) == sentences and set(sampled["cluster"]) == {0, 1, 2}


def test_case_study_of_a_run_reads_its_checkpoint(tiny_config, data_dir, tmp_path):
    base = {**tiny_config, "max_steps": 2, "eval_every": 2, "method": "clusterns"}
    run = train(load_config({**base, "clusterns": {"num_clusters": 4, "start_threshold": 1.0}}), data_dir=data_dir,
                progress=False)
    saved = RunDir(run).load_checkpoint_state()["loss"]["components.0.state.centroids"]
    assert saved.shape == (4, 32) and np.allclose(load_run_centroids(run), saved.numpy())
    table = run_case_study(run, [f"sentence number {i}" for i in range(30)], n_clusters=2, per_cluster=3)
    assert len(table) <= 6 and table["cluster"].nunique() <= 2
    assert table["members"].max() <= 30
    never = train(load_config({**base, "clusterns": {"num_clusters": 4, "start_threshold": -1.0}}), data_dir=data_dir,
                  progress=False)
    with pytest.raises(ValueError, match="clustering had not started"):
        load_run_centroids(never)
    other = train(load_config({**base, "method": "simcse"}), data_dir=data_dir, progress=False)
    with pytest.raises(ValueError, match="not a ClusterNS run"):
        load_run_centroids(other)


# ------------------------------------------------------------------ UMAP / PCA
def _two_blobs() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.normal(size=(60, 10)), rng.normal(size=(60, 10)) + 6])


def test_projection_pca_fallback():
    x = _two_blobs()
    coords, method = project_2d(x[:40])                           # auto: fewer than 100 points → PCA
    assert method == "pca" and coords.shape == (40, 2)
    assert np.allclose(coords, project_2d(x[:40])[0])
    centred = x[:40] - x[:40].mean(0)
    top = np.linalg.svd(centred, full_matrices=False)[2][:2]     # the first two principal axes
    assert np.allclose(np.abs(coords), np.abs(centred @ top.T))
    with pytest.raises(ValueError, match="method must be one of"):
        project_2d(x, method="tsne")
    with pytest.raises(ValueError, match="n_neighbors \\(15\\) must be smaller"):
        project_2d(x[:10], method="umap")


@pytest.mark.slow   # numba compiles umap-learn's kernels on first use (~10 s CPU, minutes on a busy box)
def test_seeded_umap_is_reproducible_and_keeps_blobs_apart():
    x = _two_blobs()
    first, used = project_2d(x, seed=3)                           # auto: 120 points → UMAP
    assert used == "umap" and first.shape == (120, 2)
    assert np.array_equal(first, project_2d(x, method="umap", seed=3)[0])
    centre_a, centre_b = first[:60].mean(0), first[60:].mean(0)
    assert np.linalg.norm(centre_a - centre_b) > 3 * max(first[:60].std(0).max(), first[60:].std(0).max())


def test_umap_frames_before_after():
    rng = np.random.default_rng(1)
    sentences = [f"s{i}" for i in range(12)]
    before = LookupEncoder(dict(zip(sentences, rng.normal(size=(12, 5)))))
    after = LookupEncoder(dict(zip(sentences, rng.normal(size=(12, 5)))))
    frames = umap_frames({"before": before, "after": after}, sentences, [i % 3 for i in range(12)])
    assert list(frames) == ["before", "after"]
    assert list(frames["after"].columns) == ["x", "y", "label", "sentence"]
    assert frames["before"].attrs["method"] == "pca"
    with pytest.raises(ValueError, match="12 sentences but 2 labels"):
        umap_frame(before, sentences, [0, 1])


# ------------------------------------------------------------------ run readers and tables
def test_read_metrics_and_results(tmp_path):
    runs = make_runs(tmp_path)
    train = read_metrics(runs, "train")
    assert set(train["run"]) == set(runs) and len(train) == 4 * 8
    assert read_metrics(list(runs.values()), "probe")["step"].tolist()[:4] == [10, 20, 30, 40]
    everything = read_metrics(runs["simcse-s1"], None)
    assert set(everything["kind"]) == {"train", "eval", "probe"}
    results = read_results(runs, config_keys=("method", "seed", "mixcse.mix_lambda"))
    assert results["method"].tolist() == ["simcse", "simcse", "mixcse", "mixcse"]
    assert results["mixcse.mix_lambda"].tolist() == [0.2] * 4
    assert results["sts/STS12"].iloc[0] == pytest.approx(70.01)
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        read_metrics(tmp_path)
    with pytest.raises(ValueError, match="kind must be one of"):
        read_metrics(runs, "probes")


def test_summarise_and_format_mean_std_by_hand():
    frame = pd.DataFrame({"model": ["a", "a", "b"], "x": [1.0, 3.0, 5.0], "y": [2.0, 2.0, 0.5]})
    summary = summarise(frame, "model")
    assert summary[("x", "mean")].tolist() == [2.0, 5.0]
    assert summary[("x", "std")].iloc[0] == pytest.approx(math.sqrt(2))    # sample std of 1 and 3
    assert summary[("x", "n")].tolist() == [2, 1]
    text = format_table(summary, bold_best=True)
    assert text.loc["a", "x"] == "2.00 ± 1.41" and text.loc["b", "x"] == "**5.00**"   # n = 1: no ±
    assert text.loc["a", "y"] == "**2.00 ± 0.00**"
    lower = format_table(summary, bold_best=True, lower_is_better=["y"])
    assert lower.loc["b", "y"] == "**0.50**"
    md = to_markdown(text)
    assert md.splitlines()[0].split("|")[1].strip() == "model"
    assert "| 2.00 ± 1.41 " in md
    tex = to_latex(text, caption="Scores of model_a & b", label="tab:x")
    assert r"2.00 $\pm$ 1.41" in tex and r"\textbf{5.00}" in tex
    assert r"\caption{Scores of model\_a \& b}" in tex and r"\label{tab:x}" in tex
    assert tex.count(r"\\") == 3 and r"\begin{tabular}{lrr}" in tex


def test_scores_and_runs_tables(tmp_path):
    seed1 = {"scores": {"MR": 80.0, "CR": 70.0}}
    seed2 = {"scores": {"MR": 82.0, "CR": 74.0}}
    table = scores_table({"model": [seed1, seed2], "other": {"scores": {"MR": 60.0, "CR": 50.0}}},
                         columns={"MR": "MR", "CR": "CR"})
    assert table[("Avg.", "mean")].tolist() == [76.5, 55.0]
    assert format_table(table).loc["model", "MR"] == "81.00 ± 1.41"
    with pytest.raises(ValueError, match=r"task\(s\) \['TREC'\] are in no result"):
        scores_table({"m": seed1}, columns=["TREC"])
    summary = runs_table(make_runs(tmp_path), by="method")
    assert list(summary.index) == ["simcse", "mixcse"]
    assert [c for c in dict.fromkeys(summary.columns.get_level_values(0))] == ["STS12", "STS13", "STS14", "STS15",
                                                                               "STS16", "STS-B", "SICK-R", "Avg."]
    assert summary[("STS12", "mean")].iloc[0] == pytest.approx(70.015)       # seeds 1 and 2 add 0.01, 0.02
    assert summary[("STS-B", "n")].tolist() == [2, 2]
    assert len(STS) == 7


@pytest.mark.parametrize("results, message", [
    ({}, "scores_table: no results (pass {name: result with 'scores'})"),
    ({"a": {"scores": {"STS12": "70"}}}, "a: the score of STS12 is str '70', not a number"),
    ({"a": [{"scores": {"STS12": 70.0}}, {"scores": [70.0]}]}, "a: a result needs a 'scores' mapping (task → value)"),
])
def test_scores_table_of_no_results_or_a_non_number_is_one_line(results, message):
    from cselab.workbench.tables import scores_table

    with pytest.raises(ValueError) as err:   # were a KeyError ('model') and a TypeError (the mean of a str)
        scores_table(results)
    assert str(err.value) == message


def test_lines_on_one_another_from_the_first_step_are_named_within_a_share_of_the_panels_span():
    """stsb_dev and loss_parts: SimCSE under ClusterNS and GS-InfoNCE over the first evaluations, unsaid."""
    from cselab.workbench.analysis.logged import beginnings_sentence

    frame = pd.DataFrame({"run": ["simcse"] * 3 + ["clusterns"] * 3 + ["apincse"] * 3, "step": [0, 4, 8] * 3,
                          "stsb_dev": [79.70, 80.10, 81.00, 79.70, 80.11, 81.50, 82.20, 82.50, 83.00]})
    assert beginnings_sentence(frame, {"stsb_dev": ""}).endswith(": SimCSE, ClusterNS to step 4.")
    frame.loc[4, "stsb_dev"] = 80.3   # 0.2 apart on a 3.3-point axis: not on one another
    assert beginnings_sentence(frame, {"stsb_dev": ""}).endswith(": SimCSE, ClusterNS at step 0.")
    assert beginnings_sentence(frame.assign(stsb_dev=frame["stsb_dev"] + frame.index), {"stsb_dev": "dev"}) == ""


def test_terms_that_begin_after_the_first_step_are_named_with_their_first_step():
    """loss_parts: APINCSE's l_P (its queue full at step 4) and ClusterNS's BML (step 6) start late, said."""
    from cselab.workbench.analysis.logged import late_starts_sentence

    nan = float("nan")
    frame = pd.DataFrame({"run": ["apincse"] * 4 + ["clusterns"] * 4, "step": [1, 2, 4, 6] * 2,
                          "loss": [0.3, 0.2, 0.2, 0.1, 0.3, 0.2, 0.2, 0.1],
                          "loss/l_p": [nan, nan, 1.3, 1.1, nan, nan, nan, nan],
                          "loss/bml": [nan] * 4 + [nan, nan, nan, 1e-4]})
    keys = {"loss": "total loss", "loss/l_p": "APINCSE ℓ_P", "loss/bml": "ClusterNS BML"}
    assert late_starts_sentence(frame, keys, {"loss/l_p": "its queue full"}) == (
        "Terms that begin later (absent before): APINCSE ℓ_P from step 4 (its queue full); ClusterNS BML from step 6.")
    assert late_starts_sentence(frame[["run", "step", "loss"]], {"loss": "total loss"}) == ""
