"""A sentence-transformers module that runs cselab's own encoder, for the poolers sentence-transformers'
modules cannot express (``prompt``: PromptBERT rewrites the input into a template; ``layer_attention``:
APINCSE's learned attention over layers; any pooler added later).

:func:`cselab.model.encoder.export.write_sentence_transformers_files` lists this class in ``modules.json``
of such folders. sentence-transformers imports it by name, so loading needs cselab installed and,
because it is code outside sentence-transformers, ``trust_remote_code=True`` (sentence-transformers
≥ 6 refuses otherwise, with a message naming the class)::

    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer("runs/apincse-…/best", trust_remote_code=True)

The module's ``preprocess`` (``tokenize`` for older sentence-transformers) is cselab's evaluation
tokenisation — for ``prompt`` the template wrapping — and its ``forward`` cselab's evaluation path,
so the embeddings are cselab's ``encode`` ones. Importing this file needs sentence-transformers;
nothing else in cselab imports it.
"""
from __future__ import annotations

import os
from typing import Any

try:  # sentence-transformers >= 6
    from sentence_transformers.base.modules import InputModule
except ImportError:  # 4.x–5.x
    from sentence_transformers.models import InputModule

from .model import SentenceEncoder


class CselabEncoderModule(InputModule):
    """The whole cselab :class:`SentenceEncoder` (backbone + pooler + head) as the single
    sentence-transformers module of a folder saved by cselab."""

    save_in_root = True

    def __init__(self, model_name_or_path: str | os.PathLike):
        super().__init__()
        self.encoder = SentenceEncoder.from_pretrained(model_name_or_path)

    @property
    def tokenizer(self):
        return self.encoder.tokenizer

    @property
    def modalities(self) -> list[str]:
        return ["text"]

    def preprocess(self, inputs, prompt: str | None = None, **kwargs) -> dict[str, Any]:
        """cselab's evaluation inputs (the pooler's own for ``prompt``); a sentence-transformers
        ``prompt`` goes in front of every text first."""
        texts = [prompt + text for text in inputs] if prompt else list(inputs)
        return dict(self.encoder.tokenize(texts))

    def tokenize(self, texts, **kwargs) -> dict[str, Any]:   # the name sentence-transformers < 5 calls
        return self.preprocess(texts, **kwargs)

    def forward(self, features: dict[str, Any], **kwargs) -> dict[str, Any]:
        inputs = {k: features[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in features}
        features["sentence_embedding"] = self.encoder.embed(inputs)
        return features

    def get_embedding_dimension(self) -> int:
        return self.encoder.embedding_dim()

    get_sentence_embedding_dimension = get_embedding_dimension   # sentence-transformers < 6

    def get_config_dict(self) -> dict[str, Any]:
        return {"pooler": self.encoder.pooler_name}

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        self.encoder.save(output_path)

    @classmethod
    def load(cls, model_name_or_path: str, subfolder: str = "", token: bool | str | None = None,
             cache_folder: str | None = None, revision: str | None = None, local_files_only: bool = False,
             **kwargs) -> "CselabEncoderModule":
        """A local folder, or a Hub repository downloaded by sentence-transformers' own helper."""
        local = os.path.join(model_name_or_path, subfolder)
        if not os.path.isdir(local):
            local = cls.load_dir_path(model_name_or_path, subfolder=subfolder, token=token, cache_folder=cache_folder,
                                      revision=revision, local_files_only=local_files_only)
        return cls(local)

    def __repr__(self) -> str:
        return f"CselabEncoderModule(pooler={self.encoder.pooler_name!r}, backbone={self.encoder.backbone_name!r})"
