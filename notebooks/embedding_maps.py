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
# # embedding_maps: the embedding space before and after training, coloured by class
#
# DBpedia abstracts (`per_class` of each of its 14 classes by default) embedded by the backbone the
# runs started from ("before": the step-0 snapshot of the first run of each starting model) and by
# each run's trained model (`best/`), each projected to 2-D with UMAP (seeded; PCA below 100
# points), side by side with one colour per class. The embedding maps of the papers (before /
# after contrastive training) on any runs.
#
# Run it with a study (`cselab reproduce cpu-demo`), on its defaults after that study has trained
# (`runs = None`), or by hand: `papermill embedding_maps.ipynb out.ipynb -y "runs: {simcse: runs/simcse-…}" -p per_class 40`.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/embedding_maps"  # where figures are written (PNG + PDF)
tables_dir = "reports/embedding_maps/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
per_class = 30  # DBpedia abstracts per class (a seeded sample)
classes = None  # class names to keep, e.g. ["Company", "Artist", "Plant"]; None: all 14
split = "test"  # DBpedia split the abstracts come from (test, val)
projection = "auto"  # "umap", "pca", or "auto" (UMAP from 100 points on, PCA below)
n_neighbors = 15  # UMAP neighbours
max_length = None  # truncate the abstracts to this many tokens (None: the model's limit)
seed = 0  # seed of the sample and of UMAP
include_base = True  # add the model(s) the runs started from as "before" panels
panels_per_figure = 4  # panels side by side in one figure

# %%
import pandas as pd

from cselab import workbench
from cselab.analysis.logged import base_encoders, base_groups
from cselab.analysis.umap import umap_frames
from cselab.data.clustering import load_dbpedia
from cselab.encoder import SentenceEncoder
from cselab.plots import plot_umap_panels

workbench.setup()
runs = workbench.load_runs(runs, need_best=True)   # their models: one line if a run has none
data = load_dbpedia(split, data_dir).sample_per_class(per_class, seed, classes)
print(f"{len(data)} abstracts of {data.n_clusters} classes; {len(runs)} runs: {', '.join(runs)}")

# %%
models = dict(base_encoders(runs)) if include_base else {}
models.update({label: SentenceEncoder.from_pretrained(path / "best") for label, path in runs.items()})
frames = umap_frames(models, list(data.texts), data.label_words(), projection, seed, max_length=max_length,
                     n_neighbors=n_neighbors)

# %% [markdown]
# ## Maps, `panels_per_figure` side by side
#
# The projection is fitted per model, so axes are not comparable between panels: what compares is
# how well each class forms its own region.

# %%
names = list(frames)
for start in range(0, len(names), panels_per_figure):
    part = {name: frames[name] for name in names[start:start + panels_per_figure]}
    workbench.show(plot_umap_panels(part, max_legend=20), f"{figures_dir}/umap_{start // panels_per_figure + 1}")

# %%
starts = base_groups(runs)
panels = pd.DataFrame([{"panel": name, "figure": i // panels_per_figure + 1, "projection": frames[name].attrs["method"],
                        "model": f"start of {', '.join(starts[name])}" if name in starts else f"{runs[name].name}/best",
                        "points": len(frames[name])} for i, name in enumerate(names)])
workbench.save_table(panels, "umap_panels", tables_dir)
panels
