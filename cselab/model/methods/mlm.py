"""SimCSE's auxiliary masked-language-modelling objective (Gao et al., EMNLP 2021, Appendix:
"MLM auxiliary objective"), pluggable into every method: ``method: [clusterns, mlm]``.

    L = L_contrastive + λ · L_mlm                       (SimCSE, λ = 0.1; ClusterNS Table 8 "w/ MLM")

L_mlm is the masked-LM cross-entropy on the training batch (both views' rows) with BERT's
masking, as SimCSE's data collator does: 15% of the non-special tokens are chosen; of those, 80%
become the mask token, 10% a random token of the vocabulary and 10% stay as they are; the loss is
the mean over the chosen tokens. The masked batch is encoded in a second pass of the backbone and
an LM head predicts the original tokens.

The LM head: SimCSE's official code builds a fresh ``BertLMPredictionHead`` for BERT (the
pretrained ``cls.predictions`` weights are not loaded, the key names differ) but loads RoBERTa's
pretrained ``lm_head`` (the names match). ``head_init: random`` (default) is the BERT behaviour,
``pretrained`` loads the backbone checkpoint's MLM head (its decoder is an untied copy of the
pretrained word embeddings in both cases, as in SimCSE, whose heads are not tied).

The second pass runs in the encoder's precision (the trainer's autocast dtype, ``batch.amp_dtype``);
the cross-entropy is computed in fp32.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..encoder.backbone import quiet_hf, resolve_backbone
from ..losses.base import Component, ContrastiveBatch, Contribution
from ..utils import autocast
from .registry import register_method

HEAD_INITS = ("random", "pretrained")
IGNORE = -100


@dataclass
class MLMParams:
    """``weight``: λ (SimCSE's ``mlm_weight``, 0.1). ``probability``: share of tokens chosen
    (``mlm_probability``, 0.15). ``head_init``: ``random`` or ``pretrained`` (see module doc)."""

    weight: float = 0.1
    probability: float = 0.15
    head_init: str = "random"

    def __post_init__(self):
        if not self.weight >= 0:
            raise ValueError(f"weight must be >= 0, got {self.weight!r}")
        if not 0.0 < self.probability < 1.0:
            raise ValueError(f"probability must be in (0, 1), got {self.probability!r}")
        if self.head_init not in HEAD_INITS:
            raise ValueError(f"head_init must be one of {HEAD_INITS}, got {self.head_init!r}")


def mask_tokens(input_ids: torch.Tensor, maskable: torch.Tensor, mask_id: int, vocab_size: int,
                probability: float = 0.15,
                generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT/SimCSE masking. ``maskable``: bool, the positions that may be chosen (not special,
    not padding). Returns ``(masked_ids, labels)`` with labels = −100 except at chosen positions."""
    chosen = (torch.rand(input_ids.shape, generator=generator) < probability) & maskable
    labels = torch.where(chosen, input_ids, IGNORE)
    masked = input_ids.clone()
    to_mask = chosen & (torch.rand(input_ids.shape, generator=generator) < 0.8)
    masked[to_mask] = mask_id
    # Half of the remaining 20% get a random token: 10% of the chosen overall.
    to_random = chosen & ~to_mask & (torch.rand(input_ids.shape, generator=generator) < 0.5)
    masked[to_random] = torch.randint(vocab_size, input_ids.shape, generator=generator)[to_random]
    return masked, labels


def split_mlm_head(mlm_model: torch.nn.Module) -> torch.nn.Module:
    """The prediction head of a ``*ForMaskedLM`` model: its one child besides the base model."""
    heads = [m for name, m in mlm_model.named_children() if name != mlm_model.base_model_prefix]
    if len(heads) != 1:
        raise ValueError(f"cannot find the MLM head of {type(mlm_model).__name__}")
    return heads[0]


@register_method("mlm", MLMParams, "SimCSE's auxiliary masked-language-modelling term (weight 0.1), for any method")
class MaskedLMTerm(Component):
    """Adds ``mlm.mlm`` = λ·L_mlm; logs ``mlm.accuracy`` (masked-token accuracy)."""

    display_name = "masked-LM term"
    citation = ('Gao, Yao & Chen, "SimCSE: Simple Contrastive Learning of Sentence Embeddings", EMNLP 2021, '
                'Appendix "MLM auxiliary objective"')
    cost_factor = 0.50   # a third encoder pass (B masked sentences) through the MLM head
    term_labels = {"mlm": "masked-LM loss"}
    term_titles = {"mlm": "masked-LM loss"}
    auxiliary = True   # beside any method: a run's method is named and grouped without it

    @classmethod
    def check_distributed(cls, params) -> None:
        raise ValueError("method mlm is not supported with torchrun yet: its masked-LM term is computed on each "
                         "process's own rows, not on the gathered batch")

    @classmethod
    def check_gradient_cache(cls, params) -> None:
        raise ValueError("mlm runs its own backbone pass over the whole batch inside the loss, which the gradient "
                         "cache cannot split into chunks")

    def __init__(self, params: MLMParams):
        super().__init__()
        self.params = params
        self.head: torch.nn.Module | None = None

    def setup(self, encoder, corpus=None) -> None:
        super().setup(encoder, corpus)
        from transformers import AutoModelForMaskedLM

        config = encoder.backbone_config
        with quiet_hf():
            if self.params.head_init == "random":
                mlm_model = AutoModelForMaskedLM.from_config(config)
            else:
                path, local = resolve_backbone(encoder.backbone_name)
                mlm_model, info = AutoModelForMaskedLM.from_pretrained(
                    path, config=config, use_safetensors=True, output_loading_info=True,
                    **({"local_files_only": True} if local else {}))
                prefix = mlm_model.base_model_prefix
                missing = [k for k in info["missing_keys"] if not k.startswith(prefix + ".")]
                if missing:
                    raise ValueError(f"mlm.head_init=pretrained: {encoder.backbone_name} has no MLM head weights "
                                     f"(missing {missing[:3]}); use head_init: random")
        self.head = split_mlm_head(mlm_model).to(encoder.device)
        self.special_ids = torch.tensor(sorted(set(encoder.tokenizer.all_special_ids)), dtype=torch.long)
        self.vocab_size = len(encoder.tokenizer)

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        if self.head is None or batch.inputs is None:
            raise ValueError("mlm needs Component.setup (the encoder) and the tokenised batch "
                             "(ContrastiveBatch.inputs)")
        inputs = dict(batch.inputs)
        input_ids, attention = inputs["input_ids"].cpu(), inputs["attention_mask"].cpu()
        maskable = attention.bool() & ~torch.isin(input_ids, self.special_ids)
        masked, labels = mask_tokens(input_ids, maskable, self.encoder.tokenizer.mask_token_id, self.vocab_size,
                                     self.params.probability)
        device = self.encoder.device
        inputs["input_ids"] = masked
        on_device = {k: v.to(device) for k, v in inputs.items()}
        with autocast(device, batch.amp_dtype):  # the same precision as the encoder's own pass
            hidden = self.encoder.run_backbone(on_device).last_hidden_state
        chosen = labels != IGNORE  # on the CPU: no device sync to find the chosen tokens
        if not chosen.any():
            return Contribution(terms={"mlm": self.head(hidden).float().sum() * 0.0})
        # The head (a vocabulary-sized projection) runs on the chosen tokens only: the loss reads
        # no other logits. Integer positions computed on the CPU keep the gather sync-free.
        positions = tuple(index.to(device) for index in chosen.nonzero(as_tuple=True))
        targets = labels[chosen].to(device)
        logits = self.head(hidden[positions]).float()
        loss = F.cross_entropy(logits, targets)
        with torch.no_grad():
            accuracy = (logits.argmax(-1) == targets).float().mean()
        return Contribution(terms={"mlm": self.params.weight * loss}, stats={"accuracy": accuracy})
