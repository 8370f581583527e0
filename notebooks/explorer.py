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
# # explorer: what a run's model makes of your sentences, and how its space moved during training
#
# 1. **Sentences**: choose a run and a checkpoint (`best`, `last` or a training snapshot `step N`;
#    `step 0` is the model before training), type sentences (one a line) → their cosine-similarity
#    heat-map and each sentence's nearest neighbours in a sample of a corpus.
# 2. **Snapshots**: slide over the run's training snapshots (`snapshot_every`) → a 2-D map (UMAP,
#    or PCA for fewer than 100 points) of a labelled sample, e.g. DBpedia's 14 classes. The maps of
#    all snapshots are aligned to the last one (Procrustes: rotation, reflection, scale), so points
#    move between snapshots while the axes stay put. UMAP maps fitted one by one can differ by more
#    than a rotation (a class on top in one, at the bottom in the next), which no rotation undoes:
#    `align = "aligned_umap"` fits the snapshots' maps together (umap-learn's AlignedUMAP, each map
#    tied to the next on the same texts; minutes rather than seconds), the cpu-demo study's choice.
#    On that study's 16-step runs the maps move little: what they show is one run's training, not
#    how a method arranges the classes.
#
# No paper figure is regenerated here: it is a tool for looking at runs. With `interactive = False`
# (papermill, headless) it draws the same views once, statically: the heat-map and neighbour table
# for `sentences`, and a grid with one panel per snapshot instead of the slider.
#
# **Run it** in JupyterLab (`make lab`, then open `notebooks/explorer.py`: it opens as a
# notebook), or headless: `papermill explorer.ipynb out.ipynb -p interactive False -y "runs:
# {simcse: runs/simcse-...}"`. With `runs = None` it reads the finished runs of the cpu-demo study.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished cpu-demo runs in runs/
run = None  # label of the run shown first (None: the first run; for the maps, the first with snapshots)
checkpoint = "best"  # best, last, or a snapshot such as "step 0" (the model before training)
sentences = ["A man is playing a guitar.", "Someone plays a musical instrument.", "A woman is slicing an onion.",
             "The stock market fell sharply today."]  # the sentences to compare
corpus = "wiki1m-head"  # corpus to look for neighbours in (a name or a one-sentence-a-line file)
corpus_size = 2000  # sentences sampled from it
neighbours = 5  # neighbours shown per sentence
labelled_set = "DBpedia"  # labelled sample for the maps: DBpedia or a short-text clustering set
labelled_size = 280  # texts in it (balanced over the classes)
projection = "auto"  # auto (UMAP from 100 points, PCA below), umap or pca
align = "procrustes"  # procrustes (each map aligned to the last), aligned_umap (maps fitted together, then procrustes), shared_pca (one PCA for all) or none
grid_columns = 3  # panels per row of the static snapshot grid
interactive = True  # widgets (Jupyter); False: static figures and tables (papermill, headless)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
figures_dir = "figures/explorer"  # where the static figures go (PNG + PDF)
tables_dir = "reports/explorer/tables"  # where the neighbour table goes (Markdown + CSV)

# %%
from IPython.display import display

from cselab import workbench
from cselab.workbench.neighbours import (ALIGNMENT_WORDS, checkpoint_folders, corpus_sample, labelled_sample, nearest_neighbours,
                               similarity_matrix, snapshot_folders, snapshot_projections)
from cselab.workbench.plots import add_note
from cselab.workbench.labels import display_name
from cselab.workbench.plots.similarity import plot_projection_grid, plot_similarity_heatmap

workbench.setup()
runs = workbench.load_runs(runs)
run = run if run is not None else next(iter(runs))
if run not in runs:
    raise workbench.BadParameter(f"run = {run!r} is not one of the runs; set it to one of {list(runs)} (or None)")
pool = corpus_sample(corpus, corpus_size, data_dir=data_dir)
texts, labels = labelled_sample(labelled_set, labelled_size, data_dir=data_dir)
print(f"{len(runs)} runs; {len(pool)} corpus sentences; {len(texts)} {labelled_set} texts in "
      f"{len(set(labels))} classes; checkpoints of {run}: {', '.join(checkpoint_folders(runs[run]))}")

# %% [markdown]
# ## Sentences: similarity heat-map and nearest neighbours

# %%
if interactive:
    from cselab.workbench.widgets import SimilarityExplorer

    similarity = SimilarityExplorer(runs, pool, sentences, k=neighbours, run=run, checkpoint=checkpoint)
    display(similarity.widget)
    similarity.refresh()
else:
    folder = checkpoint_folders(runs[run])[checkpoint]
    matrix = similarity_matrix(folder, sentences)
    fig = plot_similarity_heatmap(matrix, sentences, title=f"{display_name(run)}, {checkpoint}")
    add_note(fig, f"Each cell: the cosine of two sentences' embeddings under {display_name(run)}'s {checkpoint} "
                  "model (one run).")
    workbench.show(fig, f"{figures_dir}/similarity")
    table = nearest_neighbours(folder, sentences, pool, k=neighbours)
    workbench.save_table(table, "neighbours", tables_dir)
    display(table)

# %% [markdown]
# ## Snapshots: the labelled sample at each training snapshot

# %%
with_snapshots = {label: path for label, path in runs.items() if snapshot_folders(path)}
if not with_snapshots:
    print("none of the runs has snapshots: train with snapshot_every (the cpu-demo study does)")
elif interactive:
    from cselab.workbench.widgets import SnapshotExplorer

    first = run if run in with_snapshots else next(iter(with_snapshots))
    slider = SnapshotExplorer(with_snapshots, texts, labels, run=first, method=projection, align=align,
                              sample=f"{labelled_set} texts")
    display(slider.widget)
    slider.on_step()
else:
    first = run if run in with_snapshots else next(iter(with_snapshots))
    maps = snapshot_projections(snapshot_folders(with_snapshots[first]), texts, labels, projection, align)
    used = str(next(iter(maps.values())).attrs["method"]).upper()
    fig = plot_projection_grid({(f"{name} (before training)" if name == "step 0" else name): frame
                                for name, frame in maps.items()}, ncols=grid_columns, title=first)
    add_note(fig, f"{used} of {len(texts)} {labelled_set} texts ({len(set(labels))} classes, balanced sample) embedded by "
                  f"{display_name(first)}'s model snapshots; {ALIGNMENT_WORDS[align]}.")
    workbench.show(fig, f"{figures_dir}/snapshots")
