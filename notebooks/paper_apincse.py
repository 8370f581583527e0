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
# # APINCSE (augmented positives and interlayer negatives, 2025): the paper's tables and figures from a study's runs
#
# **Regenerated here** (from our runs only — see below)
# - **Table 3** — STS test sets, SimCSE vs APINCSE, with a paired t-test over seeds.
# - **Figure 2** — the ablation per STS task: APINCSE, -AP (no augmented positive), -IN (no
#   interlayer negative), -LAST (last-layer [CLS] instead of the layer-attention pooler), -bs64 and
#   -bs128 (neither term, batch 64 / 128).
# - **Figure 3** — per-layer [CLS] similarity to the last layer on STS-B test sentences, before and
#   after training, with how often each layer is the most similar (the choice of eq. 16–17).
# - **Table 4** (k, neighbours per augmented positive), **Table 5** (M, the interlayer-negative layer)
#   and **Figure 4** (L, the neighbour-queue length): STS-B and the STS average against the setting.
# - **Table 7** — MRPC and SUBJ accuracy (the generalisation check).
#
# **No published numbers**: the text copy of the paper (in Chinese) describes Tables 3–5 and Figures
# 2–4 but holds none of their values; the few numbers its text states (gains over the best
# baseline) are listed below for reference. **Not regenerated**: the baselines SG-OPT and LAPCSE
# (cselab does not train them; ClusterNS has its own notebook, paper_clusterns).
#
# **Run it** with its study, `cselab reproduce paper-apincse --profile gpu`, or on any runs with
# papermill (`-y "runs: {label: run directory}"`); `runs = None` reads the cpu-demo runs.

# %% tags=["parameters"]
runs = None  # {label: run directory} (a study passes it); None: the finished cpu-demo runs in runs/
variants = {"SimCSE": "simcse", "APINCSE": "apincse", "APINCSE-AP": "apincse-no_ap", "APINCSE-IN": "apincse-no_in",
            "APINCSE-LAST": "apincse-last", "APINCSE-bs64": "apincse-bs64",
            "APINCSE-bs128": "apincse-bs128",
            "APINCSE pooler only": "apincse-pooler"}  # paper variant -> the study labels of its runs (a label, its seeds)
topk_sweep = ["apincse-topk"]  # label prefixes of the runs over k (Table 4)
layer_sweep = ["apincse-layer"]  # label prefixes of the runs over M, the interlayer (Table 5)
queue_sweep = ["apincse-queue"]  # label prefixes of the runs over L, the queue length (Figure 4)
sts_tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark",
             "SICKRelatedness"]  # STS tasks of the tables (a subset is faster; its average is not the paper's)
profile = "cpu"  # sizes for the parameters left None: cpu (minutes on 2 cores) or gpu (the paper's); studies pass it
transfer_tasks = None  # Table 7 (None: gpu MRPC and SUBJ, cpu none); [] skips it
transfer_fast = True  # 5-fold cross-validation (SimCSE's fasttest) instead of SentEval's 10
transfer_probe = "pytorch"  # SentEval's PyTorch classifier, as the published tables ran it; or "sklearn"
layer_sentences = 2000  # STS-B test sentences for the layer profile (Figure 3)
record = None  # the study's record (record.jsonl) the claims are read from; the engine passes it (None: the runs)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
figures_dir = "figures/paper_apincse"  # where the figures go (PNG + PDF)
tables_dir = "reports/paper_apincse/tables"  # where the tables go (Markdown + CSV)

# %%
import pandas as pd
from IPython.display import Markdown, display

from cselab.workbench import paper_tables as pt
from cselab import workbench
from cselab.workbench.analysis.apincse import layer_cls_similarity
from cselab.model.data import load_stsb
from cselab.model.evaluate.cache import evaluate_runs
from cselab.model.evaluate.sts import TASK_LABELS
from cselab.workbench.analysis.logged import base_encoder, best_checkpoint_words
from cselab.workbench.plots import add_note, add_warning, plot_layer_profile, plot_score_points, plot_sweep
from cselab.workbench.published import APINCSE_CLAIMS, BACKBONES
from cselab.workbench.tables import summarise

workbench.setup()
transfer_tasks = pt.by_profile(profile, transfer_tasks, cpu=[], gpu=["MRPC", "SUBJ"])
runs = workbench.load_runs(runs)
sweeps = {"k sweep": topk_sweep, "M sweep": layer_sweep, "L sweep": queue_sweep}
found, swept = pt.select_variants(runs, variants, sweeps)
groups = pt.split_by_backbone(found)
used = pt.used_runs(groups, swept)
pt.groups_table(groups)

# %% [markdown]
# ## Table 3: STS test sets (Spearman × 100)
#
# What the paper's text states in numbers (its tables are not in the text copy):

# %%
claims = pd.DataFrame(APINCSE_CLAIMS).assign(backbone=lambda f: f["backbone"].map(BACKBONES))
display(claims.set_index("section"))
cost = workbench.sts_cost_note(used, sts_tasks, data_dir)
if cost:
    print(cost, flush=True)   # before the scoring starts
sts = evaluate_runs(used, "sts", data_dir=data_dir, **pt.sts_options(sts_tasks))
main = {n: m for n, m in groups.items() if pt.variant_of(n) in ("SimCSE", "APINCSE")}
table3 = pt.comparison_table(pt.suite_summary(sts, main, "sts", sts_tasks))
workbench.save_table(table3, "table3_sts", tables_dir)
table3

# %%
workbench.paired_comparison_cell(sts, groups, tables_dir, sts_tasks, data_dir)

# %% [markdown]
# ## The paper's claims, checked on these runs
#
# Read this first: the claims of cselab/workbench/studies/paper-apincse.yaml (`claims:`), fixed before any run; the
# cell says how to read its table.

# %%
workbench.claims_cell("paper-apincse", profile, runs, record, tables_dir)

# %% [markdown]
# ## Figure 2: the ablation, per STS task
#
# **The paper's Fig. 2** is a grouped bar chart on BERT-base: for each of the 7 STS tasks and their
# average, the Spearman correlation of APINCSE and its variants -AP, -IN, -LAST, -bs64 and -bs128.
# APINCSE is highest on every task; -AP loses most (the augmented positives matter), -bs128 is the
# lowest (more in-batch samples do not replace the two terms). -bs64 is the layer-attention pooler
# with neither term at APINCSE's batch size: the control that separates the pooler from the terms
# (the cpu-demo study's "APINCSE pooler only", drawn by the compare notebook, is the same at its
# batch size). **Ours**: the variants among our runs as points on each task's own zoomed axis
# (bars from zero of scores a point apart would look equal): the mean over seeds with its 95 % t-interval where a variant has two seeds or more. The
# figure needs several tasks (it is per task); with one, the table alone is shown and the
# paper-apincse study draws it.

# %%
ablation = {n: m for n, m in groups.items() if pt.variant_of(n).startswith("APINCSE")}
if ablation:
    average = pt.average_label(sts_tasks)
    scores = pt.variant_frame(sts, ablation).rename(columns={**TASK_LABELS, "avg": average})
    tasks = [TASK_LABELS[t] for t in sts_tasks] + ([average] if len(sts_tasks) > 1 else [])
    if len(sts_tasks) < 2:
        print(f"Figure 2: one STS task here ({', '.join(tasks)}), the figure is per task (the paper: 7 and their "
              "average); the paper-apincse study draws it")
    elif len(ablation) < 2:
        print(f"Figure 2: one variant here ({', '.join(ablation)}), nothing to compare; the paper-apincse study draws it")
    else:
        fig = plot_score_points(scores, tasks=tasks, variant="variant", xlabel="Spearman ×100")
        paper = ["APINCSE", "APINCSE-AP", "APINCSE-IN", "APINCSE-LAST", "APINCSE-bs64", "APINCSE-bs128"]
        kept = [v for v in paper if v in set(scores["variant"])]
        covered = ("all 7 tasks and their average" if len(sts_tasks) == 7 else
                   f"{len(sts_tasks)} of its 7 tasks" + (" and their average" if len(sts_tasks) > 1 else ""))
        add_note(fig, "Spearman ×100 on each task's test set. -bs64: the layer-attention pooler with neither term "
                      "(the pooler-only control). The paper's Fig. 2 has "
                      f"{len(paper)} variants on 7 tasks and their average; here {len(kept)} of its variants"
                      + (f" ({', '.join(v for v in paper if v not in kept)} not trained)" if len(kept) < len(paper) else "")
                      + f", on {covered}.")
        workbench.show(fig, f"{figures_dir}/figure2_ablation")
    table = pt.comparison_table(pt.suite_summary(sts, ablation, "sts", sts_tasks))
    workbench.save_table(table, "figure2_ablation", tables_dir)
    display(table)
else:
    print("no APINCSE runs")

# %% [markdown]
# ## Figure 3: per-layer [CLS] similarity to the last layer (STS-B test sentences)
#
# **The paper's Fig. 3** plots, for the sentences of the STS-B test set, the similarity between
# each layer's [CLS] representation and the last layer's against the layer (BERT-base, 12 layers):
# layer 11 is the most similar to the last, and Table 5 finds layer 11 the best source of
# interlayer negatives (layers 1 and 2 the worst). **Ours**: the mean cosine of each hidden state's [CLS]
# (0 = embedding output) to the last layer's, over the first `layer_sentences` distinct STS-B test
# sentences, for the untuned backbone (step-0 snapshot) and our trained SimCSE and APINCSE models;
# the table adds how often each layer is the most similar one (the choice of eq. 16–17). The
# paper's values are in an image of its source, not in its text, so none are shown beside ours.
# **Where ours differ**: in the cpu study (all-MiniLM-L6-v2, 6 layers, 80 steps) the profile peaks at
# layer 4, not at the second-to-last layer (5 of 6) as the paper's layer 11 of 12 would have it.

# %%
test = load_stsb(data_dir)["test"]
profile_text = list(dict.fromkeys([*test.sentences1, *test.sentences2]))[:layer_sentences]
profiles = {}
for name, path in pt.representatives(groups, ["APINCSE", "SimCSE"]).items():
    label = f"untuned {pt.backbone_label(pt.run_model(path))}"
    if label not in profiles:   # the step-0 snapshot, or without snapshots the backbone the run names
        profiles[label] = layer_cls_similarity(base_encoder(path), profile_text)
    profiles[name] = layer_cls_similarity(path / "best", profile_text)
if profiles:
    fig = plot_layer_profile({name: p.mean for name, p in profiles.items()})
    drawn = pt.representatives(groups, ["APINCSE", "SimCSE"])
    # one run per variant: its face says so (the demo's one seed put APINCSE above SimCSE at every layer,
    # the record's 5–6 seeds below), and which step each best/ is from
    add_warning(fig, pt.one_run_warning(groups, ["APINCSE", "SimCSE"]))
    add_note(fig, f"Each point: the mean over the first {len(profile_text)} distinct STS-B test sentences of the "
                  "cosine between a layer's [CLS] and the last layer's (1 by definition, not drawn); one model each "
                  f"(the trained ones: best/ of the first run of each variant; {best_checkpoint_words(drawn)}).")
    workbench.show(fig, f"{figures_dir}/figure3_layer_profile")
    layers = pd.concat({name: pd.DataFrame(p.rows()).set_index("layer") for name, p in profiles.items()},
                       names=["model"]).round(4)   # cosines to 4 places: a spread of 1e-7 reads as 0
    workbench.save_table(layers.reset_index(), "figure3_layer_profile", tables_dir)
    display(layers)
else:
    print("no APINCSE or SimCSE runs")

# %% [markdown]
# ## Tables 4 and 5, Figure 4: STS-B and the STS average against k, M and L
#
# **The paper** gives STS-B and the 7-task average against k (its N), the neighbours per augmented
# positive (Table 4: best at 16, falling fast beyond), against M, the layer of the interlayer
# negatives (Table 5: best at 11, worst at 1–2), and draws them against L, the neighbour-queue
# length (Fig. 4: rising from 256 to its best at 1024, falling beyond). **Ours**: the same two measures of our
# runs against each setting (mean over seeds), drawn when the runs hold at least three values of
# it (the paper-apincse study sweeps each); the table is shown in any case.

# %%
average = f"STS {pt.average_label(sts_tasks)}"
measures = {"STS-B": "STSBenchmark"} if "STSBenchmark" in sts_tasks and len(sts_tasks) > 1 else {}
for name, key, label, output in (("k sweep", "augmented_positive.top_k", "k (neighbours)", "table4_topk"),
                                 ("M sweep", "interlayer_negative.interlayer", "M (layer)", "table5_layer"),
                                 ("L sweep", "augmented_positive.queue_size", "L (queue length)", "figure4_queue")):
    points = pt.sweep_runs(swept[name], found.get("APINCSE", {}))
    if not points:
        print(f"{output}: no APINCSE runs")
        continue
    frame = pt.sweep_results(sts, points, key, name=label).rename(columns={"avg": average})
    if key.startswith("interlayer"):
        frame[label] = pt.interlayer_index(frame[label], points, frame["run"])
        if frame[label].isna().any():
            print(f"{output}: runs choosing the most similar layer per sentence (no fixed M) are left out: "
                  f"{', '.join(frame.loc[frame[label].isna(), 'run'])}")
            frame = frame.dropna(subset=[label])
        if frame.empty:
            continue
    for short, task in measures.items():
        frame[short] = frame["run"].map(lambda r: sts[r]["scores"][task])
    table = pt.comparison_table(summarise(frame.sort_values(label), label, [*measures, average]))
    workbench.save_table(table, output, tables_dir)
    display(table)
    if not pt.enough_values(frame[label], f"{output} ({label})", "paper-apincse"):
        continue
    if measures:   # STS-B and the average in one figure, as the paper reports both
        long = frame.melt(id_vars=[label, "seed"], value_vars=[*measures, average], var_name="measure",
                          value_name="Spearman × 100")
        fig = plot_sweep(long, x=label, y="Spearman × 100", hue="measure", legend_title="", legend_below_panel=True)
    else:
        fig = plot_sweep(frame, x=label, y=average, method="apincse")
    if measures:   # one curve has plot_sweep's own note
        seeds = frame.groupby(label)["seed"].nunique()
        add_note(fig, f"Each point: the mean over seeds ({seeds.min()}"
                      + (f"–{seeds.max()}" if seeds.max() > seeds.min() else "")
                      + f" per value) of APINCSE's Spearman × 100 on STS-B test and its average over the "
                      f"{len(sts_tasks)} STS test sets, {label} swept, every other setting APINCSE's.")
    workbench.show(fig, f"{figures_dir}/{output}")

# %% [markdown]
# ## Table 7: MRPC and SUBJ accuracy

# %%
if transfer_tasks:
    transfer = evaluate_runs(pt.used_runs(main), "transfer", data_dir=data_dir, tasks=transfer_tasks,
                             fast=transfer_fast, probe=transfer_probe)
    table7 = pt.comparison_table(pt.suite_summary(transfer, main, "transfer", transfer_tasks))
    workbench.save_table(table7, "table7_transfer", tables_dir)
    display(table7)
else:
    print("transfer_tasks is empty: Table 7 skipped")
