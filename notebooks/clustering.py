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
# # clustering: K-means on the sentence embeddings, and what ClusterNS's clusters contain
#
# Across any set of runs (their `best/` models):
#
# 1. **DBpedia AMI** — K-means with K = 14 on DBpedia abstracts, adjusted mutual information with the
#    classes (**ClusterNS Table 5**);
# 2. **the 8 short-text sets** (AgNews, Biomedical, GoogleNews-S/T/TS, SearchSnippets, StackOverflow,
#    Tweet) — accuracy after the best matching of clusters to classes, and NMI (**ClusterNS Table 6**);
# 3. **the cluster case study** of ClusterNS runs — sentences grouped by the run's own K-means
#    centroids (**ClusterNS Table 10**).
#
# Scores are means over `seeds` K-means initialisations per run; tables group runs by method with
# mean ± std over training seeds. `max_texts` caps every set at a seeded sample (the papers use the
# full sets: set it to `None` for their protocol). Evaluations are cached in each run directory.
# Run it with a study (`cselab reproduce cpu-demo`), on its defaults after that study has trained
# (`runs = None`), or `papermill clustering.ipynb out.ipynb -y "runs: {...}" -y "tasks: [DBpedia]"`.

# %% tags=["parameters"]
runs = None  # {label: run directory}; None: the finished runs of the cpu-demo study in runs/
figures_dir = "figures/clustering"  # where figures are written (PNG + PDF)
tables_dir = "reports/clustering/tables"  # where tables are written (Markdown + CSV)
data_dir = None  # data root; None: $CSELAB_DATA, else ./data
tasks = ["DBpedia", "Tweet"]  # clustering sets (DBpedia: AMI; the others: accuracy and NMI); the demo's two (minutes); all nine: ["DBpedia", "AgNews", "Biomedical", "GoogleNews-S", "GoogleNews-T", "GoogleNews-TS", "SearchSnippets", "StackOverflow", "Tweet"]
seeds = [0, 1, 2]  # K-means seeds per run and set
max_texts = 400  # texts per set, a seeded sample (the demo's; None: the full sets, as the papers)
max_length = 64  # tokens per text (the demo's; ClusterNS's script: 128)
group_by = ["label"]  # what makes a group of runs (seeds are averaged within a group): "label" (the run label without its seed) and/or config keys, e.g. ["method"]
case_corpus = "wiki1m-head"  # sentences for the cluster case study
case_sentences = 800  # corpus sentences assigned to the ClusterNS centroids (the demo's)
case_clusters = 5  # most populated clusters shown
case_per_cluster = 5  # sentences shown per cluster
case_runs_per_method = 1  # ClusterNS runs (of each ClusterNS variant) given a case study

# %%
from IPython.display import display

from cselab import workbench
from cselab.workbench.analysis.clusterns import ClusteringNotStarted, run_case_study
from cselab.workbench.analysis.compare import clustering_detail_frame, clustering_metric_frame, clustering_start_frame
from cselab.workbench.comparisons import group_runs, grouped_table, with_groups
from cselab.workbench.analysis.logged import pick_runs, run_methods, training_facts, untuned_starts
from cselab.model.data import load_corpus
from cselab.model.evaluate.cache import evaluate_runs, evaluation_frame
from cselab.model.evaluate.suites import task_labels
from cselab.workbench.plots import TooFewPoints, add_note, plot_score_points

workbench.setup()
runs = workbench.load_runs(runs, need_best=True)   # their models: one line if a run has none
groups = group_runs(runs, group_by)
labels = task_labels("clustering")   # the sets as ClusterNS's tables name them
print(f"{len(runs)} runs: {', '.join(runs)}")

# %%
results = evaluate_runs(runs, "clustering", data_dir=data_dir, tasks=list(tasks), seeds=list(seeds),
                        max_texts=max_texts, max_length=max_length)
texts = {task: d["n"] for task, d in next(iter(results.values()))["details"].items()}
print("texts per set: " + ", ".join(f"{name} {n}" for name, n in texts.items())
      + f"; K-means seeds {', '.join(str(s) for s in seeds)}")

# %% [markdown]
# ## DBpedia: adjusted mutual information ×100 (ClusterNS Table 5)

# %%
if "DBpedia" in tasks:
    ami = grouped_table(with_groups(clustering_metric_frame(results, "ami"), groups), ["DBpedia"],
                        rename=labels)
    workbench.save_table(ami, "dbpedia_ami", tables_dir)
    display(ami)
else:
    print("DBpedia is not among the tasks")

# %% [markdown]
# ## The short-text sets: accuracy and NMI ×100 (ClusterNS Table 6)

# %%
short = [t for t in tasks if t != "DBpedia"]
if short:
    accuracy = grouped_table(with_groups(clustering_metric_frame(results, "acc"), groups), short,
                             rename=labels)
    nmi = grouped_table(with_groups(clustering_metric_frame(results, "nmi"), groups), short, rename=labels)
    workbench.save_table(accuracy, "short_text_accuracy", tables_dir)
    workbench.save_table(nmi, "short_text_nmi", tables_dir)
    display(accuracy)
    display(nmi)

# %% [markdown]
# Every run, every set and metric (means over the K-means seeds):

# %%
per_run = with_groups(clustering_detail_frame(results), groups).round(2)
workbench.save_table(per_run, "clustering_runs", tables_dir)
per_run

# %% [markdown]
# ## Scores per set and method
#
# DBpedia's AMI and the short-text accuracies, one panel per set, each method a point on the set's
# own zoomed axis, with the untuned backbone(s) the runs started from below them (ClusterNS Table
# 5's reference row). Where every method has one training run (the cpu-demo study), the dot is the
# mean over the `seeds` K-means starts and the whisker its 95 % t-interval over them: a single
# start moves AMI by several points, so two methods whose whiskers overlap are not told apart by
# these scores. With several training seeds per method the dot is the mean over them (each run's
# score a mean over its starts) and the whisker the interval over the training seeds.
#
# **On the cpu-demo study** (16 steps, one training seed per method, 400 texts a set) the points
# say how far 16 steps moved each model, not which method clusters better: the interval is over
# K-means starts only, so the training seed's own spread — which the demo cannot measure — comes
# on top of it (the multi-seed comparison is the cpu-compare study).

# %%
headline_metric = {t: "ami" if t == "DBpedia" else "acc" for t in tasks}   # DBpedia: AMI, others: accuracy
names = {t: labels[t] if t == "DBpedia" else f"{labels[t]} (accuracy)" for t in tasks}
columns = [names[t] for t in tasks]
one_run_each = bool(groups.groupby("group")["run"].nunique().max() == 1)
if one_run_each:   # repeated measurements of one run: its K-means starts
    points = with_groups(clustering_start_frame(results, headline_metric), groups)
    over = "K-means starts"
else:              # repeated measurements of a method: its training seeds (each a mean over its starts)
    points = with_groups(evaluation_frame(results, config_keys=()), groups)
    over = "training seeds"
points = points.rename(columns=names)[["group", *columns]]
starts = untuned_starts(runs)
before = evaluate_runs(starts, "clustering", model="step-0", data_dir=data_dir, tasks=list(tasks), seeds=list(seeds),
                       max_texts=max_texts, max_length=max_length) if starts else {}
references = None
if before:
    references = clustering_start_frame(before, headline_metric) if one_run_each else evaluation_frame(before)
    references = references.rename(columns={**names, "run": "group"})[["group", *columns]]
try:
    fig = plot_score_points(points, columns, variant="group", references=references, xlabel="score ×100", over=over)
except TooFewPoints as error:   # one model and no untuned start: nothing to compare
    fig = None
    print(error)
kmeans = f"K-means seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} K-means starts (seeds {', '.join(map(str, seeds))})"
sample = ", ".join(f"{n:,} {labels[t].split(' (')[0]}" for t, n in texts.items())
if fig is not None:
    each = (f"each run's score per start, {kmeans}" if one_run_each else
            f"each run's score the mean over {kmeans}")
    add_note(fig, f"Scores ×100 (K = the number of classes) on a seeded sample of {sample} texts; {each}; "
                  f"{training_facts(runs).each}; untuned: the backbone before training (step 0). "
                  + ("The interval is over K-means starts only: it leaves out the spread between training seeds, "
                     "which one run per method cannot show." if one_run_each else ""))
    workbench.show(fig, f"{figures_dir}/clustering_scores");

# %% [markdown]
# ## What ClusterNS's clusters contain (ClusterNS Table 10)
#
# `case_sentences` corpus sentences embedded as ClusterNS clusters them during training (view 1 of
# the training path, dropout off), assigned to the run's final centroids (its last checkpoint); for
# the `case_clusters` most populated clusters, `case_per_cluster` random members.

# %%
clusterns_methods = [m for m in dict.fromkeys(run_methods(runs).values()) if "clusterns" in m.split("+")]
case_runs = pick_runs(runs, clusterns_methods, case_runs_per_method) if clusterns_methods else {}
if case_runs:
    sentences = load_corpus(case_corpus, case_sentences, data_dir)
    for label, path in case_runs.items():
        try:
            case = run_case_study(path, sentences, case_clusters, case_per_cluster)
        except ClusteringNotStarted as e:   # a short run (the smoke profile's 2 steps): nothing to show
            print(f"{label}: no case study: {e}")
            continue
        workbench.save_table(case.round(3), f"case_study_{label}", tables_dir)
        print(f"{label}: {case['cluster'].nunique()} clusters shown")
        display(case.round(3))
else:
    print("no ClusterNS run among these runs: no case study")
