"""Multi-layer attention aggregation pooler (APINCSE, eq. 1–7): ``pooler: layer_attention``.

APINCSE (Cai, Huang & Dong, "Semantic similarity model based on augmented positives and
interlayer negatives", Journal of Jilin University (Engineering and Technology Edition) 55(11),
2025, doi:10.13229/j.cnki.jdxbgxb.20240237) pools a sentence from every layer instead of the
last layer's [CLS] alone. For a backbone with layers i = 1 … L (hidden states ``H^i``):

* eq. 1–2 — per layer, the [CLS] vector ``h^i_CLS = H^i[0]`` and the attention-masked token mean
  ``h^i_a = Σ_t m_t H^i[t] / Σ_t m_t``;
* eq. 3–4 — attention over layers: queries ``q_i = W_q h^i_CLS``, keys ``k_j = W_k h^j_a``,
  values ``v_j = W_v h^j_a``, weights ``α = softmax(q kᵀ / s)``;
* eq. 5 — the attended values summed over layers, giving one vector ``o``;
* eq. 6–7 — ``u = [h^L_CLS ; o]`` through a one-layer residual network → the sentence embedding.

The paper has no public code; its nearest published relative is the layer-wise attention pooler
of Oh et al. (COLING 2022, "Don't Judge a Language Model by Its Last Layer", code
``nlpods/LayerAttPooler``), which we read to settle what eq. 3 leaves open. Our reading is the
default of each option below; the alternative is the other value. Oh et al.'s pooler is exactly
``attention: cross, score_scale: layers, layer_reduce: mean, output: mlp, include_embeddings: true,
activation: rrelu``.

* ``attention`` — ``cross`` (default, Oh et al.): every layer's [CLS] query attends over all
  layers' means, ``o_i = Σ_j softmax_j(q_i·k_j / s) v_j``, and eq. 5 sums the o_i over i.
  ``paired``: layer i's query scores only layer i's key, ``o = Σ_i softmax_i(q_i·k_i / s) v_i``.
* ``score_scale`` — ``sqrt_dim`` (default): s = √H, the scaled dot product of attention;
  ``layers``: s = the number of layers attended over (Oh et al.'s code).
* ``layer_reduce`` (``cross`` only) — ``sum`` (default, eq. 5 "summed over layers") or ``mean``
  (Oh et al.).
* ``output`` — ``residual`` (default, eq. 6–7's one-layer residual network):
  ``h = h^L_CLS + tanh(W_o u + b_o)``, the skip carrying the last layer's [CLS] (the only part of
  u with the output's width); ``mlp``: ``h = tanh(W_o u + b_o)`` (Oh et al.).
* ``include_embeddings`` — ``false`` (default): layers 1 … L, the paper's i; ``true``: also the
  embedding output hidden_states[0] (Oh et al.).
* ``activation`` — ``none`` (default): W_q, W_k, W_v are plain linear maps as eq. 3–4 write
  them; ``rrelu``: RReLU after each (Oh et al.).
* ``init_std`` — 0.02 (BERT's initializer_range) for every weight; biases start at zero.

W_q, W_k, W_v have no bias (eq. 3–4 write plain matrices, as Oh et al.). The pooler is used on
both the training and the evaluation path; its parameters are saved with the encoder in
``cselab_modules.safetensors`` and its options in ``cselab.json``.

Example::

    enc = SentenceEncoder.from_pretrained("all-minilm-l6", pooler="layer_attention",
                                          pooler_options={"attention": "paired"})
    enc.encode(["a sentence"]).shape   # (1, 384)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .pooling import BackboneOutput, Pooler, masked_mean, register_pooler


@dataclass(frozen=True)
class LayerAttentionOptions:
    """``pooler_options`` of ``layer_attention`` (see the module docstring for each reading)."""

    attention: str = "cross"
    score_scale: str = "sqrt_dim"
    layer_reduce: str = "sum"
    output: str = "residual"
    include_embeddings: bool = False
    activation: str = "none"
    init_std: float = 0.02

    CHOICES = {"attention": ("cross", "paired"), "score_scale": ("sqrt_dim", "layers"),
               "layer_reduce": ("sum", "mean"), "output": ("residual", "mlp"), "activation": ("none", "rrelu")}

    def __post_init__(self):
        for key, allowed in self.CHOICES.items():
            value = getattr(self, key)
            if value not in allowed:
                raise ValueError(f"{key} must be one of {list(allowed)}, got {value!r}")
        if not self.init_std > 0:
            raise ValueError(f"init_std must be a number > 0, got {self.init_std!r}")


@register_pooler("layer_attention", LayerAttentionOptions)
class LayerAttentionPooler(Pooler):
    """APINCSE's multi-layer attention aggregation (eq. 1–7); options in :class:`LayerAttentionOptions`.

    Args:
        options: a :class:`LayerAttentionOptions` (``pooler_options``).
        hidden_size: H of the backbone.
        num_layers: L, the backbone's transformer layers (``hidden_states`` has L + 1 entries).

    Input: a :class:`BackboneOutput` with every hidden state. Output: (N, H).
    """

    needs_hidden_states = True
    projects_cls = True

    def __init__(self, options: LayerAttentionOptions | None = None, hidden_size: int = 0, num_layers: int = 0):
        super().__init__(options, hidden_size, num_layers)
        self.query = nn.Linear(hidden_size, hidden_size, bias=False)   # W_q (eq. 3)
        self.key = nn.Linear(hidden_size, hidden_size, bias=False)     # W_k (eq. 3)
        self.value = nn.Linear(hidden_size, hidden_size, bias=False)   # W_v (eq. 4)
        self.output_layer = nn.Linear(2 * hidden_size, hidden_size)    # eq. 7 on u = [h^L_CLS; o]
        # RReLU is random in training (slope drawn per element) and fixed at evaluation.
        self.activation = nn.RReLU() if self.options.activation == "rrelu" else nn.Identity()
        for layer in (self.query, self.key, self.value, self.output_layer):
            nn.init.normal_(layer.weight, std=self.options.init_std)
        nn.init.zeros_(self.output_layer.bias)

    # ------------------------------------------------------------------ eq. 1–2
    def layer_summaries(self, out: BackboneOutput) -> tuple[torch.Tensor, torch.Tensor]:
        """``(cls, means)``, each (N, layers, H): eq. 1–2 for every layer the pooler attends over."""
        hidden = out.hidden_states
        if hidden is None:
            raise ValueError("the layer_attention pooler needs every hidden state (output_hidden_states=True)")
        if len(hidden) != self.num_layers + 1:
            raise ValueError(f"the layer_attention pooler was built for {self.num_layers} layers but got "
                             f"{len(hidden) - 1} (hidden_states holds the embeddings plus one entry per layer)")
        layers = hidden if self.options.include_embeddings else hidden[1:]
        cls = torch.stack([h[:, 0] for h in layers], dim=1)
        means = torch.stack([masked_mean(h, out.attention_mask) for h in layers], dim=1)
        return cls, means

    # ------------------------------------------------------------------ eq. 3–5
    def attention_weights(self, cls: torch.Tensor, means: torch.Tensor) -> torch.Tensor:
        """Eq. 3: (N, layers, layers) for ``cross`` (row i = query layer i over key layers j),
        (N, layers) for ``paired``."""
        q = self.activation(self.query(cls))
        k = self.activation(self.key(means))
        scale = math.sqrt(self.hidden_size) if self.options.score_scale == "sqrt_dim" else cls.shape[1]
        if self.options.attention == "cross":
            scores = torch.einsum("nih,njh->nij", q, k)
        else:
            scores = (q * k).sum(-1)
        return torch.softmax(scores / scale, dim=-1)

    def aggregate(self, out: BackboneOutput) -> torch.Tensor:
        """Eq. 3–5: the attention-aggregated layer vector ``o`` (N, H)."""
        cls, means = self.layer_summaries(out)
        weights = self.attention_weights(cls, means)
        v = self.activation(self.value(means))
        if self.options.attention == "paired":
            return torch.einsum("ni,nih->nh", weights, v)
        per_query = torch.einsum("nij,njh->nih", weights, v)
        return per_query.sum(1) if self.options.layer_reduce == "sum" else per_query.mean(1)

    # ------------------------------------------------------------------ eq. 6–7
    def combine(self, top_cls: torch.Tensor, aggregated: torch.Tensor) -> torch.Tensor:
        """Eq. 6–7: ``u = [h^L_CLS ; o]`` through the one-layer residual network."""
        hidden = torch.tanh(self.output_layer(torch.cat([top_cls, aggregated], dim=-1)))
        return top_cls + hidden if self.options.output == "residual" else hidden

    def forward(self, out: BackboneOutput) -> torch.Tensor:
        return self.combine(out.last_hidden_state[:, 0], self.aggregate(out))

    def project_cls(self, cls: torch.Tensor, out: BackboneOutput) -> torch.Tensor:
        """The embedding the pooler would give if ``cls`` were the top layer's [CLS] (same
        aggregated ``o``): how APINCSE's interlayer negative passes through the pooler when
        ``interlayer_negative.project_negative`` is on."""
        return self.combine(cls, self.aggregate(out))
