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
# # geometry: alignment, uniformity, anisotropy and the layers of the embedding space
#
# Across any set of runs:
#
# 1. the **alignment–uniformity plane** of each trained model and of the untuned backbone(s) the
#    runs started from, on STS-B (**ClusterNS Fig. 6**, SimCSE Fig. 2; the STS average of each model
#    is in the table under it): lower-left is better;
# 2. **trajectories** in that plane over training, from the probe records (`probe_every`: a smaller
#    set of STS-B dev sentences, so another quantity than 1's), starting from the model each run
#    started from;
# 3. **largest angle** between any two probe embeddings and **anisotropy** (their mean cosine) over
#    training (**MixCSE**'s spherical-cap argument: anisotropic embeddings fill a narrow cap);
# 4. the **per-layer [CLS] similarity** to the last layer on STS-B test sentences, of the base
#    backbone and of each trained model (**APINCSE Fig. 3**), and over training from the probe records.
#
# Run it with a study (`cselab reproduce cpu-demo`), on its defaults after that study has trained
# (`runs = None`), or by hand: `papermill geometry.ipynb out.ipynb -y "runs: {simcse: runs/simcse-…}"`.
# Evaluations are cached in each run directory (`evaluations/`): re-running costs nothing.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/geometry"  # where figures are written (PNG + PDF)
tables_dir = "reports/geometry/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
geometry_split = "test"  # STS-B split for alignment and uniformity: test, the sentences the STS-B score encodes (no encode of its own); "all" (train+dev+test) as the papers, slower
geometry_max_pairs = None  # a seeded sample of this many pairs of the split (None: all of them, the protocol)
sts_tasks = ["STSBenchmark"]  # STS tasks of the colour: the demo's STS-B test; None takes the 7-task table of results.json (evaluated when absent, about 80 s a MiniLM run on 2 cores)
layer_split = "test"  # STS-B split whose sentences the per-layer [CLS] profile is measured on (APINCSE Fig. 3: test)
layer_sentences = 128  # distinct sentences of that split (the first ones) for the profile (the demo's)
start_probes = True  # measure each run's starting model on its probe set (the step-0 point of the trajectories)
group_by = ["label"]  # what makes the table's group: "label" (the run label without its seed) and/or config keys, e.g. ["method"]

# %%
import pandas as pd

from cselab import workbench
from cselab.workbench.analysis.apincse import layer_cls_similarity
from cselab.workbench.analysis.compare import describe_sts_average, sts_results
from cselab.workbench.comparisons import group_runs, with_groups
from cselab.workbench.analysis.logged import (base_groups, runs_logging, start_probe_records,
                                    best_checkpoint_words, training_facts, untuned_name, untuned_starts)
from cselab.model.data import load_stsb
from cselab.model.evaluate.cache import evaluate_runs, evaluation_frame
from cselab.model.evaluate.geometry import describe_geometry
from cselab.workbench.plots import (add_note, legend_outside, plot_alignment_trajectories, plot_alignment_uniformity,
                          plot_layer_profile, plot_metric_grid, plot_training_curves)
from cselab.model.rundir import read_config, read_metrics
from cselab.workbench.labels import display_name
from cselab.workbench.plots.style import dashed_controls_note

workbench.setup()
runs = workbench.load_runs(runs, need_best=True)   # their models: one line if a run has none
print(f"{len(runs)} runs: {', '.join(runs)}")

# %% [markdown]
# ## Alignment and uniformity of the trained models (ClusterNS Fig. 6)
#
# ℓ_align: mean squared distance of the STS-B pairs scored above 4; ℓ_uniform: log mean Gaussian
# potential over all STS-B sentences of the split (Wang & Isola 2020); with `geometry_max_pairs`, of
# a seeded sample of the split's pairs (cheaper, noisier). Each model in its method's colour
# (the untuned backbones grey: the step-0 snapshot of a run from each start, the reference the
# trained models moved from); its STS average (the final table of `results.json`, or the
# `sts_tasks` evaluated when asked or absent) is in the table below (the paper_clusterns notebook
# draws Fig. 6 coloured by it). On the cpu-demo study (16 steps, one seed per method) no interval
# over seeds is drawn, so the order of the trained points among themselves is one run's, not a
# finding; what reads is that every trained model moved from its untuned start towards lower
# ℓ_uniform and higher ℓ_align.

# %%
geometry_options = {"split": geometry_split, **({"max_pairs": geometry_max_pairs} if geometry_max_pairs else {})}
geometry = evaluate_runs(runs, "geometry", data_dir=data_dir, **geometry_options)
sts = sts_results(runs, sts_tasks, data_dir)
colour = describe_sts_average(sts_tasks)
points = with_groups(evaluation_frame(geometry, runs, config_keys=()), group_runs(runs, group_by))
points[colour] = [sts[label]["avg"] for label in points["run"]]
starts = untuned_starts(runs)   # {untuned <backbone>: a run whose step-0 snapshot is that model}
if starts:
    before = evaluate_runs(starts, "geometry", model="step-0", data_dir=data_dir, **geometry_options)
    before_sts = sts_results(starts, sts_tasks, data_dir, model="step-0")
    untuned = evaluation_frame(before).assign(group=list(before), seed=None)
    untuned[colour] = [before_sts[name]["avg"] for name in untuned["run"]]
    points = pd.concat([points, untuned], ignore_index=True)
facts = training_facts(runs)
fig = plot_alignment_uniformity(points, label="run", quantity="STS-B pairs")
add_note(fig, f"{describe_geometry(next(iter(geometry.values())))}. One point per model: {facts.each}; "
              "untuned: the model before training (step 0).")
workbench.show(fig, f"{figures_dir}/alignment_uniformity");

# %%
table = points[["run", "group", "seed", "alignment", "uniformity", "mean_cos", "largest_angle", colour]].round(
    {"alignment": 4, "uniformity": 4, "mean_cos": 4, "largest_angle": 2, colour: 2})
table["seed"] = ["–" if pd.isna(s) else int(s) for s in table["seed"]]   # an untuned model has no training seed
table = table.rename(columns={"mean_cos": "anisotropy (mean cos)", "largest_angle": "largest angle (°)"})
workbench.save_table(table, "geometry", tables_dir)
table

# %% [markdown]
# ## Trajectories over training (probe records)
#
# Each run's probe set (the first `probe_sentences` distinct STS-B dev sentences) measured every
# `probe_every` steps; the first point is the model the run started from (the trainer probes it at
# step 0; for older runs it is measured here when `start_probes`).

# %%
probed = runs_logging(runs, "alignment", kind="probe")
if probed:
    probes = read_metrics(probed, "probe")
    start = start_probe_records(probed, data_dir) if start_probes else None   # runs made before the step-0 probe
    if start is not None and len(start):
        probes = pd.concat([start, probes], ignore_index=True)
    first = probes.dropna(subset=["positive_pairs"]).iloc[0]
    probe_words = (f"the probe set ({int(first['sentences'])} STS-B dev sentences; ℓ_align over its "
                   f"{int(first['positive_pairs'])} pairs scored > 4)")
    # one panel per starting model: runs from the same model share their first point
    panels = {f"from: {name.removeprefix('untuned ')}": [label for label in labels if label in probed]
              for name, labels in base_groups(probed).items()}
    fig = plot_alignment_trajectories(probes, panels, quantity="probe set")
    add_note(fig, f"Each dot: one probe of {probe_words}, every {read_config(next(iter(probed.values())))['probe_every']} "
                  f"steps from step 0 (before training); {training_facts(probed).runs}. Lower-left is better.")
    workbench.show(fig, f"{figures_dir}/alignment_uniformity_trajectories");
else:
    print("no probe records in these runs: train with probe_every to get trajectories")

# %% [markdown]
# ## Largest angle and anisotropy over training (MixCSE)
#
# The largest angle between two probe embeddings (the width of the cap they occupy) and their mean
# cosine (anisotropy), with alignment and uniformity, one panel each.

# %%
if probed:
    keys = ["largest_angle", "mean_cos", "alignment", "uniformity"]
    # short titles, one line each at this width; what they are measured on is the note's
    fig = plot_metric_grid(probes, keys, ncols=2, panel_width=2.2,
                           labels={"largest_angle": "largest angle (°)", "mean_cos": "anisotropy (mean cos)",
                                   "alignment": r"$\ell_{align}$", "uniformity": r"$\ell_{uniform}$"})
    add_note(fig, f"Each point: one probe of {probe_words}; all four panels on the probe set; step 0: before "
                  f"training; {training_facts(probed).runs}. "
                  + dashed_controls_note([display_name(label) for label in probed]))
    workbench.show(fig, f"{figures_dir}/probe_geometry");

# %% [markdown]
# ## Per-layer [CLS] similarity to the last layer (APINCSE Fig. 3)
#
# APINCSE's Fig. 3 plots, for the STS-B test sentences, the similarity of each layer's [CLS] to the
# last layer's against the layer (layer 11 of BERT-base is the closest; APINCSE draws its
# interlayer negatives from the closest layer, eq. 16–17). Here: over the first `layer_sentences`
# distinct sentences of the STS-B `layer_split` split, the mean cosine between each layer's [CLS]
# vector (0 = embedding output) and the last layer's, for each backbone the runs started from and
# each trained model (`best/`). Profiles that coincide (the ablations of one method can) are
# drawn dashed with their own markers, so that none hides another. Where the trained profiles lie
# far from the untuned one, the untuned backbone gets a panel of its own at the same scale, so
# that the trained profiles, within a few hundredths of each other, are not squeezed under the
# gap. On the cpu-demo study (16 steps, one seed) the order of the trained profiles within those
# few hundredths is one run's: what reads is that training moved every layer's [CLS] away from the
# last layer's alike.

# %%
split = load_stsb(data_dir)[layer_split]
sentences = list(dict.fromkeys([*split.sentences1, *split.sentences2]))[:layer_sentences]
backbones = dict.fromkeys(read_config(path)["model"] for path in runs.values())
layers = {untuned_name(model): layer_cls_similarity(model, sentences) for model in backbones}
layers.update({label: layer_cls_similarity(path / "best", sentences) for label, path in runs.items()})
fig = plot_layer_profile({name: result.mean for name, result in layers.items()})
split = len(fig.axes) > 1 and fig.axes[1].get_visible()
if not split:
    fig = legend_outside(fig)
add_note(fig, f"Each point: the mean over {len(sentences)} STS-B {layer_split} sentences of the cosine between a "
              f"layer's [CLS] and the last layer's (which is 1 by definition, not drawn); trained models: "
              f"{training_facts(runs).runs}; {best_checkpoint_words(runs)}."
              + (" The two panels share one scale (the same span of the y axis), not one offset: every trained "
                 "profile lies below the untuned one." if split else ""))
workbench.show(fig, f"{figures_dir}/layer_cls_similarity");

# %%
# backbones of different depths: a shorter profile has no value (empty) at the deeper layers
profile_table = pd.DataFrame({name: pd.Series(result.mean) for name, result in layers.items()}).round(4)
profile_table.index.name = "layer"
workbench.save_table(profile_table, "layer_cls_similarity", tables_dir)
profile_table

# %% [markdown]
# Over training, from the probe records: the similarity of the layer below the last to the last
# layer — the layer APINCSE draws its interlayer negatives from (M = −2), and the closest to the
# last in the profile above — at every probe, one line per run. (The whole profile at every probe
# is in the probe records, `layer_cls_sim`; it moves as the figure above shows, every layer alike.)

# %%
if probed:
    layer_probes = probes.dropna(subset=["layer_cls_sim"]).copy()
    depths = sorted({len(values) - 1 for values in layer_probes["layer_cls_sim"]})   # one per backbone depth
    last = depths[0]
    layer_probes["below_last"] = [values[-2] for values in layer_probes["layer_cls_sim"]]
    layers_words = (f"layer {last - 1} and of the last layer ({last})" if len(depths) == 1 else
                    f"layer below the last and of the last layer (layer {', '.join(map(str, depths))} of the backbones)")
    fig = legend_outside(plot_training_curves(layer_probes, ("below_last",), kind="probe",
                                              ylabel=f"cos(layer {last - 1} [CLS], layer {last} [CLS])"
                                              if len(depths) == 1 else "cos(layer below the last, last layer)"))
    add_note(fig, f"Each point: the mean over the probe set's {int(first['sentences'])} STS-B dev sentences of the "
                  f"cosine between the [CLS] of the {layers_words}, at one probe; step 0: before training; "
                  f"{training_facts(probed).runs}.")
    workbench.show(fig, f"{figures_dir}/layer_cls_similarity_probes");
