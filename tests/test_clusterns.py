"""ClusterNS against hand computations: K-means assignment/update, greedy initialisation,
hard-negative choice, BML value and gradient, each ablation switch, statistics, and
checkpoint → resume of the centroids."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from cselab.model.config import ConfigError, load_config
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.methods.clusterns import (ClusterNS, ClusterNSParams, ClusterState, bidirectional_margin, bml_loss,
                                      greedy_init, kmeans_centroids, momentum_update, same_cluster)
from cselab.model.methods.clusterns.kmeans import assign
from cselab.model.train import train
from cselab.model.rundir import load_state

TAU = 0.05


def at(deg: float, r: float = 1.0) -> list[float]:
    return [r * math.cos(math.radians(deg)), r * math.sin(math.radians(deg))]


# Four centroids at 0°, 90°, 180°, 270°; four samples at 10°, 20°, 100°, 190° (view 2: +5°).
# Nearest centroid c_i1 = [0, 0, 1, 2]; second-nearest c_i2 = [1, 1, 2, 3]; samples 0 and 1 share a cluster.
CENTROIDS = torch.tensor([at(0), at(90), at(180), at(270)])
Z1 = torch.tensor([at(10, 2), at(20, 2), at(100, 2), at(190, 2)])
Z2 = torch.tensor([at(15, 2), at(25, 2), at(105, 2), at(195, 2)])
NEAREST, SECOND = [0, 0, 1, 2], [1, 1, 2, 3]


def cos(a, b):
    return F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T


def started(momentum=1e-3, **kw) -> ClusterNS:
    comp = ClusterNS(ClusterNSParams(num_clusters=4, momentum=momentum, **kw))
    comp.state.initialise(CENTROIDS.clone(), step=3)
    return comp


def contribute(comp, z1=Z1, z2=Z2, step=5):
    return comp.contribute(ContrastiveBatch(z1, z2, step=step), cos(z1, z2), TAU)


# ----------------------------------------------------------------- K-means maths
def test_assignment_and_mean_update_by_hand():
    centroids = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    points = torch.tensor([[2.0, 0.0], [3.0, 1.0], [1.0, 2.0], [0.0, 4.0]])
    assignment = assign(points, centroids)
    assert assignment.tolist() == [0, 0, 1, 1]          # cluster 2 stays empty
    mean = momentum_update(centroids, points, assignment, 0.5, "mean")
    # c0: ½[1,0] + ½·mean([2,0],[3,1]) = ½[1,0] + ½[2.5,0.5];  c1: ½[0,1] + ½[0.5,3];  c2 kept
    assert torch.allclose(mean, torch.tensor([[1.75, 0.25], [0.25, 2.0], [-1.0, 0.0]]))
    official = momentum_update(centroids, points, assignment, 0.5, "sum")
    # the official code adds the members' sum: ½[1,0] + ½[5,1];  ½[0,1] + ½[1,6]
    assert torch.allclose(official, torch.tensor([[3.0, 0.5], [0.5, 3.5], [-1.0, 0.0]]))


def test_small_momentum_moves_towards_the_mean():
    centroids = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    points = torch.tensor([[2.0, 0.0], [3.0, 1.0], [1.0, 2.0], [0.0, 4.0]])
    tiny = momentum_update(centroids, points, assign(points, centroids), 1e-3, "mean")
    assert torch.allclose(tiny[0], 0.999 * centroids[0] + 1e-3 * torch.tensor([2.5, 0.5]))


def test_cluster_state_update_uses_old_centroids_then_moves_them():
    state = ClusterState(3)
    state.initialise(torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]), step=1)
    assignment = state.update(torch.tensor([[2.0, 0.0], [3.0, 1.0], [1.0, 2.0], [0.0, 4.0]]), 0.5, "mean")
    assert assignment.tolist() == [0, 0, 1, 1]
    assert torch.allclose(state.centroids, torch.tensor([[1.75, 0.25], [0.25, 2.0], [-1.0, 0.0]]))


def test_greedy_initialisation_toy_case():
    # cos(z1_i, z2_j): from 0 the least similar is 3; from 3 (0 excluded) it is 1; from 1 it is 2.
    sim = torch.tensor([[1.0, 0.5, 0.4, 0.1],
                        [0.5, 1.0, 0.0, 0.3],
                        [0.4, 0.2, 1.0, 0.6],
                        [-0.9, 0.2, 0.7, 1.0]])
    assert greedy_init(sim, 4, first=0).tolist() == [0, 3, 1, 2]
    assert greedy_init(sim, 2, first=2).tolist() == [2, 1]
    with pytest.raises(ValueError, match="num_clusters=5.*global batch size 4"):
        greedy_init(sim, 5, first=0)


def test_same_cluster_excludes_self():
    assert same_cluster(torch.tensor([0, 0, 1, 0])).tolist() == [
        [False, True, False, True], [True, False, False, True], [False, False, False, False],
        [True, True, False, False]]


def test_selection_of_nearest_and_second_nearest_centroids_on_the_toy_batch():
    chosen = started()._select(Z1)
    assert chosen.nearest.tolist() == NEAREST and chosen.hard.tolist() == SECOND
    assert chosen.membership.tolist() == NEAREST


# ----------------------------------------------------------------- BML
def test_bml_value_and_gradient_by_hand():
    alpha, beta = 0.1, 0.4
    c = torch.tensor([[0.90, 0.85, 0.00],
                      [0.60, 0.80, 0.00],
                      [0.10, 0.00, 0.70]], requires_grad=True)
    fn = torch.tensor([[False, True, False], [True, False, False], [True, False, False]])
    # Δ: (0,1) = −0.05 > −α → 0.05;  (1,0) = −0.2 ∈ [−β, −α] → 0;  (2,0) = −0.6 < −β → 0.2
    loss = bml_loss(c, c.diagonal(), fn, alpha, beta)
    assert loss.item() == pytest.approx((0.05 + 0.0 + 0.2) / 3)
    loss.backward()
    expected = torch.zeros(3, 3)
    expected[0, 1], expected[0, 0] = 1 / 3, -1 / 3          # pushes the false negative down
    expected[2, 0], expected[2, 2] = -1 / 3, 1 / 3          # pulls it up
    assert torch.allclose(c.grad, expected)                  # row 1 (inside the band) gets nothing

    c.grad = None
    official = bml_loss(c, c.diagonal(), fn, alpha, beta, reduction="all_pairs")
    # the 6 other entries have Δ = 0 and add ReLU(α) + ReLU(−β) = 0.1 each; all divided by 9
    assert official.item() == pytest.approx((0.05 + 0.2 + 6 * 0.1) / 9)
    official.backward()
    assert torch.allclose(c.grad, expected * 3 / 9)


def test_bml_zero_inside_band_and_without_false_negatives():
    delta = torch.tensor([-0.5, -0.4, -0.25, -0.1, 0.0], requires_grad=True)
    values = bidirectional_margin(delta, 0.1, 0.4)
    assert values.tolist() == pytest.approx([0.1, 0.0, 0.0, 0.0, 0.1])
    values[1:4].sum().backward()
    assert delta.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    none = torch.zeros(3, 3, dtype=torch.bool)
    assert bml_loss(torch.rand(3, 3), torch.rand(3), none, 0.1, 0.4).item() == 0.0


# ----------------------------------------------------------------- the component
def test_before_the_threshold_it_is_simcse():
    comp = ClusterNS(ClusterNSParams(num_clusters=2, start_threshold=-0.5))
    out = contribute(comp)
    assert not out.negatives and not out.terms and out.positive_mask is None and out.denominator_mask is None
    assert not comp.state.is_started and math.isnan(out.stats["start_step"])
    assert float(out.stats["batch_cos"]) == pytest.approx(cos(Z1, Z2).mean().item())
    assert math.isnan(out.stats["hard_neg_cos"])


def test_start_step_initialises_greedily_from_the_batch_and_adds_nothing():
    comp = ClusterNS(ClusterNSParams(num_clusters=3, start_threshold=0.9))
    torch.manual_seed(7)
    first = int(torch.randint(4, (1,)))
    torch.manual_seed(7)
    out = contribute(comp, step=11)
    order = greedy_init(cos(Z1, Z2), 3, first)
    assert torch.equal(comp.state.centroids, Z1[order])
    assert comp.state.is_started and int(comp.state.start_step) == 12 and out.stats["start_step"] == 12.0
    assert not out.negatives and not out.terms
    assert out.stats["nonempty_clusters"] == 3.0


def test_num_clusters_above_batch_is_a_config_error():
    with pytest.raises(ConfigError, match="clusterns: num_clusters=8 exceeds batch_size=4"):
        load_config("clusterns-cpu", ["batch_size=4", "clusterns.num_clusters=8"])
    # a global initialisation does not draw the centroids from one batch
    load_config("clusterns-cpu", ["batch_size=4", "clusterns.num_clusters=8", "clusterns.init=global"])


def test_hard_negatives_are_second_nearest_centroids_of_every_sample():
    comp = started()
    out = contribute(comp)
    centroids = comp.state.centroids                              # after this step's update
    assert cos(Z1, centroids).topk(2, dim=1).indices[:, 1].tolist() == SECOND
    (block,) = out.negatives
    assert block.log_weight == 0.0 and block.direction == "forward"
    assert torch.allclose(block.logits, cos(Z1, centroids[SECOND]) / TAU)   # every row sees all B
    harder = contribute(started(hard_negative_centroid="nearest"))
    assert torch.allclose(harder.negatives[0].logits, cos(Z1, centroids[NEAREST]) / TAU)


def test_loss_against_a_materialised_computation():
    comp = started(bml_weight=0.5, bml_alpha=0.0, bml_beta=0.01)
    z1 = Z1.clone().requires_grad_(True)
    out = ContrastiveLoss(TAU, [comp])(ContrastiveBatch(z1, Z2, step=5))
    c = comp.state.centroids
    a, b, h = F.normalize(Z1, dim=-1), F.normalize(Z2, dim=-1), F.normalize(c[SECOND], dim=-1)
    rows = []
    for i in range(4):
        terms = [a[i] @ b[j] / TAU for j in range(4)] + [a[i] @ h[j] / TAU for j in range(4)]
        rows.append(torch.logsumexp(torch.stack(terms), 0) - a[i] @ b[i] / TAU)
    # one false-negative pair each way (samples 0 and 1): Δ = cos(z1_0, z2_1) − cos(z1_0, z2_0) etc.
    deltas = [a[0] @ b[1] - a[0] @ b[0], a[1] @ b[0] - a[1] @ b[1]]
    bml = sum(F.relu(d) + F.relu(-d - 0.01) for d in deltas) / 2
    assert out.parts["info_nce"].item() == pytest.approx(torch.stack(rows).mean().item(), rel=1e-5)
    assert out.parts["clusterns.bml"].item() == pytest.approx(0.5 * bml.item(), rel=1e-5)
    out.loss.backward()
    assert z1.grad is not None and comp.state.centroids.grad is None


def test_each_ablation_changes_exactly_what_it_says():
    base = contribute(started())
    fn = torch.tensor([[False, True, False, False], [True, False, False, False],
                       [False, False, False, False], [False, False, False, False]])

    def same_negatives(a, b):
        return len(a.negatives) == len(b.negatives) and all(
            torch.equal(x.logits, y.logits) and x.log_weight == y.log_weight for x, y in zip(a.negatives, b.negatives))

    # w/o hard negative: no block, same BML
    out = contribute(started(hard_negatives=False))
    assert not out.negatives and torch.equal(out.terms["bml"], base.terms["bml"])
    # w/o false negative: no BML, same hard negatives
    out = contribute(started(false_negatives="none"))
    assert not out.terms and out.denominator_mask is None and out.positive_mask is None and same_negatives(out, base)
    # mask all false negatives / false negatives as positives
    out = contribute(started(false_negatives="mask"))
    assert torch.equal(out.denominator_mask, fn) and out.positive_mask is None and not out.terms
    assert same_negatives(out, base)
    out = contribute(started(false_negatives="positive"))
    assert torch.equal(out.positive_mask, fn) and out.denominator_mask is None and not out.terms
    # official B² averaging changes only the BML value
    out = contribute(started(bml_reduction="all_pairs"))
    assert same_negatives(out, base) and out.terms["bml"].item() != base.terms["bml"].item()
    # μ on every hard negative of a row (eq. 2) or on the anchor's own only (official)
    out = contribute(started(hard_negative_weight=2.0))
    assert out.negatives[0].log_weight == pytest.approx(math.log(2.0))
    assert torch.equal(out.negatives[0].logits, base.negatives[0].logits)
    out = contribute(started(hard_negative_weight=2.0, hard_negative_weight_on="own"))
    assert out.negatives[0].log_weight == 0.0
    assert torch.allclose(out.negatives[0].logits - base.negatives[0].logits, math.log(2.0) * torch.eye(4))
    # official sum update moves the centroids further, nothing else changes in the recipe
    summed = started(update="sum")
    contribute(summed)
    meaned = started()
    contribute(meaned)
    members = torch.stack([Z1[0] + Z1[1], Z1[2], Z1[3], torch.zeros(2)])
    counts = torch.tensor([2.0, 1.0, 1.0, 1.0]).unsqueeze(1)
    assert torch.allclose(summed.state.centroids[:3], (0.999 * CENTROIDS + 1e-3 * members)[:3])
    assert torch.allclose(meaned.state.centroids[:3], (0.999 * CENTROIDS + 1e-3 * members / counts)[:3])
    assert torch.equal(summed.state.centroids[3], CENTROIDS[3])  # empty cluster kept


def test_random_clusters_draw_hard_negatives_and_membership():
    comp = started(random_clusters=True)
    torch.manual_seed(3)
    hard, membership = torch.randint(4, (2, 4))
    torch.manual_seed(3)
    out = contribute(comp)
    c = comp.state.centroids
    assert torch.allclose(out.negatives[0].logits, cos(Z1, c[hard]) / TAU)
    fn = same_cluster(membership)
    assert out.stats["false_neg_rate"].item() == pytest.approx(
        (torch.bincount(membership, minlength=4)[membership] >= 2).float().mean().item())
    # the centroids themselves are still updated by the true K-means assignment
    reference = started()
    contribute(reference)
    assert torch.equal(c, reference.state.centroids)
    if fn.any():
        assert out.stats["false_neg_cos"].item() == pytest.approx(cos(Z1, Z2)[fn].mean().item())


def test_statistics_by_hand():
    comp = started()
    out = contribute(comp)
    c = comp.state.centroids
    to_c = cos(Z1, c)
    assert out.stats["hard_neg_cos"].item() == pytest.approx(to_c[range(4), SECOND].mean().item())
    assert out.stats["nearest_centroid_cos"].item() == pytest.approx(to_c[range(4), NEAREST].mean().item())
    between = cos(c, c)
    assert out.stats["inter_centroid_cos"].item() == pytest.approx(((between.sum() - between.trace()) / 12).item())
    zc = cos(Z1, Z2)
    assert out.stats["false_neg_cos"].item() == pytest.approx(((zc[0, 1] + zc[1, 0]) / 2).item())
    assert out.stats["false_neg_rate"].item() == pytest.approx(0.5)   # samples 0 and 1 of 4
    assert out.stats["nonempty_clusters"].item() == 3.0
    assert out.stats["start_step"] == 3.0 and out.stats["started"] == 1.0


def test_global_initialisation_uses_k_means_of_a_corpus_sample(tiny_model):
    from cselab.model.encoder import SentenceEncoder

    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls").eval()  # deterministic encoding
    corpus = [f"sentence number {i} about topic {i % 5}" for i in range(40)]
    comp = ClusterNS(ClusterNSParams(num_clusters=4, init="global", global_init_sample=30, start_threshold=1.0))
    comp.setup(encoder, corpus)
    z1 = torch.randn(4, 32, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    out = contribute(comp, z1, z1 + 0.1, step=0)
    torch.manual_seed(0)
    picked = torch.randperm(40)[:30].tolist()
    seed = int(torch.randint(0, 2 ** 31 - 1, ()))
    with torch.no_grad():
        emb = encoder(encoder.training_inputs([corpus[i] for i in picked], 32)).embeddings[:30]
    assert torch.allclose(comp.state.centroids, kmeans_centroids(emb, 4, seed), atol=1e-6)
    assert comp.state.centroids.shape == (4, 32) and not out.negatives
    with pytest.raises(ValueError, match="init=global needs"):
        contribute(ClusterNS(ClusterNSParams(num_clusters=2, init="global", global_init_sample=2)))


def test_kmeans_centroids_are_unnormalised_member_means():
    points = torch.tensor([[10.0, 0.0], [1.0, 0.1], [0.0, 5.0], [0.1, 1.0]])
    centroids = kmeans_centroids(points, 2, seed=0)
    got = sorted(centroids.tolist())
    assert got == [pytest.approx([0.05, 3.0]), pytest.approx([5.5, 0.05])]


def test_state_is_buffers_and_reloads_into_a_fresh_module():
    comp = started()
    contribute(comp)
    keys = set(comp.state_dict())
    assert keys == {"state.centroids", "state.started", "state.start_step", "state.logged_centroids", "state.logged"}
    fresh = ClusterNS(ClusterNSParams(num_clusters=4))
    fresh.load_state_dict(comp.state_dict())
    assert torch.equal(fresh.state.centroids, comp.state.centroids) and fresh.state.is_started
    assert int(fresh.state.start_step) == 3
    assert torch.equal(fresh.state.logged_centroids, comp.state.logged_centroids)
    assert not list(comp.parameters())                          # nothing for the optimiser
    # a checkpoint written before the logged centroids existed still loads (nothing logged yet)
    old = {k: v for k, v in comp.state_dict().items() if "logged" not in k}
    older = ClusterNS(ClusterNSParams(num_clusters=4))
    older.load_state_dict(old)
    assert torch.equal(older.state.centroids, comp.state.centroids) and not bool(older.state.logged)


def test_centroid_shift_is_one_minus_the_mean_cosine_to_the_last_logged_centroids():
    state = ClusterState(2, 2)
    state.initialise(torch.tensor([[1.0, 0.0], [0.0, 1.0]]), step=1)
    assert math.isnan(state.shift_since_logged())               # nothing logged before
    state.centroids = torch.tensor([[1.0, 1.0], [0.0, 2.0]])    # cos 1/√2 and 1 to the logged ones
    assert float(state.shift_since_logged()) == pytest.approx(1 - (2 ** -0.5 + 1) / 2)
    assert float(state.shift_since_logged()) == pytest.approx(0.0, abs=1e-7)   # unmoved since


def test_params_validation_names_the_key():
    with pytest.raises(ConfigError, match="clusterns.*update"):
        load_config("clusterns-cpu", ["clusterns.update=average"])
    with pytest.raises(ConfigError, match="bml_beta"):
        load_config("clusterns-cpu", ["clusterns.bml_alpha=0.5", "clusterns.bml_beta=0.3"])
    with pytest.raises(ConfigError, match="num_clusters"):
        load_config("clusterns-cpu", ["clusterns.num_clusters=1"])


# ----------------------------------------------------------------- training runs
class Interrupt(Exception):
    pass


@pytest.fixture(scope="module")
def interrupted_run(tiny_model, data_dir, tmp_path_factory):
    """8 planned steps of the tiny model, stopped after the step-4 checkpoint. σ = 1 starts the
    clustering on the first batch; K = 4 of a 16-sentence batch."""
    cfg = {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 128, "batch_size": 16,
           "eval_every": 4, "log_every": 2, "final_eval": False, "lr": 1e-4, "max_steps": 8,
           "output_dir": str(tmp_path_factory.mktemp("cns-runs")), "method": ["clusterns"],
           "clusterns": {"num_clusters": 4, "start_threshold": 1.0, "momentum": 0.1}}

    def stop_after_checkpoint(state, record):
        if state.step == 4:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(cfg, data_dir=str(data_dir), progress=False, callbacks=[stop_after_checkpoint])
    (run_dir,) = [p for p in Path(cfg["output_dir"]).iterdir() if p.is_dir()]  # beside it: the run's lock file
    return cfg, run_dir


def test_training_logs_the_statistics(interrupted_run):
    _, run_dir = interrupted_run
    records = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    logged = [r for r in records if r["kind"] == "train" and r["step"] <= 4]
    assert [r["step"] for r in logged] == [1, 2, 4]
    for key in ("batch_cos", "started", "start_step", "hard_neg_cos", "nearest_centroid_cos", "inter_centroid_cos",
                "false_neg_cos", "false_neg_rate", "nonempty_clusters"):
        assert all(f"sim/clusterns.{key}" in r for r in logged), key
    assert all(r["sim/clusterns.start_step"] == 1.0 for r in logged)          # started on the first batch
    assert "loss/clusterns.bml" not in logged[0]                               # the start step adds nothing
    last = logged[-1]
    assert "loss/clusterns.bml" in last and 1 <= last["sim/clusterns.nonempty_clusters"] <= 4
    assert -1.0 <= last["sim/clusterns.hard_neg_cos"] <= 1.0 and 0.0 <= last["sim/clusterns.false_neg_rate"] <= 1.0


def test_resume_restores_the_centroids(interrupted_run, data_dir, monkeypatch):
    cfg, run_dir = interrupted_run
    saved = load_state(run_dir / "last")["loss"]
    assert saved["components.0.state.started"].item() and saved["components.0.state.start_step"].item() == 1
    seen = []
    original = ClusterNS.contribute

    def spy(self, batch, cos, temperature):
        seen.append((batch.step, self.state.centroids.clone(), int(self.state.start_step)))
        return original(self, batch, cos, temperature)

    monkeypatch.setattr(ClusterNS, "contribute", spy)
    train(cfg, resume=True, data_dir=str(data_dir), progress=False)
    first_step, centroids, start_step = seen[0]
    assert first_step == 4 and start_step == 1                       # continued, not restarted
    assert torch.equal(centroids, saved["components.0.state.centroids"])
    final = load_state(run_dir / "last")["loss"]["components.0.state.centroids"]
    assert not torch.equal(final, centroids)                         # and kept being updated


def test_a_case_study_of_a_run_whose_clustering_never_started_is_one_line(tiny_config, data_dir):
    """The cpu-demo smoke profile's ClusterNS run (2 steps on a random BERT) never reaches σ: the
    clustering notebook says so for that run instead of stopping the study."""
    from cselab.workbench.analysis.clusterns import ClusteringNotStarted, run_case_study

    cfg = load_config({**tiny_config, "method": "clusterns", "clusterns": {"num_clusters": 4, "start_threshold": -1.0},
                       "max_steps": 2, "eval_every": 2, "run_name": "never-started"})
    run = train(cfg, data_dir=data_dir, progress=False)
    with pytest.raises(ClusteringNotStarted) as err:
        run_case_study(run, ["a sentence", "another one"], 2, 1)
    assert str(err.value) == (f"{run}: ClusterNS had not started clustering by its last checkpoint (step 2: the batch "
                              "similarity stayed above start_threshold σ = -1), so it has no centroids to show")
