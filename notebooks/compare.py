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
# # compare: methods against SimCSE over seeds, ablations and sweeps
#
# Across any set of runs of one backbone, grouped by their labels (or by any config keys) with the
# training seed as the unit of replication:
#
# 1. **STS** (STS12–16, STS-B, SICK-R; SimCSE's protocol) per run and per method: mean ± std and
#    95 % confidence interval over seeds, and a **paired t-test against the SimCSE runs with the same
#    seeds**, for the average and for every task, with Holm-adjusted p-values over the methods (and
#    over the tasks) and the minimum detectable difference; a method with a single seed gets a
#    paired bootstrap over the test pairs instead (test-set uncertainty, not seed variance);
# 2. optionally **transfer** (SentEval) and **clustering** (DBpedia AMI, short-text accuracy) tables
#    with the same statistics;
# 3. the **ablation** per STS task (**APINCSE Fig. 2**), variants named from run labels: each
#    variant's paired difference from a control variant, or the variants' scores as points;
# 4. **sweep curves**: a score against a swept config key, one line per method, mean ± std over
#    seeds (**ClusterNS Fig. 8–9**: batch size and K; **GS-InfoNCE Table 3**: the number of noise
#    negatives; **APINCSE Fig. 4, Tables 4–5**: k, queue size, layer).
#
# Run it with a study (`cselab reproduce cpu-compare` executes it on SimCSE, MixCSE, GS-InfoNCE,
# ClusterNS and APINCSE × seeds), on its defaults after `cselab reproduce cpu-demo` (`runs = None`),
# or by hand: `papermill compare.ipynb out.ipynb -y "runs: {...}" -y "sweep_key: clusterns.num_clusters"`.
# Evaluations are cached in each run directory (`evaluations/`). On its defaults it scores the demo's
# evaluation set, STS-B test (about a minute for the demo's eight runs on 2 cores); `sts_tasks = None` scores
# the 7-task suite (about 80 s a run, printed before it starts).

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/compare"  # where figures are written (PNG + PDF)
tables_dir = "reports/compare/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
group_by = ["label"]  # what makes a group: "label" (the run label without its seed) and/or config keys, e.g. ["method"]; a group's runs are its seeds
backbone = None  # the model whose runs are compared when the runs start from several (None: the one most runs start from)
group_names = {}  # display names {group: name} on top of the papers' method names (SimCSE, MixCSE, ...)
baseline = "simcse"  # the group every other is tested against (a group name or a method)
sts_tasks = ["STSBenchmark"]  # STS tasks scored: the demo's STS-B test (a minute on its runs); None: the 7-task table of results.json (evaluated when absent, about 80 s a MiniLM run on 2 cores)
pairs = {}  # your own scored pairs {name: TSV of sentence1<TAB>sentence2<TAB>score}, STS protocol; {} skips
transfer_tasks = []  # SentEval transfer tasks to evaluate, e.g. ["MR", "CR", "MRPC"]; [] skips transfer
transfer_fast = True  # 5 folds (SimCSE's fasttest) instead of 10
clustering_tasks = []  # clustering sets to evaluate, e.g. ["DBpedia", "AgNews"]; [] skips clustering
clustering_seeds = [0]  # K-means seeds per run and set
clustering_max_texts = 1000  # texts per clustering set, a seeded sample (None: the full sets)
texts = {}  # your own labelled texts {name: TSV of label<TAB>text}, clustered by K-means on their labels; {} skips
variants = None  # ablation: {variant: label prefix(es)}, e.g. {"APINCSE": "apincse", "-AP": "apincse-no_ap"}; None: found from the run labels (apincse, apincse-no_ap, apincse-pooler, ...); {} skips
ablation_control = None  # the variant the others are compared with, paired (e.g. APINCSE's pooler alone); None: scores (with variants None: the pooler-only run the labels hold)
sweep_key = None  # swept config key, e.g. "clusterns.num_clusters" or "batch_size"; None skips the sweep
sweep_metric = "avg"  # y of the sweep: an STS column (avg, STSBenchmark, ...) or best_stsb_dev
sweep_label = None  # words for the sweep's x-axis (None: the key)
sweep_logx = False  # log2 x-axis (batch sizes, K)
holm_family = "group"  # Holm family of the per-task tests: "group" (a method's tasks), "task" (a task's methods) or "all"
bootstrap_resamples = 2000  # paired bootstrap over test pairs for groups sharing one seed with the baseline; 0 skips
bootstrap_seed = 0  # seed of the bootstrap's resampling

# %%
from collections import Counter

from IPython.display import Markdown, display

from cselab import workbench
from cselab.workbench.analysis.compare import SPEARMAN_UNIT, describe_sts_average, sts_results, sts_score_words
from cselab.workbench.comparisons import (ablation_in_labels, baseline_table, difference_panels, group_runs, grouped_table,
                                per_task_comparison, per_task_tests, resolve_baseline, sweep_frame, with_groups)
from cselab.model.evaluate.cache import evaluate_runs, evaluation_frame
from cselab.model.evaluate.suites import task_labels
from cselab.workbench.paper_tables import TREND_MIN_VALUES
from cselab.workbench.plots import TooFewPoints, add_note, plot_paired_differences, plot_score_points, plot_sweep
from cselab.workbench.results import ALPHA, FAMILIES, POWER

workbench.setup()
runs = workbench.load_runs(runs, need_best=True)   # their models: one line if a run has none
runs, groups = workbench.comparison_groups(runs, group_by, group_names, backbone)   # one backbone, a run per seed
try:
    baseline_group = resolve_baseline(baseline, groups, group_names)
except ValueError as error:
    baseline_group = None
    print(f"no paired tests: {error}")
display(groups)

# %% [markdown]
# ## STS per run
#
# Spearman ×100 on each task (SimCSE's protocol: STS12–16 over all pairs of a year, STS-B and
# SICK-R test), from each run's final table or evaluated once and cached.

# %%
cost = workbench.sts_cost_note(runs, sts_tasks, data_dir)
if cost:
    print(cost, flush=True)   # before the scoring starts
sts = sts_results(runs, sts_tasks, data_dir)
sts_frame = with_groups(evaluation_frame(sts, config_keys=()), groups)
tasks = [t for t in task_labels("sts") if t in sts_frame]
names = {**task_labels("sts"), "avg": "Avg."}
drawn = [*tasks, "avg"] if len(tasks) > 1 else tasks   # the average of one task is that task: drawn once
sources = Counter(result["source"] for result in sts.values())
print((f"Avg. = {describe_sts_average(sts_tasks)}; " if len(tasks) > 1 else "")
      + "scores: " + ", ".join(f"{source} ({n} run{'s' if n > 1 else ''})" for source, n in sources.items()))
sts_runs = sts_frame.drop(columns=[] if len(tasks) > 1 else ["avg"]).rename(columns=names).round(2)
workbench.save_table(sts_runs, "sts_runs", tables_dir)
sts_runs

# %% [markdown]
# ## STS per method: mean ± std over seeds

# %%
sts_methods = grouped_table(sts_frame, drawn, rename=names)
workbench.save_table(sts_methods, "sts_methods", tables_dir)
sts_methods

# %% [markdown]
# ## Against SimCSE with the same seeds: paired t-test, Holm-adjusted
#
# For each method and each seed s it shares with the baseline, d_s = score(method, s) −
# score(baseline, s). The test is a **paired t-test** (`scipy.stats.ttest_rel`, two-sided, H0: mean
# difference 0, n − 1 degrees of freedom) with the matching 95 % t-interval of the mean difference
# ("Δ 95% CI": an interval **over training seeds**); the "95% CI" column is the t-interval of the
# method's own mean. Pairing is the right test here because a seed fixes the data order, the dropout
# draws and the head's initialisation for both runs alike: each per-seed difference removes what the
# seed does to both runs and keeps what the method does, so the test has more power than comparing
# two independent means.
#
# Testing several methods is a **family** of tests: "p (Holm)" is the p-value adjusted by Holm's
# step-down method over the methods tested on this score (statsmodels' `multipletests`; the family
# is named in "Holm family"), and a difference is read as detected only when it is below 0.05. A
# difference that is not detected is **no detectable effect**, not no effect: "MDE" in the reading is
# the smallest true difference the paired t-test would detect with power 0.8 at α = 0.05 with these
# seeds, given the observed spread of the per-seed differences (statsmodels' `TTestPower`). With
# 3 seeds only large, consistent differences are detectable; a method sharing a single seed with
# the baseline has no t-test (–).

# %%
if baseline_group is not None:
    comparison = baseline_table(sts_frame, "avg", baseline_group)
    workbench.save_table(comparison, "sts_vs_baseline", tables_dir)
    display(Markdown(f"**{describe_sts_average(sts_tasks)}** against **{baseline_group}** "
                     f"(α {ALPHA}, MDE at power {POWER})"))
    display(comparison)

# %% [markdown]
# Per task: the mean difference from the baseline, the paired test's raw p and its Holm-adjusted p,
# with "no detectable effect (MDE …)" where the adjusted p is not below 0.05. The Holm family is set
# by `holm_family` and named in the last column: by default each method's tasks together (the claim
# "better on every task" is about all of them at once).
#
# **One shared seed**: no seed variance can be estimated. Where `bootstrap_resamples` > 0, the cell
# gives instead the difference of Spearman ×100 between the method's run and the baseline's run of
# that seed with the 95 % percentile interval of a **paired bootstrap over the test pairs** (both
# runs scored on the same resampled pairs; the average: every task resampled, the differences
# averaged), marked "test pairs". That interval is **test-set uncertainty**, not training-seed
# variance: another seed may move a run by more. The runs' per-pair similarities are evaluated once
# and cached in each run directory.

# %%
if baseline_group is not None:
    tests, bootstrap = per_task_tests(sts_frame, drawn, baseline_group, runs, family=holm_family,
                                      sts_tasks=sts_tasks, data_dir=data_dir, bootstrap_resamples=bootstrap_resamples,
                                      seed=bootstrap_seed)
    if bootstrap is not None:
        workbench.save_table(bootstrap.assign(task=bootstrap["task"].map(names)).round(3),
                             "sts_vs_baseline_bootstrap", tables_dir)
    per_task = per_task_comparison(sts_frame, drawn, baseline=baseline_group, family=holm_family,
                                   bootstrap=bootstrap).rename(columns=names)
    workbench.save_table(per_task, "sts_vs_baseline_per_task", tables_dir)
    if "Holm family" in per_task:   # absent on runs of one seed: no test, no family
        print(f"Holm family: {FAMILIES[holm_family]}")
    display(per_task)

# %% [markdown]
# The same as a figure: each method's difference from the baseline (dot) and its 95 % interval
# (bar) for the average and every task, on the tasks' test sets (the panel titles say "test"). With one or two panels the Holm-adjusted p is written at the
# right of each row; with more, a filled dot is an adjusted p below 0.05 and a hollow one is not (the
# table above gives each p). The bar is the
# t-interval **over seeds** when the method shares several seeds with the baseline; for a single
# shared seed (marked "n 1, test pairs"; "1 seed" in the table's "paired on") it is the paired bootstrap **over the test pairs**, which
# says how much the comparison depends on the particular test sentences, not on the training seed.

# %%
if baseline_group is not None:
    panels = difference_panels(tests, bootstrap, names)
    # every score here is on the tasks' test sets (STS-B's test split): the panel titles say so
    differences = {f"{names[t]}, test": panels[names[t]] for t in (["avg", *tasks] if len(tasks) > 1 else tasks)}
    # the x axis names what the differences are of: the one task, its split and unit, or the unit
    # where each panel's title names its task
    metric = sts_score_words(tasks) if len(tasks) == 1 else SPEARMAN_UNIT
    workbench.show(plot_paired_differences(differences, baseline=baseline_group, metric=metric),
                   f"{figures_dir}/sts_vs_baseline");

# %% [markdown]
# ## Your own pairs (Spearman × 100 of cosines, the STS protocol; outside the STS average)

# %%
if pairs:
    custom = evaluate_runs(runs, "sts", data_dir=data_dir, tasks=[], pairs=dict(pairs))
    custom_frame = with_groups(evaluation_frame(custom, config_keys=()), groups)
    custom_methods = grouped_table(custom_frame, list(pairs))
    workbench.save_table(custom_methods, "custom_pairs_methods", tables_dir)
    display(custom_methods)
else:
    print("pairs is empty: no custom pairs")

# %% [markdown]
# ## Transfer tasks (SentEval, logistic regression on frozen embeddings)

# %%
if transfer_tasks:
    transfer = evaluate_runs(runs, "transfer", data_dir=data_dir, tasks=list(transfer_tasks), fast=transfer_fast)
    workbench.suite_comparison_cell(transfer, groups, "transfer", transfer_tasks, baseline_group, tables_dir)
else:
    print("transfer_tasks is empty: no transfer evaluation")

# %% [markdown]
# ## Clustering (DBpedia: AMI; short-text sets: accuracy)

# %%
if clustering_tasks:
    clustering = evaluate_runs(runs, "clustering", data_dir=data_dir, tasks=list(clustering_tasks),
                               seeds=list(clustering_seeds), max_texts=clustering_max_texts)
    workbench.suite_comparison_cell(clustering, groups, "clustering", clustering_tasks, baseline_group, tables_dir,
                                    average="mean", mean_of_tasks=True)
else:
    print("clustering_tasks is empty: no clustering evaluation")

# %% [markdown]
# ## Your own labelled texts (K-means with K = the file's labels; Hungarian accuracy, outside the averages)

# %%
if texts:
    own_texts = evaluate_runs(runs, "clustering", data_dir=data_dir, tasks=[], seeds=list(clustering_seeds),
                              texts=dict(texts))
    own_texts_methods = grouped_table(with_groups(evaluation_frame(own_texts, config_keys=()), groups), list(texts))
    workbench.save_table(own_texts_methods, "custom_texts_methods", tables_dir)
    display(own_texts_methods)
else:
    print("texts is empty: no custom labelled texts")

# %% [markdown]
# ## The ablation per STS task (APINCSE Fig. 2)
#
# Runs named by `variants` (variant → label prefix or prefixes: a label and its seeds, not a longer label); on
# the defaults (`variants = None`) the ablation the run labels hold: a method with parts (APINCSE) beside
# its ablation labels (`apincse-no_ap`, `apincse-no_in`, its pooler alone `apincse-pooler`) and SimCSE, with
# the pooler-only run as the control, as the cpu-demo study names its runs. With
# `ablation_control`, each other variant's difference from the control, paired by seed, as the
# comparison with the baseline above: the 95 % t-interval over the seeds both share, or for a single
# shared seed the paired bootstrap over the test pairs (test-set uncertainty). A control with
# neither of a method's terms (APINCSE's layer-attention pooler alone) separates what the pooler
# does from what the terms do. Without a control, each variant's scores as points on a zoomed axis.
#
# **On the cpu-demo study** (16 steps, one seed per variant) every interval here is over the test
# pairs only: it says how much the reading depends on the particular test sentences, not how much
# another training seed would move it, which may be more. The demo's reading — the pooler, not the
# two terms, makes APINCSE's gain over SimCSE — is one seed's; the cpu-compare study tests it over
# seeds.

# %%
if variants is None:   # the defaults: the ablation the labels hold (the cpu-demo's APINCSE variants)
    variants, found_control = ablation_in_labels(runs, baseline)
    ablation_control = ablation_control if ablation_control is not None else found_control
    print(f"the ablation in the run labels: {', '.join(variants)}" + (f"; control {ablation_control}"
          if ablation_control else "") if variants else "no ablation among the run labels (set variants to draw one)")
if variants:
    variant_of_run = group_runs(runs, variants).set_index("run")["group"]   # by label prefixes
    chosen = {label: variant_of_run[label] for label in runs if label in variant_of_run.index}
    ablation = sts_frame[sts_frame["run"].isin(chosen)].assign(group=lambda f: f["run"].map(chosen))
    columns = [names[t] for t in drawn]
    if ablation_control is not None and ablation_control in set(ablation["group"]):
        ablation_tests, ablation_bootstrap = per_task_tests(ablation, drawn, ablation_control, runs,
                                                            family=holm_family, sts_tasks=sts_tasks, data_dir=data_dir,
                                                            bootstrap_resamples=bootstrap_resamples, seed=bootstrap_seed)
        ablation_panels = difference_panels(ablation_tests, ablation_bootstrap, names)
        # on the tasks' test sets, as sts_vs_baseline: the titles say so and the x axis names the score
        fig = plot_paired_differences({f"{names[t]}, test": ablation_panels[names[t]]
                                       for t in (["avg", *tasks] if len(tasks) > 1 else tasks)},
                                      baseline=ablation_control,
                                      metric=sts_score_words(tasks) if len(tasks) == 1 else SPEARMAN_UNIT)
    else:
        if ablation_control is not None:
            print(f"ablation_control {ablation_control!r} is none of the variants {sorted(set(ablation['group']))}: "
                  "the variants' scores are drawn instead")
        try:
            fig = plot_score_points(ablation.rename(columns=names)[["group", *columns]], columns, variant="group",
                                    xlabel=f"{SPEARMAN_UNIT}, test")
        except TooFewPoints as error:   # one variant: nothing to compare
            fig = None
            print(error)
    if fig is not None:
        add_note(fig, f"{describe_sts_average(sts_tasks) if len(tasks) > 1 else names[tasks[0]]} test; variants: "
                      f"{', '.join(dict.fromkeys(chosen.values()))}.")
        workbench.show(fig, f"{figures_dir}/ablation")
    ablation_table = grouped_table(ablation.rename(columns=names), columns)
    workbench.save_table(ablation_table, "ablation", tables_dir)
    display(ablation_table)
else:
    print("variants is empty: no ablation figure")

# %% [markdown]
# ## Sweep (ClusterNS Fig. 8–9, GS-InfoNCE Table 3, APINCSE Fig. 4 / Tables 4–5)
#
# `sweep_metric` against the swept `sweep_key`, one line per group of the other settings, mean ± std
# over seeds.

# %%
if sweep_key:
    sweep = sweep_frame(runs, sweep_key, sts_frame.drop(columns=["group", "seed"]), group_by, group_names)
    legend = ", ".join(group_by)                              # the legend's title: what the lines are
    values = sorted(set(sweep[sweep_key]))
    if len(values) < TREND_MIN_VALUES:     # one point (or two) is not a trend: the table says what there is
        print(f"sweep of {sweep_key}: {len(values)} value(s) here {values}, a figure needs {TREND_MIN_VALUES}; "
              f"give the study a grid over {sweep_key} (the paper studies do)")
    else:
        points = sweep[[sweep_key, sweep_metric, "seed"]].assign(**{legend: sweep["group"]})
        fig = plot_sweep(points, sweep_key, sweep_metric, hue=legend, logx=sweep_logx)
        fig.axes[0].set_xlabel(sweep_label or sweep_key)
        fig.axes[0].set_ylabel(describe_sts_average(sts_tasks) if sweep_metric == "avg" else
                               names.get(sweep_metric, sweep_metric.replace("best_stsb_dev", "best STS-B dev")))
        workbench.show(fig, f"{figures_dir}/sweep")
    sweep_table = grouped_table(sweep, [sweep_metric], by=["group", sweep_key])
    workbench.save_table(sweep_table, "sweep", tables_dir)
    display(sweep_table)
else:
    print("sweep_key is None: no sweep")
