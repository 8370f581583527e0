# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: -jupytext.text_representation.format_version,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # cselab quickstart: a short unsupervised SimCSE run
#
# **About 7 ½ minutes on 2 CPU cores** with these parameters (60 training steps; the seven STS
# tasks scored before and after training take most of it); `sts_tasks = ["STSBenchmark"]` scores one
# task for a quicker look. A second Run All reuses the finished run and costs the scoring only.
#
# Trains SimCSE (InfoNCE over two dropout views, in-batch negatives) for a few dozen steps on the
# head of wiki1m, with the offline default backbone (all-MiniLM-L6-v2), and shows:
#
# 1. the STS table (STS12–16, STS-B, SICK-R; SimCSE's protocol) before and after training;
# 2. the training loss, the mean cosine of positive pairs and of in-batch negatives, and STS-B dev;
# 3. the trained model loaded by sentence-transformers (same embeddings) and its model card.
#
# Run it with papermill (`make quickstart`); every value in the next cell is a parameter.
# MiniLM is already sentence-tuned with mean pooling; its [CLS] vector is not, so the `cls`
# pooler (SimCSE's default) shows what contrastive training does within minutes on a CPU.

# %% tags=["parameters"]
config = "quickstart"          # preset name or YAML file
model = "all-minilm-l6"        # alias, local folder or Hugging Face id (e.g. bert-base-uncased)
pooler = "cls"
method = "simcse"
max_steps = 60
batch_size = 64
eval_every = 15
lr = 3e-5
seed = 42
data_dir = None                # None: $CSELAB_DATA, else ./data
sts_tasks = None               # None: the seven STS tasks of the papers' table; e.g. ["STSBenchmark"] for a quick look
output_dir = "runs/quickstart"
figures_dir = "figures/quickstart"
overwrite = False              # True: retrain this config's run (replaced only once the new one has finished)

# %%
import json

from cselab import workbench
from cselab.model.config import load_config
from cselab.model.encoder import SentenceEncoder
from cselab.model.data import load_stsb
from cselab.model.evaluate import evaluate_pairs, evaluate_sts, format_sts_table
from cselab.workbench.plots import plot_similarity_dynamics, plot_training_curves
from cselab.workbench.plots.style import place_legend
from cselab.model.train import RunDir, train

workbench.setup()   # figures inline (built without pyplot, shown as PNG); relative paths from the project root

# The run is named by the config's hash (runs/quickstart/<method>-<hash>): other parameters never
# touch an earlier run.
cfg = load_config(config, {"model": model, "pooler": pooler, "method": method, "max_steps": max_steps,
                           "batch_size": batch_size, "eval_every": eval_every, "lr": lr, "seed": seed,
                           "output_dir": str(workbench.project_path(output_dir)), "final_eval": False})
figures = workbench.project_path(figures_dir)
figures.mkdir(parents=True, exist_ok=True)
print(f"{'+'.join(cfg.method)} on {cfg.model} ({cfg.pooler} pooler): {cfg.max_steps} steps of batch {cfg.batch_size}, "
      f"lr {cfg.lr:g}, seed {cfg.seed}, STS-B dev every {cfg.eval_every} steps; run folder "
      f"{RunDir.for_config(cfg).path} (its config.json holds every setting)")

# %% [markdown]
# ## STS before training (evaluation path: `cls` without SimCSE's head = `cls_before_pooler`)

# %%
initial = SentenceEncoder.from_pretrained(model, pooler=pooler)
before = evaluate_sts(initial, **({"tasks": sts_tasks} if sts_tasks else {}), data_dir=data_dir)
dev_before = evaluate_pairs(initial, load_stsb(data_dir)["dev"])
print(format_sts_table({"before": before}))
print(f"STS-B dev before training: {dev_before:.2f}")

# %% [markdown]
# ## Train

# %%
existing = RunDir.for_config(cfg)
if existing.results_file.is_file() and not overwrite:
    run = existing.path
    print(f"{run} already holds the finished run of this exact config: reusing it (overwrite=True retrains)")
else:  # a new run, or the continuation of an interrupted one
    run = train(cfg, data_dir=data_dir, overwrite=overwrite, resume=existing.has_content() and not overwrite)
print(run)

# %% [markdown]
# ## STS after training (best STS-B dev checkpoint)

# %%
after = evaluate_sts(SentenceEncoder.from_pretrained(run / "best"), **({"tasks": sts_tasks} if sts_tasks else {}),
                     data_dir=data_dir)
table = format_sts_table({"before": before, "after": after})
(figures / "sts_table.md").write_text(table + "\n")
print(table)

# %% [markdown]
# ## Training dynamics
#
# The run directory's `metrics.jsonl` holds a record every `log_every` steps (loss parts and the
# mean cosine of positive pairs and of in-batch negatives) and every `eval_every` steps (STS-B dev).
# The figures are drawn by `cselab.workbench.plots`, saved as PNG and PDF with reproducible bytes and shown
# here (`cselab.workbench.show`).

# %%
loss_fig = plot_training_curves({method: run}, keys=("loss",), title="training loss (InfoNCE)")
workbench.show(loss_fig, figures / "loss")
sim_fig = plot_similarity_dynamics({method: run}, stats=("pos_cos", "neg_cos"), panels="run",
                                   title="mean cosine, view 1 vs view 2")
workbench.show(sim_fig, figures / "similarity")
dev_fig = plot_training_curves({method: run}, keys=("stsb_dev",), kind="eval", title="STS-B dev during training")
dev_ax = dev_fig.axes[0]
dev_ax.lines[0].set_label(f"{method} run")
dev_ax.axhline(dev_before, ls=":", c="grey", label="before training")
place_legend(dev_ax)   # inside where it covers no data, else beside the panel: "best" covered the curve on fp32
workbench.show(dev_fig, figures / "stsb_dev")
print(sorted(p.name for p in figures.iterdir()))

# %% [markdown]
# ## Use the trained model elsewhere
#
# `best/` is also a sentence-transformers model (pooler and head included) with a model card
# (`README.md`), and its `config.json` tells `AutoModel` users which output is the embedding.
# `cselab export RUN OUT` writes the same to a folder of your choice.

# %%
from sentence_transformers import SentenceTransformer

from cselab.model.encoder.backbone import quiet_hf

trained = SentenceEncoder.from_pretrained(run / "best")
with quiet_hf():   # no "Loading weights" bar for a folder on this disk
    shared = SentenceTransformer(str(run / "best"), device="cpu")
probe = ["A man is playing a guitar.", "Someone plays music.", "The stock market fell sharply."]
print("cosine of sentence-transformers' and cselab's embeddings:",
      trained.similarity(shared.encode(probe), trained.encode(probe)).diagonal().numpy().round(6))
print("AutoModel:", json.loads((run / "best" / "config.json").read_text())["sentence_embedding"]["output"])
print((run / "best" / "README.md").read_text()[:600])
