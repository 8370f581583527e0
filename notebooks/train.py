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
# # train: one run from a config
#
# A thin wrapper around `cselab.model.train.train`: a preset, a config file or a full config mapping,
# plus overrides → a run directory (`<runs root>/<method>-<config hash>/`). This is the notebook a
# study (`cselab reproduce`) executes for each of its runs; run it yourself with papermill, e.g.
#
#     papermill train.ipynb out.ipynb -p config quickstart -y "overrides: {max_steps: 20}"

# %% tags=["parameters"]
config = "quickstart"  # preset name, YAML/JSON config file, or a full config mapping (what a study passes)
overrides = {}  # {key: value}; dotted keys for method sections, e.g. {"mixcse.mix_lambda": 0.3}
output_dir = None  # runs root; None keeps the config's output_dir (default runs/)
resume = False  # continue an interrupted run from its last checkpoint
overwrite = False  # replace an existing run of the same config (only when asked)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
threads = 0  # torch CPU threads; 0: torch's default
progress = True  # show the training progress bar

# %%
import json

import torch

from cselab import workbench
from cselab.model.config import load_config
from cselab.model.evaluate import format_sts_table
from cselab.model.io import read_json
from cselab.workbench.studies.status import checkpoint_step
from cselab.model.train import RunDir, train

if threads:
    torch.set_num_threads(threads)
workbench.setup()
cfg = load_config(config, overrides)
# the runs root from the project root (JupyterLab starts this kernel in notebooks/; a study sets the root)
cfg = load_config(config, {**overrides, "output_dir": str(workbench.project_path(output_dir or cfg.output_dir))})
run_dir = RunDir.for_config(cfg).path
print(f"run directory: {run_dir}")
if resume:
    step = checkpoint_step(run_dir)
    print(f"resuming from the checkpoint at step {step}" if step else "no checkpoint yet: training from step 0")
print(json.dumps(cfg.to_dict(), indent=1))

# %%
run = train(cfg, resume=resume, overwrite=overwrite, data_dir=data_dir, progress=progress)

# %% [markdown]
# ## Results

# %%
results = read_json(run / "results.json")
print(f"run: {run}")
print(f"steps: {results['steps']} of {results['total_steps']}; best STS-B dev {results['best_stsb_dev']:.2f} "
      f"at step {results['best_step']}; {results['train_seconds']:.1f} s of training")
if "sts" in results:
    print(format_sts_table({run.name: results["sts"]}))
