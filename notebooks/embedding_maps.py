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
# runs started from ("untuned": the step-0 snapshot of the first run of each starting model) and by
# each run's trained model (`best/`), each projected to 2-D with UMAP (seeded; PCA below 100
# points) and aligned onto the map of the model its run started from (Procrustes: rotation,
# reflection, uniform scale), one figure per starting model with one colour per class. The
# embedding maps of the papers (before / after contrastive training) on any runs.
#
# Run it with a study (`cselab reproduce cpu-demo`), on its defaults after that study has trained
# (`runs = None`), or by hand: `papermill embedding_maps.ipynb out.ipynb -y "runs: {simcse: runs/simcse-…}" -p per_class 40`.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/embedding_maps"  # where figures are written (PNG + PDF)
tables_dir = "reports/embedding_maps/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
per_class = 15  # DBpedia abstracts per class (a seeded sample; the demo's)
classes = None  # class names to keep, e.g. ["Company", "Artist", "Plant"]; None: all 14
split = "test"  # DBpedia split the abstracts come from (test, val)
projection = "auto"  # "umap", "pca", or "auto" (UMAP from 100 points on, PCA below)
n_neighbors = 15  # UMAP neighbours
max_length = 64  # truncate the abstracts to this many tokens (the demo's; None: the model's limit)
seed = 0  # seed of the sample and of UMAP
include_base = True  # add the model(s) the runs started from as "untuned" maps
align = True  # rotate/reflect/scale each trained model's map onto its starting model's (Procrustes)
panels_per_figure = 5  # maps per figure (a page-wide grid of 3 columns; the classes' legend takes a free cell)

# %%
import pandas as pd

from cselab import workbench
from cselab.workbench.analysis.logged import base_encoders, base_groups, training_facts
from cselab.workbench.analysis.umap import umap_frames
from cselab.model.data.clustering import load_dbpedia
from cselab.model.encoder import SentenceEncoder
from cselab.workbench.neighbours import procrustes_align
from cselab.workbench.plots import add_note, plot_umap_panels

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
# ## Maps, one figure per starting model (at most `panels_per_figure` maps each)
#
# The projection is fitted per model: the maps compare by how well each class forms its own region,
# and each title carries a number for it that no map distorts: the leave-one-out 5-nearest-neighbour
# accuracy of the classes in the model's own embedding space (cosine). On the cpu-demo study's
# 16-step, one-seed runs a difference of a few hundredths between two models is within what another
# sample of texts or another training seed moves it: the maps show what training did to the
# space, not which method separates the classes best.
# With `align`, each trained model's map is turned onto the map of the model its run started
# from, so that where a class went can be read too (positions compare, the axes mean nothing).

# %%
starts = base_groups(runs)
order = []   # each start's untuned map, then its runs'
for name, labels in starts.items():
    order += ([name] if name in frames else []) + [label for label in labels if label in frames]
order += [name for name in frames if name not in order]
if align:
    for name, labels in starts.items():
        if name in frames:
            for label in labels:
                xy = procrustes_align(frames[label][["x", "y"]].to_numpy(), frames[name][["x", "y"]].to_numpy())
                attrs = dict(frames[label].attrs)   # the projection used and the kNN accuracy
                frames[label] = frames[label].assign(x=xy[:, 0], y=xy[:, 1])
                frames[label].attrs.update(attrs)
chunks = []
for name, labels in starts.items():
    members = [n for n in order if n == name or n in labels]
    chunks += [members[i:i + panels_per_figure] for i in range(0, len(members), panels_per_figure)]
method = str(next(iter(frames.values())).attrs["method"]).upper()
for number, chunk in enumerate(chunks, start=1):
    fig = plot_umap_panels({n: frames[n] for n in chunk})
    add_note(fig, f"{method} of each model's embeddings of the same {len(data)} DBpedia test abstracts ({per_class} per "
                  f"class, seeded sample), fitted per model (seed {seed})"
                  + ("; each trained model's map rotated, reflected and scaled onto its untuned start's (Procrustes)"
                     if align else "; the axes of two maps are not comparable")
                  + f". Trained models: best/, {training_facts(runs).each}. Under each title: the leave-one-out "
                    f"accuracy of a 5-nearest-neighbour vote by cosine in the model's own embeddings (not the map; "
                    f"chance {1 / data.n_clusters:.2f}), one number per model on these {len(data)} texts.")
    workbench.show(fig, f"{figures_dir}/umap_{number}")

# %%
figure_of = {n: number for number, chunk in enumerate(chunks, start=1) for n in chunk}
panels = pd.DataFrame([{"panel": name, "figure": figure_of[name], "projection": frames[name].attrs["method"],
                        "5-NN accuracy": round(frames[name].attrs.get("knn_accuracy", float("nan")), 3),
                        "model": f"start of {', '.join(starts[name])}" if name in starts else f"{runs[name].name}/best",
                        "points": len(frames[name])} for name in order])
workbench.save_table(panels, "umap_panels", tables_dir)
panels
