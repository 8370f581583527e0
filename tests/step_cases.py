"""One training step of each method on the tiny model, shared by the gradient-caching and the
multi-process tests: the same function computes the reference (one process, no caching) and the
variant under test, and returns what must agree (loss, every parameter's gradient, the loss's
state after the step, the random state)."""
from __future__ import annotations

import copy

import torch

from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.methods import build_loss
from cselab.model.train.ddp import Processes
from cselab.model.train.step import training_loss

# name: (pooler, config keys). Dropout 0, so that the two dropout views, the chunks and the
# processes all see the same network; each method small enough for a 12-sentence batch.
CASES = {
    "simcse": ("cls", {"method": ["simcse"]}),
    "mixcse": ("cls", {"method": ["mixcse"]}),
    "gs_infonce": ("cls", {"method": ["gs_infonce"]}),
    "clusterns": ("cls", {"method": ["clusterns"],
                          "clusterns": {"num_clusters": 4, "start_threshold": 1.0, "bml_weight": 0.5,
                                        "bml_beta": 0.05, "momentum": 0.5}}),
    "apincse": ("layer_attention", {"method": ["augmented_positive", "interlayer_negative"],
                                    "augmented_positive": {"queue_size": 12, "top_k": 3}}),
    "interlayer_projected": ("cls", {"method": ["interlayer_negative"],
                                     "interlayer_negative": {"project_negative": True}}),
    # methods that run the encoder inside the loss (refused by gradient caching, NOT_CACHED)
    "esimcse": ("cls", {"method": ["esimcse"], "esimcse": {"queue_size": 24, "repeat": False}}),
    "simcse_pp": ("cls", {"method": ["simcse_pp"]}),
}
NOT_CACHED = ("esimcse", "simcse_pp")
BATCH = 12
STEPS = 2   # ClusterNS starts on the first step and uses its centroids on the second


def build(model_path, case: str, batch_size: int = BATCH):
    pooler, keys = CASES[case]
    cfg = load_config({"model": str(model_path), "pooler": pooler, "dropout": 0.0, "batch_size": batch_size,
                       **keys})
    torch.manual_seed(0)   # the same head / pooler weights wherever this runs
    encoder = SentenceEncoder.from_pretrained(model_path, pooler=pooler, dropout=0.0).train()
    loss_fn = build_loss(cfg)
    loss_fn.setup(encoder, None)
    return encoder, loss_fn


def run_steps(encoder, loss_fn, sentences: list[list[str]], processes: Processes | None = None,
              mini_batch_size: int | None = None, model=None) -> dict:
    """``STEPS`` steps (no optimizer update, so every step sees the same weights) on this process's
    sentences of each step; returns ``{"loss.<s>", "grad.<s>.<param>", "state.<s>.<buffer>",
    "rng.<s>"}`` tensors. The gradients are scaled by the world size as the trainer does."""
    processes = processes or Processes()
    model = model if model is not None else encoder
    out = {}
    torch.manual_seed(1)
    for s, part in enumerate(sentences):
        step = training_loss(model, encoder, loss_fn, part, step=s, max_len=32, amp_dtype=None,
                             processes=processes, mini_batch_size=mini_batch_size)
        step.backward(lambda loss: loss * processes.world_size)
        out[f"loss.{s}"] = step.result.loss.detach().clone()
        for name, p in encoder.named_parameters():
            if p.grad is not None:
                out[f"grad.{s}.{name}"] = p.grad.detach().clone()
        for name, t in loss_fn.state_dict().items():
            out[f"state.{s}.{name}"] = t.detach().clone().float()
        out[f"rng.{s}"] = torch.get_rng_state().float()
        encoder.zero_grad(set_to_none=True)
    return out


def copies(encoder, loss_fn):
    return copy.deepcopy(encoder), copy.deepcopy(loss_fn)


def assert_same(reference: dict, other: dict, atol: float = 2e-6, rtol: float = 1e-4) -> None:
    assert reference.keys() == other.keys(), set(reference) ^ set(other)
    for key, value in reference.items():
        assert torch.allclose(value, other[key], atol=atol, rtol=rtol), (key, (value - other[key]).abs().max())
