"""Assemble a paper's tables from a study's runs: which runs are which of the paper's variants,
which backbone they start from, our numbers beside the published ones, sweeps over a config key.

The paper notebooks (notebooks/paper_*.py) call these; the numbers come from
:mod:`cselab.evaluate.cache` (cached evaluations), the published ones from :mod:`cselab.published`.

**Variants by label prefix.** A notebook maps the paper's variant names to run-label prefixes,
e.g. ``{"APINCSE": "apincse", "-AP": "apincse-no_ap"}``. A run belongs to the variant whose prefix
is the *longest* that matches its label (the label itself, or the prefix followed by ``-``), so
``apincse-no_ap-s1`` is "-AP", not "APINCSE". The runs of one variant must share one config apart
from the seed (and the settings that only record, :data:`cselab.config.NON_IDENTITY_KEYS`):
:func:`variant_runs` says which key differs when they do not, so a sweep group never slips into a
variant's mean unnoticed.

Sections: runs → variants (and groups per backbone), backbones, published numbers beside ours
(:mod:`cselab.published`, shown only for the paper's own backbones), results → tables (mean ± std
over seeds, paired t-tests against SimCSE, the untuned backbone from snapshot 0), sweeps, and the
``profile`` sizing of the notebooks' costly parameters.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .config import LATER_KEYS, NON_IDENTITY_KEYS, uses_sts
from .evaluate.cache import evaluation_frame
from .evaluate.sts import STS_TASKS, TASK_LABELS
from .published import BACKBONES, paper_backbone
from .io import read_jsonl
from .rundir import RunDir, label_matches, read_config, read_metrics, run_select_by
from .tables import STS_SELECTED_MARK, STS_SELECTED_NOTE, format_table, scores_table

VariantSpec = Mapping[str, "str | Sequence[str]"]


# ------------------------------------------------------------------- runs → the paper's variants
def _prefixes(variants: VariantSpec) -> list[tuple[str, str]]:
    pairs = []
    for variant, prefixes in variants.items():
        for prefix in [prefixes] if isinstance(prefixes, str) else list(prefixes):
            if not isinstance(prefix, str) or not prefix:
                raise ValueError(f"variants: {variant!r}: a label prefix must be a non-empty string, got {prefix!r}")
            pairs.append((prefix, variant))
    seen = {}
    for prefix, variant in pairs:
        if seen.setdefault(prefix, variant) != variant:
            raise ValueError(f"variants: the prefix {prefix!r} is given to both {seen[prefix]!r} and {variant!r}")
    return pairs

def assign_variants(labels: Sequence[str], variants: VariantSpec) -> dict[str, list[str]]:
    """``{variant: [labels]}`` in the order of ``variants`` (variants without runs left out); each
    label goes to the variant of the longest prefix it matches, labels matching none are left out."""
    pairs = _prefixes(variants)
    out: dict[str, list[str]] = {v: [] for v in variants}
    for label in labels:
        matched = [(len(p), v) for p, v in pairs if label_matches(label, p)]
        if matched:
            out[max(matched)[1]].append(label)
    return {v: labels for v, labels in out.items() if labels}

def unmatched(runs: Mapping[str, Path], variants: VariantSpec) -> list[str]:
    """Labels that no variant prefix selects (shown by the notebooks so nothing is dropped silently)."""
    assigned = {label for labels in assign_variants(list(runs), variants).values() for label in labels}
    return [label for label in runs if label not in assigned]

def identity_without_seed(run_dir: str | os.PathLike) -> dict:
    """A run's config without the seed and the settings that only record or place it."""
    config = dict(read_config(run_dir))
    for key in (*NON_IDENTITY_KEYS, "seed"):
        config.pop(key, None)
    for key, default in LATER_KEYS.items():   # a run made before the key existed is the same variant
        if config.get(key) == default:
            config.pop(key, None)
    return config

def _first_difference(a: dict, b: dict, prefix: str = "") -> str:
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                return _first_difference(a[key], b[key], f"{prefix}{key}.")
            return f"{prefix}{key} ({a.get(key)!r} vs {b.get(key)!r})"
    return ""

def variant_runs(runs: Mapping[str, Path], variants: VariantSpec,
                 check: bool | Sequence[str] = True) -> dict[str, dict[str, Path]]:
    """``{variant: {label: run dir}}`` (see the module docs). Runs of one checked variant (all with
    ``check=True``, or those named in ``check``; a sweep group is not one) and one backbone that
    differ in more than the seed are an error naming the two labels and the key."""
    groups = {v: {label: Path(runs[label]) for label in labels}
              for v, labels in assign_variants(list(runs), variants).items()}
    checked = list(groups) if check is True else list(check or [])
    for variant, members in groups.items():
        if variant not in checked:
            continue
        by_model: dict[str, list[str]] = {}
        for label, path in members.items():   # one backbone's runs may use other settings (e.g. its lr)
            by_model.setdefault(run_model(path), []).append(label)
        for labels in by_model.values():
            first, *rest = labels
            reference = identity_without_seed(members[first])
            for label in rest:
                difference = _first_difference(reference, identity_without_seed(members[label]))
                if difference:
                    raise ValueError(f"variant {variant!r}: runs {first!r} and {label!r} differ in {difference}, not "
                                     "only in the seed; give one of them its own label prefix")
    return groups

def groups_table(groups: Mapping[str, Mapping[str, Path]]) -> pd.DataFrame:
    """Which runs each variant has: runs, backbone (``model``), seeds."""
    rows = [{"variant": name, "runs": ", ".join(members), "model": group_model(members),
             "seeds": ", ".join(str(read_config(p).get("seed")) for p in members.values())}
            for name, members in groups.items()]
    return pd.DataFrame(rows, columns=["variant", "runs", "model", "seeds"]).set_index("variant")

def variant_of(name: str) -> str:
    """The paper variant of a group name (``SimCSE · RoBERTa-base`` → ``SimCSE``)."""
    return name.split(" · ")[0]

def select_variants(runs: Mapping[str, Path], variants: VariantSpec,
                    sweeps: VariantSpec) -> tuple[dict[str, dict[str, Path]], dict[str, dict[str, Path]]]:
    """What every paper notebook starts with: ``(found, swept)`` — the runs of each variant
    (:func:`variant_runs`, every prefix of ``variants`` checked) and the runs of each sweep, kept
    apart. An error when no run matches a variant; prints the runs that no prefix selects."""
    spec = {**variants, **sweeps}
    found = variant_runs(runs, spec, check=list(variants))
    swept = {name: found.pop(name, {}) for name in sweeps}
    if not found:
        raise ValueError(f"no run matches the variants {dict(variants)}; runs: {list(runs)}")
    print("runs no variant selects:", unmatched(runs, spec) or "none")
    return found, swept


def split_by_backbone(groups: Mapping[str, Mapping[str, Path]]) -> dict[str, dict[str, Path]]:
    """Groups as they are when every run starts from one backbone; otherwise each group split per
    backbone, named ``<variant> · <backbone>`` (e.g. ``SimCSE · RoBERTa-base``)."""
    per_run = {label: run_model(p) for members in groups.values() for label, p in members.items()}
    if len(set(per_run.values())) <= 1:
        return {name: dict(members) for name, members in groups.items()}
    out: dict[str, dict[str, Path]] = {}
    for name, members in groups.items():
        for label, path in members.items():
            model = per_run[label]
            out.setdefault(f"{name} · {BACKBONES.get(paper_backbone(model), model)}", {})[label] = path
    return out

def representatives(groups: Mapping[str, Mapping[str, Path]], names: Sequence[str] | None = None) -> dict[str, Path]:
    """One run per group (its first, i.e. lowest-listed seed), for figures with a line per variant."""
    chosen = [n for n in groups if names is None or variant_of(n) in names]
    return {name: next(iter(groups[name].values())) for name in chosen}

def used_runs(*groupings: Mapping[str, Mapping[str, Path]]) -> dict[str, Path]:
    """Every run of the given groups, each once, in order."""
    out: dict[str, Path] = {}
    for grouping in groupings:
        for members in grouping.values():
            out.update(members)
    return out

def runs_with(runs: Mapping[str, Path], key: str, kind: str = "train") -> dict[str, Path]:
    """The runs whose ``kind`` records hold ``key`` (e.g. ``largest_angle`` in probe records, which
    only runs trained with ``probe_every`` have)."""
    return {label: Path(path) for label, path in runs.items()
            if any(r.get("kind") == kind and r.get(key) is not None for r in read_jsonl(RunDir(Path(path)).metrics_file))}


# ------------------------------------------------------------------- backbones
def run_model(run_dir: str | os.PathLike) -> str:
    """The ``model`` a run was trained from (Hub id, alias or folder)."""
    return str(read_config(run_dir)["model"])

def group_model(members: Mapping[str, Path]) -> str:
    """The backbone the runs of a group start from (``mixed: a, b`` when they differ)."""
    models = list(dict.fromkeys(run_model(p) for p in members.values()))
    return models[0] if len(models) == 1 else "mixed: " + ", ".join(models)

def runs_by_backbone(runs: Mapping[str, Path]) -> dict[str, dict[str, Path]]:
    """``{model: {label: run dir}}``, models in order of first appearance."""
    out: dict[str, dict[str, Path]] = {}
    for label, path in runs.items():
        out.setdefault(run_model(path), {})[label] = Path(path)
    return out

def one_per_backbone(runs: Mapping[str, Path]) -> dict[str, tuple[str, Path]]:
    """``{model: (label, run dir)}``: the first run of each backbone (e.g. whose snapshot 0 stands
    for the untuned backbone)."""
    out: dict[str, tuple[str, Path]] = {}
    for label, path in runs.items():
        out.setdefault(run_model(path), (label, Path(path)))
    return out

def backbone_label(model: str) -> str:
    """How to write a backbone in a label: the papers' name (``BERT-base``) or the folder's name."""
    backbone = paper_backbone(model)
    return BACKBONES[backbone] if backbone else Path(model).name

def num_layers(run_dir: str | os.PathLike) -> int:
    """Transformer layers of a run's backbone (``num_hidden_layers`` of its saved model)."""
    from .encoder.backbone import read_model_config

    for folder in RunDir(Path(run_dir)).saved_models().values():
        return int(read_model_config(folder)["num_hidden_layers"])
    raise FileNotFoundError(f"{run_dir}: no saved model (best/ or last/) to read the number of layers from")

def interlayer_index(values: Sequence, runs: Mapping[str, Path], labels: Sequence[str]) -> list[float]:
    """APINCSE's ``interlayer_negative.interlayer`` of each run as the hidden-state index it means
    (−2 of 12 layers → 11, as the paper counts M); ``most_similar`` (no fixed layer) → NaN."""
    from .methods.apincse.interlayer import MOST_SIMILAR, resolve_layer

    return [float("nan") if value == MOST_SIMILAR else float(resolve_layer(int(value), num_layers(runs[label])))
            for value, label in zip(values, labels)]


# ------------------------------------------------------------------- published numbers beside ours
def backbone_note(model: str, source: str) -> str:
    """Why a table has (or has no) published numbers beside ours."""
    backbone = paper_backbone(model)
    if backbone is None:
        return (f"Runs of `{model}`: not a backbone the papers train ({', '.join(BACKBONES.values())}), so no "
                f"published numbers of {source} are shown: numbers of different backbones are not comparable.")
    return f"Runs of `{model}` ({BACKBONES[backbone]}): the published numbers of {source} for {BACKBONES[backbone]} " \
           "are shown beside ours."

def published_notes(groups: Mapping[str, Mapping[str, Path]], source: str) -> str:
    """One line per backbone of the groups saying whether published numbers are shown and why."""
    models = list(dict.fromkeys(group_model(members) for members in groups.values()))
    return "\n".join(f"- {backbone_note(model, source)}" for model in models)

def published_beside(paper: str, table: str, groups: Mapping[str, Mapping[str, Path]],
                     as_column: str | None = None, numeric: bool = False) -> pd.DataFrame | None:
    """The published rows of ``table`` that match our groups — same variant, same backbone — indexed
    by our group names (cells as printed unless ``numeric``); None when no group has one (other
    backbones, variants the paper does not report). ``as_column`` renames the single column of a
    table whose columns are backbones (ClusterNS Table 2) to ours (e.g. ``Avg.``)."""
    from .published import published_frame

    rows = []
    for name, members in groups.items():
        backbone = paper_backbone(group_model(members))
        if backbone is None:
            continue
        frame = published_frame(paper, table, backbone=backbone, variants=[variant_of(name)], numeric=numeric,
                                index="variant")
        if frame.empty:
            continue
        if as_column is not None:
            if frame.shape[1] != 1:
                raise ValueError(f"as_column: {frame.attrs['source']} has {frame.shape[1]} columns for {backbone}")
            frame.columns = [as_column]
        rows.append(frame.set_axis([name]))
    if not rows:
        return None
    out = pd.concat(rows)
    out.attrs = dict(rows[0].attrs)
    return out

def published_transposed(paper: str, table: str, backbone: str | None = None, tags: dict | None = None,
                         numeric: bool = True, rename: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A published table printed with settings or models as columns (ClusterNS Tables 3 and 5),
    turned so they are rows like ours; ``rename`` renames those rows (e.g. ``{"RoBERTa": "untuned
    RoBERTa-base"}``). The frame keeps the table's ``attrs`` (source, unit)."""
    from .published import published_frame

    frame = published_frame(paper, table, backbone=backbone, numeric=numeric, index="variant", tags=tags)
    out = frame.T.rename(index=dict(rename or {}))
    out.columns.name = None
    out.attrs = dict(frame.attrs)
    return out

def with_published_column(table: pd.DataFrame, published: Mapping | pd.Series | None, label: str) -> pd.DataFrame:
    """``table`` (one row per setting, e.g. per M) with the published value of each setting in a
    column ``label`` (``–`` where the paper has none)."""
    out = table.copy()
    values = dict(published or {})
    out[label] = [values.get(key, "–") for key in out.index]
    return out


# ------------------------------------------------------------------- results → tables
def suite_columns(suite: str, tasks: Sequence[str]) -> tuple[dict[str, str], str]:
    """Column labels (cselab's, as the papers write them) and the average's label for a suite's
    ``tasks``: ``sts``, ``transfer``, ``short_text`` (the 8 short-text clustering sets) or
    ``dbpedia`` (its AMI alone, no average)."""
    from .data.clustering import SHORT_TEXT_SETS
    from .data.transfer import TRANSFER_TASKS
    from .tables import CLUSTERING_COLUMNS

    suites = {"sts": (STS_TASKS, TASK_LABELS), "transfer": (TRANSFER_TASKS, {t: t for t in TRANSFER_TASKS}),
              "short_text": (tuple(SHORT_TEXT_SETS), CLUSTERING_COLUMNS), "dbpedia": (("DBpedia",), CLUSTERING_COLUMNS)}
    if suite not in suites:
        raise ValueError(f"suite must be one of {sorted(suites)}, got {suite!r}")
    full, labels = suites[suite]
    unknown = [t for t in tasks if t not in full]
    if unknown or not tasks:
        raise ValueError(f"{suite} tasks: {list(tasks)} must be a non-empty subset of {list(full)}")
    return {t: labels[t] for t in tasks}, (None if suite == "dbpedia" else average_label(tasks, full))

def average_label(tasks: Sequence[str], full: Sequence[str] = STS_TASKS) -> str:
    """``Avg.`` for the full suite, ``Avg. (n tasks)`` for a subset (not comparable with a paper's Avg.)."""
    return "Avg." if list(tasks) == list(full) else f"Avg. ({len(tasks)} task{'s' if len(tasks) > 1 else ''})"

def sts_options(tasks: Sequence[str] = STS_TASKS) -> dict:
    """Options for ``evaluate_runs(runs, "sts", **options)``: none for the full 7-task suite (so a
    run's final STS table is reused), ``tasks`` otherwise."""
    unknown = [t for t in tasks if t not in STS_TASKS]
    if unknown or not tasks:
        raise ValueError(f"sts tasks: {list(tasks)} must be a non-empty subset of {list(STS_TASKS)}")
    return {} if list(tasks) == list(STS_TASKS) else {"tasks": list(tasks)}

def variant_results(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]]) -> dict[str, list[dict]]:
    """``{variant: [result of each of its runs]}`` for :func:`cselab.tables.scores_table`."""
    return {variant: [results[label] for label in members if label in results]
            for variant, members in groups.items() if any(label in results for label in members)}

def suite_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], suite: str,
                  tasks: Sequence[str]) -> pd.DataFrame:
    """Mean, std and n per group of each task of ``suite`` and their average (:func:`suite_columns`)."""
    columns, average = suite_columns(suite, tasks)
    summary = scores_table(variant_results(results, groups), columns=columns, average=average)
    summary.attrs["sts_selected"] = sts_selected(groups)
    return summary

def sts_selected(groups: Mapping[str, Mapping[str, Path]]) -> list[str]:
    """The variants with a run whose ``best/`` was chosen on STS data (``select_by: stsb_dev``)."""
    return [v for v, members in groups.items() if any(uses_sts(run_select_by(p)) for p in members.values())]

def sts_summary(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                tasks: Sequence[str] = STS_TASKS) -> pd.DataFrame:
    """Mean, std and n per variant of each STS task and the average (SimCSE's column names)."""
    return suite_summary(results, groups, "sts", tasks)

def seeds_label(summary: pd.DataFrame) -> pd.Series:
    """``cselab (n seeds)`` per row of a :func:`cselab.tables.summarise` frame."""
    first = summary.columns.get_level_values(0)[0]
    counts = summary[(first, "n")].astype(int)
    return counts.map(lambda n: f"cselab ({n} seed{'s' if n != 1 else ''})")

def comparison_table(summary: pd.DataFrame, published: pd.DataFrame | None = None, decimals: int = 2,
                     bold_best: bool = False) -> pd.DataFrame:
    """Our rows (``mean ± std`` over seeds) and then the published rows (cells as printed), with a
    ``source`` column saying which is which. Columns are ours followed by any the paper has in
    addition; a cell one side lacks reads ``–``."""
    marked = set(summary.attrs.get("sts_selected", ()))   # set by suite_summary: checkpoints chosen on STS
    plain = summary.copy()
    plain.attrs = {}   # the mark goes to the source column here, not to the variant names
    ours = format_table(plain, decimals=decimals, bold_best=bold_best)
    ours.insert(0, "source", [label + (STS_SELECTED_MARK if variant in marked else "")
                              for variant, label in seeds_label(summary).items()])
    ours.index.name = "variant" if ours.index.name in (None, "model") else ours.index.name
    ours.attrs = {"note": STS_SELECTED_NOTE} if marked & set(summary.index) else {}
    if published is None or published.empty:
        return ours
    theirs = published.astype(str).copy()
    theirs.insert(0, "source", f"published, {published.attrs.get('source', 'paper')}")
    theirs.index = theirs.index.rename(ours.index.name)
    columns = list(ours.columns) + [c for c in theirs.columns if c not in ours.columns]
    table = pd.concat([ours, theirs]).reindex(columns=columns).fillna("–")
    table.attrs = dict(ours.attrs)
    return table

def averages_summary(groups: Mapping[str, Mapping[str, Path]],
                     results_by_column: Mapping[str, Mapping[str, dict]]) -> pd.DataFrame:
    """Mean, std and n per group of each suite's average, one column per suite (e.g. MixCSE Knowl 8:
    ``{"STS Avg.": sts_results, "transfer Avg.": transfer_results}``); runs missing a suite are left out."""
    from .tables import summarise

    rows = [{"variant": name, **{column: results[label]["avg"] for column, results in results_by_column.items()}}
            for name, members in groups.items() for label in members
            if all(label in results for results in results_by_column.values())]
    if not rows:
        raise ValueError("averages_summary: no run has every suite's result")
    return summarise(pd.DataFrame(rows), "variant", list(results_by_column))

def variant_frame(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]],
                  config_keys: Sequence[str] = ("seed",)) -> pd.DataFrame:
    """One row per run (:func:`cselab.evaluate.cache.evaluation_frame`) with its ``variant``:
    the input of :func:`cselab.stats.compare_to_baseline` (``group="variant"``)."""
    runs = {label: path for members in groups.values() for label, path in members.items() if label in results}
    frame = evaluation_frame({label: results[label] for label in runs}, runs, tuple(config_keys))
    variant_of = {label: v for v, members in groups.items() for label in members}
    frame.insert(1, "variant", frame["run"].map(variant_of))
    return frame

def paired_comparison(results: Mapping[str, dict], groups: Mapping[str, Mapping[str, Path]], metric: str = "avg",
                      baseline: str = "SimCSE", bootstrap_resamples: int = 0, tasks: Sequence[str] = STS_TASKS,
                      data_dir: str | os.PathLike | None = None, seed: int = 0) -> pd.DataFrame | None:
    """Each group against the baseline variant's group of the same backbone, over the seeds both
    have: mean ± std, 95 % t-interval, mean difference with its interval, the paired t-test's raw p
    beside its Holm-adjusted p over the variants tested against that baseline, and the reading (no
    detectable effect with its MDE) (:func:`cselab.stats.compare_to_baseline`). With
    ``bootstrap_resamples`` > 0, a variant sharing a single seed with the baseline gets the column
    ``Δ, 95% test-pair bootstrap (1 seed)``: the paired bootstrap over the STS ``tasks``' test pairs
    (:func:`cselab.analysis.compare.single_seed_bootstrap`; test-set uncertainty, not seed variance;
    the runs' per-pair similarities are evaluated once and cached). None when no group of the
    baseline variant exists."""
    from .analysis.compare import single_seed_bootstrap, single_seed_runs, sts_pair_scores
    from .stats import compare_to_baseline, format_comparison

    frame = variant_frame(results, groups)
    paths = {label: p for members in groups.values() for label, p in members.items()}
    frame["model"] = frame["run"].map({label: group_model({label: p}) for label, p in paths.items()})
    parts = []
    for model, part in frame.groupby("model", sort=False):
        names = list(dict.fromkeys(part["variant"]))
        base = next((n for n in names if variant_of(n) == baseline), None)
        if base is None:
            continue
        table = format_comparison(compare_to_baseline(part, metric, group="variant", baseline=base), group="variant")
        needed = single_seed_runs(part, "variant", base) if bootstrap_resamples else []
        if needed:
            scores = sts_pair_scores({label: paths[label] for label in needed}, tasks, data_dir)
            boot = single_seed_bootstrap(part, scores, [metric], "variant", base, n_resamples=bootstrap_resamples,
                                         seed=seed).set_index("variant")
            table["Δ, 95% test-pair bootstrap (1 seed)"] = [
                f"{boot.loc[v, 'diff']:+.2f} [{boot.loc[v, 'ci_low']:.2f}, {boot.loc[v, 'ci_high']:.2f}]"
                if v in boot.index else "" for v in table.index]
        parts.append(table)
    return pd.concat(parts).fillna("") if parts else None


def untuned(groups: Mapping[str, Mapping[str, Path]], suite: str, data_dir: str | os.PathLike | None = None,
            **options) -> tuple[dict[str, dict], dict[str, dict[str, Path]]]:
    """The untuned backbone as extra rows: for the first run of each backbone that has snapshots,
    the ``suite`` result of its snapshot 0 (the model before training, cached in the run like any
    evaluation). Returns ``(results, groups)`` keyed ``<label>@step-0`` and ``untuned <backbone>``,
    to merge with the trained groups' results and groups."""
    from .evaluate.cache import evaluate_run
    from .neighbours import snapshot_folders

    with_snapshots = {label: p for members in groups.values() for label, p in members.items() if snapshot_folders(p)}
    results, extra = {}, {}
    for model, (label, path) in one_per_backbone(with_snapshots).items():
        key = f"{label}@step-0"
        results[key] = evaluate_run(path, suite, model="step-0", data_dir=data_dir, **options)
        extra[f"untuned {backbone_label(model)}"] = {key: path}
    return results, extra


# ------------------------------------------------------------------- sweeps and curves
def sweep_runs(sweep: Mapping[str, Path], *defaults: Mapping[str, Path]) -> dict[str, Path]:
    """The runs of a sweep: its own group's and, from the variants that hold its default point
    (e.g. MixCSE's runs at λ = 0.2), those of the same backbone; without a sweep group, the
    defaults' runs of their first backbone (one point)."""
    pooled = {label: Path(p) for group in defaults for label, p in group.items()}
    models = {run_model(p) for p in sweep.values()} or (
        {run_model(next(iter(pooled.values())))} if pooled else set())
    return {**{label: p for label, p in pooled.items() if run_model(p) in models}, **{k: Path(v) for k, v in sweep.items()}}

def sweep_results(results: Mapping[str, dict], runs: Mapping[str, Path], key: str, default=None,
                name: str | None = None) -> pd.DataFrame:
    """One row per run: ``run``, ``seed``, the swept config ``key`` (renamed ``name``), and every
    score of the result. Runs without the key (e.g. SimCSE in a GS-InfoNCE M sweep, whose config
    has no ``gs_infonce`` section) get ``default``."""
    frame = evaluation_frame({label: results[label] for label in runs if label in results},
                             {label: runs[label] for label in runs if label in results}, ("seed", key))
    if default is not None:
        frame[key] = frame[key].fillna(default)
    missing = frame.loc[frame[key].isna(), "run"].tolist()
    if missing:
        raise ValueError(f"sweep over {key!r}: the runs {missing} have no value for it (pass default=)")
    return frame.rename(columns={key: name}) if name else frame

def last_values(runs: Mapping[str, Path], keys: Sequence[str], kind: str = "train") -> pd.DataFrame:
    """The last logged value of each key per run (e.g. ``sim/clusterns.hard_neg_cos`` at the end of
    training, ClusterNS Table 3); index = run label."""
    frame = read_metrics(dict(runs), kind)
    missing = [k for k in keys if k not in frame]
    if missing:
        raise ValueError(f"last_values: no {missing} in the {kind} records of {list(runs)}")
    return frame.groupby("run", sort=False)[list(keys)].agg(lambda s: s.dropna().iloc[-1] if s.notna().any() else None)

# A line through two points reads as a trend whatever the two differ by (GS-InfoNCE's 0× and 3× in
# the cpu-demo differ by a tenth of a point), so a sweep figure needs three values of its setting;
# every sweep of the paper studies has at least three. Figures that compare a few settings as
# separate series (ClusterNS Fig. 5: one curve per σ) need two.
TREND_MIN_VALUES = 3
COMPARISON_MIN_VALUES = 2


def _value_words(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def enough_values(values: Sequence, what: str, study: str, minimum: int = TREND_MIN_VALUES) -> bool:
    """Whether a figure over ``values`` (one per run, repeats = seeds) has at least ``minimum``
    distinct ones to show. When it has fewer, prints one line naming the study that draws it, e.g.
    ``λ sweep: one value here (0.2); the paper-mixcse study draws it``, and returns False: the
    notebook draws nothing (a sweep of one point, or a "trend" of two, is not a figure)."""
    if minimum < 1:
        raise ValueError(f"minimum must be >= 1, got {minimum}")
    distinct = sorted({float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in values},
                      key=lambda v: (isinstance(v, str), v))
    if len(distinct) >= minimum:
        return True
    count = {0: "no value", 1: "one value"}.get(len(distinct), f"{len(distinct)} values")
    shown = f" ({', '.join(_value_words(v) for v in distinct)})" if distinct else ""
    print(f"{what}: {count} here{shown}, a figure needs {minimum}; the {study} study draws it")
    return False


# ------------------------------------------------------------------- notebook odds and ends
PROFILES = ("cpu", "gpu", "smoke")   # smoke: every run for 2 steps on a tiny model, the cpu sizes (studies/smoke.py)

def by_profile(profile: str, value, cpu, gpu):
    """A cost parameter: ``value`` when given, else its size for the study profile — ``cpu``
    (minutes on 2 cores, e.g. after the cpu-demo study) or ``gpu`` (the paper's)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if value is not None:
        return value
    return gpu if profile == "gpu" else cpu

def for_legend(runs: Mapping[str, Path]) -> dict[str, Path]:
    """Runs to plot with one line per run: a single run is left unlabelled, so its figure has no
    legend for its one line (its name is in the notebook's text)."""
    return {"": next(iter(runs.values()))} if len(runs) == 1 else dict(runs)

def slug(name: str) -> str:
    """A file-name part for a group or run name (``MixCSE w/o stop-gradient`` → ``mixcse_w_o_stop-gradient``)."""
    import re

    return re.sub(r"[^a-z0-9.+=-]+", "_", name.lower()).strip("_") or "x"
