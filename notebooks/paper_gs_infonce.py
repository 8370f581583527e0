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
# # GS-InfoNCE (Wu et al., COLING 2022): the paper's tables and figures from a study's runs
#
# **Regenerated here**
# - **Table 1** — the batch sizes of SimCSE and GS-InfoNCE per backbone, ours beside the paper's.
# - **Table 2** — STS test sets, SimCSE vs + GS-InfoNCE; the published numbers beside ours when the
#   runs start from BERT-base/large or RoBERTa-base/large (the paper's SimCSE rows are the official
#   SimCSE checkpoints, ours are trained). Mean ± std over seeds, 95 % intervals and a paired t-test
#   against SimCSE with the same seeds (the paper reports single runs).
# - **Table 3** — the STS average against M, the number of Gaussian negatives as a multiple of the
#   batch size (0× = SimCSE), with the published row for BERT-base.
# - **Figure 1** — the mean of the 4 most similar negative pairs of a random batch against the
#   batch size (100 random batches per size), for the backbone before training, our trained models,
#   and any other model given in `top4_models` (the paper used the official SimCSE-RoBERTa-large).
# - Not a figure of the paper: the mean cosine of the Gaussian negatives over training, beside the
#   positive pairs and in-batch negatives.
#
# **Not regenerated**: nothing of the paper is left out; Table 2's large backbones need their runs
# (the paper-gs-infonce study trains BERT-base and RoBERTa-base).
#
# **Run it** with its study, `cselab reproduce paper-gs-infonce --profile gpu`, or on any runs
# with papermill (`-y "runs: {label: run directory}"`); `runs = None` reads the cpu-demo runs.

# %% tags=["parameters"]
runs = None  # {label: run directory} (a study passes it); None: the finished cpu-demo runs in runs/
variants = {"SimCSE": ["simcse", "simcse-roberta"],
            "GS-InfoNCE": ["gs_infonce", "gs_infonce-roberta"]}  # paper variant -> the study labels of its runs (each backbone's)
m_sweep = ["gs_infonce-m"]  # label prefixes of the M-sweep runs (with SimCSE as 0× and GS-InfoNCE they form Table 3)
sts_tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
             "SICKRelatedness"]  # STS tasks of the tables (a subset is faster; its average is not the paper's)
profile = "cpu"  # sizes for the parameters left None: cpu (minutes on 2 cores) or gpu (the paper's); studies pass it
top4_corpus = None  # corpus the random batches of Figure 1 are drawn from (None: gpu wiki1m, cpu wiki1m-head)
top4_sentences = None  # the first N sentences of it form the pool (None: gpu 60000, cpu 6000; a batch size whose batches do not fit side by side in it is left out)
top4_batch_sizes = [16, 32, 64, 128, 256, 512]  # batch sizes of Figure 1
top4_batches = None  # random batches per batch size (None: gpu 100 as the paper, cpu 20)
top4_models = {}  # further models for Figure 1: {name: Hub id or folder}, e.g. the official SimCSE-RoBERTa-large
noise_figure = True  # the Gaussian negatives over training (no paper figure); False where the dynamics notebook draws it
record = None  # the study's record (record.jsonl) the claims are read from; the engine passes it (None: the runs)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
figures_dir = "figures/paper_gs_infonce"  # where the figures go (PNG + PDF)
tables_dir = "reports/paper_gs_infonce/tables"  # where the tables go (Markdown + CSV)

# %%
import pandas as pd
from IPython.display import Markdown, display

from cselab.workbench import paper_tables as pt
from cselab import workbench
from cselab.workbench.analysis.gs_infonce import top4_curve
from cselab.model.data import load_corpus
from cselab.model.encoder import SentenceEncoder
from cselab.model.evaluate.cache import evaluate_runs
from cselab.workbench.neighbours import load_encoder
from cselab.workbench.analysis.logged import base_encoder, training_facts
from cselab.workbench.plots import add_note, plot_similarity_dynamics, plot_sweep, plot_top4_curve
from cselab.workbench.published import published_frame
from cselab.model.rundir import read_config
from cselab.workbench.tables import summarise

workbench.setup()
top4_corpus = pt.by_profile(profile, top4_corpus, cpu="wiki1m-head", gpu="wiki1m")
top4_sentences = pt.by_profile(profile, top4_sentences, cpu=6000, gpu=60000)
top4_batches = pt.by_profile(profile, top4_batches, cpu=20, gpu=100)
runs = workbench.load_runs(runs)
found, swept = pt.select_variants(runs, variants, {"M sweep": m_sweep})
sweep = pt.sweep_runs(swept["M sweep"], found.get("GS-InfoNCE", {}))   # 3×: the GS-InfoNCE runs
groups = pt.split_by_backbone(found)
used = pt.used_runs(groups, {"sweep": sweep})
pt.groups_table(groups)

# %% [markdown]
# ## Table 1: batch sizes

# %%
sizes = pd.DataFrame([{"variant": name, "model": pt.group_model(members),
                       "batch size": read_config(next(iter(members.values())))["batch_size"]}
                      for name, members in groups.items()]).set_index("variant")
workbench.save_table(sizes, "table1_batch_sizes", tables_dir)
display(sizes)
backbones = [b for b in dict.fromkeys(pt.paper_backbone(m) for m in sizes["model"]) if b]
if backbones:
    display(pd.concat([published_frame("gs_infonce", "Table 1", backbone=b, numeric=False) for b in backbones]))
else:
    print("no run starts from a backbone of the paper: its Table 1 is not comparable")

# %% [markdown]
# ## Table 2: STS test sets (Spearman × 100)

# %%
cost = workbench.sts_cost_note(used, sts_tasks, data_dir)
if cost:
    print(cost, flush=True)   # before the scoring starts
sts = evaluate_runs(used, "sts", data_dir=data_dir, **pt.sts_options(sts_tasks))
display(Markdown(pt.published_notes(groups, "GS-InfoNCE Table 2")))
table2 = pt.comparison_table(pt.suite_summary(sts, groups, "sts", sts_tasks),
                             pt.published_beside("gs_infonce", "Table 2", groups))
workbench.save_table(table2, "table2_sts", tables_dir)
table2

# %%
workbench.paired_comparison_cell(sts, groups, tables_dir, sts_tasks, data_dir)

# %% [markdown]
# ## The paper's claims, checked on these runs
#
# Read this first: the claims of cselab/workbench/studies/paper-gs-infonce.yaml (`claims:`), fixed before any run; the
# cell says how to read its table.

# %%
workbench.claims_cell("paper-gs-infonce", profile, runs, record, tables_dir)

# %% [markdown]
# ## Table 3: the STS average against M (Gaussian negatives per batch, as a multiple of the batch size)
#
# **The paper's Table 3** (a table, drawn here as a curve) gives the STS average of GS-InfoNCE on
# BERT-base (batch 64) for M = 0× (SimCSE), 0.5×, 1×, 2×, 3×, 4×, 8× and 16× the batch size: it
# rises slowly to its best at 3× and falls at 16×. **Ours**: the STS average of our runs against M
# (mean over seeds; SimCSE stands for 0×), with the published row beside it as a second series when
# the runs are BERT-base with batch 64. The curve is drawn when the runs hold at least three values
# of M (two points would read as a trend however little they differ); the table is shown in any case.

# %%
metric = f"STS {pt.average_label(sts_tasks)}"
frame = pt.sweep_results(sts, sweep, "gs_infonce.noise_ratio", name="M / batch size")
if 0.0 not in set(frame["M / batch size"]):   # no 0× run of GS-InfoNCE's own settings: SimCSE stands for 0×
    zero = {k: p for k, p in pt.sweep_runs(sweep, found.get("SimCSE", {})).items() if k not in sweep}
    sweep = {**zero, **sweep}
    frame = pt.sweep_results(sts, sweep, "gs_infonce.noise_ratio", default=0.0, name="M / batch size")
frame = frame.rename(columns={"avg": metric}).sort_values("M / batch size")
table3 = pt.comparison_table(summarise(frame, "M / batch size", [metric]))
comparable = {pt.paper_backbone(pt.run_model(p)) for p in sweep.values()} == {"bert-base-uncased"} \
    and {read_config(p)["batch_size"] for p in sweep.values()} == {64}
if comparable:   # the paper's Table 3: BERT-base, batch 64
    published = published_frame("gs_infonce", "Table 3", numeric=False).iloc[0]
    table3 = pt.with_published_column(table3, {float(k.rstrip("×")): v for k, v in published.items()},
                                      "published, GS-InfoNCE Table 3")
else:
    print("the published Table 3 is for BERT-base with batch 64; these runs differ, so it is not shown")
if pt.enough_values(frame["M / batch size"], "Table 3 (M sweep)", "paper-gs-infonce"):
    curve = frame.assign(source="cselab")
    if comparable:
        curve = pd.concat([curve, pd.DataFrame({"M / batch size": [float(k.rstrip("×")) for k in published.index],
                                                metric: [float(v) for v in published.values],
                                                "source": "published, GS-InfoNCE Table 3"})])
    fig = plot_sweep(curve, x="M / batch size", y=metric, hue="source" if comparable else None,
                     xlabel="M, Gaussian negatives (× batch size)", ylabel=f"{metric} (Spearman ×100)",
                     method="gs_infonce")
    ax = fig.axes[0]   # M = 0 is SimCSE: the tick says so
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    ax.set_xticks(ticks, ["0\n(SimCSE)" if t == 0 else f"{t:g}" for t in ticks])
    add_note(fig, "M = 0: SimCSE's runs (the same loss without Gaussian negatives). The intervals are each "
                  "value's own over seeds; the paired differences from SimCSE are in the claims table.")
    workbench.show(fig, f"{figures_dir}/table3_m_sweep")
table3.index = pd.Index([f"{m:g}×" for m in table3.index], name="M / batch size")   # 3×, as the paper heads it
workbench.save_table(table3, "table3_m_sweep", tables_dir)
table3

# %% [markdown]
# ## Figure 1: the 4 most similar negative pairs of a random batch, against the batch size
#
# **The paper's Fig. 1** plots, against the batch size, the mean of the 4 highest cosine
# similarities between different sentences of a random batch (100 batches per size, the official
# SimCSE-RoBERTa-large): it rises with the batch size — larger batches hold near-duplicate
# "negatives", i.e. false negatives. **Ours**: the same statistic for the untuned backbone (the step-0
# snapshot, or the backbone the run started from), our trained models and any `top4_models`,
# `top4_batches` batches per size from the distinct sentences of `top4_corpus` (a text the corpus
# repeats would be a "negative pair" of cosine 1; error bars: the std over those batches, not over
# training seeds). A batch size is drawn only where its `top4_batches` batches fit side by side in the
# distinct sentences (else the batches would share most of their sentences and their spread would
# mean little); the note says when the trained models' curves lie on each other.

# %%
pool = load_corpus(top4_corpus, top4_sentences, data_dir)
distinct = len(set(pool))   # top4_curve draws from the distinct texts: a repeated one is no negative pair
# a batch size whose top4_batches batches would not fit side by side in the distinct sentences draws
# batches that share most of their sentences (512 × 20 from 1,950): not independent batches, left out
top4_sizes = [b for b in top4_batch_sizes if b * top4_batches <= distinct]
if len(top4_sizes) < len(top4_batch_sizes):
    print(f"batch sizes {[b for b in top4_batch_sizes if b not in top4_sizes]} left out: {top4_batches} batches of "
          f"them need more than the {distinct:,} distinct sentences of the pool (raise top4_sentences)")
models = {}
first = pt.representatives(groups)
for name, path in first.items():
    untuned = f"untuned {pt.backbone_label(pt.run_model(path))}"
    if untuned not in models:   # the step-0 snapshot when the run kept one, else the backbone it started from
        models[untuned] = base_encoder(path)
    models[name] = load_encoder(path / "best")
for name, model in top4_models.items():
    models[name] = SentenceEncoder.from_pretrained(model, pooler="cls_before_pooler")
curves = {name: top4_curve(model, pool, top4_sizes, top4_batches) for name, model in models.items()}
fig = plot_top4_curve(curves)
trained = [name for name in first if name in curves]   # the trained models' curves: do they coincide?
means = pd.concat({n: curves[n].set_index("batch_size")["top_k_mean"] for n in trained}, axis=1) if trained else None
spread = float((means.max(axis=1) - means.min(axis=1)).max()) if len(trained) > 1 else None
noise = float(pd.concat([curves[n]["std"] for n in trained]).mean()) if trained else 0.0   # one batch's spread
add_note(fig, f"Each point: the mean over {top4_batches} random batches of the mean of the 4 highest cosines between "
              f"two different sentences of a batch, the batches drawn from the {distinct:,} distinct sentences among "
              f"the first {len(pool):,} of {top4_corpus}; whiskers: ± 1 std over those batches; trained models: best/ of "
              "the first run of each."
              + (f" The trained models' curves lie on each other: at every batch size they differ by at most "
                 f"{spread:.2g}, less than the batches' mean std ({noise:.2g})." if spread is not None and spread < noise else ""))
workbench.show(fig, f"{figures_dir}/figure1_top4")
curves = pd.concat(curves, names=["model"]).reset_index(level=0).set_index(["model", "batch_size"])
workbench.save_table(curves, "figure1_top4", tables_dir)
curves

# %% [markdown]
# ## The Gaussian negatives over training (not a figure of the paper)
#
# The mean cosine of the Gaussian noise negatives against the step, beside the positive pairs and
# the in-batch negatives (one panel per GS-InfoNCE run): the paper argues the noise is far from
# every sentence (a confident negative), so its cosine should stay near 0.

# %%
logged = pt.runs_with(pt.representatives(groups, ["GS-InfoNCE"]), "sim/gs_infonce.noise_cos")
if not noise_figure:
    print("noise_figure is False: the dynamics notebook draws this figure (similarity_<run>)")
elif logged:
    fig = plot_similarity_dynamics(logged, ("pos_cos", "neg_cos", "gs_infonce.noise_cos"), panels="run")
    facts = training_facts(logged)
    add_note(fig, f"Each point: a mean cosine over one training batch ({facts.batch}) at that step; {facts.runs}.")
    workbench.show(fig, f"{figures_dir}/noise_similarity")
else:
    print("no GS-InfoNCE run logged the Gaussian negatives' similarity")
