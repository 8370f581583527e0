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
# A small analysis notebook for the study and workbench tests: the training loss of every run
# (shown three ways: a cell ending in `fig`, `display(fig)`, `workbench.show`) and a table of
# each run's best STS-B dev.

# %% tags=["parameters"]
runs = {}  # {label: run directory}
figures_dir = "figures/summary"
tables_dir = "reports/summary/tables"
profile = "cpu"
title = "training loss"

# %%
import pandas as pd
from IPython.display import display

from cselab import workbench
from cselab.model.io import read_json
from cselab.workbench.plots import plot_training_curves

workbench.setup()
runs = workbench.load_runs(runs)
fig = plot_training_curves(runs, keys=("loss",), title=f"{title} ({profile})")
fig

# %%
display(fig)

# %%
written = workbench.show(fig, f"{figures_dir}/loss")
print(sorted(p.name for p in written))

# %%
rows = [{"run": label, "best STS-B dev": read_json(path / "results.json")["best_stsb_dev"]}
        for label, path in runs.items()]
table = pd.DataFrame(rows).set_index("run")
print(workbench.save_table(table, "best_dev", tables_dir))

# %%
import torch

print(f"intra-op threads: {torch.get_num_threads()}")   # what the study gave this kernel
