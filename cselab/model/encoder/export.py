"""Every folder :meth:`SentenceEncoder.save` writes (a run's ``best/`` and ``last/``, ``cselab export``)
is, besides a Hugging Face folder that cselab and ``AutoModel`` load, a sentence-transformers model
that computes exactly the evaluated embedding, and it documents itself.

What is added to the folder:

* ``modules.json``, ``sentence_bert_config.json``, ``config_sentence_transformers.json`` and one
  sub-folder per module: the pooler as sentence-transformers' own modules where they express it —

  ==========================================  ============================================================
  cselab pooler                               sentence-transformers modules
  ==========================================  ============================================================
  ``cls_before_pooler``, ``cls`` (head        Transformer → Pooling(cls)
  dropped at evaluation: ``mlp_only_train``)
  ``cls`` with the head at evaluation         Transformer → Pooling(cls) → Dense(tanh, the head's weights)
  ``avg``                                     Transformer → Pooling(mean)
  ``avg_first_last``                          Transformer(all layers) → WeightedLayerPooling(layers 1 and L,
                                              weight 1 each) → Pooling(mean)
  ``avg_top2``                                Transformer(all layers) → WeightedLayerPooling(layers L−1 and
                                              L) → Pooling(mean)
  anything else (``prompt``,                  one module, :class:`cselab.model.encoder.st_module.CselabEncoderModule`,
  ``layer_attention``, new poolers)           that runs cselab's own encoder: loading needs cselab installed
                                              and ``trust_remote_code=True``
  ==========================================  ============================================================

  (a masked mean of the average of two layers is the average of their masked means, so the layer
  poolers are exact); the module files use the long-standing formats every sentence-transformers
  release reads.
* ``config.json`` gains ``sentence_embedding``: which ``AutoModel`` output (or recipe) is the
  evaluated embedding, for users of plain transformers.
* For ``cls`` on a backbone whose own pooler has the head's shape (BERT, RoBERTa: dense + tanh over
  [CLS]), the saved pooler weights are SimCSE's trained head, as SimCSE's own export script does, so
  ``pooler_output`` is head([CLS]); nothing in cselab reads the backbone's pooler.
* ``README.md``: the model card (:mod:`cselab.model.encoder.model_card`, written by ``save``).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import torch
from safetensors.torch import save_file
from torch import nn

from ..io import atomic_write_json, read_json
from .backbone import model_config_file

ST_TRANSFORMER = "sentence_transformers.models.Transformer"
ST_POOLING = "sentence_transformers.models.Pooling"
ST_DENSE = "sentence_transformers.models.Dense"
ST_LAYERS = "sentence_transformers.models.WeightedLayerPooling"
CSELAB_MODULE = "cselab.model.encoder.st_module.CselabEncoderModule"
TANH = "torch.nn.modules.activation.Tanh"
# Sub-folders this module writes (removed before a folder is written again, so none goes stale).
_MODULE_DIR = re.compile(r"\d+_(Pooling|Dense|WeightedLayerPooling)")
RECIPE_KEY = "sentence_embedding"   # the key added to config.json


@dataclass
class StModule:
    """One entry of ``modules.json``: a sub-folder with ``config.json`` (and weights)."""

    kind: str                       # Pooling, Dense, WeightedLayerPooling
    type: str
    config: dict
    weights: dict[str, torch.Tensor] = field(default_factory=dict)


def native_modules(encoder) -> list[StModule] | None:
    """The sentence-transformers modules after the Transformer that compute ``encoder``'s
    evaluation embedding, or None when its pooler has no native equivalent."""
    if encoder.pooler_options:
        return None
    hidden = encoder.backbone.config.hidden_size
    layers = encoder.backbone.config.num_hidden_layers
    name = encoder.pooler_name

    def pooling(mode: str) -> StModule:
        # The legacy per-mode flags: read by every sentence-transformers release (2.x to 6.x).
        return StModule("Pooling", ST_POOLING, {
            "word_embedding_dimension": hidden, "pooling_mode_cls_token": mode == "cls",
            "pooling_mode_mean_tokens": mode == "mean", "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False})

    def layer_average(first: int, last: int) -> StModule:
        # hidden_states[first:] weighted, weights 1 at ``first`` and ``last``, 0 between: their average.
        weights = torch.zeros(layers + 1 - first)
        weights[0] = weights[last - first] = 1.0
        return StModule("WeightedLayerPooling", ST_LAYERS,
                        {"word_embedding_dimension": hidden, "layer_start": first, "num_hidden_layers": layers},
                        {"layer_weights": weights})

    if name in ("cls", "cls_before_pooler"):
        modules = [pooling("cls")]
        if encoder.uses_head_at_eval:
            dense = encoder.head.dense
            modules.append(StModule("Dense", ST_DENSE, {
                "in_features": dense.in_features, "out_features": dense.out_features, "bias": True,
                "activation_function": TANH},
                {"linear.weight": dense.weight.detach().cpu().contiguous(),
                 "linear.bias": dense.bias.detach().cpu().contiguous()}))
        return modules
    if name == "avg":
        return [pooling("mean")]
    if name == "avg_first_last":
        return [layer_average(1, layers), pooling("mean")]
    if name == "avg_top2":
        return [layer_average(layers - 1, layers), pooling("mean")]
    return None


def needs_cselab(encoder) -> bool:
    """True when sentence-transformers can only load the folder through cselab's own module."""
    return native_modules(encoder) is None


def write_sentence_transformers_files(encoder, path: str | os.PathLike) -> list[dict]:
    """Write ``modules.json`` and the module folders; returns the ``modules.json`` entries."""
    path = Path(path)
    for stale in path.iterdir():
        if stale.is_dir() and _MODULE_DIR.fullmatch(stale.name):
            shutil.rmtree(stale)
    modules = native_modules(encoder)
    if modules is None:
        (path / "sentence_bert_config.json").unlink(missing_ok=True)
        entries = [{"idx": 0, "name": "0", "path": "", "type": CSELAB_MODULE}]
    else:
        uses_layers = any(m.kind == "WeightedLayerPooling" for m in modules)
        # max_seq_length = cselab's evaluation limit: inputs are never truncated below the model's own.
        transformer = {"max_seq_length": encoder.max_positions(), "do_lower_case": False}
        if uses_layers:  # the Transformer module hands on every layer only when the config asks for them
            transformer["config_args"] = {"output_hidden_states": True}
        atomic_write_json(path / "sentence_bert_config.json", transformer)
        entries = [{"idx": 0, "name": "0", "path": "", "type": ST_TRANSFORMER}]
        for i, module in enumerate(modules, start=1):
            folder = path / f"{i}_{module.kind}"
            folder.mkdir()
            # sentence-transformers names a module's settings config.json, as Hugging Face a model's
            atomic_write_json(model_config_file(folder), module.config)
            if module.weights:
                save_file(module.weights, str(folder / "model.safetensors"))
            entries.append({"idx": i, "name": str(i), "path": folder.name, "type": module.type})
    atomic_write_json(path / "modules.json", entries)
    atomic_write_json(path / "config_sentence_transformers.json", {
        "model_type": "SentenceTransformer", "prompts": {}, "default_prompt_name": None,
        "similarity_fn_name": "cosine"})
    return entries


# ---------------------------------------------------------------------- AutoModel users
def matching_backbone_pooler(encoder) -> nn.Linear | None:
    """The dense layer of the backbone's own pooler when it can hold SimCSE's head: pooler ``cls``
    with a head, and a backbone pooler that is dense + tanh over [CLS] of the same shape."""
    if encoder.pooler_name != "cls" or encoder.head is None:
        return None
    own = getattr(encoder.backbone, "pooler", None)
    dense, activation = getattr(own, "dense", None), getattr(own, "activation", None)
    if (isinstance(dense, nn.Linear) and dense.bias is not None and isinstance(activation, nn.Tanh)
            and dense.weight.shape == encoder.head.dense.weight.shape):
        return dense
    return None


@contextlib.contextmanager
def head_in_backbone_pooler(encoder):
    """While the backbone is saved, its pooler holds the trained head (SimCSE's export); the
    in-memory weights are restored afterwards."""
    target = matching_backbone_pooler(encoder)
    if target is None:
        yield
        return
    kept = target.weight.detach().clone(), target.bias.detach().clone()
    with torch.no_grad():
        target.weight.copy_(encoder.head.dense.weight)
        target.bias.copy_(encoder.head.dense.bias)
    try:
        yield
    finally:
        with torch.no_grad():
            target.weight.copy_(kept[0])
            target.bias.copy_(kept[1])


def embedding_recipe(encoder) -> dict:
    """Which ``AutoModel`` output is the evaluated embedding (``output``; None when plain
    transformers cannot compute it) and what ``pooler_output`` holds."""
    name = encoder.pooler_name
    head_in_pooler = matching_backbone_pooler(encoder) is not None
    mean_of = "mean of {} over the tokens where attention_mask is 1"
    layers = "(hidden_states[{}] + hidden_states[{}]) / 2, called with output_hidden_states=True"
    output = None
    if native_modules(encoder) is not None:
        if name in ("cls", "cls_before_pooler") and not encoder.uses_head_at_eval:
            output = "last_hidden_state[:, 0]"
        elif name == "cls":
            output = ("pooler_output" if head_in_pooler else
                      "tanh(last_hidden_state[:, 0] @ W.T + b) with W, b = linear.weight, linear.bias of "
                      "2_Dense/model.safetensors")
        elif name == "avg":
            output = mean_of.format("last_hidden_state")
        elif name == "avg_first_last":
            output = mean_of.format(layers.format(1, -1))
        elif name == "avg_top2":
            output = mean_of.format(layers.format(-2, -1))
    recipe = {"output": output, "pooler": name, "mlp_only_train": encoder.mlp_only_train,
              "pooler_output": ("SimCSE's MLP head over [CLS] (dense + tanh, the training embedding)" if head_in_pooler
                                else "the backbone's own pooler, not trained by cselab: not the sentence embedding"),
              "written_by": "cselab"}
    if output is None:
        recipe["note"] = (f"the {name} pooler is not an output of AutoModel: load this folder with cselab "
                          "(SentenceEncoder.from_pretrained) or with sentence-transformers (cselab installed, "
                          "trust_remote_code=True)")
    return recipe


def write_embedding_recipe(encoder, path: str | os.PathLike) -> dict:
    """Add :func:`embedding_recipe` to the folder's ``config.json`` under ``sentence_embedding``."""
    config_file = model_config_file(path)
    config = read_json(config_file)
    config[RECIPE_KEY] = embedding_recipe(encoder)
    # keys sorted: a model loaded from a saved folder (a resumed run's last/) carries the recipe among
    # its attributes, and transformers writes them in the order they were set, not sorted
    atomic_write_json(config_file, dict(sorted(config.items())))
    return config[RECIPE_KEY]


def write_interop_files(encoder, path: str | os.PathLike) -> None:
    """Everything this module adds to a folder the encoder has just been saved into (the model
    card is written beside it by :meth:`SentenceEncoder.save`)."""
    write_sentence_transformers_files(encoder, path)
    write_embedding_recipe(encoder, path)
