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
# # MixCSE (Zhang et al., AAAI 2022): the paper's tables and figures from a study's runs
#
# The paper's text copy (a summary) numbers its items "Knowl 1–10", not the paper's tables and figures;
# they are named here after the paper's sections (docs/glossary.md maps each name to its Knowl item).
#
# **Regenerated here**
# - **Experiment Results (STS)** — STS test sets, SimCSE vs MixCSE; the published numbers beside ours when the runs
#   start from BERT-base or BERT-large.
# - **Experiment Results (transfer)** — transfer tasks (same), and **Ablation Study** — the ablation: MixCSE, MixCSE single (mixed
#   negatives for one direction), MixCSE without the stop-gradient (STS and transfer averages).
# - Mean ± std over seeds, 95 % intervals and a paired t-test of each variant against SimCSE with
#   the same seeds (the paper gives mean ± std over 5 runs, no test).
# - **Analysis (similarity scores)** — positive, random-negative and mixed-negative scores (cos/τ) over training: from
#   the training log, and recomputed with `mixcse_scores` on STS-B dev sentences at every snapshot.
# - **Analysis (largest angle)** — the largest angle between embeddings over training (probe records);
#   **Analysis (alignment and uniformity)** — alignment and uniformity on STS-B.
# - **Contrastive Learning Framework: gradient analysis** — the gradient signal ‖∂L/∂z‖ over training.
# - **Distribution of BERT Embeddings** — the spherical cap: mean and variance of cos θ of two random points against the
#   dimension d and the cap radius ω (simulation).
# - **MixCSE section: the λ bound** — share of mixed negatives closer to the anchor than its positive,
#   against λ, before and after training.
# - The λ sweep: STS average against λ (the paper fixes λ = 0.2 and publishes no sweep).
#
# **Not regenerated**: the other baselines of the STS and transfer tables (GloVe, BERT-flow, BERT-whitening,
# IS-BERT, ConSBERT; cselab does not train them); the untuned BERT rows (pooled as those baselines
# were, not our [CLS], so not shown beside ours); ConSBERT's points in Analysis (alignment and uniformity).
#
# **Run it** with its study, `cselab reproduce paper-mixcse --profile gpu` (BERT-base, needs the
# network once), or on any runs: `papermill paper_mixcse.ipynb out.ipynb -y "runs: {simcse-s1:
# runs/simcse-..., mixcse-s1: runs/mixcse-...}"`. With `runs = None` it reads the finished runs
# of the cpu-demo study (`cselab reproduce cpu-demo`).

# %% tags=["parameters"]
runs = None  # {label: run directory} (a study passes it); None: the finished cpu-demo runs in runs/
variants = {"SimCSE": ["simcse", "simcse-large"], "MixCSE": ["mixcse", "mixcse-large"], "MixCSE single": "mixcse-single",
            "MixCSE w/o stop-gradient": "mixcse-no_sg"}  # paper variant -> the study labels of its runs (each backbone's)
lambda_sweep = ["mixcse-lambda"]  # label prefixes of the λ-sweep runs (with the MixCSE runs they form the λ curve)
sts_tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
             "SICKRelatedness"]  # STS tasks of the tables (a subset is faster; its average is not the paper's)
profile = "cpu"  # sizes for the parameters left None: cpu (minutes on 2 cores) or gpu (the paper's); studies pass it
transfer_tasks = None  # transfer tasks of the transfer table and the Ablation Study (None: gpu all 7, cpu none); [] skips them
transfer_fast = True  # 5-fold cross-validation (SimCSE's fasttest) instead of SentEval's 10
transfer_probe = "pytorch"  # SentEval's PyTorch classifier, as the published tables ran it; or "sklearn"
score_sentences = None  # STS-B dev sentences for the score and λ-bound analyses (None: gpu 1024, cpu SCORE_SENTENCES of cselab.workbench.analysis.mixcse, 256, as the dynamics notebook)
score_batch_size = 64  # batch size of those analyses (the paper's training batch)
lambdas = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # λ values of the λ-bound curve (section MixCSE)
cap_dims = [16, 64, 256, 768, 1024]  # dimensions d of the spherical-cap simulation (section Distribution of BERT Embeddings)
cap_omegas = [30, 60, 90, 120, 180]  # cap radii ω, degrees
cap_pairs = None  # simulated pairs of points per (d, ω) (None: gpu 200000, cpu 20000)
geometry_split = None  # STS-B split for alignment and uniformity: all, train, dev or test (None: gpu all, cpu dev)
geometry_max_pairs = None  # a seeded sample of this many pairs of that split (None: all of them, the protocol)
record = None  # the study's record (record.jsonl) the claims are read from; the engine passes it (None: the runs)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
figures_dir = "figures/paper_mixcse"  # where the figures go (PNG + PDF)
tables_dir = "reports/paper_mixcse/tables"  # where the tables go (Markdown + CSV)

# %%
import pandas as pd
from IPython.display import Markdown, display

from cselab.workbench import paper_tables as pt
from cselab import workbench
from cselab.workbench.analysis.mixcse import (SCORE_SENTENCES, cap_geometry_table, lambda_bound_curve, largest_angle_series,
                                              mixcse_scores)
from cselab.model.data import load_stsb
from cselab.model.data.transfer import TRANSFER_TASKS
from cselab.model.evaluate.cache import evaluate_runs, evaluation_frame
from cselab.workbench.neighbours import load_encoder, over_snapshots, snapshot_folders
from cselab.workbench.analysis.logged import base_encoder, training_facts, untuned_name
from cselab.model.evaluate.geometry import describe_geometry
from cselab.workbench.plots import (add_note, plot_alignment_uniformity, plot_cap_geometry, plot_grad_norm, plot_lambda_bound,
                          plot_seed_means, plot_similarity_dynamics, plot_sweep)
from cselab.model.rundir import read_config
from cselab.workbench.tables import summarise

workbench.setup()
transfer_tasks = pt.by_profile(profile, transfer_tasks, cpu=[], gpu=list(TRANSFER_TASKS))
score_sentences = pt.by_profile(profile, score_sentences, cpu=SCORE_SENTENCES, gpu=1024)
cap_pairs = pt.by_profile(profile, cap_pairs, cpu=20000, gpu=200000)
geometry_split = pt.by_profile(profile, geometry_split, cpu="dev", gpu="all")
runs = workbench.load_runs(runs)
found, swept = pt.select_variants(runs, variants, {"λ sweep": lambda_sweep})
sweep = pt.sweep_runs(swept["λ sweep"], found.get("MixCSE", {}))   # λ = 0.2: the MixCSE runs
groups = pt.split_by_backbone(found)
used = pt.used_runs(groups, {"sweep": sweep})
pt.groups_table(groups)

# %% [markdown]
# ## Experiment Results: STS test sets (Spearman × 100)

# %%
cost = workbench.sts_cost_note(used, sts_tasks, data_dir)
if cost:
    print(cost, flush=True)   # before the scoring starts
sts = evaluate_runs(used, "sts", data_dir=data_dir, **pt.sts_options(sts_tasks))
display(Markdown(pt.published_notes(groups, "MixCSE Experiment Results (STS)")))
sts_table = pt.comparison_table(pt.suite_summary(sts, groups, "sts", sts_tasks), pt.published_beside("mixcse", "Experiment Results (STS)", groups))
workbench.save_table(sts_table, "sts_results", tables_dir)
sts_table

# %% [markdown]
# Each variant against SimCSE over the seeds both have (paired t-test on the STS average; with
# few seeds only large, consistent differences reach p < 0.05): the raw p beside the Holm-adjusted p
# over the variants tested, and "no detectable effect" with the minimum detectable difference where
# it is not below 0.05. A variant sharing a single seed with SimCSE gets a paired bootstrap over the
# test pairs instead: test-set uncertainty, not training-seed variance.

# %%
workbench.paired_comparison_cell(sts, groups, tables_dir, sts_tasks, data_dir)

# %% [markdown]
# ## The paper's claims, checked on these runs
#
# Read this first: the claims of cselab/workbench/studies/paper-mixcse.yaml (`claims:`), fixed before any run; the
# cell says how to read its table.

# %%
workbench.claims_cell("paper-mixcse", profile, runs, record, tables_dir)

# %% [markdown]
# ## Experiment Results (transfer) and Ablation Study

# %%
if transfer_tasks:
    transfer = evaluate_runs(used, "transfer", data_dir=data_dir, tasks=transfer_tasks, fast=transfer_fast,
                             probe=transfer_probe)
    transfer_table = pt.comparison_table(pt.suite_summary(transfer, groups, "transfer", transfer_tasks),
                                         pt.published_beside("mixcse", "Experiment Results (transfer)", groups))
    workbench.save_table(transfer_table, "transfer_results", tables_dir)
    display(transfer_table)
else:
    transfer = {}
    print("transfer_tasks is empty: the transfer table skipped, the Ablation Study shows the STS average only")
averages = {f"STS {pt.average_label(sts_tasks)}": sts, **({"transfer Avg.": transfer} if transfer else {})}
ablation = {name: members for name, members in groups.items() if pt.variant_of(name).startswith("MixCSE")}
if ablation:
    ablation_table = pt.comparison_table(pt.averages_summary(ablation, averages),
                                         pt.published_beside("mixcse", "Ablation Study", ablation))
    workbench.save_table(ablation_table, "ablation_study", tables_dir)
    display(ablation_table)
else:
    print("no MixCSE runs: Ablation Study skipped")

# %% [markdown]
# ## Analysis: positive, random-negative and mixed-negative scores over training
#
# **The paper's figure** plots, on STS-B dev during training, three scores against the training
# step: the positive score hᵢᵀh'ᵢ/τ, the random-negative score hᵢᵀh'ⱼ/τ and the mixed-negative
# score hᵢᵀh̃'ᵢⱼ/τ (τ = 0.05). It reads: the positive score stays high, the random-negative one
# decays towards 0 (an angle near π/2), the mixed-negative one decreases slightly but stays well
# above it — mixed negatives keep a hard-negative signal. **Ours**, first from the training log
# (the mean cosine of each pair type in every logged batch, divided by the run's τ), one panel per
# MixCSE run:

# %%
mixing = pt.representatives(groups, [v for v in variants if v.startswith("MixCSE")])
logged = pt.runs_with(mixing, "sim/mixcse.mixed_cos")
if logged:
    fig = plot_similarity_dynamics(logged, ("pos_cos", "neg_cos", "mixcse.mixed_cos"), per_temperature=True,
                                   panels="run")
    facts = training_facts(logged)
    add_note(fig, f"cos / τ: the batch mean cosine of each pair type divided by the run's τ; each point one training "
                  f"batch ({facts.batch}); {facts.runs}.")
    workbench.show(fig, f"{figures_dir}/scores_training_log")
else:
    print("no MixCSE run with mixed-negative statistics in its log")

# %% [markdown]
# Then on the paper's sentences: recomputed at every snapshot (`snapshot_every`, step 0 = the
# untrained model) on STS-B dev sentences with `mixcse_scores` (two dropout views per batch, as in
# training; λ and τ of the run), the three scores against the step:

# %%
dev = load_stsb(data_dir)["dev"]
score_text = list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))[:score_sentences]
with_snapshots = {name: path for name, path in mixing.items() if snapshot_folders(path)}
for name, path in with_snapshots.items():
    config = read_config(path)
    scores = over_snapshots(path, lambda enc: mixcse_scores(enc, score_text, config["mixcse"]["mix_lambda"],
                                                            config["temperature"], score_batch_size))
    workbench.save_table(scores.set_index("step"), f"scores_snapshots_{pt.slug(name)}", tables_dir)
    fig = plot_similarity_dynamics(scores.assign(run=name), ("positive", "random_negative", "mixed_negative"),
                                   panels="run", ylabel="cos / τ")
    add_note(fig, f"Each point: the mean cos / τ over the first {len(score_text)} distinct STS-B dev sentences in "
                  f"batches of {score_batch_size} (two dropout views, λ = {config['mixcse']['mix_lambda']:g}) at a "
                  f"model snapshot; step 0: before training; one run ({training_facts({name: path}).seed_of(name)}).")
    workbench.show(fig, f"{figures_dir}/scores_snapshots_{pt.slug(name)}")
if not with_snapshots:
    print("no MixCSE run has snapshots (train with snapshot_every)")

# %% [markdown]
# ## Analysis (largest angle) and the gradient analysis, over training
#
# **The paper's largest-angle figure (Analysis)** plots the largest angle θ between any two STS-B sentence
# embeddings against the training step, for SimCSE and MixCSE from the same untrained BERT: MixCSE
# widens the cap the embeddings fill (its angular radius ω) faster and ends at a larger angle,
# easing BERT's anisotropy. **Ours**: the largest angle among each run's probe sentences (the first
# `probe_sentences` distinct STS-B dev sentences) at every probe, **from step 0** — the model the
# run started from, which the trainer probes before its first step (for runs made before it did,
# its step-0 snapshot is measured here on the same sentences): the expansion is relative to it.
# Each probe is a point with its 95 % t-interval over the variant's seeds; with a few probes (the cpu
# profile: steps 0, 40 and 80) the figure says where the angle stands, not how fast it opens. Drawn:
# SimCSE and MixCSE (the paper's figure) and MixCSE without the stop-gradient (its ablation).

# %%
curves = pt.representatives(groups)
angle_variants = ("SimCSE", "MixCSE", "MixCSE w/o stop-gradient")   # the paper's two, and the ablation that moves it
every_seed = {name: pt.runs_with(members, "largest_angle", kind="probe") for name, members in groups.items()
              if pt.variant_of(name) in angle_variants}
every_seed = {name: members for name, members in every_seed.items() if members}
if every_seed:
    probed = pt.used_runs(every_seed)
    variant_of_run = {label: name for name, members in every_seed.items() for label in members}
    angles = largest_angle_series(probed, data_dir)
    angles = angles.assign(variant=angles["run"].map(variant_of_run),
                           seed=angles["run"].map(lambda label: read_config(probed[label])["seed"]))
    # the probes as points with their 95 % t-interval over seeds (plot_seed_means): a line through
    # three probes would claim how fast the angle opens between them, which nobody measured
    fig = plot_seed_means(angles, x="step", y="largest_angle", hue="variant", xlabel="training step",
                          ylabel="largest angle (degrees)")
    config = read_config(next(iter(probed.values())))
    seeds = angles.groupby("variant")["seed"].nunique()
    add_note(fig, ("Each point: one run's largest angle" if seeds.max() == 1 else
                   "Each point: the mean over seeds of the largest angle")
                  + " between two of the probe set's "
                  f"{config['probe_sentences']} STS-B dev sentence embeddings (the first distinct ones), every "
                  f"{config['probe_every']} steps from step 0 (before training: the same backbone for every variant, "
                  "so their points lie on each other); n = "
                  + ", ".join(f"{n} seed{'s' if n > 1 else ''} ({name})" for name, n in seeds.items()) + ".")
    workbench.show(fig, f"{figures_dir}/largest_angle")
    workbench.save_table(angles.round(3), "largest_angle", tables_dir, index=False)
else:
    print("no run has probe records (train with probe_every)")

# %% [markdown]
# **The gradient analysis** (section Contrastive Learning Framework) is a derivation, not a figure: as random negatives become orthogonal to the anchor,
# ∂L/∂hᵢ vanishes for InfoNCE, while mixed negatives keep hᵢᵀh̃'ᵢⱼ > 0 and so a gradient. **Ours**
# shows the quantity it is about, the mean ‖∂L/∂z‖ of each view's embeddings against the step (from
# the training log, `log_embedding_grad_norm`), for SimCSE and MixCSE: SimCSE's should fade faster.

# %%
graded = pt.runs_with(curves, "grad/z1_norm")
if graded:
    fig = plot_grad_norm(pt.for_legend(graded))
    facts = training_facts(graded)
    add_note(fig, f"Each point: the mean over the {facts.batch_size} sentences of one training batch of the norm of the "
                  f"loss gradient with respect to each view's embedding; {facts.runs}.")
    workbench.show(fig, f"{figures_dir}/gradient_norm")
else:
    print("no run logged gradient norms (train with log_embedding_grad_norm)")

# %% [markdown]
# ## Analysis: alignment and uniformity on STS-B (lower is better for both)
#
# **The paper's figure** places SimCSE, MixCSE and ConSBERT at (ℓ_uniform, ℓ_align) on STS-B:
# MixCSE reaches a clearly lower (better) uniformity than SimCSE at a comparable alignment.
# **Ours**: every run (each seed) of our trained models and the untuned backbone (its snapshot 0, or
# the backbone the runs name), on the split `geometry_split` (with `geometry_max_pairs`, a seeded
# sample of its pairs); a shape per model, named in the legend (ConSBERT is not trained here).

# %%
geometry_options = {"split": geometry_split, **({"max_pairs": geometry_max_pairs} if geometry_max_pairs else {})}
model_of = {label: name for name, members in groups.items() for label in members}   # every seed: a point each
geometry = evaluate_runs(pt.used_runs(groups), "geometry", data_dir=data_dir, **geometry_options)
before, untuned = pt.untuned(groups, "geometry", data_dir, **geometry_options)
geometry.update({name: before[next(iter(members))] for name, members in untuned.items()})   # the untuned backbone
points = evaluation_frame(geometry)
points["model"] = points["run"].map(lambda label: model_of.get(label, label))
fig = plot_alignment_uniformity(points, label="model", quantity="STS-B pairs")
counts = points["model"].value_counts()
add_note(fig, f"{describe_geometry(next(iter(geometry.values())))}. One point per run ("
              + "; ".join(f"{name}: {n} seed{'s' if n > 1 else ''}" for name, n in counts.items() if name in groups)
              + "); " + ("untuned: the backbone before training (its step-0 snapshot, or the backbone the runs "
                         "name). " if untuned else "no untuned point. ")
              + "Lower is better on both axes.")
workbench.show(fig, f"{figures_dir}/alignment_uniformity")
points = points.set_index("run")[["model", "alignment", "uniformity"]]
workbench.save_table(points, "alignment_uniformity", tables_dir)
points

# %% [markdown]
# ## Distribution of BERT Embeddings: the spherical cap
#
# **The spherical cap** (section Distribution of BERT Embeddings) is a theoretical result (no figure in the paper): for two uniform points of a
# spherical cap of angular radius ω in S^(d−1), the variance of cos θ falls towards 0 as d grows,
# and for ω ≥ π/2 the mean of cos θ approaches 0 — random negatives all become orthogonal to the
# anchor. **Ours** checks both by simulation: the mean and variance of cos θ against d, one line
# per ω.

# %%
cap = cap_geometry_table(cap_dims, cap_omegas, cap_pairs)
fig = plot_cap_geometry(cap)
add_note(fig, f"Each point: {cap_pairs:,} simulated pairs of points drawn uniformly on a spherical cap of angular "
              "radius ω in the unit sphere of dimension d.")
workbench.show(fig, f"{figures_dir}/spherical_cap")
workbench.save_table(cap, "spherical_cap", tables_dir)
cap

# %% [markdown]
# ## MixCSE: the λ bound
#
# **The λ bound** (section MixCSE) is a bound, not a figure: a mixed negative is a negative only while it stays farther
# from the anchor than the positive, which bounds λ from above; the paper fixes λ = 0.2. **Ours**
# measures the bound: the share of mixed negatives h̃'ᵢⱼ closer to the anchor hᵢ than its positive
# h'ᵢ against λ, on STS-B dev sentences, before training (snapshot 0) and after (best checkpoint)
# for each MixCSE run — it should be near 0 at λ = 0.2 and grow with λ.

# %%
bound = {}
for name, path in mixing.items():
    if not bound:   # the untuned start: the step-0 snapshot, or without snapshots the backbone the run names
        bound[untuned_name(read_config(path)["model"])] = lambda_bound_curve(base_encoder(path), score_text,
                                                                             lambdas, score_batch_size)
    bound[f"{name} (best)"] = lambda_bound_curve(load_encoder(path / "best"), score_text, lambdas, score_batch_size)
if bound:
    workbench.save_table(pd.concat(bound, names=["model"]).reset_index(level=0), "lambda_bound", tables_dir)
    fig = plot_lambda_bound(bound)
    # a curve drawn under another: the note says so (MixCSE single mixes for one direction only and can
    # give MixCSE's shares to the third decimal)
    hidden = [(a, b) for a in bound for b in bound if a != b and a.startswith("MixCSE single") and
              b.startswith("MixCSE (") and len(bound[a]) == len(bound[b]) and
              (bound[a]["closer_share"].to_numpy() - bound[b]["closer_share"].to_numpy()).__abs__().max() < 1e-3]
    add_note(fig, f"Each point: the share of the mixed negatives (every anchor with every other sentence of its batch) "
                  f"closer to the anchor than its positive (the anchor's second dropout view), over the first "
                  f"{len(score_text)} distinct STS-B dev sentences in batches of {score_batch_size}; untuned: "
                  "before training (step 0)."
                  + "".join(f" {a} lies under {b}: the two give the same shares (within 0.001)." for a, b in hidden))
    workbench.show(fig, f"{figures_dir}/lambda_bound")
else:
    print("no MixCSE runs")

# %% [markdown]
# ## The λ sweep: STS average against λ
#
# **Not a figure of the paper** (it fixes λ = 0.2 from its λ bound and publishes no sweep).
# **Ours**: the STS average against λ (mean over seeds), drawn when the runs hold at least three
# values of λ (the paper-mixcse study: 0.1, 0.2, 0.3, 0.5, 0.7); the table is shown in any case.

# %%
if sweep:
    metric = f"STS {pt.average_label(sts_tasks)}"
    frame = pt.sweep_results(sts, sweep, "mixcse.mix_lambda", name="λ").rename(columns={"avg": metric})
    if pt.enough_values(frame["λ"], "λ sweep", "paper-mixcse"):
        # fewer than 4 values of λ are points with their intervals, no line: nobody measured between them
        workbench.show(plot_sweep(frame, x="λ", y=metric, ylabel=f"{metric} (Spearman ×100)", method="mixcse"),
                       f"{figures_dir}/lambda_sweep")
    table = pt.comparison_table(summarise(frame.sort_values("λ"), "λ", [metric]))
    workbench.save_table(table, "lambda_sweep", tables_dir)
    display(table)
else:
    print("no MixCSE runs for the λ sweep")
