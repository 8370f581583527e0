"""Runs as the workbench notebooks see them: which statistics they logged, which method each ran,
the model each started from, and measurements over a run's training snapshots.

Notebooks receive any set of runs (a study's, or a user's list) and must draw only what those runs
recorded — a SimCSE run has no ``sim/mixcse.mixed_cos``, a run without ``probe_every`` has no probe
records — and compare each trained model with the model it started from. These functions answer
those questions from the run directories alone.

Example::

    stats = logged_statistics(runs)          # {"similarity": [...], "other": [...]}
    frame = snapshot_series(runs, lambda encoder, config: {"norm": ...})
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd

from ...model.config import DEFAULT_METHOD
from ...model.methods import stat_labels
from ...model.rundir import RunDir, Runs, labelled_runs, read_config, read_metrics
from ..labels import display_name
from ..method_views import is_fill_ramp, out_of

CORE_FIRST = ("pos_cos", "neg_cos")     # the core's statistics lead every list


# ------------------------------------------------------------------- what the runs logged
def method_statistic_words(runs: Runs, stats: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Titles for the methods' non-cosine statistics (``<component>.<stat>`` keys of
    :func:`logged_statistics`' "other") and sentences for a figure's note: a count says out of how
    many (non-empty clusters of K = 16), a fill ramp (``queue_fill``) is left out of the titles and
    a sentence says at which step each run's queue is full. Returns ``(titles, notes)``."""
    labelled = labelled_runs(runs)
    frame = read_metrics(labelled, "train")
    labels = stat_labels()
    titles, notes = {}, []
    for stat in stats:
        component, _, name = stat.rpartition(".")
        key = f"sim/{stat}"
        logging = [label for label in labelled if key in frame and
                   frame.loc[frame["run"] == label, key].notna().any()]
        if is_fill_ramp(stat):   # its method's view says so (cselab/workbench/method_views/)
            full = {}
            for label in logging:
                part = frame.loc[(frame["run"] == label) & (frame[key] >= 1.0), "step"]
                full[label] = f"step {int(part.min())}" if len(part) else "never"
            steps = sorted(set(full.values()))
            runs_words = ", ".join(display_name(label) for label in logging)
            what = labels.get(stat, name)
            what = what[:1].upper() + what[1:]
            notes.append(f"{what}: not drawn (a ramp to 1 set by the queue's size and the batch size); full from "
                         + (f"{steps[0]} in {runs_words}." if len(steps) == 1 else
                            ", ".join(f"{when} in {display_name(label)}" for label, when in full.items()) + "."))
            continue
        title = labels.get(stat, name)
        total = out_of(stat)   # a count out of a configured total, as its method's view declares
        if total is not None:
            option, symbol = total.option, total.symbol
            totals = sorted({read_config(labelled[label]).get(component, {}).get(option) for label in logging} - {None})
            if totals:
                # no-break spaces: the title wraps before "(of K = 16)", never inside it
                nbsp = "\u00a0"
                title = f"{title} (of{nbsp}{symbol}{nbsp}={nbsp}{', '.join(map(str, totals))})"
        titles[stat] = title
    return titles, notes


def shared_beginnings(frame: pd.DataFrame, key: str, rel: float = 0.01) -> list[tuple[list[str], float]]:
    """Runs whose ``key`` agrees (each value within ``rel`` of the first run's, relative to the
    larger) from their first logged step on: ``[(runs, last step they agree at), ...]``, one entry
    per group of two runs or more, in the frame's order. Their lines lie on one another until that
    step — runs whose losses are the same until a method's term begins (ClusterNS before its
    clustering starts) — which a figure must say, as the lines cannot show it.

    ``frame``: long records (``run``, ``step``, ``key``), e.g. ``read_metrics(runs, "train")``."""
    series = {run: part.dropna(subset=[key]).set_index("step")[key].sort_index()
              for run, part in frame.groupby("run", sort=False)}
    series = {run: values for run, values in series.items() if len(values)}

    def agree(a: float, b: float) -> bool:
        return abs(a - b) <= rel * max(abs(a), abs(b))

    groups: list[list[str]] = []
    for run, values in series.items():
        for group in groups:
            first = series[group[0]]
            if first.index[0] == values.index[0] and agree(first.iloc[0], values.iloc[0]):
                group.append(run)
                break
        else:
            groups.append([run])
    found = []
    for group in (g for g in groups if len(g) > 1):
        first = series[group[0]]
        last = first.index[0]
        for step in first.index:
            if all(step in series[run].index and agree(first[step], series[run][step]) for run in group[1:]):
                last = step
            else:
                break
        found.append((group, float(last)))
    return found


def beginnings_sentence(frame: pd.DataFrame, keys: Mapping[str, str]) -> str:
    """The note's sentence naming the lines that lie on one another from their first step
    (:func:`shared_beginnings` of each key; ``keys``: ``{key: its panel's words, or ""}``), e.g. "Lines
    on one another at the first steps ...: SimCSE, ClusterNS to step 12 (InfoNCE term)", or ""."""
    parts = []
    for key, panel in keys.items():
        if key not in frame:
            continue
        values = frame[key].dropna()
        if values.empty:
            continue
        # "on one another" as drawn: within 1 % of the panel's span (of a dev score's 5 points, not of its 80)
        rel = 0.01 * min(1.0, float(values.max() - values.min()) / max(float(values.abs().max()), 1e-12))
        for group, last in shared_beginnings(frame, key, rel=rel):
            first = frame.loc[frame["run"].isin(group)].dropna(subset=[key])["step"].min()
            span = f"at step {last:g}" if last == first else f"to step {last:g}"
            parts.append(f"{', '.join(display_name(r) for r in group)} {span}" + (f" ({panel})" if panel else ""))
    return ("Lines on one another from the first step (the same values until a method's own term or pooler "
            "makes a difference): " + "; ".join(parts) + ".") if parts else ""


def late_starts_sentence(frame: pd.DataFrame, keys: Mapping[str, str], why: Mapping[str, str] | None = None) -> str:
    """The note's sentence naming the panels whose term begins after the runs' first logged step (a
    term not computed before: APINCSE's l_P until its queue is full, ClusterNS's BML until clustering
    starts), e.g. "Terms that begin later (absent before): APINCSE ℓ_P from step 4 (its queue full).";
    ``keys``: ``{key: its panel's words}``, ``why``: ``{key: the reason}`` where one is known; or ""."""
    if frame.empty or "step" not in frame:
        return ""
    first = frame["step"].min()
    parts = []
    for key, panel in keys.items():
        if key not in frame or frame[key].dropna().empty:
            continue
        start = frame.loc[frame[key].notna(), "step"].min()
        if start > first:
            reason = (why or {}).get(key)
            parts.append(f"{panel} from step {start:g}" + (f" ({reason})" if reason else ""))
    return ("Terms that begin later (absent before): " + "; ".join(parts) + ".") if parts else ""


def logged_keys(runs: Runs, prefix: str = "", kind: str = "train") -> list[str]:
    """Keys of the ``kind`` records starting with ``prefix`` that hold at least one value in at least
    one run, in the order they first appear (``prefix="loss"`` gives ``loss``, ``loss/info_nce``, …)."""
    frame = read_metrics(runs, kind)
    return [c for c in frame.columns if c.startswith(prefix) and c not in ("run", "kind") and frame[c].notna().any()]


def runs_logging(runs: Runs, key: str, kind: str = "train") -> dict[str, Path]:
    """The runs (``{label: path}``, in order) whose ``kind`` records hold a value for ``key``."""
    labelled = labelled_runs(runs)
    frame = read_metrics(labelled, kind)
    if key not in frame:
        return {}
    logged = set(frame.loc[frame[key].notna(), "run"])
    return {label: path for label, path in labelled.items() if label in logged}


def is_similarity(stat: str) -> bool:
    """A statistic that is a mean cosine: ``cos`` is a word of its name (``neg_cos``,
    ``clusterns.hard_neg_cos``, ``mixcse.mixed_cos_reverse``)."""
    return "cos" in stat.rsplit(".", 1)[-1].split("_")


def logged_statistics(runs: Runs) -> dict[str, list[str]]:
    """The ``sim/<stat>`` statistics the runs logged (names without ``sim/``), in two lists:

    * ``similarity`` — mean cosines of a pair type (positive pairs, in-batch negatives, hard
      negatives, centroids, mixed negatives, noise vectors, …): the core's first, then in the order
      of :func:`cselab.model.methods.stat_labels`, then unlabelled ones alphabetically;
    * ``other`` — the other statistics that have words in :func:`~cselab.model.methods.stat_labels`
      (share of anchors with a false negative, non-empty clusters, queue fill, …), same order.

    Bookkeeping without words (``clusterns.started``, ``interlayer_negative.layer_hist.3``) is left out."""
    stats = [k.removeprefix("sim/") for k in logged_keys(runs, "sim/")]
    labels = list(stat_labels())
    order = {s: i for i, s in enumerate([*CORE_FIRST, *(s for s in labels if s not in CORE_FIRST)])}

    def ordered(names: Iterable[str]) -> list[str]:
        return sorted(names, key=lambda s: (order.get(s, len(order)), s))

    return {"similarity": ordered(s for s in stats if is_similarity(s)),
            "other": ordered(s for s in stats if not is_similarity(s) and s in order)}


# ------------------------------------------------------------------- methods and models of runs
def configured_method(config: Mapping) -> str:
    """A run's method key as its config names it (the method list joined by ``+``): a key, not the words
    figures show (those are :func:`cselab.workbench.labels.method_name`)."""
    method = config.get("method", DEFAULT_METHOD)
    return "+".join(method) if isinstance(method, (list, tuple)) else str(method)


def run_methods(runs: Runs) -> dict[str, str]:
    """``{label: method}`` (:func:`configured_method` of each run's config)."""
    return {label: configured_method(read_config(path)) for label, path in labelled_runs(runs).items()}


def pick_runs(runs: Runs, methods: Iterable[str] | None = None, per_method: int | None = 1) -> dict[str, Path]:
    """The runs whose method (:func:`configured_method`) is in ``methods`` (None: any), keeping the first
    ``per_method`` of each method in the given order (None: all) — e.g. one seed per method for an
    analysis that loads every model."""
    labelled = labelled_runs(runs)
    wanted = None if methods is None else set(methods)
    chosen, count = {}, {}
    for label, method in run_methods(labelled).items():
        if wanted is not None and method not in wanted:
            continue
        if per_method is not None and count.get(method, 0) >= per_method:
            continue
        count[method] = count.get(method, 0) + 1
        chosen[label] = labelled[label]
    return chosen


def backbone_name(model: str | os.PathLike) -> str:
    """A short name for a backbone: an alias or Hub id as is, a local folder by its last part."""
    text = os.fspath(model)
    return Path(text).name if os.sep in text and Path(text).exists() else text


def base_encoder(run_dir: str | os.PathLike):
    """The model a run started from, as a :class:`~cselab.model.encoder.SentenceEncoder`.

    With snapshots (``snapshot_every``) this is the step-0 snapshot: the backbone with the run's
    pooler and its head and pooler weights as initialised. Without, the backbone named in the run's
    config with the run's pooler (a pooler with weights then gets a fresh initialisation)."""
    from ...model.encoder import SentenceEncoder

    run = RunDir(Path(run_dir))
    snapshots = run.snapshots()
    if 0 in snapshots:
        return SentenceEncoder.from_pretrained(snapshots[0])
    config = run.read_config()
    return SentenceEncoder.from_pretrained(config["model"], pooler=config.get("pooler", "cls"),
                                           mlp_only_train=config.get("mlp_only_train", True),
                                           pooler_options=config.get("pooler_options") or None)


def untuned_name(model: str | os.PathLike) -> str:
    """How figures and tables name a backbone before training: ``untuned all-MiniLM-L6-v2``."""
    from ..labels import backbone_words

    return f"untuned {backbone_words(backbone_name(model))}"


def base_groups(runs: Runs) -> dict[str, list[str]]:
    """Runs grouped by the model they started from (backbone, pooler and its options):
    ``{name: [labels]}`` with names like ``untuned all-MiniLM-L6-v2`` — ``untuned all-MiniLM-L6-v2,
    [CLS]`` when the runs start from several poolers."""
    from ..labels import pooler_words

    keys = {}
    for label, path in labelled_runs(runs).items():
        config = read_config(path)
        key = (backbone_name(config["model"]), config.get("pooler", "cls"),
               json.dumps(config.get("pooler_options") or {}, sort_keys=True))
        keys.setdefault(key, []).append(label)
    several_poolers = len({k[1:] for k in keys}) > 1
    names = {}
    for (model, pooler, options), labels in keys.items():
        pooler_text = pooler_words(pooler) + ("" if options == "{}" else " " + options)
        names[untuned_name(model) + (f", {pooler_text}" if several_poolers else "")] = labels
    return names


def base_encoders(runs: Runs) -> dict[str, object]:
    """``{name: encoder}``: one :func:`base_encoder` per group of :func:`base_groups` (from the
    group's first run), for "before training" panels and curves."""
    labelled = labelled_runs(runs)
    return {name: base_encoder(labelled[labels[0]]) for name, labels in base_groups(labelled).items()}


# ------------------------------------------------------------------- snapshots and probes
def snapshot_series(runs: Runs, measure: Callable[[object, dict], Mapping[str, float]],
                    steps: Iterable[int] | None = None) -> pd.DataFrame:
    """``measure(encoder, config)`` on every model snapshot of every run (``snapshot_every``): one row
    per (run, step) with the measured values. ``steps`` keeps only those steps. A run without
    snapshots is an error naming it."""
    from ...model.encoder import SentenceEncoder

    wanted = None if steps is None else set(steps)
    rows = []
    for label, path in labelled_runs(runs).items():
        run = RunDir(path)
        snapshots = run.snapshots()
        if not snapshots:
            raise FileNotFoundError(f"{path}: run {label!r} kept no model snapshots (train it with snapshot_every)")
        config = run.read_config()
        for step, folder in snapshots.items():
            if wanted is None or step in wanted:
                rows.append({"run": label, "step": step, **measure(SentenceEncoder.from_pretrained(folder), config)})
    return pd.DataFrame(rows)


def start_probe_records(runs: Runs, data_dir: str | os.PathLike | None = None, batch_size: int = 128) -> pd.DataFrame:
    """Probe records at step 0 for the runs that probed (``probe_every``): the model each run started
    from (:func:`base_encoder`) measured on the run's own probe set (its ``probe_sentences`` of STS-B
    dev), i.e. the point before training, for runs whose trainer did not record it (made before it
    probed at step 0); runs that hold it get no row. Same columns as ``read_metrics(runs, "probe")``."""
    from ...model.data import load_stsb
    from ...model.train.probes import probe_record, stsb_probe_set

    dev = None
    rows = []
    for label, path in labelled_runs(runs).items():
        config = read_config(path)
        if not config.get("probe_every"):
            continue
        recorded = read_metrics({label: path}, "probe")
        if "step" in recorded and (recorded["step"] == 0).any():
            continue   # the trainer recorded it (runs made since it probes at step 0)
        dev = dev if dev is not None else load_stsb(data_dir)["dev"]
        probe_set = stsb_probe_set(dev, config.get("probe_sentences", 256))
        rows.append({"run": label, **probe_record(base_encoder(path), probe_set, 0, batch_size)})
    return pd.DataFrame(rows)


def probe_layer_profiles(probes: Runs | pd.DataFrame, steps: str = "first_last") -> dict[str, dict[str, list[float]]]:
    """Per-layer [CLS] similarity to the last layer from probe records (``layer_cls_sim``):
    ``{run: {"step <s>": values}}`` with the first and last probe of each run (``"first_last"``) or
    the last only (``"last"``). ``probes``: run directories or a frame of probe records (e.g. the
    runs' records after :func:`start_probe_records`, so that the first is step 0)."""
    if steps not in ("first_last", "last"):
        raise ValueError(f"steps must be 'first_last' or 'last', got {steps!r}")
    frame = probes if isinstance(probes, pd.DataFrame) else read_metrics(probes, "probe")
    if "layer_cls_sim" not in frame or frame["layer_cls_sim"].isna().all():
        raise ValueError("probe_layer_profiles: the probe records hold no layer_cls_sim (train with probe_every)")
    profiles = {}
    for label, group in frame.groupby("run", sort=False):
        group = group[group["layer_cls_sim"].notna()].sort_values("step", kind="stable")
        if group.empty:
            continue
        picked = [group.iloc[0], group.iloc[-1]] if steps == "first_last" and len(group) > 1 else [group.iloc[-1]]
        profiles[label] = {f"step {int(r['step'])}": [float(v) for v in r["layer_cls_sim"]] for r in picked}
    return profiles


# ------------------------------------------------------------------- what a figure's point is
def starting_model(path: str | os.PathLike) -> tuple:
    """What a run started from: its backbone, pooler and pooler options."""
    config = read_config(path)
    return (str(config.get("model")), config.get("pooler", "cls"),
            json.dumps(config.get("pooler_options") or {}, sort_keys=True))


def same_start(runs: Runs, reference: str | os.PathLike) -> dict[str, Path]:
    """The runs that started from the same model (backbone, pooler) as the run ``reference``: the
    ones a comparison of methods with it may use (SimCSE on another pooler is not its baseline)."""
    start = starting_model(reference)
    return {label: path for label, path in labelled_runs(runs).items() if starting_model(path) == start}


class TrainingFacts:
    """Words for what the points of a training-curve figure are: the batch size, the runs and
    seeds behind each line, the STS-B dev sample of the dev curves (read from the runs' configs
    and results), for the figures' notes."""

    def __init__(self, runs: Runs):
        from ..labels import run_groups

        self.paths = labelled_runs(runs)
        self.configs = {label: read_config(path) for label, path in self.paths.items()}
        self.groups = run_groups(self.paths)
        sizes = sorted({int(c.get("batch_size", 64)) for c in self.configs.values()})
        self.batch_size = sizes[0] if len(sizes) == 1 else f"{sizes[0]}–{sizes[-1]}"
        self.batch = f"B = {self.batch_size} sentences"

    def seed_of(self, label: str) -> str:
        return f"seed {self.configs[label].get('seed')}"

    def runs_of(self, labels, per: str = "line") -> str:
        """"one run per line (seed 42)", or how many seeds each line is the mean of; ``per`` names
        what a run is drawn as ("line"; "each" for points, rows or maps: "one run each")."""
        labels = set(labels)
        counts = [len([r for r in g["runs"] if r in labels]) for g in self.groups.values()]
        counts = [c for c in counts if c]
        seeds = sorted({self.configs[label].get("seed") for label in labels}, key=str)
        if len(labels) == 1:
            return f"one run (seed {seeds[0]})"
        if max(counts, default=1) == 1:
            one = "one run each" if per == "each" else f"one run per {per}"
            return (f"{one} (seed {seeds[0]})" if len(seeds) == 1 else
                    f"{one} (seeds {', '.join(map(str, seeds))})")
        low, high = min(counts), max(counts)
        seeds_text = f"{low if low == high else f'{low}–{high}'} seeds"
        if per == "each":
            return f"each the mean of {seeds_text}"
        return f"each {per} the mean of {seeds_text} (faint: each seed)"

    @property
    def runs(self) -> str:
        return self.runs_of(self.paths)

    @property
    def each(self) -> str:
        """The runs of a figure that draws each model once (points, rows, maps): "one run each (seed 42)"."""
        return self.runs_of(self.paths, per="each")

    @property
    def dev_pairs(self) -> str:
        """The STS-B dev pairs of the runs' dev evaluations, in words."""
        counts = set()
        for label, path in self.paths.items():
            results = RunDir(path).results() if RunDir(path).results_file.is_file() else {}
            counts.add(results.get("stsb_dev_pairs") or self.configs[label].get("dev_max_pairs") or 1500)
        counts = sorted(int(c) for c in counts)
        if counts == [1500]:
            return "STS-B dev's 1,500 pairs"
        shown = " or ".join(f"{c:,}" for c in counts)
        return f"a fixed sample of {shown} of STS-B dev's 1,500 pairs"


def best_checkpoint_words(runs: Runs) -> str:
    """Which training step each run's ``best/`` is from, in words for a figure drawn from ``best/``
    (the checkpoint of the best STS-B dev score, ``results.json``'s ``best_step``): runs of one step
    together, e.g. "best/: step 16 of 16 (SimCSE, MixCSE), step 8 (APINCSE, APINCSE-IN), step 12
    (ClusterNS)"; "best/ of every run: step 16 of 16" where they agree. A figure that puts the
    ``best/`` models of several runs side by side compares models of different training lengths
    where the steps differ, and says so with this."""
    by_step: dict = {}
    total, chosen_by = set(), set()
    for label, path in labelled_runs(runs).items():
        results = RunDir(Path(path)).results() or {}
        chosen_by.add(results.get("select_by", "stsb_dev"))
        step = results.get("best_step")
        by_step.setdefault(step if step is not None else "?", []).append(display_name(label))
        if results.get("steps") is not None:
            total.add(int(results["steps"]))
    of = f" of {total.pop()}" if len(total) == 1 else ""
    if len(by_step) == 1:
        (step,) = by_step
        return f"best/ of every run: step {step}{of}"
    order = sorted(by_step, key=lambda s: (-len(by_step[s]), str(s)))   # the most runs' step first
    parts = [f"step {step}{of if i == 0 else ''} ({', '.join(by_step[step])})" for i, step in enumerate(order)]
    by = "STS-B dev" if chosen_by == {"stsb_dev"} else " / ".join(sorted(map(str, chosen_by)))
    return f"best/ (each run's best {by}) from different steps: " + ", ".join(parts)


def training_facts(runs: Runs) -> TrainingFacts:
    return TrainingFacts(runs)


def untuned_starts(runs: Runs) -> dict[str, Path]:
    """``{name: run directory}``: for each model the runs started from (:func:`base_groups`, named
    ``untuned <backbone>``), the first of its runs with a step-0 snapshot, whose ``step-0`` model
    (``evaluate_runs(..., model="step-0")``) stands for the untuned backbone; a start none of whose
    runs kept snapshots is left out."""
    labelled = labelled_runs(runs)
    out = {}
    for name, labels in base_groups(labelled).items():
        found = next((labelled[label] for label in labels if 0 in RunDir(labelled[label]).snapshots()), None)
        if found is not None:
            out[name] = found
    return out
