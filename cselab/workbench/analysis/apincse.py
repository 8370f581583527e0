"""Per-layer [CLS] similarity to the last layer over a sentence set (APINCSE, Fig. 3).

APINCSE motivates its interlayer negatives (eq. 16–18) by how close each intermediate layer's
[CLS] is to the last layer's: close enough to be a hard negative, different enough to be a
negative at all. :func:`layer_cls_similarity` measures, for any backbone (alias, Hub id, model
folder, cselab run/model folder or a loaded :class:`SentenceEncoder`),

* ``mean[a]``, ``std[a]`` — over the sentences, cos(h^a_CLS, h^L_CLS) for every hidden state a =
  0 (embeddings) … L (the last layer, always 1);
* ``most_similar_fraction[a]`` — how often layer a ∈ 1 … L−1 is the one eq. 16–17 would pick
  (the argmax of that cosine), i.e. the distribution of ``interlayer: most_similar``.

Example::

    from cselab.workbench.analysis.apincse import layer_cls_similarity
    from cselab.model.data import load_corpus
    result = layer_cls_similarity("bert-base-uncased", load_corpus("wiki1m-head", 1000))
    print(result.format_table())

or ``python -m cselab.workbench.analysis.apincse all-minilm-l6 --corpus wiki1m-head -n 1000``.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

import numpy as np
import torch

from ...model.encoder import SentenceEncoder
from ...model.methods.apincse.interlayer import most_similar_layers


@dataclass
class LayerSimilarity:
    layers: list[int]                   # hidden_states indices 0 … L (0 = embedding output)
    mean: list[float]                   # mean over sentences of cos(h^a_CLS, h^L_CLS)
    std: list[float]
    most_similar_fraction: list[float]  # eq. 16–17's choice; 0 for layers 0 and L (not candidates)
    n_sentences: int

    def rows(self) -> list[dict]:
        return [{"layer": a, "mean_cos_to_last": m, "std": s, "most_similar_fraction": f}
                for a, m, s, f in zip(self.layers, self.mean, self.std, self.most_similar_fraction)]

    def format_table(self) -> str:
        lines = [f"{'layer':>5}  {'cos to last':>11}  {'std':>6}  {'most similar':>12}"]
        lines += [f"{r['layer']:>5}  {r['mean_cos_to_last']:>11.4f}  {r['std']:>6.4f}  "
                  f"{r['most_similar_fraction']:>12.3f}" for r in self.rows()]
        lines.append(f"({self.n_sentences} sentences)")
        return "\n".join(lines)


def layer_cls_similarity(model: SentenceEncoder | str | os.PathLike, sentences: list[str], batch_size: int = 64,
                         max_length: int | None = None, device: str | torch.device | None = None) -> LayerSimilarity:
    """Per-layer [CLS] cosine to the last layer's [CLS], in evaluation mode (no dropout)."""
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        raise ValueError("sentences: need at least one non-blank sentence")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    encoder = model if isinstance(model, SentenceEncoder) else SentenceEncoder.from_pretrained(
        model, pooler="cls_before_pooler")
    if device is not None:
        encoder.to(device)
    sims = []
    for _, out in encoder.iter_batches(sentences, batch_size, max_length=max_length, output_hidden_states=True):
        cls = out.layer_cls()   # (n, L+1, H)
        sims.append(torch.nn.functional.cosine_similarity(cls, cls[:, -1:], dim=-1).cpu())
    sims = torch.cat(sims)   # (N, L+1)
    n_hidden = sims.shape[1]
    # eq. 16–17's choice from the same cosines; a one-layer backbone has no intermediate layer
    counts = (np.bincount(most_similar_layers(sims[:, 1:-1]).numpy(), minlength=n_hidden) if n_hidden > 2
              else np.zeros(n_hidden))
    sims_np = sims.double().numpy()
    return LayerSimilarity(layers=list(range(n_hidden)), mean=sims_np.mean(0).tolist(), std=sims_np.std(0).tolist(),
                           most_similar_fraction=(counts / len(sentences)).tolist(), n_sentences=len(sentences))


def main(argv: list[str] | None = None) -> int:
    from ...model.data import load_corpus

    parser = argparse.ArgumentParser(prog=f"python -m {__package__}.{os.path.basename(__file__)[:-3]}",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("model", help="backbone alias, Hub id, model folder or cselab model folder")
    parser.add_argument("--corpus", default="wiki1m-head", help="corpus name or one-sentence-a-line file")
    parser.add_argument("-n", "--max-sentences", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    sentences = load_corpus(args.corpus, args.max_sentences, args.data_dir)
    print(layer_cls_similarity(args.model, sentences, batch_size=args.batch_size).format_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
