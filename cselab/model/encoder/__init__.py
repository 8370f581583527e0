"""Backbones, poolers (registered plug-ins) and the SentenceEncoder."""
from .backbone import ALIASES, DEFAULT_BACKBONE, load_backbone, resolve_backbone
from .model import SentenceEncoder
from .outputs import EncoderOutput
from .pooling import (POOLERS, BackboneOutput, MLPHead, Pooler, build_pooler, masked_mean, pooler_options,
                      register_pooler)

# Poolers defined in their own modules register themselves on import.
from . import layer_attention  # noqa: E402,F401  (pooler: layer_attention, APINCSE eq. 1–7)
from . import prompt  # noqa: E402,F401  (pooler: prompt, PromptBERT)

__all__ = [
    "ALIASES", "DEFAULT_BACKBONE", "BackboneOutput", "EncoderOutput", "MLPHead", "POOLERS", "Pooler",
    "SentenceEncoder", "build_pooler", "load_backbone", "masked_mean", "pooler_options", "register_pooler",
    "resolve_backbone",
]
