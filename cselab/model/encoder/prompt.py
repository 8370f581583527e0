"""PromptBERT's pooler (Jiang et al., "PromptBERT: Improving BERT Sentence Embeddings with
Prompts", EMNLP 2022), usable with every method (``pooler: prompt``).

The sentence is wrapped in a template and its representation is the last hidden state at
[MASK]; in unsupervised training the two views use two different templates. Templates are
written in the authors' syntax (``*cls*``, ``*sent_0*`` for the sentence, ``*mask*``, ``*sep+*``,
``_`` for a space), because RoBERTa's byte-level BPE makes every space matter:

=========  =======================================================  ==============================
set        view 1 and evaluation                                     view 2
=========  =======================================================  ==============================
bert       ``*cls*_This_sentence_of_"*sent_0*"_means*mask*.*sep+*``  ``…_This_sentence_:_"…``
           (This sentence of "[X]" means [MASK].)                    (This sentence : "[X]" means [MASK].)
roberta    ``*cls*_This_sentence_:_'_*sent_0*_'_means*mask*.*sep+*`` ``*cls*_The_sentence_:_'_…``
=========  =======================================================  ==============================

(the order of the authors' scripts: PromptBERT ``run.sh unsup-bert/unsup-roberta`` and ClusterNS
``run_prompt.sh``).

Template denoising (PromptBERT §6.2): the representation of the template alone is subtracted,

    h = h_[MASK](template(x)) − h_[MASK](template with positions shifted by len(x))

with one bias per sentence length and template, computed in training with gradients (the
authors' default). Training inputs are built as the authors' training script does
(``[CLS] + prefix + sentence tokens[:max_len] + suffix + [SEP]``, the template not counted in
``max_len``); evaluation uses the first template on the whole string with a period appended when
the sentence does not end with one of ``.?"'`` and no denoising, as the authors' test script does
(``eval_denoise`` turns it on, as their in-training dev evaluation does).

The encoder adds SimCSE's MLP head on top in training (``uses_mlp_head``); with ``mlp_only_train``
evaluation uses the denoised-or-not [MASK] vector directly, as PromptBERT does.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .batching import pad_rows
from .pooling import BackboneOutput, Pooler, register_pooler

TEMPLATE_SETS = {
    "bert": ('*cls*_This_sentence_of_"*sent_0*"_means*mask*.*sep+*',
             '*cls*_This_sentence_:_"*sent_0*"_means*mask*.*sep+*'),
    "roberta": ("*cls*_This_sentence_:_'_*sent_0*_'_means*mask*.*sep+*",
                "*cls*_The_sentence_:_'_*sent_0*_'_means*mask*.*sep+*"),
}
ROBERTA_TYPES = ("roberta", "xlm-roberta", "camembert")


@dataclass(frozen=True)
class Template:
    """A parsed template: ``prefix_ids`` = [CLS] + tokens before the sentence, ``suffix_ids`` =
    tokens after it (one [MASK]) + [SEP]; ``mask_index`` is the [MASK] position in the suffix."""

    text: str
    prefix_ids: tuple[int, ...]
    suffix_ids: tuple[int, ...]
    mask_index: int

    @property
    def length(self) -> int:
        """Tokens of the template alone (with [CLS] and [SEP])."""
        return len(self.prefix_ids) + len(self.suffix_ids)

    def ids(self, sentence_ids: list[int]) -> list[int]:
        return [*self.prefix_ids, *sentence_ids, *self.suffix_ids]


def parse_template(text: str, tokenizer) -> Template:
    """Split a template into prefix and suffix token ids, as the authors' ``train.py`` does:
    ``*mask*`` → the mask token, ``*cls*``/``*sep+*`` dropped, split at ``*sent_0*``, ``_`` → space;
    the prefix is stripped (RoBERTa) and encoded without its closing [SEP], the suffix without
    its opening [CLS]."""
    where = f"pooler_options.templates: {text!r}"
    if " " in text:
        raise ValueError(f"{where}: write spaces as '_' (PromptBERT syntax), the template has a space")
    if text.count("*sent_0*") != 1 or text.count("*mask*") != 1:
        raise ValueError(f"{where}: needs exactly one *sent_0* and one *mask*")
    if text.index("*mask*") < text.index("*sent_0*"):
        raise ValueError(f"{where}: *mask* must come after *sent_0*")
    if tokenizer.mask_token is None:
        raise ValueError("pooler prompt: the tokenizer has no mask token")
    flat = (text.replace("*mask*", tokenizer.mask_token).replace("*sep+*", "").replace("*cls*", "")
            .replace("*sent_0*", " "))
    before, after = flat.split(" ")
    prefix = tokenizer.encode(before.replace("_", " ").strip())
    suffix = tokenizer.encode(after.replace("_", " "))
    specials = set(tokenizer.all_special_ids)
    for part, ids in (("prefix", prefix), ("suffix", suffix)):
        if len(ids) < 2 or ids[0] not in specials or ids[-1] not in specials:
            raise ValueError(f"{where}: the tokenizer must add one start and one end special token ({part}: {ids})")
    prefix_ids, suffix_ids = tuple(prefix[:-1]), tuple(suffix[1:])
    mask_id = tokenizer.mask_token_id
    if mask_id in prefix_ids or suffix_ids.count(mask_id) != 1:
        raise ValueError(f"{where}: the mask token must appear once, after the sentence")
    return Template(text, prefix_ids, suffix_ids, suffix_ids.index(mask_id))


def evaluation_text(template: str, sentence: str, mask_token: str, add_period: bool = True) -> str:
    """The string the authors' evaluation script encodes for one sentence."""
    if add_period and sentence and sentence[-1] not in ".?\"'":
        sentence += "."
    wrapped = (template.replace("*mask*", mask_token).replace("_", " ").replace("*sep+*", "").replace("*cls*", ""))
    return wrapped.replace("*sent 0*", sentence).strip()


def template_position_ids(template: Template, lengths: torch.Tensor, offset: int = 0) -> torch.Tensor:
    """(R × template.length) position ids of the template alone for sentence lengths ``lengths``:
    the prefix keeps its positions, everything after it is shifted by the sentence length, so
    each template token sits where it sits around a sentence of that length. ``offset`` is the
    backbone's first position id (0 for BERT, padding_idx + 1 for RoBERTa)."""
    base = torch.arange(template.length, device=lengths.device) + offset
    shift = (torch.arange(template.length, device=lengths.device) >= len(template.prefix_ids)).long()
    return base.unsqueeze(0) + lengths.long().unsqueeze(1) * shift.unsqueeze(0)


def last_mask_positions(input_ids: torch.Tensor, mask_id: int) -> torch.Tensor:
    """Per row, the position of the last mask token (the template's [MASK] follows the sentence)."""
    is_mask = input_ids == mask_id
    has_mask = is_mask.any(dim=1)
    if not has_mask.all():
        bad = int((~has_mask).nonzero()[0])
        raise ValueError(f"pooler prompt: input row {bad} has no mask token (was it built by the prompt pooler, "
                         "or truncated?)")
    positions = torch.arange(input_ids.shape[1], device=input_ids.device).expand_as(input_ids)
    return torch.where(is_mask, positions, -1).max(dim=1).values


@dataclass
class PromptOptions:
    """``templates``: ``auto`` (by backbone type), ``bert``, ``roberta`` or a list of one or two
    templates (one: both views use it). ``denoise``: template denoising in training.
    ``eval_denoise``: also at evaluation. ``eval_add_period``: the evaluation script's period.
    ``delta_positions_from_zero``: the bias's position ids start at 0 whatever the backbone —
    the official code's behaviour, which differs from the sentence's positions on RoBERTa."""

    templates: object = "auto"
    denoise: bool = True
    eval_denoise: bool = False
    eval_add_period: bool = True
    delta_positions_from_zero: bool = False

    def __post_init__(self):
        t = self.templates
        ok = t in ("auto", *TEMPLATE_SETS) or (isinstance(t, list) and 1 <= len(t) <= 2 and
                                                all(isinstance(x, str) for x in t))
        if not ok:
            raise ValueError(f"templates must be 'auto', {', '.join(map(repr, TEMPLATE_SETS))} or a list of one or "
                             f"two template strings, got {t!r}")


@register_pooler("prompt", PromptOptions)
class PromptPooler(Pooler):
    """[MASK] representation of a template-wrapped sentence, minus the template bias in training.

    Example::

        enc = SentenceEncoder.from_pretrained("all-minilm-l6", pooler="prompt")
        enc.training_inputs(["a cat sat"], 32)["input_ids"]   # row 0 template 1, row 1 template 2
        enc.encode(["a cat sat"])                             # template 1, no denoising
    """

    uses_mlp_head = True

    def __init__(self, options: PromptOptions | None = None, hidden_size: int = 0, num_layers: int = 0):
        super().__init__(options, hidden_size, num_layers)
        self.templates: tuple[Template, ...] = ()
        self.position_offset = 0

    def bind(self, encoder) -> None:
        super().bind(encoder)
        chosen = self.options.templates
        if chosen == "auto":
            model_type = getattr(encoder.backbone.config, "model_type", "")
            chosen = "roberta" if model_type in ROBERTA_TYPES else "bert"
        texts = TEMPLATE_SETS[chosen] if isinstance(chosen, str) else chosen
        self.templates = tuple(parse_template(t, encoder.tokenizer) for t in texts)
        padding_idx = getattr(getattr(encoder.backbone, "embeddings", None), "padding_idx", None)
        self.position_offset = 0 if padding_idx is None or self.options.delta_positions_from_zero else padding_idx + 1

    @property
    def view_templates(self) -> tuple[Template, Template]:
        return self.templates[0], self.templates[-1]

    # ------------------------------------------------------------------ inputs
    def training_inputs(self, tokenizer, sentences: list[str], max_length: int | None) -> dict:
        """2B rows: every sentence in template 1 (view 1), then in template 2 (view 2)."""
        sentence_ids = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
        rows = []
        for template in self.view_templates:
            budget = self.encoder.max_positions() - template.length
            keep = budget if max_length is None else min(max_length, budget)
            rows += [template.ids(ids[:keep]) for ids in sentence_ids]
        return pad_rows(rows, tokenizer.pad_token_id)

    def eval_inputs(self, tokenizer, sentences: list[str], max_length: int | None):
        texts = [evaluation_text(self.templates[0].text, s, tokenizer.mask_token, self.options.eval_add_period)
                 for s in sentences]
        enc = tokenizer(texts, padding=True, truncation=max_length is not None, max_length=max_length,
                        return_tensors="pt")
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    # ------------------------------------------------------------------ pooling
    def forward(self, out: BackboneOutput) -> torch.Tensor:
        if out.input_ids is None:
            raise ValueError("pooler prompt needs the input ids")
        mask_id = self.encoder.tokenizer.mask_token_id
        rows = torch.arange(out.input_ids.shape[0], device=out.input_ids.device)
        hidden = out.last_hidden_state[rows, last_mask_positions(out.input_ids, mask_id)]
        if self.training and self.options.denoise:
            return hidden - self.template_bias(out.input_ids, out.attention_mask, self.row_templates(out))
        if not self.training and self.options.eval_denoise:
            first = torch.zeros_like(rows)
            return hidden - self.template_bias(out.input_ids, out.attention_mask, first)
        return hidden

    def row_templates(self, out: BackboneOutput) -> torch.Tensor:
        """Which template each training row was built with (prefix and suffix tokens match)."""
        ids, lengths = out.input_ids, out.attention_mask.sum(1)
        which = torch.full_like(lengths, -1)
        for t_index in reversed(range(len(self.templates))):  # the first match wins
            template = self.templates[t_index]
            if ids.shape[1] < template.length:
                continue
            prefix = torch.tensor(template.prefix_ids, device=ids.device)
            suffix = torch.tensor(template.suffix_ids, device=ids.device)
            n_pre, n_suf = len(prefix), len(suffix)
            starts = (lengths - n_suf).clamp(min=0).unsqueeze(1) + torch.arange(n_suf, device=ids.device)
            match = ((ids[:, :n_pre] == prefix).all(1) & (ids.gather(1, starts) == suffix).all(1)
                     & (lengths >= template.length))
            which = torch.where(match, t_index, which)
        if (which < 0).any():
            bad = int((which < 0).nonzero()[0])
            raise ValueError(f"pooler prompt: training row {bad} follows none of the templates "
                             f"{[t.text for t in self.templates]}")
        return which

    def template_bias(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      which: torch.Tensor) -> torch.Tensor:
        """(N×H) [MASK] state of each row's template alone, positions shifted by its sentence
        length; one backbone pass per template over the distinct lengths of the batch."""
        lengths = attention_mask.sum(1)
        bias = None
        for t_index in which.unique().tolist():
            template = self.templates[t_index]
            rows = (which == t_index).nonzero().squeeze(1)
            sentence_lengths = lengths[rows] - template.length
            distinct, inverse = sentence_lengths.unique(return_inverse=True)
            ids = torch.tensor(template.ids([]), device=input_ids.device).expand(len(distinct), -1)
            # The all-ones mask is needed, not decoration: without a mask, transformers >= 5.25 reads
            # the jump in these position ids as the boundary of two packed sequences and stops the
            # prefix and the suffix attending to each other.
            states = self.encoder.backbone(
                input_ids=ids, attention_mask=torch.ones_like(ids),
                position_ids=template_position_ids(template, distinct, self.position_offset),
                return_dict=True).last_hidden_state
            delta = states[:, len(template.prefix_ids) + template.mask_index]
            if bias is None:
                bias = delta.new_zeros(input_ids.shape[0], delta.shape[1])
            bias = bias.index_put((rows,), delta[inverse])
        return bias
