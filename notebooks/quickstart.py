# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # cselab quickstart: a short unsupervised SimCSE run
#
# Trains SimCSE (InfoNCE over two dropout views, in-batch negatives) for a few dozen steps on the
# head of wiki1m, with the offline default backbone (all-MiniLM-L6-v2), and shows:
#
# 1. the STS table (STS12–16, STS-B, SICK-R; SimCSE's protocol) before and after training;
# 2. the training loss, the mean cosine of positive pairs and of in-batch negatives, and STS-B dev.
#
# Run it with papermill (`make demo`); every value in the next cell is a parameter.
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
output_dir = "runs/quickstart"
figures_dir = "figures/quickstart"
overwrite = True               # re-running the notebook replaces its own run

# %%
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from cselab.config import load_config  # noqa: E402
from cselab.encoder import SentenceEncoder  # noqa: E402
from cselab.data import load_stsb  # noqa: E402
from cselab.evaluate import evaluate_pairs, evaluate_sts, format_sts_table  # noqa: E402
from cselab.io import read_jsonl  # noqa: E402
from cselab.train import train  # noqa: E402

cfg = load_config(config, {"model": model, "pooler": pooler, "method": method, "max_steps": max_steps,
                           "batch_size": batch_size, "eval_every": eval_every, "lr": lr, "seed": seed,
                           "output_dir": output_dir, "run_name": f"{method}-{pooler}", "final_eval": False})
figures = Path(figures_dir)
figures.mkdir(parents=True, exist_ok=True)
print(json.dumps(cfg.to_dict(), indent=1))

# %% [markdown]
# ## STS before training (evaluation path: `cls` without SimCSE's head = `cls_before_pooler`)

# %%
initial = SentenceEncoder.from_pretrained(model, pooler=pooler)
before = evaluate_sts(initial, data_dir=data_dir)
dev_before = evaluate_pairs(initial, load_stsb(data_dir)["dev"])
print(format_sts_table({"before": before}))
print(f"STS-B dev before training: {dev_before:.2f}")

# %% [markdown]
# ## Train

# %%
run = train(cfg, data_dir=data_dir, overwrite=overwrite)
print(run)

# %% [markdown]
# ## STS after training (best STS-B dev checkpoint)

# %%
after = evaluate_sts(SentenceEncoder.from_pretrained(run / "best"), data_dir=data_dir)
table = format_sts_table({"before": before, "after": after})
print(table)
(figures / "sts_table.md").write_text(table + "\n")

# %% [markdown]
# ## Training dynamics

# %%
records = pd.DataFrame(read_jsonl(run / "metrics.jsonl"))
steps = records[records.kind == "train"]
evals = records[records.kind == "eval"]

fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
axes[0].plot(steps.step, steps.loss, marker=".")
axes[0].set(title="training loss", xlabel="step", ylabel="InfoNCE")
axes[1].plot(steps.step, steps["sim/pos_cos"], marker=".", label="positive pairs")
axes[1].plot(steps.step, steps["sim/neg_cos"], marker=".", label="in-batch negatives")
axes[1].set(title="mean cosine similarity", xlabel="step")
axes[1].legend()
axes[2].plot(evals.step, evals.stsb_dev, marker="o")
axes[2].axhline(dev_before, ls=":", c="grey", label="before training")
axes[2].set(title="STS-B dev (Spearman x100)", xlabel="step")
axes[2].legend()
fig.tight_layout()
for suffix in ("png", "pdf"):
    fig.savefig(figures / f"dynamics.{suffix}", dpi=120, metadata={"png": {"Software": None}, "pdf": {
        "Creator": None, "Producer": None, "CreationDate": None}}[suffix])
plt.show()
