"""APINCSE's augmented positive (eq. 10–15) and interlayer negative (eq. 16–19) against hand
computations on toy tensors, the reduction to SimCSE, a tiny training run's statistics, resume
of the neighbour queue, and the per-layer similarity helper (Fig. 3)."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from cselab.workbench.analysis.apincse import layer_cls_similarity
from cselab.model.config import ConfigError, load_config
from cselab.model.encoder import BackboneOutput, EncoderOutput, SentenceEncoder
from cselab.model.losses import ContrastiveBatch, ContrastiveLoss
from cselab.model.methods import METHODS
from cselab.model.methods.apincse import (AugmentedPositive, AugmentedPositiveParams, EmbeddingQueue, InterlayerNegative,
                                    InterlayerNegativeParams)
from cselab.model.methods.apincse.augmented_positive import (augment_positives, augmented_positive_loss, queue_block,
                                                       top_k_neighbours)
from cselab.model.distributed import all_gather, broadcast_from_first_process, gather_with_local_grad
from cselab.model.methods.apincse.interlayer import choose_layers, interlayer_negative_loss, resolve_layer
from cselab.model.train import train
from cselab.model.rundir import RunDir
from cselab.model.rundir import load_state


def lse(*xs):
    return math.log(sum(math.exp(x) for x in xs))


def stub_encoder(dim=2, num_layers=3, head=None):
    """The encoder surface (cselab.model.losses.base.EncoderSurface) the components use, with an MLP
    head as the [CLS] projection when ``head`` is given."""
    return SimpleNamespace(device=torch.device("cpu"), embedding_dim=lambda: dim, num_layers=num_layers,
                           can_project_cls=head is not None, project_cls=lambda cls, backbone: head(cls))


def with_hidden(hidden: tuple[torch.Tensor, ...]) -> EncoderOutput:
    n, t, _ = hidden[-1].shape
    return EncoderOutput(hidden[-1][:, 0], hidden[-1][:, 0], BackboneOutput(hidden[-1], torch.ones(n, t), hidden))


# ============================================================================ the queue
def test_queue_is_fifo_oldest_first():
    q = EmbeddingQueue(4, 2)
    assert not q.is_full and q.fill == 0.0
    q.push(torch.tensor([[1.0, 0.0], [2.0, 0.0]]))
    assert q.entries[:, 0].tolist() == [0.0, 0.0, 1.0, 2.0] and int(q.count) == 2 and q.fill == 0.5
    q.push(torch.tensor([[3.0, 0.0], [4.0, 0.0], [5.0, 0.0]]))
    assert q.entries[:, 0].tolist() == [2.0, 3.0, 4.0, 5.0]   # 1 dropped first
    assert q.is_full and int(q.count) == 4
    assert q.newest_positions(3).tolist() == [1, 2, 3]
    q.push(torch.tensor([[6.0, 0.0]]))
    assert q.entries[:, 0].tolist() == [3.0, 4.0, 5.0, 6.0] and int(q.count) == 4


def test_queue_stores_detached_copies_and_checks_shapes():
    q = EmbeddingQueue(3, 2)
    rows = torch.ones(2, 2, requires_grad=True)
    q.push(rows * 2)
    assert not q.entries.requires_grad
    with pytest.raises(ValueError, match=r"must be \(n, 2\)"):
        q.push(torch.ones(1, 3))
    with pytest.raises(ValueError, match="at least the \\(global\\) batch size"):
        q.push(torch.ones(4, 2))
    assert set(q.state_dict()) == {"entries", "count"}


def test_single_process_path_needs_no_communication():
    rows = torch.randn(3, 2, requires_grad=True)
    block, offset = queue_block(rows, None)
    assert offset == 0 and torch.equal(block, rows) and not block.requires_grad
    assert gather_with_local_grad(rows) is rows
    (gathered,) = all_gather(rows)
    assert torch.equal(gathered, rows) and not gathered.requires_grad
    assert torch.equal(broadcast_from_first_process(torch.arange(3)), torch.arange(3))


def test_local_rows_without_a_process_group_is_a_clear_error(tiny_model):
    encoder = SentenceEncoder.from_pretrained(tiny_model, pooler="cls")
    comp = InterlayerNegative(InterlayerNegativeParams())
    comp.setup(encoder)
    inputs = encoder.training_inputs(["a b", "c d"], 8)
    view1, view2 = encoder(inputs, output_hidden_states=True).split(2)
    batch = ContrastiveBatch(view1.embeddings, view2.embeddings, outputs1=view1, outputs2=view2, local_rows=slice(0, 2))
    with pytest.raises(ValueError, match="torch.distributed is not initialised"):
        comp.contribute(batch, torch.zeros(2, 2), 0.05)


# ============================================================================ augmented positive: maths
def unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def test_top_k_skips_the_own_copy():
    entries = torch.tensor([unit(0), unit(10), unit(50), unit(100), unit(5)])
    queries = torch.tensor([unit(0), unit(100)])
    # query 0's own copy is entry 0 (cos 1); its next best are 5° (entry 4) then 10° (entry 1)
    # query 1's own copy is entry 3; then 50° (entry 2, 50° away) then 10° (entry 1, 90° away)
    index = top_k_neighbours(queries, entries, 2, exclude=torch.tensor([0, 3]))
    assert index.tolist() == [[4, 1], [2, 1]]
    # without the exclusion the own copy would come first
    assert top_k_neighbours(queries, entries, 1, exclude=torch.tensor([4, 2])).tolist() == [[0], [3]]


def test_augmented_positive_by_hand():
    positive = torch.tensor([[1.0, 0.0]], requires_grad=True)
    neighbours = torch.tensor([[[0.0, 1.0], [0.6, 0.8]]])
    augmented, weights = augment_positives(positive, neighbours, beta=2.0)
    # scores = [1, 0, 0.6] / β = [0.5, 0, 0.3]
    z = math.exp(0.5) + 1.0 + math.exp(0.3)
    w = [math.exp(0.5) / z, 1.0 / z, math.exp(0.3) / z]
    torch.testing.assert_close(weights, torch.tensor([w]))
    torch.testing.assert_close(augmented, torch.tensor([[w[0] + 0.6 * w[2], w[1] + 0.8 * w[2]]]))
    augmented.sum().backward()
    assert positive.grad.abs().sum() > 0   # the positive keeps its gradient


def test_augmented_positive_loss_by_hand():
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    augmented = torch.tensor([[2.0, 0.0], [0.6, 0.8]])   # cosines [[1, .6], [0, .8]]
    loss = augmented_positive_loss(anchors, augmented, temperature=0.5)
    expected = ((lse(2.0, 1.2) - 2.0) + (lse(0.0, 1.6) - 1.6)) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-6)


# ============================================================================ augmented positive: component
def ap_component(queue_size=4, top_k=1, beta=2.0, weight=1.0) -> AugmentedPositive:
    component = AugmentedPositive(AugmentedPositiveParams(queue_size=queue_size, top_k=top_k, beta=beta, weight=weight))
    component.setup(stub_encoder(dim=2))
    return component


def test_augmented_positive_waits_for_a_full_queue_then_matches_a_direct_computation():
    component = ap_component(queue_size=4, top_k=1, beta=2.0)
    z1_first = torch.tensor([[1.0, 0.2], [0.1, 1.0]])
    z2_first = torch.tensor([[2.0, 0.0], [0.0, 3.0]])
    first = component.contribute(ContrastiveBatch(z1_first, z2_first), torch.zeros(2, 2), 0.5)
    assert first.terms == {} and first.stats == {"queue_fill": 0.5}

    z1 = torch.tensor([[1.0, 0.1], [0.3, 1.0]])
    z2 = torch.tensor([[0.8, 0.6], [0.6, 0.8]])
    second = component.contribute(ContrastiveBatch(z1, z2), torch.zeros(2, 2), 0.5)
    assert second.stats["queue_fill"] == 1.0
    # queue = [e1, e2, (.8,.6), (.6,.8)]; row 0's own copy is slot 2, so its nearest other entry is
    # (.6,.8) (cos .96) — row 1's positive; row 1's nearest other entry is (.8,.6), row 0's positive.
    p0, p1 = torch.tensor([0.8, 0.6]), torch.tensor([0.6, 0.8])
    w = torch.softmax(torch.tensor([1.0, 0.96]) / 2.0, dim=0)
    aug = torch.stack([w[0] * p0 + w[1] * p1, w[0] * p1 + w[1] * p0])
    logits = F.normalize(z1, dim=-1) @ F.normalize(aug, dim=-1).T / 0.5
    expected = F.cross_entropy(logits, torch.arange(2))
    assert second.terms["l_p"].item() == pytest.approx(expected.item(), rel=1e-5)
    assert second.stats["self_weight"] == pytest.approx(w[0].item(), rel=1e-5)
    assert second.stats["aug_pos_cos"] == pytest.approx(
        F.cosine_similarity(z1, aug, dim=-1).mean().item(), rel=1e-5)


def test_augmented_positive_weight_scales_the_term():
    torch.manual_seed(0)
    batches = [(torch.randn(3, 4), torch.randn(3, 4)) for _ in range(2)]
    terms = []
    for weight in (1.0, 0.1):
        component = AugmentedPositive(AugmentedPositiveParams(queue_size=6, top_k=2, weight=weight))
        component.setup(stub_encoder(dim=4))
        for z1, z2 in batches:
            out = component.contribute(ContrastiveBatch(z1, z2), torch.zeros(3, 3), 0.05)
        terms.append(out.terms["l_p"].item())
    assert terms[1] == pytest.approx(0.1 * terms[0], rel=1e-6)


def test_augmented_positive_needs_a_queue_that_holds_a_batch():
    component = ap_component(queue_size=4, top_k=1)
    with pytest.raises(ValueError, match="augmented_positive.queue_size=4 is smaller than the batch"):
        component.contribute(ContrastiveBatch(torch.randn(5, 2), torch.randn(5, 2)), torch.zeros(5, 5), 0.05)


@pytest.mark.parametrize("values, message", [
    ({"queue_size": 1}, "queue_size must be >= 2"),
    ({"queue_size": 16, "top_k": 16}, r"top_k must be in \[1, queue_size - 1\]"),
    ({"beta": 0.0}, "beta must be > 0"),
    ({"weight": -1.0}, "weight must be >= 0"),
])
def test_augmented_positive_params_are_validated(values, message):
    with pytest.raises(ValueError, match=message):
        AugmentedPositiveParams(**values)


# ============================================================================ interlayer negative: maths
def test_resolve_layer():
    assert resolve_layer(11, 12) == 11 and resolve_layer(-2, 12) == 11 and resolve_layer(-2, 6) == 5
    assert resolve_layer(-12, 12) == 1 and resolve_layer("most_similar", 12) == "most_similar"
    for bad in (0, 12, -1, -13, 20):
        with pytest.raises(ValueError, match=f"interlayer_negative.interlayer={bad} is not an intermediate layer"):
            resolve_layer(bad, 12)


def test_interlayer_choice_on_fixed_hidden_states():
    # (B=3, L+1=4, H=2): index 0 = embeddings (never a candidate), 1-2 intermediate, 3 = last
    cls = torch.tensor([
        [[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [1.0, 0.0]],     # layer 1 nearly equals the last
        [[1.0, 0.0], [0.0, 1.0], [0.9, 0.1], [1.0, 0.0]],     # layer 2 is the most similar
        [[0.0, 1.0], [-1.0, 0.0], [0.5, 0.5], [0.0, 1.0]],    # embeddings equal the last, but are skipped
    ])
    assert choose_layers(cls, "most_similar").tolist() == [1, 2, 2]
    assert choose_layers(cls, 1).tolist() == [1, 1, 1]


def test_interlayer_loss_by_hand():
    cos = torch.tensor([[1.0, 0.6], [0.0, 0.8]])
    negative_cos = torch.tensor([[0.5, 0.2], [0.4, 0.9]])
    tau = 0.5
    with_tau = interlayer_negative_loss(cos, negative_cos, tau)
    row0 = lse(2.0, 1.2, 1.0, 0.4) - 2.0
    row1 = lse(0.0, 1.6, 0.8, 1.8) - 1.6
    assert with_tau.item() == pytest.approx((row0 + row1) / 2, abs=1e-6)
    printed = interlayer_negative_loss(cos, negative_cos, tau, temperature_on_negatives=False)
    row0 = lse(2.0, 1.2, 0.5, 0.2) - 2.0
    row1 = lse(0.0, 1.6, 0.4, 0.9) - 1.6
    assert printed.item() == pytest.approx((row0 + row1) / 2, abs=1e-6)


# ============================================================================ interlayer negative: component
def fixed_hidden(requires_grad=False) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(3)
    return tuple(torch.randn(2, 3, 2, generator=g).requires_grad_(requires_grad) for _ in range(4))  # L = 3


def in_component(**values) -> InterlayerNegative:
    component = InterlayerNegative(InterlayerNegativeParams(**values))
    component.setup(stub_encoder(dim=2, num_layers=3))
    return component


def test_interlayer_component_matches_a_direct_computation():
    hidden = fixed_hidden()
    z1, z2 = torch.tensor([[1.0, 0.5], [0.2, 1.0]]), torch.tensor([[0.9, 0.4], [0.7, 0.8]])
    cos = F.normalize(z1, dim=-1) @ F.normalize(z2, dim=-1).T
    out = in_component(interlayer=-2).contribute(
        ContrastiveBatch(z1, z2, outputs1=with_hidden(hidden), outputs2=with_hidden(fixed_hidden())), cos, 0.5)
    negatives = hidden[2][:, 0]                                # layer L−1 = 2
    negative_cos = F.normalize(z1, dim=-1) @ F.normalize(negatives, dim=-1).T
    expected = F.cross_entropy(torch.cat([cos, negative_cos], 1) / 0.5, torch.arange(2))
    assert out.terms["l_n"].item() == pytest.approx(expected.item(), rel=1e-5)
    assert out.stats["neg_cos"] == pytest.approx(negative_cos.diag().mean().item(), rel=1e-5)
    assert {k: v for k, v in out.stats.items() if k.startswith("layer_hist")} == {"layer_hist.1": 0.0,
                                                                                   "layer_hist.2": 1.0}


def test_interlayer_histogram_follows_the_most_similar_choice():
    hidden = list(fixed_hidden())
    hidden[3] = hidden[3].clone()
    hidden[3][0, 0] = hidden[1][0, 0] * 3     # sentence 0: layer 1 points like the last layer
    hidden[3][1, 0] = hidden[2][1, 0] * 2     # sentence 1: layer 2 does
    batch = ContrastiveBatch(torch.randn(2, 2), torch.randn(2, 2), outputs1=with_hidden(tuple(hidden)))
    out = in_component(interlayer="most_similar").contribute(batch, torch.zeros(2, 2), 0.05)
    assert out.stats["layer_hist.1"] == 0.5 and out.stats["layer_hist.2"] == 0.5


@pytest.mark.parametrize("detach", [False, True])
def test_detach_switch_stops_the_gradient_into_the_layer(detach):
    hidden = fixed_hidden(requires_grad=True)
    z1 = torch.tensor([[1.0, 0.5], [0.2, 1.0]], requires_grad=True)
    cos = torch.tensor([[0.9, 0.1], [0.2, 0.8]])
    batch = ContrastiveBatch(z1, z1, outputs1=with_hidden(hidden))
    in_component(interlayer=1, detach_negative=detach).contribute(batch, cos, 0.05).terms["l_n"].backward()
    assert z1.grad.abs().sum() > 0   # the anchor is pushed from h⁻ either way
    reached = hidden[1].grad is not None and bool(hidden[1].grad[:, 0].abs().sum() > 0)
    assert reached is (not detach)


def test_negative_view_and_projection():
    head = torch.nn.Linear(2, 2)
    hidden1, hidden2 = fixed_hidden(), tuple(h + 1.0 for h in fixed_hidden())
    z1 = torch.tensor([[1.0, 0.5], [0.2, 1.0]])
    batch = ContrastiveBatch(z1, z1, outputs1=with_hidden(hidden1), outputs2=with_hidden(hidden2))
    component = InterlayerNegative(InterlayerNegativeParams(interlayer=1, negative_view="positive",
                                                            project_negative=True))
    component.setup(stub_encoder(num_layers=3, head=head))
    out = component.contribute(batch, torch.zeros(2, 2), 0.05)
    expected = F.cosine_similarity(z1, head(hidden2[1][:, 0]), dim=-1).mean()
    assert out.stats["neg_cos"] == pytest.approx(expected.item(), rel=1e-5)


def test_interlayer_setup_errors():
    with pytest.raises(ValueError, match="interlayer_negative.interlayer=11 is not an intermediate layer"):
        InterlayerNegative(InterlayerNegativeParams(interlayer=11)).setup(stub_encoder(num_layers=6))
    with pytest.raises(ValueError, match="project_negative: this encoder's pooler has no projection"):
        InterlayerNegative(InterlayerNegativeParams(project_negative=True)).setup(stub_encoder(num_layers=6))
    with pytest.raises(ValueError, match="interlayer must be 'most_similar' or a layer index"):
        InterlayerNegativeParams(interlayer="last")
    with pytest.raises(ValueError, match="negative_view must be"):
        InterlayerNegativeParams(negative_view="both")
    assert InterlayerNegativeParams(interlayer="11").interlayer == 11


def test_config_accepts_index_or_most_similar_from_yaml_overrides():
    cfg = load_config(None, ["method=[augmented_positive,interlayer_negative]", "interlayer_negative.interlayer=11"])
    assert cfg.method_params["interlayer_negative"].interlayer == 11
    cfg = load_config(None, ["method=[interlayer_negative]", "interlayer_negative.interlayer=most_similar"])
    assert cfg.method_params["interlayer_negative"].interlayer == "most_similar"
    with pytest.raises(ConfigError, match="augmented_positive: top_k must be"):
        load_config(None, ["method=[augmented_positive]", "augmented_positive.top_k=0"])
    assert {"augmented_positive", "interlayer_negative"} <= set(METHODS)


# ============================================================================ l_all
def full_queue_components(weight_p: float, weight_n: float):
    ap = ap_component(queue_size=4, top_k=1, weight=weight_p)
    ap.contribute(ContrastiveBatch(torch.randn(2, 2), torch.randn(2, 2)), torch.zeros(2, 2), 0.05)
    ap.contribute(ContrastiveBatch(torch.randn(2, 2), torch.randn(2, 2)), torch.zeros(2, 2), 0.05)
    assert ap.queue.is_full
    return [ap, in_component(weight=weight_n)]


def test_l_all_reduces_to_simcse_when_the_extra_terms_are_off():
    torch.manual_seed(0)
    components = full_queue_components(0.0, 0.0)
    z1, z2 = torch.randn(2, 2), torch.randn(2, 2)
    batch = ContrastiveBatch(z1, z2, outputs1=with_hidden(fixed_hidden()))
    simcse = ContrastiveLoss(0.05)(ContrastiveBatch(z1, z2)).loss
    out = ContrastiveLoss(0.05, components)(batch)
    assert out.loss.item() == pytest.approx(simcse.item(), abs=1e-7)
    assert out.parts["augmented_positive.l_p"].item() == 0.0 and out.parts["interlayer_negative.l_n"].item() == 0.0


def test_l_all_by_hand_from_the_queue_and_the_hidden_states():
    """Eq. 20 computed from scratch: l_I (eq. 8), l_P from the queue by eq. 10–15 and l_N by eq. 19,
    with plain loops, against the core's total."""
    torch.manual_seed(0)
    components = full_queue_components(1.0, 1.0)
    queue_before = components[0].queue.entries.clone()
    z1, z2 = torch.randn(2, 2), torch.randn(2, 2)
    hidden = fixed_hidden()
    out = ContrastiveLoss(0.05, components)(ContrastiveBatch(z1, z2, outputs1=with_hidden(hidden)))

    tau, beta = 0.05, 2.0
    cos = lambda a, b: float(F.cosine_similarity(a, b, dim=0))           # noqa: E731
    def info_nce_row(i, positives, extra=()):
        logits = [cos(z1[i], p) / tau for p in positives] + [cos(z1[i], e) / tau for e in extra]
        return lse(*logits) - cos(z1[i], positives[i]) / tau

    l_i = sum(info_nce_row(i, z2) for i in range(2)) / 2
    q = F.normalize(z2, dim=-1)
    entries = torch.cat([queue_before[2:], q])              # eq. 10–11: enqueue first (FIFO of 4)
    augmented = []
    for i in range(2):
        others = [e for k, e in enumerate(entries) if k != 2 + i]     # not its own copy
        neighbour = max(others, key=lambda e: float(q[i] @ e))      # eq. 12–13, k = 1
        stacked = torch.stack([q[i], neighbour])
        weights = torch.softmax(stacked @ q[i] / beta, dim=0)         # eq. 14
        augmented.append(weights @ stacked)
    l_p = sum(info_nce_row(i, augmented) for i in range(2)) / 2    # eq. 15
    negatives = hidden[2][:, 0]                                      # layer L−1 = 2 of 3 (M = L−1)
    l_n = sum(info_nce_row(i, z2, negatives) for i in range(2)) / 2 # eq. 19, every logit / τ
    assert out.parts["info_nce"].item() == pytest.approx(l_i, rel=1e-5)
    assert out.parts["augmented_positive.l_p"].item() == pytest.approx(l_p, rel=1e-5)
    assert out.parts["interlayer_negative.l_n"].item() == pytest.approx(l_n, rel=1e-5)
    assert out.loss.item() == pytest.approx(l_i + l_p + l_n, rel=1e-5)


# ============================================================================ training: stats and resume
class Interrupt(Exception):
    pass


def test_tiny_run_logs_the_statistics_and_resume_restores_the_queue(tiny_config, data_dir):
    # 2 layers: the only intermediate layer is 1. A queue of 48 = 3 batches of 16 fills at step 3,
    # one step after the checkpoint at step 2, so l_P at step 3 needs the restored queue.
    cfg = load_config({**tiny_config, "pooler": "layer_attention",
                       "method": ["augmented_positive", "interlayer_negative"],
                       "augmented_positive": {"queue_size": 48, "top_k": 4},
                       "max_steps": 4, "eval_every": 2, "log_every": 1})

    def stop_after_step_3(state, record):
        if state.step == 3:
            raise Interrupt

    with pytest.raises(Interrupt):
        train(cfg, data_dir=str(data_dir), progress=False, callbacks=[stop_after_step_3])
    run = RunDir.for_config(cfg)
    checkpoint = load_state(run.last_dir)["loss"]
    assert int(checkpoint["components.0.queue.count"]) == 32                  # saved at step 2
    saved = checkpoint["components.0.queue.entries"]
    assert saved[:16].abs().sum() == 0 and (saved[16:].norm(dim=1) - 1).abs().max() < 1e-5

    train(cfg, resume=True, data_dir=str(data_dir), progress=False)
    final = load_state(run.last_dir)["loss"]["components.0.queue.entries"]
    # FIFO after steps 3 and 4: the oldest block left is step 2's batch, restored from the checkpoint
    torch.testing.assert_close(final[:16], saved[32:], rtol=0, atol=0)

    records = [r for r in run.metrics() if r["kind"] == "train"]
    assert [r["step"] for r in records] == [1, 2, 3, 4]
    assert [r["sim/augmented_positive.queue_fill"] for r in records] == pytest.approx([1 / 3, 2 / 3, 1.0, 1.0])
    assert not any("loss/augmented_positive.l_p" in r for r in records[:2])
    for r in records:
        assert r["sim/interlayer_negative.layer_hist.1"] == 1.0
        for key in ("loss/interlayer_negative.l_n", "sim/pos_cos", "sim/neg_cos", "sim/interlayer_negative.neg_cos"):
            assert math.isfinite(r[key]), key
    for r in records[2:]:
        for key in ("loss/augmented_positive.l_p", "sim/augmented_positive.aug_pos_cos",
                    "sim/augmented_positive.self_weight"):
            assert math.isfinite(r[key]), key
        assert r["loss"] == pytest.approx(r["loss/info_nce"] + r["loss/augmented_positive.l_p"]
                                          + r["loss/interlayer_negative.l_n"], rel=1e-5)


# ============================================================================ Fig. 3 helper
def test_layer_similarity_matches_a_per_sentence_computation():
    sentences = ["a short one", "a considerably longer sentence with more words in it", "the third sentence"]
    encoder = SentenceEncoder.from_pretrained("all-minilm-l6", pooler="cls_before_pooler")   # 6 layers
    encoder.eval_precision = "fp32"   # an oracle comparison; bf16 has its own tolerance below
    result = layer_cls_similarity(encoder, sentences, batch_size=2)
    assert result.layers == list(range(7)) and result.n_sentences == 3
    encoder.eval()
    per_sentence = []
    with torch.no_grad():
        for s in sentences:   # one at a time: no padding at all
            hidden = encoder.backbone(**encoder.tokenize([s]), output_hidden_states=True).hidden_states
            cls = torch.stack([h[0, 0] for h in hidden])
            per_sentence.append(F.cosine_similarity(cls, cls[-1:], dim=-1))
    sims = torch.stack(per_sentence).double()
    assert result.mean == pytest.approx(sims.mean(0).tolist(), abs=1e-5)
    assert result.std == pytest.approx(sims.std(0, unbiased=False).tolist(), abs=1e-5)
    assert result.mean[-1] == pytest.approx(1.0)
    chosen = (sims[:, 1:-1].argmax(1) + 1).tolist()            # eq. 16–17 over layers 1 … 5
    assert result.most_similar_fraction == pytest.approx([chosen.count(a) / 3 for a in range(7)])
    assert result.most_similar_fraction[0] == 0.0 and result.most_similar_fraction[6] == 0.0
    assert "cos to last" in result.format_table()
    with pytest.raises(ValueError, match="sentences"):
        layer_cls_similarity(encoder, ["  "])
    # bf16 weights (`auto` where bf16 is native): each layer's mean cosine within 0.01 of fp32's
    # (0.7954 against 0.792 measured on an AMX CPU)
    encoder.eval_precision = "bf16"
    assert layer_cls_similarity(encoder, sentences, batch_size=2).mean == pytest.approx(sims.mean(0).tolist(),
                                                                                       abs=0.01)
