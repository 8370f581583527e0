"""The model card (``README.md``) of a saved model folder: method, configuration, data, the STS
table when the run has one, and how to load the folder with sentence-transformers, cselab and
transformers' ``AutoModel``. What the model is comes from the folder itself (``cselab.json``,
``config.json``, ``modules.json``); what the run was comes as :class:`RunFacts`, handed in by the
layer that reads run directories (:func:`cselab.model.export.run_facts`): the encoder knows model folders,
not runs or training configs. The card can be rewritten whenever the run learns more (the trainer
does after its final STS evaluation)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..io import atomic_write_text, read_json
from .backbone import SAVED_ENCODER, read_model_config
from .export import CSELAB_MODULE, RECIPE_KEY

CARD_NAME = "README.md"
# Backbone aliases whose Hugging Face id is known (for the card's base_model).
HUB_IDS = {"all-minilm-l6": "sentence-transformers/all-MiniLM-L6-v2"}
POOLER_WORDS = {
    "cls": "[CLS] of the last layer (SimCSE's MLP head in training)",
    "cls_before_pooler": "[CLS] of the last layer",
    "avg": "mean of the last layer's token vectors",
    "avg_first_last": "mean over tokens of the average of the first and the last transformer layer",
    "avg_top2": "mean over tokens of the average of the last two layers",
    "prompt": "PromptBERT: the [MASK] vector of the sentence wrapped in a template",
    "layer_attention": "APINCSE's attention over every layer's [CLS] and token mean (learned weights)",
}
TRAINING_KEYS = ("method", "corpus", "max_sentences", "max_len", "batch_size", "lr", "epochs", "max_steps",
                 "temperature", "dropout", "seed")


@dataclass(frozen=True)
class RunFacts:
    """What a model card says about the training run a model comes from."""

    name: str                         # the run's name (its folder)
    config: dict | None = None        # the run's training config (``TrainConfig.to_dict()``), None: not recorded
    config_hash: str = "?"
    identity: dict | None = None      # the part of ``config`` that determines the result
    has_results: bool = False         # whether the run has written its results
    steps: int | None = None          # steps done and the step of the best STS-B dev score
    best_step: int | None = None
    select_by: str | None = None      # what chose best/ (config select_by: stsb_dev, last, heldout_infonce)
    lockfile: dict | None = None      # config.json's lockfile record (file, sha256, matches, differences)
    sts_table: str | None = None      # the run's final STS table (Markdown), None: not evaluated yet
    eval_precision: str | None = None  # what the run's evaluations ran in (fp32 / bf16 / fp16), as recorded


def _read_optional(path: Path) -> dict | None:
    return read_json(path) if path.is_file() else None


def _pooler_sentence(saved: dict) -> str:
    name = saved["pooler"]
    words = POOLER_WORDS.get(name, f"the {name} pooler")
    if name == "cls":
        words += ("; evaluated without the head (`mlp_only_train`), i.e. the [CLS] vector itself"
                  if saved["mlp_only_train"] else "; evaluated through the head (dense + tanh)")
    return words


def _selection_sentence(select_by: str) -> str:
    """The card's words for ``select_by`` (cselab.model.train.selection), saved in ``cselab.json``."""
    return {"stsb_dev": "`stsb_dev`: the best STS-B dev Spearman (the papers' protocol; the STS numbers below "
                        "are therefore not free of STS labels)",
            "last": "`last`: the model at the end of training (no selection)",
            "heldout_infonce": "`heldout_infonce`: the lowest InfoNCE on a held-out slice of the training corpus "
                               "(no STS data)"}.get(select_by, f"`{select_by}`")


# |STS-B dev Spearman ×100 in bf16 weights − in fp32| of the default backbone (all-MiniLM-L6-v2), all
# 1,500 pairs, per pooler: benchmarks/precision_evidence.py --eval-weights on a 2-core AMX CPU,
# 2026-12-02 (docs/performance.md, "Which precision a reported number comes from").
BF16_DEV_DRIFT = {"avg": 0.007, "avg_first_last": 0.009, "avg_top2": 0.015, "cls": 0.070, "cls_before_pooler": 0.070,
                  "layer_attention": 0.039, "prompt": 0.142}


def _precision_sentence(eval_precision: str, pooler: str) -> str:
    """Which precision the table comes from, and how far the one a user runs is: sentence-transformers
    loads the folder in fp32, while cselab's ``auto`` evaluates in bf16 wherever bf16 is native."""
    if eval_precision == "fp32":
        return ("Precision: these scores were computed in fp32, the precision in which sentence-transformers "
                "runs this folder.")
    drift = BF16_DEV_DRIFT.get(pooler)
    how_far = (f"on the default backbone with this pooler (`{pooler}`), STS-B dev in bf16 weights was {drift:.3f} "
               "from fp32 (cselab's docs/performance.md)" if drift is not None else
               "the two differ by bf16's rounding (cselab's docs/performance.md measures it per pooler)")
    return (f"Precision: these scores were computed with the backbone's weights in {eval_precision} "
            f"(`eval_precision: auto` on a machine with native bf16). sentence-transformers runs this folder in "
            f"fp32; {how_far}. `cselab eval path/to/this/folder --precision fp32` computes the fp32 table.")


def _is_hub_id(name: str) -> bool:
    return bool(name) and not name.startswith((".", "/", "~")) and name.count("/") <= 1 and not Path(name).exists()


def model_card(folder: str | os.PathLike, run: RunFacts | None = None) -> str:
    """The Markdown card of ``folder`` (saved by :meth:`SentenceEncoder.save`); ``run``: the run
    the model comes from, when it has one."""
    folder = Path(folder)
    saved = read_json(folder / SAVED_ENCODER)
    hf_config = read_model_config(folder)
    modules = _read_optional(folder / "modules.json") or []
    recipe = hf_config.get(RECIPE_KEY, {})
    config = run.config if run else None
    custom = any(m.get("type") == CSELAB_MODULE for m in modules)

    backbone = saved.get("backbone_name") or hf_config.get("_name_or_path", "")
    methods = config["method"] if config else []
    base_model = HUB_IDS.get(backbone, backbone if _is_hub_id(backbone) else None)
    front = ["---", "library_name: sentence-transformers", "pipeline_tag: sentence-similarity", "tags:",
             *[f"- {t}" for t in ("sentence-transformers", "sentence-similarity", "feature-extraction", "cselab",
                                 *methods)]]
    if base_model:
        front.append(f"base_model: {base_model}")
    front.append("---")

    title = (f"{'+'.join(methods)} sentence encoder on {backbone}" if methods
             else f"{backbone} as a sentence encoder")
    lines = [*front, "", f"# {title}", ""]
    if config:
        lines.append(f"Trained with cselab by unsupervised contrastive learning "
                     f"(method: `{'`, `'.join(methods)}`; run `{run.name}`, config hash "
                     f"`{run.config_hash}`).")
    else:
        lines.append("Saved by cselab; no training run is attached to this folder.")
    lines += ["", "| | |", "|---|---|",
              f"| backbone | `{backbone}` ({hf_config.get('model_type', '?')}) |",
              f"| pooler | `{saved['pooler']}`: {_pooler_sentence(saved)} |",
              f"| embedding dimension | {hf_config.get('hidden_size', '?')} |",
              "| similarity | cosine |"]
    if "step" in saved:
        lines.append(f"| saved at step | {saved['step']} |")
    if "stsb_dev" in saved:
        lines.append(f"| STS-B dev (Spearman ×100) at that step | {saved['stsb_dev']:.2f} |")
        lines.append(f"| checkpoint chosen by | {_selection_sentence(saved.get('select_by', 'stsb_dev'))} |")
    if config:
        lines += ["", "## Training", "",
                  f"Data: `{config['corpus']}`" + (f", its first {config['max_sentences']} sentences"
                                                   if config.get("max_sentences") else "")
                  + " (unlabelled text, one sentence a line).", "",
                  "| setting | value |", "|---|---|",
                  *[f"| {k} | `{json.dumps(config[k])}` |" for k in TRAINING_KEYS if k in config]]
        if run.has_results:
            lines.append(f"| steps done | {run.steps} (best/ from step {run.best_step}, chosen by "
                         f"`{run.select_by or 'stsb_dev'}`) |")
        lock = run.lockfile
        if lock:   # the environment: the tested lockfile and whether the training one matched it
            state = "the installed packages matched it" if lock.get("matches") else \
                f"{lock.get('differences')} installed packages differed from it"
            lines.append(f"| environment | lockfile `{lock.get('file')}` (sha256 `{lock.get('sha256', '')[:16]}…`); "
                         f"{state} |")
        # The keys that determine the result (no output folders or devices of the training machine).
        lines += ["", "<details><summary>full configuration</summary>", "", "```json",
                  json.dumps(run.identity if run.identity is not None else config, indent=2), "```", "",
                  "</details>"]
    lines += ["", "## Evaluation", ""]
    if run and run.sts_table is not None:
        lines += ["STS (SimCSE's protocol: Spearman ×100 of cosine similarities; STS12–16 over all subsets, "
                  "STS-B and SICK-R test):", "", run.sts_table]
        if run.eval_precision:
            lines += ["", _precision_sentence(run.eval_precision, saved["pooler"])]
    else:
        lines.append(("No STS table yet: the run's final evaluation (`final_eval`) writes it here. " if run else "")
                     + "`cselab eval path/to/this/folder` computes one.")
    lines += ["", "## Usage", "", "### sentence-transformers", ""]
    if custom:
        lines += [f"The `{saved['pooler']}` pooler is cselab's own module: install cselab and allow it to run "
                  "(`trust_remote_code=True`).", ""]
    lines += ["```python", "from sentence_transformers import SentenceTransformer", "",
              "model = SentenceTransformer(\"path/to/this/folder\"" + (", trust_remote_code=True" if custom else "")
              + ")", "embeddings = model.encode([\"A man plays a guitar.\", \"Someone plays music.\"])",
              "print(model.similarity(embeddings, embeddings))", "```", "",
              "### cselab", "", "```python", "from cselab.model.encoder import SentenceEncoder", "",
              "model = SentenceEncoder.from_pretrained(\"path/to/this/folder\")",
              "embeddings = model.encode([\"A man plays a guitar.\", \"Someone plays music.\"])", "```", "",
              "### transformers (AutoModel)", ""]
    lines += _automodel_usage(recipe)
    return "\n".join(lines) + "\n"


def _automodel_usage(recipe: dict) -> list[str]:
    output = recipe.get("output")
    if output is None:
        return [recipe.get("note", "This pooler is not an output of AutoModel; load the folder with cselab."), "",
                f"`config.json` → `sentence_embedding` records this; `pooler_output` is "
                f"{recipe.get('pooler_output')}."]
    head = ["`config.json` → `sentence_embedding.output` names the output that equals the evaluated embedding: "
            f"`{output}`. `pooler_output` is {recipe.get('pooler_output')}.", "", "```python", "import torch",
            "from transformers import AutoModel, AutoTokenizer", "",
            "tokenizer = AutoTokenizer.from_pretrained(\"path/to/this/folder\")",
            "model = AutoModel.from_pretrained(\"path/to/this/folder\")",
            "batch = tokenizer([\"A man plays a guitar.\"], padding=True, truncation=True, return_tensors=\"pt\")"]
    mask = "mask = batch[\"attention_mask\"].unsqueeze(-1).float()"
    if output.startswith("last_hidden_state[:, 0]"):
        body = ["with torch.no_grad():", "    embeddings = model(**batch).last_hidden_state[:, 0]"]
    elif output == "pooler_output":
        body = ["with torch.no_grad():", "    embeddings = model(**batch).pooler_output"]
    elif output.startswith("tanh("):
        body = ["from safetensors.torch import load_file", "",
                "head = load_file(\"path/to/this/folder/2_Dense/model.safetensors\")",
                "with torch.no_grad():", "    cls = model(**batch).last_hidden_state[:, 0]",
                "    embeddings = torch.tanh(cls @ head[\"linear.weight\"].T + head[\"linear.bias\"])"]
    elif "hidden_states[" in output:
        first = "1" if "hidden_states[1]" in output else "-2"
        body = ["with torch.no_grad():", "    states = model(**batch, output_hidden_states=True).hidden_states",
                f"tokens = (states[{first}] + states[-1]) / 2", mask,
                "embeddings = (tokens * mask).sum(1) / mask.sum(1)"]
    else:
        body = ["with torch.no_grad():", "    tokens = model(**batch).last_hidden_state", mask,
                "embeddings = (tokens * mask).sum(1) / mask.sum(1)"]
    return [*head, *body, "```"]


def write_model_card(folder: str | os.PathLike, run: RunFacts | None = None) -> Path:
    """Write (or rewrite) ``folder/README.md``."""
    return atomic_write_text(Path(folder) / CARD_NAME, model_card(folder, run))
