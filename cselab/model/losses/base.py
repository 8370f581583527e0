"""The interface between the InfoNCE core and the methods built on it.

A method is one or more :class:`Component` objects. Each training step the core computes the
cosine matrix of the two views once and asks every component for a :class:`Contribution`:

* ``negatives`` — extra logit blocks appended to the InfoNCE denominator (each with a weight
  entering as ``log w`` and a direction: anchors from view 1, ``forward``, or view 2, ``reverse``);
* ``positive_mask`` — in-batch entries that count as additional positives (numerator);
* ``denominator_mask`` — in-batch entries removed from the denominator;
* ``terms`` — extra loss terms (already weighted), added to the total;
* ``stats`` — similarity statistics logged every logging step.

Components never touch the training loop; the loop calls their hooks, in this order each step:

1. ``build_views(inputs, n)`` — the two views: the tokenised 2n-row batch the pooler built (view 1
   rows, then view 2 rows, by default identical so that they differ by dropout only) goes through
   every component in turn; a positive-side augmentation (word repetition, deletion, …) rewrites it;
2. the encoder's pass over the 2n rows (with a graph);
3. ``contribute(batch, cos, τ)`` — negatives, masks, terms and statistics for the InfoNCE core
   (a component may run a momentum encoder here, without a graph, and push to a queue);
4. backward and the optimizer step;
5. ``after_optimizer_step()`` — e.g. the EMA update of a momentum encoder.

Components may keep state in buffers and submodules (queues, centroids, a momentum encoder,
:mod:`.queue`, :mod:`.momentum`): it is saved in checkpoints through ``state_dict`` like any module
state, and never exported with the encoder. What a component may use of the encoder is
:class:`EncoderSurface`, and nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, ContextManager, Iterator, Literal, Protocol, Sequence

import torch
from torch import nn

if TYPE_CHECKING:  # the encoder never imports losses; annotations only
    from ..encoder.outputs import EncoderOutput
    from ..encoder.pooling import BackboneOutput

Direction = Literal["forward", "reverse"]


class EncoderSurface(Protocol):
    """The part of :class:`~cselab.model.encoder.SentenceEncoder` a component may use (in ``setup`` and
    through ``self.encoder``). Components needing more extend this declaration first."""

    device: torch.device
    backbone_name: str          # alias, folder or Hub id the backbone was loaded from
    backbone_config: Any        # the Hugging Face config (hidden size, layers, vocabulary, ...)
    tokenizer: Any              # special / mask token ids, vocabulary size
    num_layers: int
    can_project_cls: bool

    def embedding_dim(self) -> int: ...

    def __call__(self, inputs: dict, output_hidden_states: bool = False) -> "EncoderOutput": ...  # training path

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, nn.Parameter]]: ...

    def dropout_mode(self, dropout: bool | None = False, seed: int | None = None) -> ContextManager[None]: ...

    def run_backbone(self, inputs: dict, output_hidden_states: bool = False) -> "BackboneOutput": ...

    def project_cls(self, cls: torch.Tensor, backbone: "BackboneOutput") -> torch.Tensor: ...

    def iter_batches(self, sentences: Sequence[str], batch_size: int, path: str = "eval", views: int = 2,
                     dropout: bool | None = False, seed: int | None = None, max_length: int | None = None,
                     output_hidden_states: bool = False, progress: bool = False,
                     desc: str = "encoding") -> Iterator[tuple[list[str], "EncoderOutput"]]: ...


@dataclass
class ContrastiveBatch:
    """Everything a loss may look at for one step.

    ``z1``/``z2`` are the training embeddings of the two views (B×D, rows aligned). In a
    multi-process run they are the gathered global batch and ``local_rows`` names the anchor rows of
    this process; ``None`` means a batch that was not gathered (all rows are anchors). A component
    that sees ``local_rows`` set knows the batch is already global (no further gathering of
    ``z1``/``z2``) and gathers what it reads from this process's ``outputs`` itself.

    cselab's trainer sets ``local_rows`` to *every* row (``slice(0, B)``): each process computes
    the loss of the whole global batch, gradients reach only its own rows (gathered with
    :func:`cselab.model.distributed.gather_with_local_grad`) and the loss is multiplied by the world size
    before DDP averages, which gives exactly the single-process gradient. Anchoring only this
    process's rows would drop the gradient an embedding gets as a negative of the other processes'
    anchors (see cselab/model/train/ddp.py).
    """

    z1: torch.Tensor
    z2: torch.Tensor
    step: int = 0
    outputs1: EncoderOutput | None = None  # view 1's encoder output (hidden states etc.), when requested
    outputs2: EncoderOutput | None = None
    inputs: dict | None = None       # the tokenised 2B-row batch (for input-level terms such as MLM)
    local_rows: slice | None = None
    amp_dtype: torch.dtype | None = None  # the encoder's autocast dtype, for components that run encoder parts
    compute_stats: bool = True       # set by the loss: False on steps whose statistics nobody reads

    @property
    def batch_size(self) -> int:
        return self.z1.shape[0]

    def anchors(self, view: int = 1) -> torch.Tensor:
        z = self.z1 if view == 1 else self.z2
        return z if self.local_rows is None else z[self.local_rows]


@dataclass
class NegativeBlock:
    """Extra denominator logits for the anchors of one direction: ``logits`` is (rows × M) and
    already divided by the temperature; ``-inf`` entries are absent negatives."""

    logits: torch.Tensor
    name: str
    log_weight: float = 0.0
    direction: Direction = "forward"


@dataclass
class Contribution:
    negatives: list[NegativeBlock] = field(default_factory=list)
    positive_mask: torch.Tensor | None = None
    denominator_mask: torch.Tensor | None = None
    terms: dict[str, torch.Tensor] = field(default_factory=dict)
    # floats or detached 0-dim tensors (converted only on logging steps, so no device sync otherwise)
    stats: dict[str, float | torch.Tensor] = field(default_factory=dict)


class Component(nn.Module):
    """Base class of a method's piece. Subclasses implement :meth:`contribute` and are registered
    with :func:`cselab.model.methods.register_method`, which sets ``name``.

    Declarations (class attributes): ``needs_hidden_states`` asks the trainer for every layer's
    hidden states; ``stat_labels`` gives words for the statistics it logs and ``stat_kinds`` the
    kind of pair each cosine is about (for figures); ``display_name``, ``citation``, ``color_slot``,
    ``cost_factor``, ``key_labels``, ``term_labels``, ``term_titles`` and ``auxiliary`` are the
    method's identity (see :class:`cselab.model.methods.registry.MethodSpec`); what the shared modules
    need from a method beyond that is asked of the class (``check_distributed``,
    ``smoke_batch_size``), so that none of them spells a method's name;
    ``uses_reverse_direction`` (an instance attribute, it may depend on the hyper-parameters) makes
    the core also compute the view-2-anchored InfoNCE and average the two directions.
    """

    name: ClassVar[str] = "component"
    needs_hidden_states: ClassVar[bool] = False
    stat_labels: ClassVar[dict[str, str]] = {}
    uses_reverse_direction: bool = False
    # Asks for a momentum (EMA) copy of the encoder (:class:`~cselab.model.losses.momentum.MomentumEncoder`,
    # created by the component in ``setup``): the cost model adds its pass, and gradient caching,
    # which replays the encoder's chunks, refuses the method.
    momentum_encoder: ClassVar[bool] = False

    # The method's identity, read through the registry by figures, tables, the cost model and the
    # docs' method table, so that nothing about a method is spelled outside its own module.
    display_name: ClassVar[str] = ""          # as the paper names it ("MixCSE"); default: the name
    citation: ClassVar[str] = ""              # authors, title, venue, and the equations implemented
    color_slot: ClassVar[int | None] = None   # index into cselab.workbench.plots.style.METHOD_PALETTE
    cost_factor: ClassVar[float] = 0.0        # extra step time over SimCSE (0.05 = 5 % slower), an estimate
    key_labels: ClassVar[dict[str, str]] = {}   # words for its hyper-parameters (``mix_lambda`` → "mixing weight λ")
    term_labels: ClassVar[dict[str, str]] = {}  # words for its loss terms (``l_p`` → "augmented-positive loss")
    # A loss term's title in a panel of its own, where it stands beside other methods' terms and so
    # names the method (``bml`` → "ClusterNS BML (× λ)"); default "<display name>: <term label>".
    term_titles: ClassVar[dict[str, str]] = {}
    # The kind of pair each logged cosine is about (``hard_neg_cos`` → "hard negative"): a key of
    # cselab.workbench.plots.palettes.STATISTIC_COLOURS, which gives the colour every figure draws it in. A
    # statistic without a kind (a share, a count) gets a reserve colour.
    stat_kinds: ClassVar[dict[str, str]] = {}
    # A term beside any method rather than a method of its own (the masked-LM term): a run's method
    # is named, coloured and grouped without it.
    auxiliary: ClassVar[bool] = False

    @classmethod
    def check_config(cls, params) -> None:
        """Checks of the hyper-parameters against other training options, run when the config is
        loaded, long before step 0. Raise ValueError naming the key. A component knows only its own
        parameters: an option it needs is a keyword-only parameter named after the config key
        (``def check_config(cls, params, *, batch_size: int)``) and :mod:`cselab.model.config` passes that
        value and no other."""

    @classmethod
    def check_distributed(cls, params) -> None:
        """Raise ValueError when the component cannot run in a multi-process (torchrun) run, where
        the batch it sees is the gathered global one (:class:`ContrastiveBatch`, ``local_rows``)."""

    @classmethod
    def smoke_batch_size(cls, params, batch_size: int) -> int:
        """The batch size the smoke profile (cselab/workbench/studies/smoke.py: every run for 2 steps on a
        tiny model) gives a run of this component whose batch it has cut to ``batch_size``: that
        size, or more where the component needs more rows than that (ClusterNS's centroids drawn
        from a batch)."""
        return batch_size

    @classmethod
    def check_gradient_cache(cls, params) -> None:
        """Raise ValueError when gradient caching (``mini_batch_size``, :mod:`cselab.model.train.step`)
        cannot compute this component's gradients exactly. The cache keeps, for the loss, the
        embeddings of both views and — when ``needs_hidden_states`` — each layer's [CLS] vector
        (``EncoderOutput.layer_cls()``), all as leaves whose gradients are pushed back through the
        encoder. A component that reads anything else of the encoder's output, or runs the encoder
        itself inside the loss, must refuse here; by default components that read hidden states do.
        Other options it needs are keyword-only parameters, as for :meth:`check_config`."""
        if cls.needs_hidden_states:
            raise ValueError(f"{cls.name} reads hidden states, which the gradient cache does not keep")
        if cls.momentum_encoder:
            raise ValueError(f"{cls.name} runs a momentum encoder on the step's inputs, which the gradient cache "
                             "does not keep")

    def setup(self, encoder: EncoderSurface, corpus: list[str] | None = None) -> None:
        """Called once before training with the encoder and the training corpus.

        The base class keeps plain references (``self.encoder``, ``self.corpus``), deliberately not
        as submodules: the encoder's parameters must not be registered twice. Override and call
        ``super().setup(...)`` to build encoder-dependent state.
        """
        self.__dict__["encoder"] = encoder
        self.__dict__["corpus"] = corpus

    def build_views(self, inputs: dict, n: int) -> dict:
        """Hook 1 of a step: the tokenised training batch of ``n`` sentences as 2n rows (view 1 rows,
        then view 2 rows), rewritten by this component or returned as it is (the default). A
        positive-side augmentation changes the view-2 rows; rows may change length (pad them to a
        common width with the tokenizer's pad id, and keep ``attention_mask`` in step). Runs on the
        CPU tensors before the encoder's pass, on this process's sentences only."""
        return inputs

    def after_optimizer_step(self) -> None:
        """Hook 5 of a step: called once the optimizer has updated the encoder (every process, every
        step; on a step whose update the fp16 scaler skipped too)."""

    def contribute(self, batch: ContrastiveBatch, cos: torch.Tensor, temperature: float) -> Contribution:
        raise NotImplementedError
