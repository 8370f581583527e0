"""A study's claims table, tables and seed-level figures from its committed record alone.

``cselab reproduce STUDY --profile cpu --from-record`` calls :func:`rebuild_from_record`: it reads
``<figures>/<study>/record.jsonl`` (cselab/workbench/studies/record.py), takes the claims and the record
figures the study file declares for the profile (cselab/workbench/studies/claims_spec.py), and writes

* ``<reports>/<study>/record/claims.md`` and ``.csv`` — the claims table (:func:`cselab.workbench.claims.claims_table`),
  ``power_plan.md`` — the plan the seeds came from, ``scores.md`` — every variant's STS scores
  (mean ± sd over its seeds, n);
* ``<figures>/<study>/record/claims.png`` — the paired view of every claim
  (:func:`cselab.workbench.plots.claims.plot_claims`), and one PNG per ``record_figures:`` entry (sweeps,
  curves over training, grouped scores, planes, per-layer profiles).

No run folder is read: a fresh clone rebuilds all of it in seconds. The figures that need weights
(UMAP maps, the explorer, recomputed similarity analyses) stay with the runs and the notebooks.

The same functions give the docs their generated blocks (:func:`render_block`, :func:`update_docs`):
each ``<!-- record: KIND STUDY -->`` … ``<!-- /record -->`` block in docs/cpu-papers.md,
docs/cpu-compare.md and README.md is rewritten from the records, and tests/test_findings.py fails
when a committed block differs from what the records give.

The study file is read by :func:`cselab.workbench.studies.spec.read_study_plan` (its claims, power plan,
record figures and the labels and groups of its runs; no run config validated), once per version of
the file (:func:`_study`); each record is read and each claims table computed once per run of
:func:`update_docs` (its ``memo``), whatever number of blocks and pages ask for them.

A record is read against the study file (:func:`cselab.workbench.studies.record.read_study_record`): a
missing, linked or damaged record is one line and nothing is written (a published block is never
replaced by "nothing recorded"); stale lines (a config the study file no longer plans: the one step
that resolves the runs' configs, each run's once, to compare their hashes) are named, file, line and
label, and no verdict, table or block is made from a record that has them.
"""
from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path

import pandas as pd

from ..claims import claims_table, format_claims, format_plan, mechanism_readings, tally, with_computation
from ..results import mean_std_text
from ..studies.record import (FINAL, RecordError, computation_columns, planned_hash, read_study_record, record_path,
                              records_frame, records_series)
from ..studies.spec import available_studies, read_study_plan, resolve_study_path
from .overview import PAPER_STUDY

BLOCK = re.compile(r"(<!-- record: (?P<kind>[a-z_]+) (?P<study>[A-Za-z0-9_.+=-]+) -->\n)(?P<body>.*?)(<!-- /record -->)",
                   re.S)
DOCS_ROOT = "."   # where --from-record finds the committed records of the studies that decide shared claims


def committed_record(study: str, root: str | os.PathLike = ".") -> Path:
    """The committed record of a shipped cpu study: under the figures root its study file names."""
    return record_path(Path(root) / _study(study).figures_dir, study)


# ------------------------------------------------------------------- the study, read once
def _version(path: Path) -> tuple[str, int, int]:
    """A file's identity for the caches: its resolved path, modification time and size."""
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


def _study(study: str, profile: str = "cpu"):
    """The study's plan (:func:`cselab.workbench.studies.spec.read_study_plan`: claims, power plan,
    record figures, run labels and groups; no run config validated), read once per version of its
    file: every block of every page, the records' paths and the deciding studies take this one."""
    return _plan(*_version(resolve_study_path(study)), profile)


@functools.lru_cache(maxsize=32)
def _plan(path: str, mtime_ns: int, size: int, profile: str):
    return read_study_plan(path, profile)


class StaleRecord(RecordError):
    """A record with stale lines: the message names every one (file:line: label: stale: why)."""


def current_records(study, source: Path) -> list[dict]:
    """The record's lines, checked; :class:`StaleRecord` when any line is stale (no verdict may rest
    on it: re-run those runs, or restore the study file they were trained with)."""
    read = read_study_record(source, study)
    if read.stale:
        raise StaleRecord(f"{source}: {len(read.stale)} stale line(s), whose config the study file no longer "
                          "plans; no verdict is made from this record:\n" + "\n".join(map(str, read.stale)))
    return read.current


def study_frame(study, records: list[dict]) -> tuple[pd.DataFrame, list[dict]]:
    """The records of the study's own runs (its labels) and their one-row-per-run frame, with the
    computation each ran (CPU kind, precision, code: what the pairing rule compares)."""
    own = [r for r in records if planned_hash(study, r) is not None]   # the plan's labels and a re-plan's seeds
    frame = records_frame(own)
    return (with_computation(frame, own, of=computation_columns) if not frame.empty else frame), own


def decided_elsewhere(study, root: str | os.PathLike = ".") -> dict[str, str]:
    """``{claim: verdict}`` for each claim whose comparison another study's family decides
    (``decided_in``): that study's verdict of the claim with the same variant, reference and metric."""
    out = {}
    for claim in study.claims.claims:
        if not claim.decided_in:
            continue
        source = committed_record(claim.decided_in, root)
        if not source.is_file():
            continue
        table = _deciding_table(claim.decided_in, _version(resolve_study_path(claim.decided_in)), *_version(source))
        same = table[(table["variant"] == claim.variant) & (table["reference"] == claim.reference)
                     & (table["metric"] == claim.metric)]
        if not same.empty:
            out[claim.claim] = f"{same['verdict'].iloc[0]} (its row: {same['claim'].iloc[0]})"
    return out


@functools.lru_cache(maxsize=16)
def _deciding_table(study: str, study_file: tuple, source: str, mtime_ns: int, size: int) -> pd.DataFrame:
    """The claims table of a study that decides shared comparisons, once per version of its study
    file and its record (the docs' blocks ask for it several times)."""
    other = _study(study)
    frame, records = study_frame(other, current_records(other, Path(source)))
    return claims_of(other, frame, records)[0]


def claims_of(study, frame: pd.DataFrame, records: list[dict] | None = None,
              root: str | os.PathLike | None = None) -> tuple[pd.DataFrame, dict[str, list[float]]]:
    """The study's claims table over the frame, and each claim's per-seed differences over the pairs
    the test kept, in the paper's direction (positive: as the paper says). ``records`` give the
    mechanism checks; ``root`` the committed records of the studies that decide shared comparisons."""
    inert = mechanism_readings(study.claims.claims, records) if records else {}
    decided = decided_elsewhere(study, root) if root is not None else {}
    table = claims_table(frame, study.claims.claims, study.claims.rule, inert=inert, decided=decided)
    differences = {}
    for claim, (_, row) in zip(study.claims.claims, table.iterrows()):
        if claim.metric not in frame or not row["seeds"]:
            continue
        a = frame[frame["variant"] == claim.variant].set_index("seed")[claim.metric]
        b = frame[frame["variant"] == row["against"]].set_index("seed")[claim.metric]
        kept = [int(s) if str(s).isdigit() else s for s in str(row["seeds"]).split(", ")]
        sign = -1.0 if claim.direction == -1 else 1.0
        if a.index.is_unique and b.index.is_unique:
            differences[claim.claim] = [sign * (float(a[s]) - float(b[s])) for s in kept]
    return table, differences


def sts_columns() -> list[str]:
    """The record's STS columns: the tasks of the suite training scores with (the suite registry's
    order, :data:`cselab.workbench.studies.record.FINAL`), then its primary metric (the average)."""
    from ...model.evaluate.suites import get_suite, task_labels

    return [*task_labels(FINAL), get_suite(FINAL).primary]


def scores_table(frame: pd.DataFrame, variants: list[str]) -> pd.DataFrame:
    """Mean ± sd over seeds (n) of every STS task and the average, one row per variant."""
    rows = []
    for variant in variants:
        part = frame[frame["variant"] == variant]
        if part.empty:
            continue
        row = {"variant": variant, "seeds": ", ".join(str(s) for s in sorted(part["seed"]))}
        for column in sts_columns():
            values = pd.to_numeric(part.get(column), errors="coerce").dropna() if column in part else pd.Series()
            # one seed: its score alone; none: –
            row[column] = mean_std_text(values.mean(), values.std(ddof=1), missing_std=None)
        rows.append(row)
    return pd.DataFrame(rows).set_index("variant") if rows else pd.DataFrame()


def _markdown(table: pd.DataFrame) -> str:
    return table.to_markdown()


def save_table(table: pd.DataFrame, name: str, folder: Path) -> None:
    """``<folder>/<name>.md`` and ``.csv``, each written atomically."""
    from ...model.io import atomic_write_text

    atomic_write_text(folder / f"{name}.md", _markdown(table) + "\n")
    atomic_write_text(folder / f"{name}.csv", table.to_csv())


# ------------------------------------------------------------------- the figures
def _figure(study, spec: dict, records: list[dict], frame: pd.DataFrame):
    from ..plots.claims import plot_layer_profile_seeds, plot_seed_curves, plot_seed_points

    kind = spec["kind"]
    if kind == "sweep":
        rows = []
        series = spec.get("series") or {"": spec["points"]}
        for hue, mapping in series.items():
            for x, variant in mapping.items():
                for _, r in frame[frame["variant"] == variant].iterrows():
                    rows.append({"x": float(x), "avg": r["avg"], spec.get("hue") or "series": hue,
                                 "variant": variant, "seed": r["seed"]})   # colours by method; lines over one seed set
        data, about = _on_shared_seeds(pd.DataFrame(rows), frame, ["x", spec.get("hue") or "series"])
        return plot_seed_points(data, "x", hue=spec.get("hue") if spec.get("series") else None,
                                xlabel=spec.get("x"), title=spec.get("title"), method=spec.get("method"), about=about)
    if kind == "grouped":
        rows = []
        for name, variant in spec["variants"].items():
            group, _, x = name.partition(" · ")
            for _, r in frame[frame["variant"] == variant].iterrows():
                rows.append({"x": float(x), "avg": r["avg"], "hue": group, "variant": variant, "seed": r["seed"]})
        data, about = _on_shared_seeds(pd.DataFrame(rows), frame, ["x", "hue"])
        return plot_seed_points(data.rename(columns={"hue": spec.get("hue", "method")}), "x",
                                hue=spec.get("hue", "method"), xlabel=spec.get("x"), title=spec.get("title"),
                                about=about)
    if kind == "plane":
        return _plane(spec, records, frame)
    if kind == "profile":   # a per-layer probe statistic at the last probe step, one profile per seed
        key, profiles = spec["key"], {}
        for name, variant in spec["variants"].items():
            profiles[name] = [r["probe"][key][-1] for r in records
                              if r["variant"] == variant and (r.get("probe") or {}).get(key)]
        return plot_layer_profile_seeds(profiles, title=spec.get("title"), **({"ylabel": spec["y"]} if "y" in spec else {}))
    # curves over training (one key, or one panel... one figure per key list: the keys share the axis)
    keys = spec.get("keys") or [spec["key"]]
    words = dict(keys) if isinstance(keys, dict) else {}      # keys: {logged key: its panel's words}
    keys = list(keys)
    if len(keys) > 1 and not words and len(spec["variants"]) == 1:
        # one variant's statistics of one unit (noise_similarity's cosines): one panel, a line per
        # statistic in its statistic's colour, the variant named in the title
        from ..plots.palettes import statistic_kind

        (name, variant), = spec["variants"].items()
        mine = [r for r in records if r["variant"] == variant]
        series = {statistic_kind(key) or _key_words(key): records_series(mine, spec.get("part", "train"), key)
                  for key in keys}
        return plot_seed_curves(series, spec.get("y", keys[0]), title=spec.get("title") or name,
                                logy=spec.get("scale") == "log", share=spec.get("scale") == "share")
    panels: dict[str, dict] = {}
    # one variant's panels draw no legend: the title names it (APINCSE's loss parts were drawn unnamed)
    only = next(iter(spec["variants"])) if len(spec["variants"]) == 1 else None
    if spec.get("together"):   # one variant, its statistics as the lines of one panel (the papers' similarity figures)
        (variant,) = spec["variants"].values()
        own = [r for r in records if r["variant"] == variant]
        panels[""] = {words.get(key) or _key_words(key): records_series(own, spec.get("part", "train"), key)
                      for key in keys}
        # each statistic in its own colour and shape, as in every figure; the title names the method
        return plot_seed_curves({}, spec.get("y", keys[0]), title=spec.get("title") or next(iter(spec["variants"])),
                                panels=panels, statistics={words.get(key) or _key_words(key): key for key in keys})
    for key in keys:
        panel = panels.setdefault((words.get(key) or _key_words(key)) if len(keys) > 1 else "", {})
        for name, variant in spec["variants"].items():
            panel[name] = records_series([r for r in records if r["variant"] == variant], spec.get("part", "train"), key)
    from ..labels import method_key

    # a method's variants (ClusterNS at three σ) in shades of its colour, the method itself in the colour
    return plot_seed_curves({}, spec.get("y", keys[0]), title=spec.get("title") or only,
                            logy=spec.get("scale") == "log", share=spec.get("scale") == "share", panels=panels,
                            methods={name: method_key(v) for name, v in spec["variants"].items()},
                            leading=[name for name, v in spec["variants"].items() if method_key(v) == v])


def _on_shared_seeds(data: pd.DataFrame, frame: pd.DataFrame, groups: list[str]) -> tuple[pd.DataFrame, str]:
    """A sweep's runs at the seeds every one of its settings ran (``groups``: the columns that make a
    setting), and words on them for the figure's note: means over different seeds (a default's 26 seeds
    beside a swept value's 3) compare which seeds were averaged as much as the settings. The words
    say which seeds, and how many code identities and CPU kinds trained them (``frame``'s computation
    columns): runs of several are no test, which the claims table says for each claim."""
    sets = [set(g["seed"]) for _, g in data.groupby(groups)]
    shared = set.intersection(*sets) if sets else set()
    if len(shared) >= 2:
        data = data[data["seed"].isin(shared)]
    seeds = sorted(shared) if len(shared) >= 2 else None
    kept = frame.merge(data[["variant", "seed"]].drop_duplicates(), on=["variant", "seed"])
    words = (f"seeds {_seed_ranges(seeds)}, the seeds every setting ran" if seeds else
             "the seeds differ between settings")
    computations = {c: kept[c].nunique() for c in ("code", "cpu") if c in kept}
    if any(n > 1 for n in computations.values()):
        codes, cpus = computations.get("code", 1), computations.get("cpu", 1)
        words += (f"; their runs are of {codes} code identit{'ies' if codes > 1 else 'y'} and {cpus} CPU "
                  f"kind{'s' if cpus > 1 else ''}, so these means are no test: the claims table gives each claim's "
                  "pairs of one computation, or why it has none")
    else:
        words += "; per point, not paired: the claims table tests the paired differences"
    return data, words


def _seed_ranges(seeds: list[int]) -> str:
    """``[1, 2, 3, 5]`` → "1–3, 5"."""
    runs: list[list[int]] = []
    for s in seeds:
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def tally_words(counts: dict[str, int]) -> str:
    """A family's tally in words (:func:`cselab.workbench.claims.tally`): holds and reversed always, the
    other groups where they count (what each means: docs/findings-methods.md)."""
    powered = counts["not detected"] - counts["underpowered"] - counts["inconclusive"]
    groups = [(powered, "not detected (powered)"), (counts["underpowered"], "underpowered"),
              (counts["inconclusive"], "inconclusive"), (counts["not testable at this scale"], "not testable here"),
              (counts["no test"], "without a test"), (counts["elsewhere"], "decided in another study")]
    rest = "".join(f", {n} {words}" for n, words in groups if n)
    return f"{counts['claims']} claims: {counts['holds here']} hold here, {counts['reversed']} reversed{rest}"


def tally_name(study: str) -> str:
    """The name a study's tally line starts with: its method's display name for a paper's study, else
    the study's own name."""
    from ..labels import display_name, method_key

    method = method_key(study[len(PAPER_STUDY):]) if study.startswith(PAPER_STUDY) else None
    return display_name(method) if method else study


def _plane(spec: dict, records: list[dict], frame: pd.DataFrame):
    """Two probe statistics at the last probe step, one point per seed (``kind: plane``); ``untuned``
    names the backbone before training (step 0 of the first variant's runs)."""
    from ..plots.plane import plot_seed_plane

    x_key, y_key = spec["x_key"], spec["y_key"]

    def at(variant: str, index: int) -> list[tuple[float, float]]:
        probes = [r["probe"] for r in records if r["variant"] == variant and (r.get("probe") or {}).get(x_key)]
        return [(float(p[x_key][index]), float(p[y_key][index])) for p in probes]

    points, labels = {}, {}
    if spec.get("untuned"):
        first = next(iter(spec["variants"].values()))
        points[spec["untuned"]] = at(first, 0)
        labels[spec["untuned"]] = f"{spec['untuned']} (step 0)"
    for name, variant in spec["variants"].items():
        points[name] = at(variant, -1)
        avg = pd.to_numeric(frame.loc[frame["variant"] == variant, "avg"], errors="coerce").dropna()
        labels[name] = f"{name}: STS avg {avg.mean():.2f} (n {len(points[name])})" if len(avg) else name
    return plot_seed_plane(points, spec.get("x", x_key), spec.get("y", y_key), title=spec.get("title"),
                           hollow=[spec["untuned"]] if spec.get("untuned") else (), labels=labels,
                           note=spec.get("note", ""))


def _key_words(key: str) -> str:
    from ..plots.training_curves import stat_label_words

    words = stat_label_words()
    name = key.split("/", 1)[-1]
    return words.get(name, words.get(name.split(".", 1)[-1], name))


def rebuild_from_record(study: str, profile: str = "cpu", figures_dir: str | os.PathLike | None = None,
                        reports_dir: str | os.PathLike = "reports", stream=None) -> int:
    """See the module docstring; returns 0 (the exit status of ``cselab reproduce --from-record``)."""
    import sys

    from ..plots.core import TooFewPoints, save_figure

    out = stream or sys.stdout
    spec = _study(study, profile)   # claims, plan, labels; configs resolved only by the stale check
    figures_dir = spec.figures_dir if figures_dir is None else figures_dir   # the study file's, by default
    source = record_path(figures_dir, spec.name)
    try:
        frame, records = study_frame(spec, current_records(spec, source))
    except StaleRecord as e:   # every stale line named; nothing written
        print(str(e), file=out)
        return 1
    if frame.empty:
        raise ValueError(f"{source}: no record of study {spec.name!r}'s runs (profile {profile})")
    tables = Path(reports_dir) / spec.name / "record"
    figures = Path(figures_dir) / spec.name / "record"
    variants = list(dict.fromkeys(r.label.rsplit("-s", 1)[0] for r in spec.runs))
    save_table(scores_table(frame, variants), "scores", tables)
    written = [tables / "scores.md"]
    if spec.claims.claims:
        table, differences = claims_of(spec, frame, records, DOCS_ROOT)
        save_table(format_claims(table), "claims", tables)
        save_table(format_plan(spec.claims.plan()), "power_plan", tables)
        written += [tables / "claims.md", tables / "power_plan.md"]
        try:
            written += save_figure(plot_claims_figure(table, differences), figures / "claims", formats=("png",))
        except TooFewPoints as e:
            print(f"claims figure: {e}", file=out)
        counts = tally(table)
        print(f"{spec.name}: {len(records)} runs in the record; the paper's claims: {tally_words(counts)}", file=out)
    for figure in spec.claims.figures:
        try:
            fig = _figure(spec, figure.spec, records, frame)
        except TooFewPoints as e:
            print(f"{figure.name}: {e}", file=out)
            continue
        written += save_figure(fig, figures / figure.name, formats=("png",))
    for path in written:
        print(f"  {path}", file=out)
    return 0


def plot_claims_figure(table, differences):
    from ..plots.claims import plot_claims

    return plot_claims(table, differences)


# ------------------------------------------------------------------- the docs' generated blocks
def _record_of(study: str, root, memo: dict) -> tuple[pd.DataFrame, list[dict]]:
    """The study's frame and current records (:func:`study_frame`, :func:`current_records`: missing,
    linked, damaged, stale: refused), read once per ``memo`` (one run of :func:`update_docs`)."""
    key = ("record", study, str(root))
    if key not in memo:
        spec = _study(study)
        memo[key] = study_frame(spec, current_records(spec, committed_record(study, root)))
    return memo[key]


def _claims_of(study: str, root, memo: dict) -> tuple[pd.DataFrame, dict[str, list[float]]]:
    """:func:`claims_of` the study's record, once per ``memo``: a page's claims, example and tally
    blocks, the README's tally and the overview share it."""
    key = ("claims", study, str(root))
    if key not in memo:
        frame, records = _record_of(study, root, memo)
        memo[key] = claims_of(_study(study), frame, records, root)
    return memo[key]


def render_block(kind: str, study: str, root: str | os.PathLike = ".", memo: dict | None = None) -> str:
    """The Markdown of one generated block: ``claims`` (the claims table, the paper's and the
    checks'), ``plan`` (the power plan), ``scores`` (mean ± sd per variant), ``tally`` (one line).
    ``memo``: what the blocks of one run share (each study's record and claims table, read and computed
    once); the study itself is read once per version of its file (:func:`_study`)."""
    memo = {} if memo is None else memo
    if kind == "overview":   # every paper study's claims in one table, the figure beside it (make findings draws it)
        from .overview import OVERVIEW_FIGURE, overview_markdown

        return (f"![Every paper claim: Δ in the paper's direction over its target, 95 % interval, verdict, n]"
                f"(../{OVERVIEW_FIGURE}.png)\n\n" + overview_markdown(overview_rows(root, memo=memo)))
    spec = _study(study)
    if kind == "plan":
        return _markdown(format_plan(spec.claims.plan())) + "\n"
    frame, records = _record_of(study, root, memo)
    if kind == "scores":
        variants = list(dict.fromkeys(r.label.rsplit("-s", 1)[0] for r in spec.runs))
        return _markdown(scores_table(frame, variants)) + "\n"
    table, _ = _claims_of(study, root, memo)
    if kind == "claims":
        parts = []
        for family, words in (("paper", "The paper's claims"), ("check", "The workbench's checks (not counted as the paper's)")):
            rows = table[table["kind"] == family]
            if rows.empty:
                continue
            text = format_claims(rows.reset_index(drop=True))
            # a comparison another study decides links to that study's page (the docs sit side by side)
            text["verdict"] = [_link_decided(v) for v in text["verdict"]]
            parts.append(f"{words} — {table.attrs['families'].get(family, 'no Holm family')}:\n\n{_markdown(text)}\n")
        return "\n".join(parts)
    if kind == "example":   # the MDE rule worked through the study's first paper claim with a test
        from ..results import detectable_effect_size, sd_interval

        tested = table[(table["kind"] == "paper") & (table["test"] == "paired_t") & table["p"].notna()]
        if tested.empty:
            return "(no paper claim of this study has a test in the record yet)\n"
        r = tested.iloc[0]
        k = round(spec.claims.rule.alpha / r["level"])   # the family the claim was tested in
        n, sd = int(r["n"]), float(r["sd"])
        d = detectable_effect_size(n, r["level"], spec.claims.rule.power)
        low, high = sd_interval(sd, n)
        scaled = r["scaled_effect"]
        paper = (f" The paper's own effect scaled to this backbone is {scaled:.2f} "
                 f"({'≥' if r['mde'] <= scaled else '<'} the MDE): "
                 f"{'a design that could detect it' if r['mde'] <= scaled else 'more than this design can detect'}."
                 if isinstance(scaled, float) and math.isfinite(scaled) else "")
        return (f"Take the row *{r['claim']}*. Its family holds the paper's k = {k} claims, so Holm's first step "
                f"asks p < 0.05 / {k} = {r['level']:.4f}. Its n = {n} per-seed differences have a standard "
                f"deviation of {sd:.3f} (95 % χ² interval {low:.3f}–{high:.3f}: few seeds estimate a spread "
                f"poorly). At that level, a two-sided paired t-test on {n} pairs detects a true difference of "
                f"{d:.2f} standard deviations with power 0.8 (the noncentral t), so the MDE is {d:.2f} × "
                f"{sd:.3f} = {r['mde']:.2f} STS points, between {r['mde_low']:.2f} and {r['mde_high']:.2f} over "
                f"the spread's interval. The observed Δ is {r['diff']:+.2f} (Holm-adjusted p "
                f"{r['p_holm']:.3g}): *{r['verdict']}*.{paper}\n")
    if kind == "tally":
        counts = tally(table)
        return f"{tally_name(study)}: {tally_words(counts)} ({runs_words(records)})\n"
    raise ValueError(f"unknown generated block kind {kind!r} (claims, plan, scores, tally, example, overview)")


def runs_words(records: list[dict]) -> str:
    """How many runs a record holds, by the plan that asked for them, and their training time by where
    they ran: "55 runs: 34 of the first plan, 21 of the re-plan of 2026-12-04; 1.5 h of training on
    CPUs, 6 min on a GPU"."""
    plans = [(r.get("plan") or {"name": "first"}) for r in records]
    first = sum(p["name"] == "first" for p in plans)
    made = sorted({p.get("made", "") for p in plans if p["name"] == "re-plan"})
    words = f"{len(records)} runs: {first} of the first plan"
    if made:   # one re-plan a day: "of the re-plan of 2026-12-04", "of the re-plans of 2026-12-04 and 2026-12-05"
        dates = made[0] if len(made) == 1 else f"{', '.join(made[:-1])} and {made[-1]}"
        words += f", {len(records) - first} of the re-plan{'s' if len(made) > 1 else ''} of {dates}"
    on_gpu = [(r.get("execution") or {}).get("device") == "cuda" for r in records]
    cpu_hours = sum(r.get("train_seconds") or 0 for r, g in zip(records, on_gpu) if not g) / 3600
    gpu_minutes = sum(r.get("train_seconds") or 0 for r, g in zip(records, on_gpu) if g) / 60
    return words + f"; {cpu_hours:.1f} h of training on CPUs" + (f", {gpu_minutes:.0f} min on a GPU" if any(on_gpu) else "")


def _link_decided(verdict: str) -> str:
    """``decided in paper-mixcse: …`` with the study linked to the page that holds its verdict."""
    from ..claims import DECIDED_IN

    if not verdict.startswith(DECIDED_IN + " "):
        return verdict
    study, _, rest = verdict[len(DECIDED_IN) + 1:].partition(":")
    page = "cpu-compare.md" if _study(study).figures_dir == "figures" else "cpu-papers.md"
    return f"{DECIDED_IN} [{study}]({page}){':' + rest if rest else ''}"


def update_docs(paths, root: str | os.PathLike = ".", write: bool = True, memo: dict | None = None) -> dict[str, list[str]]:
    """Rewrite every generated block of the files; returns ``{file: [blocks that changed]}``.
    With ``write=False`` nothing is written (what the test uses). Every block of every file is
    rendered before any file is written: a record refused for the last block leaves all files as they were.
    Each study is read once (:func:`_study`), each record and claims table once (``memo``, shared by
    every block; pass one to share it further, as :func:`main` does with the overview figure)."""
    from ...model.io import atomic_write_text

    changed, pending = {}, {}
    memo = {} if memo is None else memo
    for path in map(Path, paths):
        text = path.read_text(encoding="utf-8")
        names = []

        def replace(match):
            body = render_block(match["kind"], match["study"], root, memo)
            if body != match["body"]:
                names.append(f"{match['kind']} {match['study']}")
            return match.group(1) + body + match.group(5)

        new = BLOCK.sub(replace, text)
        if names:
            changed[str(path)] = names
            pending[path] = new
    for path, new in pending.items() if write else ():
        atomic_write_text(path, new)
    return changed


# ------------------------------------------------------------------- every paper claim at a glance
def overview_rows(root: str | os.PathLike = ".", studies=None, memo: dict | None = None) -> pd.DataFrame:
    """One row per paper claim of ``studies`` (their committed records under ``root``; ``memo``: as
    :func:`render_block`'s)."""
    from ..claims import verdict_class
    from .overview import paper_studies

    rows = []
    for study in studies or paper_studies():
        spec = _study(study)
        table, _ = _claims_of(study, root, {} if memo is None else memo)
        claims = {c.claim: c for c in spec.claims.claims}
        for _, r in table[table["kind"] == "paper"].iterrows():
            claim = claims[r["claim"]]
            rows.append({"paper": tally_name(study), "claim": r["claim"], "verdict": r["verdict"],
                         "class": verdict_class(str(r["verdict"])), "metric": r["metric"], "test": r["test"],
                         "delta": float(r["paper_diff"]), "low": float(r["paper_ci_low"]),
                         "high": float(r["paper_ci_high"]), "n": int(r["n"]), "mde": float(r["mde"]),
                         "target": float(r["target"]),
                         "paper_effect": claim.paper_effect if claim.paper_effect is not None else math.nan})
    return pd.DataFrame(rows)


def write_overview_figure(root: str | os.PathLike = ".", rows: pd.DataFrame | None = None) -> list[Path]:
    """Draw the overview figure (``figures/cpu-papers/overview.png``) from the committed records."""
    from ..plots.core import save_figure
    from ..plots.overview import plot_claims_overview
    from .overview import OVERVIEW_FIGURE

    rows = overview_rows(root) if rows is None else rows
    return save_figure(plot_claims_overview(rows), Path(root) / OVERVIEW_FIGURE, formats=("png",))


def _changed_since_commit(studies) -> list[str]:
    """The lines of the studies' records that differ from git's HEAD (:func:`changed_lines`), or a
    line saying why they cannot be compared."""
    import subprocess
    import tempfile

    from ..studies.record import changed_lines

    out = []
    for study in sorted(s for s in studies if s in available_studies()):
        path = committed_record(study)
        shown = subprocess.run(["git", "show", f"HEAD:{path.as_posix()}"], capture_output=True, text=True)
        if shown.returncode != 0:
            out.append(f"{path}: not compared with the last commit ({shown.stderr.strip() or 'git failed'})")
            continue
        with tempfile.TemporaryDirectory() as folder:
            before = Path(folder) / "record.jsonl"
            before.write_text(shown.stdout, encoding="utf-8")
            out += changed_lines(before, path)
    return out


def main(argv=None) -> int:
    """``python -m cselab.workbench.paper_tables.record_report [--check] FILE...``: rewrite (or check) the
    generated blocks of the docs from the committed records."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a block differs")
    args = parser.parse_args(argv)
    import sys

    memo: dict = {}   # each study's record and claims table, shared by every block and the overview figure
    try:
        changed = update_docs(args.files, write=not args.check, memo=memo)
    except (RecordError, FileNotFoundError) as e:   # nothing written: the published blocks stay
        print(f"record_report: {e}", file=sys.stderr)
        return 1
    for path, names in changed.items():
        print(f"{path}: {'differs' if args.check else 'rewritten'}: {', '.join(names)}")
    if changed and args.check:   # which record lines moved since the last commit: the run, seed and line
        for line in _changed_since_commit({name.split()[1] for names in changed.values() for name in names}):
            print(line)
    if not args.check:   # the overview figure cpu-papers.md opens with, from the same records
        print(f"overview figure: {', '.join(map(str, write_overview_figure(rows=overview_rows(memo=memo))))}")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["claims_of", "committed_record", "overview_rows", "rebuild_from_record", "render_block", "scores_table",
           "study_frame", "update_docs", "write_overview_figure"]
