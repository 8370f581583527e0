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
# # dynamics: what happens to the similarities during training
#
# Across any set of runs, from their run directories:
#
# 1. **loss parts** over training (InfoNCE and each method's terms, one panel each);
# 2. **similarity curves** — positive pairs, in-batch negatives, and whatever the methods logged:
#    ClusterNS's hard negatives, nearest centroids, centroid–centroid and false-negative
#    similarities, MixCSE's mixed negatives, GS-InfoNCE's Gaussian negatives, APINCSE's augmented
#    positives and interlayer negatives (**ClusterNS Fig. 3, 4, 5, 7, 10**); only the statistics the
#    runs logged are drawn, one figure per run plus the shared ones side by side;
# 3. **MixCSE's scores** (cos/τ of positive, random-negative and mixed-negative pairs) from the train
#    records and, recomputed on fixed STS-B dev sentences, from each run's model snapshots; and the
#    **gradient norms** ‖∂L/∂z‖ of the two views (**MixCSE**, its score-dynamics figure and gradient analysis);
# 4. **GS-InfoNCE Fig. 1**: the mean of the top-4 negative cosines in random batches against batch
#    size, for a run's trained model and the backbone it started from.
#
# Run it with a study (`cselab reproduce cpu-demo` executes it on that study's runs), or on its
# defaults after that study has trained (`runs = None` finds its finished runs in `runs/`), or by
# hand: `papermill dynamics.ipynb out.ipynb -y "runs: {simcse: runs/simcse-…, mixcse: runs/mixcse-…}"`.
# The snapshot analyses need `snapshot_every`, the gradient norms `log_embedding_grad_norm: true`.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/dynamics"  # where figures are written (PNG + PDF)
tables_dir = "reports/dynamics/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
score_methods = ["simcse", "mixcse"]  # methods whose snapshots get MixCSE's score analysis ([] skips it)
score_sentences = None  # distinct STS-B dev sentences scored per snapshot (None: SCORE_SENTENCES of cselab.workbench.analysis.mixcse, 256, as paper_mixcse)
score_batch_size = 64  # batch of the score analysis (each anchor has batch − 1 negatives)
top4_methods = ["simcse", "gs_infonce"]  # methods whose trained model gets GS-InfoNCE's Fig. 1 ([] skips it)
top4_batch_sizes = [16, 32, 64, 128, 256]  # batch sizes on the x-axis
top4_batches = 20  # random batches per batch size (the paper: 100)
top4_corpus = "wiki1m-head"  # corpus the batches are drawn from
top4_sentences = 1000  # corpus sentences to draw from
runs_per_method = 1  # model analyses (scores, top-4) use the first runs of each method, this many

# %%
import pandas as pd
from IPython.display import display

from cselab import workbench
from cselab.workbench.analysis.gs_infonce import top4_curve
from cselab.workbench.analysis.mixcse import SCORE_SENTENCES, mixcse_score_series
from cselab.workbench.analysis.logged import (base_encoders, beginnings_sentence, late_starts_sentence, logged_keys,
                                    logged_statistics, method_statistic_words, pick_runs, runs_logging, same_start, shared_beginnings,
                                    training_facts)
from cselab.model.data import load_corpus, load_stsb
from cselab.model.encoder import SentenceEncoder
from cselab.model.methods.mixcse import MixCSEParams
from cselab.workbench.plots.panels import key_words
from cselab.workbench.plots import (TooFewPoints, add_note, legend_outside, plot_grad_norm, plot_metric_grid,
                          plot_similarity_dynamics, plot_statistic_families, plot_top4_curve, plot_training_curves,
                          statistic_family_note)
from cselab.workbench.plots.style import dashed_controls_note
from cselab.workbench.labels import display_name
from cselab.model.rundir import RunDir, read_metrics

workbench.setup()
score_sentences = SCORE_SENTENCES if score_sentences is None else score_sentences   # paper_mixcse's number too
runs = workbench.load_runs(runs, need_best=True)   # their models: one line if a run has none
statistics = logged_statistics(runs)
facts = training_facts(runs)   # batch size, seeds, STS-B dev sample: what a point of these curves is
print(f"{len(runs)} runs: {', '.join(runs)}")
print("similarity statistics logged:", statistics["similarity"])
print("other statistics logged:", statistics["other"])

# %% [markdown]
# ## Loss parts
#
# The total loss and each logged part (the InfoNCE term; ClusterNS's BML term already multiplied
# by λ; APINCSE's l_P and l_N), each panel on its own scale, logarithmic where the runs differ by
# orders of magnitude (MixCSE's InfoNCE has its mixed negatives in the denominator and is several
# times the others'). MixCSE's two directions (view-1 and view-2 anchors, whose mean is its InfoNCE
# term) are in the run's records (`loss/info_nce_forward`, `loss/info_nce_reverse`), not drawn.
# Two terms begin later, and the note says where: APINCSE's l_P once its queue of positives is full
# (queue size over batch size steps), ClusterNS's BML once clustering starts (the batch's positive
# cosine down to its start threshold σ).

# %%
loss_keys = [k for k in logged_keys(runs, "loss") if k not in ("loss/info_nce_forward", "loss/info_nce_reverse")]
fig = plot_metric_grid(runs, loss_keys, logy=True, labels={"loss/info_nce": "InfoNCE term"})
panels = {k: "InfoNCE term" if k == "loss/info_nce" else " ".join(key_words(k).split()) for k in loss_keys}
late = {"loss/augmented_positive.l_p": "its queue of positives full",
        "loss/clusterns.bml": "clustering started at its start threshold"}
train_records = read_metrics(runs, "train")
add_note(fig, " ".join(filter(None, [
    f"Each point: the loss of one training batch ({facts.batch}) at that step; {facts.runs}. A panel holds the "
    "runs that have the term; MixCSE's InfoNCE term has its mixed negatives in the denominator.",
    late_starts_sentence(train_records, panels, late), beginnings_sentence(train_records, panels)])))
workbench.show(fig, f"{figures_dir}/loss_parts");

# %% [markdown]
# ## Similarity of positive pairs and in-batch negatives, all runs
#
# Mean cosine of the two dropout views of a sentence (positive pairs) and of different sentences
# in the batch (in-batch negatives), every logging step: one small panel per run on one shared
# axis (eight runs' sixteen lines on one panel tangle), so that each run's two curves read on
# their own and the panels compare by position. On the cpu-demo study (16 steps, one seed) the
# differences between runs are one batch's: the shape they share — negatives pulled apart much
# faster than positives — is the reading, not the order of the runs.

# %%
shared = [s for s in ("pos_cos", "neg_cos") if s in statistics["similarity"]]
small_multiples = len(runs) > 2
fig = plot_similarity_dynamics(runs, shared, panels="run", ncols=4) if small_multiples else \
    legend_outside(plot_similarity_dynamics(runs, shared))
add_note(fig, f"Each point: the mean cosine over one training batch ({facts.batch}: its {facts.batch_size} positive "
              f"pairs, its in-batch negative pairs); {facts.runs}"
              + ("; a panel per run, one y axis for all." if small_multiples else "."))
workbench.show(fig, f"{figures_dir}/similarity_all_runs");

# %% [markdown]
# ## Every pair type, one figure per run (ClusterNS Fig. 3, 4, 5, 7, 10)
#
# Each run's own statistics on one axis: for ClusterNS the positive pairs, in-batch negatives, the
# hard negatives (second-nearest centroid c_i2), the nearest centroid c_i1, the mean similarity
# between centroids and the false negatives; for MixCSE the mixed negatives of both directions
# (view-1 anchors and, "reverse", view-2 anchors: nearly symmetric, so their curves nearly
# coincide); for GS-InfoNCE the Gaussian noise negatives. A curve that lies on an earlier one is
# drawn dashed with its own markers, so that both stay visible.
#
# A run that logged more than four statistics (ClusterNS) is drawn in panels by what they are
# about — the pairs its loss contrasts, its clusters, and the test that starts its clustering —
# because in one panel the in-batch negatives, the false negatives and the mean over all pairs of
# the batch lie within 0.02 of each other and hide one another.

# %%
for label, path in runs.items():
    own = [s for s in statistics["similarity"] if runs_logging({label: path}, f"sim/{s}")]
    if len(own) > 4:
        fig = plot_statistic_families({label: path}, own)
    else:
        fig = legend_outside(plot_similarity_dynamics({label: path}, own, panels="run"))
    add_note(fig, f"Each point: a mean cosine over one training batch ({facts.batch}) at that step; one run "
                  f"({facts.seed_of(label)}). " + statistic_family_note({label: path}, own))
    workbench.show(fig, f"{figures_dir}/similarity_{label}")

# %% [markdown]
# ## The methods' other statistics
#
# Statistics that are not cosines (ClusterNS: the share of the batch's anchors whose cluster holds
# another sample of the batch — a false negative —, how many of its K clusters hold a sentence of
# the batch; APINCSE: the attention weight an augmented positive keeps on the positive itself, eq.
# 14), one panel each. How full a neighbour queue is (`queue_fill`) is a ramp to 1 fixed by the
# queue's size and the batch size, not a measurement: it is left out and the note says when the
# queue is full.

# %%
other_titles, other_notes = method_statistic_words(runs, statistics["other"])
other = [f"sim/{s}" for s in statistics["other"] if s in other_titles]
if other:
    fig = plot_metric_grid(runs, other, labels={f"sim/{s}": words for s, words in other_titles.items()})
    add_note(fig, f"Each point: one training batch ({facts.batch}) at that step; {facts.runs}. ClusterNS's "
                  "statistics start when its clustering starts, the attention weight when the neighbour queue is "
                  "full. " + " ".join(other_notes))
    workbench.show(fig, f"{figures_dir}/method_statistics")
else:
    print("no method statistics besides cosines (and queue fill) in these runs")

# %% [markdown]
# ## MixCSE: positive, random-negative and mixed-negative scores (cos/τ)
#
# From the train records: the batch means divided by each run's τ. MixCSE's argument is that the
# mixed negatives stay hard (high score) while random negatives become easy, keeping a gradient
# signal. SimCSE runs have no mixed negatives in their records.

# %%
mixcse_runs = runs_logging(runs, "sim/mixcse.mixed_cos")
if mixcse_runs:
    # SimCSE from the same start (backbone and pooler) as the MixCSE runs: the comparison is of the losses
    compared = {**same_start(pick_runs(runs, ["simcse"], per_method=None), next(iter(mixcse_runs.values()))),
                **mixcse_runs}
    fig = legend_outside(plot_similarity_dynamics(compared, ["pos_cos", "neg_cos", "mixcse.mixed_cos"],
                                                  per_temperature=True))
    add_note(fig, f"cos / τ: the batch mean cosine of each pair type divided by the run's τ; each point one "
                  f"training batch ({facts.batch}); {facts.runs_of(compared)}. SimCSE has no mixed negatives.")
    workbench.show(fig, f"{figures_dir}/mixcse_scores_records")
else:
    print("no MixCSE run among these runs: no mixed-negative records")

# %% [markdown]
# The same three scores recomputed on the model snapshots (`snapshot_every`) with fixed sentences
# (the first `score_sentences` distinct STS-B dev sentences, batches of `score_batch_size`) and fixed
# dropout draws, so the curves differ by the model only. SimCSE has no mixed negatives: its
# "mixed negative" score is hypothetical, MixCSE's default λ applied to SimCSE's embeddings (the
# mixed negatives it would have had), and the figure says so.

# %%
score_runs = pick_runs(runs, score_methods, runs_per_method)
score_runs = {label: path for label, path in score_runs.items() if RunDir(path).snapshots()}
if score_runs:
    dev = load_stsb(data_dir)["dev"]
    sentences = list(dict.fromkeys(dev.sentences1 + dev.sentences2))[:score_sentences]
    scores = mixcse_score_series(score_runs, sentences, batch_size=score_batch_size)
    workbench.save_table(scores.round(3), "mixcse_scores_snapshots", tables_dir)
    hypothetical = [label for label, path in score_runs.items() if "mixcse" not in RunDir(path).read_config()]
    words = {"mixed_negative": "mixed negative (" + ", ".join(map(display_name, hypothetical)) + ": hypothetical)"
             } if hypothetical else {}
    fig = legend_outside(plot_similarity_dynamics(scores, ("positive", "random_negative", "mixed_negative"),
                                                  ylabel="cos / τ", labels=words))
    add_note(fig, f"Each point: the mean cos / τ over the {len(sentences)} first distinct STS-B dev sentences in "
                  f"batches of {score_batch_size}, at a model snapshot (step 0: before training); one run per "
                  "method. " + (f"{', '.join(map(display_name, hypothetical))}: no mixed negatives in training; "
                                f"its values are mixtures of its own embeddings with MixCSE's λ = {MixCSEParams().mix_lambda:g}."
                                if hypothetical else ""))
    workbench.show(fig, f"{figures_dir}/mixcse_scores_snapshots")
    display(scores.round(3))
else:
    print(f"no run of {score_methods} with model snapshots: train with snapshot_every to get this analysis")

# %% [markdown]
# ## Gradient norms ‖∂L/∂z‖ (MixCSE gradient analysis)
#
# Mean norm of the loss gradient with respect to each view's embeddings: as negatives become
# easy, SimCSE's gradient fades; hard (mixed) negatives keep it up. A log axis where one method's
# norms are ten times another's; runs whose lines coincide over the first steps are named in the
# note. On the cpu-demo study (16 steps, one seed) only MixCSE's tenfold gap is larger than what one
# batch moves: the order of the other runs is not a finding.

# %%
grad_runs = runs_logging(runs, "grad/z1_norm")
if grad_runs:
    fig = legend_outside(plot_grad_norm(grad_runs))
    together = shared_beginnings(read_metrics(grad_runs, "train"), "grad/z1_norm")
    add_note(fig, f"Each point: the mean over the {facts.batch_size} sentences of one training batch of the norm "
                  f"of the loss gradient with respect to each view's embedding; {facts.runs_of(grad_runs)}. "
                  + ("Lines on one another at the first steps (the same loss until a method's term begins): "
                     + "; ".join(f"{', '.join(map(display_name, group))} to step {step:g}" for group, step in together)
                     + ". " if together else "")
                  + dashed_controls_note([display_name(label) for label in grad_runs]))
    workbench.show(fig, f"{figures_dir}/gradient_norms")
else:
    print("no gradient norms recorded: train with log_embedding_grad_norm: true")

# %% [markdown]
# ## GS-InfoNCE Fig. 1: the hardest in-batch negatives against batch size
#
# For random batches of B corpus sentences: the mean of the 4 highest cosines between two
# different sentences (texts: a repeated one is counted once), averaged over `top4_batches` batches
# (error bars: their std). Larger batches
# hold harder negatives; the trained model and the backbone it started from side by side.

# %%
top4_runs = pick_runs(runs, top4_methods, runs_per_method)
if not top4_methods:
    print("top4_methods is empty: GS-InfoNCE Fig. 1 is not drawn here (the paper_gs_infonce notebook draws it)")
elif top4_runs:
    corpus = load_corpus(top4_corpus, top4_sentences, data_dir)
    sizes = [b for b in top4_batch_sizes if b <= len(set(corpus))]   # batches of distinct texts (top4_curve)
    curves = {name: top4_curve(encoder, corpus, sizes, top4_batches)
              for name, encoder in base_encoders(top4_runs).items()}
    for label, path in top4_runs.items():
        curves[label] = top4_curve(SentenceEncoder.from_pretrained(path / "best"), corpus, sizes, top4_batches)
    table = pd.concat(curves, names=["model"]).reset_index(0)
    workbench.save_table(table.round(4), "top4_curve", tables_dir)
    workbench.show(plot_top4_curve(curves), f"{figures_dir}/top4_vs_batch_size")
    display(table.round(4))
else:
    print(f"no run of {top4_methods}: nothing to draw for GS-InfoNCE Fig. 1")

# %% [markdown]
# ## STS-B dev during training
#
# Every `eval_every` steps and at step 0 (the backbone before training, with the run's pooler:
# the layer-attention pooler of the APINCSE runs starts elsewhere than [CLS]), on the runs' STS-B
# dev sample (`dev_max_pairs`; all 1,500 pairs when unset). On the cpu-demo study each point is
# one evaluation of one run on 250 pairs: the 2.5-point head start of the layer-attention pooler at
# step 0 is larger than the runs' spread, the order of the runs within a pooler is not.

# %%
try:   # a curve needs two evaluations: runs shorter than 2 × eval_every have one point
    dev_curves = plot_training_curves(runs, ("stsb_dev",), kind="eval")
except TooFewPoints as e:
    print(e)
else:
    dev_curves = legend_outside(dev_curves)
    add_note(dev_curves, f"Each point: Spearman ×100 of the cosines on {facts.dev_pairs} (one evaluation); step 0: "
                         f"before training, with each run's pooler (the layer-attention pooler starts elsewhere than "
                         f"[CLS]); {facts.runs}. " + beginnings_sentence(read_metrics(runs, "eval"), {"stsb_dev": ""}))
    workbench.show(dev_curves, f"{figures_dir}/stsb_dev");
