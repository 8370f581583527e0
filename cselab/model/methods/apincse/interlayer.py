"""APINCSE's interlayer hard negative (eq. 16–19): ``method: interlayer_negative``.

Cai, Huang & Dong, "Semantic similarity model based on augmented positives and interlayer
negatives", J. Jilin Univ. (Eng. & Tech.) 55(11), 2025 (no public code; equations in its
notation as we reconstruct them, see docs/methods/apincse.md). A sentence's representation in an
intermediate layer is close to, but less refined than, its final one: a hard negative for free.

With h^a_CLS the [CLS] of layer a (a = 1 … L−1; hidden_states[a]), h^L_CLS the last layer's and
h_i, h⁺_i the anchor and positive embeddings:

* eq. 16–17 — a_i = argmax_{a ∈ 1…L−1} cos(h^a_CLS,i , h^L_CLS,i)   (``interlayer: most_similar``);
  the paper trains BERT-base with the fixed layer M = 11 (§2.2)   (``interlayer: 11`` or ``-2``);
* eq. 18 — h⁻_i = h^{a_i}_CLS,i;
* eq. 19 — l_N = −(1/B) Σ_i log  e^{sim(h_i,h⁺_i)/τ} / Σ_j ( e^{sim(h_i,h⁺_j)/τ} + e^{sim(h_i,h⁻_j)/τ} ),
  every anchor seeing all B interlayer negatives. As printed, eq. 19's h⁻ terms carry no τ;
  we divide them by τ like every other logit (``temperature_on_negatives: true``; ``false`` is
  the printed form, under which cos ≤ 1 makes e^{cos} ≤ e negligible against e^{1/τ} = e^{20});
* eq. 20 — l_all = l_I + l_P + λ_N·l_N: l_N is its own term next to the core's l_I (``weight`` λ_N = 1).

Settled open choices (each alternative is a switch): h⁻ comes from the anchor's own forward pass
(view 1; ``negative_view: positive`` takes view 2), keeps its gradient (``detach_negative``), and
is the raw [CLS] of eq. 18, not passed through the pooler's projection (``project_negative``:
the MLP head of ``pooler: cls``, or for ``layer_attention`` eq. 6–7 with h⁻ in place of h^L_CLS).
"""
from __future__ import annotations

import typing
from dataclasses import dataclass

import torch

from ...distributed import gather_with_local_grad, is_distributed
from ...losses.base import Component, ContrastiveBatch, Contribution
from ...losses.infonce import aligned_positive_mask, cosine_matrix, info_nce
from ...utils import autocast
from ..registry import register_method

MOST_SIMILAR = "most_similar"


@dataclass
class InterlayerNegativeParams:
    """``interlayer``: ``most_similar`` (eq. 16–17) or a layer index into hidden_states (1 … L−1;
    negative counts from the top like Python, so the default −2 is layer 11 of BERT-base's 12,
    the paper's M = 11, and the layer below the last for any depth)."""

    interlayer: typing.Any = -2
    weight: float = 1.0                    # λ_N, eq. 20
    negative_view: str = "anchor"          # whose hidden states give h⁻: anchor (view 1) | positive (view 2)
    detach_negative: bool = False          # stop the gradient through h⁻
    project_negative: bool = False         # pass h⁻ through the pooler's projection
    temperature_on_negatives: bool = True  # divide eq. 19's h⁻ terms by τ (false = eq. 19 as printed)

    def __post_init__(self):
        value = self.interlayer
        if isinstance(value, str) and value.lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not (value == MOST_SIMILAR or isinstance(value, int)):
            raise ValueError(f"interlayer must be {MOST_SIMILAR!r} or a layer index (an integer), "
                             f"got {self.interlayer!r}")
        self.interlayer = value
        if not self.weight >= 0:
            raise ValueError(f"weight must be >= 0, got {self.weight}")
        if self.negative_view not in ("anchor", "positive"):
            raise ValueError(f"negative_view must be 'anchor' or 'positive', got {self.negative_view!r}")


# ---------------------------------------------------------------------------- maths
def resolve_layer(interlayer: int | str, num_layers: int) -> int | str:
    """A hidden_states index in 1 … L−1 (or ``most_similar``); a clear error otherwise."""
    if interlayer == MOST_SIMILAR:
        return MOST_SIMILAR
    index = interlayer + num_layers + 1 if interlayer < 0 else interlayer
    if not 1 <= index <= num_layers - 1:
        raise ValueError(f"interlayer_negative.interlayer={interlayer} is not an intermediate layer of this "
                         f"{num_layers}-layer backbone: choose 1 … {num_layers - 1}, -{num_layers} … -2, "
                         f"or {MOST_SIMILAR}")
    return index


def most_similar_layers(intermediate_cos: torch.Tensor) -> torch.Tensor:
    """Eq. 17: the layer a ∈ 1 … L−1 (B,) of the largest cos(h^a_CLS, h^L_CLS), given those
    cosines (B, L−1) for a = 1 … L−1."""
    return intermediate_cos.argmax(dim=1) + 1


def choose_layers(cls_per_layer: torch.Tensor, interlayer: int | str) -> torch.Tensor:
    """Eq. 16–17: the layer (B,) whose [CLS] gives each sentence's h⁻.

    ``cls_per_layer``: (B, L+1, H), the [CLS] of hidden_states[0 … L]. ``interlayer``: a resolved
    index, or ``most_similar`` = argmax over a ∈ 1 … L−1 of cos(h^a_CLS, h^L_CLS).
    """
    rows = cls_per_layer.shape[0]
    if interlayer != MOST_SIMILAR:
        return torch.full((rows,), int(interlayer), dtype=torch.long, device=cls_per_layer.device)
    with torch.no_grad():
        sims = torch.nn.functional.cosine_similarity(cls_per_layer[:, 1:-1], cls_per_layer[:, -1:], dim=-1)
        return most_similar_layers(sims)


def interlayer_negative_loss(cos: torch.Tensor, negative_cos: torch.Tensor, temperature: float,
                             local_rows: slice | None = None, temperature_on_negatives: bool = True) -> torch.Tensor:
    """Eq. 19 (mean over anchors). ``cos``: (n × B) anchor–positive cosines; ``negative_cos``:
    (n × B) anchor–interlayer-negative cosines, all B in every row's denominator."""
    positives = aligned_positive_mask(cos.shape[0], cos.shape[1], local_rows, cos.device)
    negative_logits = negative_cos / temperature if temperature_on_negatives else negative_cos
    return info_nce(cos / temperature, positives, [negative_logits]).mean()


# ---------------------------------------------------------------------------- component
@register_method("interlayer_negative", InterlayerNegativeParams,
                 "APINCSE interlayer negative: an intermediate layer's [CLS] as a hard negative (eq. 16-19)")
class InterlayerNegative(Component):
    """Adds ``interlayer_negative.l_n`` = λ_N·l_N (eq. 19).

    Statistics: ``neg_cos`` (mean cos(h_i, h⁻_i)) and ``layer_hist.<a>`` (fraction of the batch
    whose h⁻ came from layer a, for every a in 1 … L−1).
    """

    needs_hidden_states = True
    stat_labels = {"neg_cos": "interlayer negative"}
    # trained alone it is the paper's ablation without the augmented positive (Sec. 4.4)
    display_name = "APINCSE-AP"
    citation = ('Cai, Huang & Dong, "Semantic similarity model based on augmented positives and interlayer '
                'negatives", J. Jilin Univ. (Eng. & Tech.) 2025, eq. 16-19')
    color_slot = 6
    cost_factor = 0.15   # every layer's hidden states kept, one more projection per step
    term_labels = {"l_n": "interlayer-negative loss"}
    term_titles = {"l_n": r"APINCSE $\ell_N$ (interlayer negative)"}
    stat_kinds = {"neg_cos": "interlayer negative"}

    @classmethod
    def check_gradient_cache(cls, params: InterlayerNegativeParams, *, pooler: str) -> None:
        # The cache keeps every layer's [CLS] (all eq. 16-19 read), but not the token states that a
        # pooler's own projection reads (layer_attention's eq. 6-7 attend over every layer's tokens).
        from ...encoder.pooling import POOLERS

        spec = POOLERS.get(pooler)
        if params.project_negative and spec is not None and not spec.uses_mlp_head and spec.projects_cls:
            raise ValueError(f"interlayer_negative.project_negative with pooler {pooler}: the projection reads "
                             "every layer's token states, which the gradient cache does not keep")

    def __init__(self, params: InterlayerNegativeParams):
        super().__init__()
        self.params = params

    def setup(self, encoder, corpus=None) -> None:
        super().setup(encoder, corpus)
        self.num_layers = encoder.num_layers
        self.layer = resolve_layer(self.params.interlayer, self.num_layers)
        if self.params.project_negative and not encoder.can_project_cls:
            raise ValueError("interlayer_negative.project_negative: this encoder's pooler has no projection (use "
                             "pooler cls or layer_attention, or project_negative: false)")

    def _project(self, negatives: torch.Tensor, backbone, amp_dtype: torch.dtype | None) -> torch.Tensor:
        # The loss runs outside the encoder's autocast; re-enter it so the projection runs in the
        # precision the encoder's own head used.
        with autocast(negatives.device, amp_dtype):
            return self.encoder.project_cls(negatives, backbone)

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        if not hasattr(self, "layer"):
            raise RuntimeError("interlayer_negative: call setup(encoder) before training")
        outputs = batch.outputs1 if self.params.negative_view == "anchor" else batch.outputs2
        if outputs is None or outputs.backbone.hidden_states is None:
            raise ValueError("interlayer_negative needs every layer's hidden states in the batch outputs")
        cls_per_layer = outputs.layer_cls()
        layers = choose_layers(cls_per_layer, self.layer)
        negatives = cls_per_layer[torch.arange(len(layers), device=layers.device), layers]
        if self.params.project_negative:
            negatives = self._project(negatives, outputs.backbone, batch.amp_dtype)
        if self.params.detach_negative:
            negatives = negatives.detach()
        negatives = negatives.float()
        if batch.local_rows is not None:
            if not is_distributed():
                raise ValueError("the batch names local rows (a gathered multi-process batch) but torch.distributed "
                                 "is not initialised")
            negatives = gather_with_local_grad(negatives)   # eq. 19 sums over the global batch
        anchors = batch.anchors(1)
        negative_cos = cosine_matrix(anchors, negatives)
        loss = interlayer_negative_loss(cos, negative_cos, temperature, batch.local_rows,
                                        self.params.temperature_on_negatives)
        stats = {}
        if batch.compute_stats:
            own = aligned_positive_mask(len(anchors), len(negatives), batch.local_rows, anchors.device)
            stats["neg_cos"] = float(negative_cos.detach()[own].mean())
            counts = torch.bincount(layers, minlength=self.num_layers)
            stats.update({f"layer_hist.{a}": float(counts[a]) / len(layers) for a in range(1, self.num_layers)})
        return Contribution(terms={"l_n": self.params.weight * loss}, stats=stats)
