"""A study's claims table, tables and seed-level figures from its committed record alone.

``cselab reproduce STUDY --profile cpu --from-record`` calls :func:`rebuild_from_record`: it reads
``<figures>/<study>/record.jsonl`` (cselab/workbench/studies/record.py), takes the claims and the record
figures the study file declares for the profile (cselab/workbench/studies/claims_spec.py), and writes

* ``<reports>/<study>/record/claims.md`` and ``.csv`` — the claims table (:func:`cselab.workbench.claims.claims_table`),
  ``power_plan.md`` — the plan the seeds came from, ``scores.md`` — every variant's STS scores
  (mean ± sd over its seeds, n);
* ``<figures>/<study>/record/claims.png`` — the paired view of every claim
  (:func:`cselab.workbench.plots.claims.plot_claims`), and one PNG per ``record_figures:`` entry (sweeps,
  curves over training, grouped scores).

No run folder is read: a fresh clone rebuilds all of it in seconds. The figures that need weights
(UMAP maps, the explorer, recomputed similarity analyses) stay with the runs and the notebooks.

The same functions give the docs their generated blocks (:func:`render_block`, :func:`update_docs`):
each ``<!-- record: KIND STUDY -->`` … ``<!-- /record -->`` block in docs/cpu-papers.md,
docs/cpu-compare.md and README.md is rewritten from the records, and tests/test_findings.py fails
when a committed block differs from what the records give.
"""
from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pandas as pd

from ..claims import claims_table, format_claims, format_plan, tally
from ..studies.record import read_record, record_path, records_frame, records_series
from ..studies.spec import load_study

STS_COLUMNS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]
BLOCK = re.compile(r"(<!-- record: (?P<kind>[a-z_]+) (?P<study>[A-Za-z0-9_.+=-]+) -->\n)(?P<body>.*?)(<!-- /record -->)",
                   re.S)
PAPER_STUDY = "paper-"   # a paper's study is named after its method (paper-mixcse): its tally says the method
# where each study's record is committed (the figures root the study runs with)
FIGURES_ROOTS = {"cpu-compare": "figures"}
DEFAULT_FIGURES_ROOT = "figures/cpu-papers"


def committed_record(study: str, root: str | os.PathLike = ".") -> Path:
    """The committed record of a shipped cpu study."""
    return record_path(Path(root) / FIGURES_ROOTS.get(study, DEFAULT_FIGURES_ROOT), study)


def study_frame(study, records: list[dict]) -> tuple[pd.DataFrame, list[dict]]:
    """The records of the study's own runs (its labels) and their one-row-per-run frame."""
    labels = {r.label for r in study.runs}
    own = [r for r in records if r["label"] in labels]
    return records_frame(own), own


def claims_of(study, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, list[float]]]:
    """The study's claims table over the frame, and each claim's per-seed differences."""
    table = claims_table(frame, study.claims.claims, study.claims.rule)
    differences = {}
    for claim in study.claims.claims:
        if claim.metric not in frame:
            continue
        a = frame[frame["variant"] == claim.variant].set_index("seed")[claim.metric]
        b = frame[frame["variant"] == claim.reference].set_index("seed")[claim.metric]
        shared = sorted(set(a.index) & set(b.index))
        if a.index.is_unique and b.index.is_unique:
            differences[claim.claim] = [float(a[s]) - float(b[s]) for s in shared]
    return table, differences


def scores_table(frame: pd.DataFrame, variants: list[str]) -> pd.DataFrame:
    """Mean ± sd over seeds (n) of every STS task and the average, one row per variant."""
    rows = []
    for variant in variants:
        part = frame[frame["variant"] == variant]
        if part.empty:
            continue
        row = {"variant": variant, "seeds": ", ".join(str(s) for s in sorted(part["seed"]))}
        for column in STS_COLUMNS:
            values = pd.to_numeric(part.get(column), errors="coerce").dropna() if column in part else pd.Series()
            row[column] = (f"{values.mean():.2f} ± {values.std(ddof=1):.2f}" if len(values) > 1
                           else f"{values.mean():.2f}" if len(values) else "–")
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
        data = pd.DataFrame(rows)
        return plot_seed_points(data, "x", hue=spec.get("hue") if spec.get("series") else None,
                                xlabel=spec.get("x"), title=spec.get("title"), method=spec.get("method"))
    if kind == "grouped":
        rows = []
        for name, variant in spec["variants"].items():
            group, _, x = name.partition(" · ")
            for _, r in frame[frame["variant"] == variant].iterrows():
                rows.append({"x": float(x), "avg": r["avg"], "hue": group, "variant": variant, "seed": r["seed"]})
        return plot_seed_points(pd.DataFrame(rows).rename(columns={"hue": spec.get("hue", "method")}), "x",
                                hue=spec.get("hue", "method"), xlabel=spec.get("x"), title=spec.get("title"))
    # curves over training (one key, or one panel... one figure per key list: the keys share the axis)
    keys = spec.get("keys") or [spec["key"]]
    words = dict(keys) if isinstance(keys, dict) else {}      # keys: {logged key: its panel's words}
    keys = list(keys)
    if keys == ["layer_cls_sim"]:
        profiles = {}
        for name, variant in spec["variants"].items():
            profiles[name] = [r["probe"]["layer_cls_sim"][-1] for r in records
                              if r["variant"] == variant and (r.get("probe") or {}).get("layer_cls_sim")]
        return plot_layer_profile_seeds(profiles, title=spec.get("title"), **({"ylabel": spec["y"]} if "y" in spec else {}))
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
    for key in keys:
        panel = panels.setdefault((words.get(key) or _key_words(key)) if len(keys) > 1 else "", {})
        for name, variant in spec["variants"].items():
            panel[name] = records_series([r for r in records if r["variant"] == variant], spec.get("part", "train"), key)
    return plot_seed_curves({}, spec.get("y", keys[0]), title=spec.get("title"), logy=spec.get("scale") == "log",
                            share=spec.get("scale") == "share", panels=panels)


def tally_name(study: str) -> str:
    """The name a study's tally line starts with: its method's display name for a paper's study, else
    the study's own name."""
    from ..labels import display_name, method_key

    method = method_key(study[len(PAPER_STUDY):]) if study.startswith(PAPER_STUDY) else None
    return display_name(method) if method else study


def _key_words(key: str) -> str:
    from ..plots.dynamics import stat_label_words

    words = stat_label_words()
    name = key.split("/", 1)[-1]
    return words.get(name, words.get(name.split(".", 1)[-1], name))


def rebuild_from_record(study: str, profile: str = "cpu", figures_dir: str | os.PathLike = "figures",
                        reports_dir: str | os.PathLike = "reports", stream=None) -> int:
    """See the module docstring; returns 0 (the exit status of ``cselab reproduce --from-record``)."""
    import sys

    from ..plots.core import TooFewPoints, save_figure

    out = stream or sys.stdout
    spec = load_study(study, profile, notebooks=False)
    source = record_path(figures_dir, spec.name)
    frame, records = study_frame(spec, read_record(source))
    if frame.empty:
        raise ValueError(f"{source}: no record of study {spec.name!r}'s runs (profile {profile})")
    tables = Path(reports_dir) / spec.name / "record"
    figures = Path(figures_dir) / spec.name / "record"
    variants = list(dict.fromkeys(r.label.rsplit("-s", 1)[0] for r in spec.runs))
    save_table(scores_table(frame, variants), "scores", tables)
    written = [tables / "scores.md"]
    if spec.claims.claims:
        table, differences = claims_of(spec, frame)
        save_table(format_claims(table), "claims", tables)
        save_table(format_plan(spec.claims.plan()), "power_plan", tables)
        written += [tables / "claims.md", tables / "power_plan.md"]
        try:
            written += save_figure(plot_claims_figure(table, differences), figures / "claims", formats=("png",))
        except TooFewPoints as e:
            print(f"claims figure: {e}", file=out)
        counts = tally(table)
        print(f"{spec.name}: {len(records)} runs in the record; the paper's claims: {counts['claims']}, "
              f"{counts['holds here']} hold here, {counts['reversed']} reversed, {counts['not detected']} not "
              f"detected ({counts['underpowered']} underpowered), {counts['no test']} without a test", file=out)
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
def _study(study: str, profile: str = "cpu"):
    return load_study(study, profile, notebooks=False)


def render_block(kind: str, study: str, root: str | os.PathLike = ".") -> str:
    """The Markdown of one generated block: ``claims`` (the claims table, the paper's and the
    checks'), ``plan`` (the power plan), ``scores`` (mean ± sd per variant), ``tally`` (one line)."""
    spec = _study(study)
    if kind == "plan":
        return _markdown(format_plan(spec.claims.plan())) + "\n"
    source = committed_record(study, root)
    if not source.is_file():
        return f"No run of {study} is recorded yet ({source.relative_to(root) if source.is_relative_to(root) else source}).\n"
    frame, records = study_frame(spec, read_record(source))
    if kind == "scores":
        variants = list(dict.fromkeys(r.label.rsplit("-s", 1)[0] for r in spec.runs))
        return _markdown(scores_table(frame, variants)) + "\n"
    table, _ = claims_of(spec, frame)
    if kind == "claims":
        parts = []
        for family, words in (("paper", "The paper's claims"), ("check", "The workbench's checks (not counted as the paper's)")):
            rows = table[table["kind"] == family]
            if rows.empty:
                continue
            text = format_claims(rows.reset_index(drop=True))
            parts.append(f"{words} — {table.attrs['families'][family]}:\n\n{_markdown(text)}\n")
        return "\n".join(parts)
    if kind == "example":   # the MDE rule worked through the study's first paper claim with a test
        from ..results import detectable_effect_size, sd_interval

        tested = table[(table["kind"] == "paper") & (table["test"] == "paired_t") & table["p"].notna()]
        if tested.empty:
            return "(no paper claim of this study has a test in the record yet)\n"
        r = tested.iloc[0]
        k = sum(c.kind == "paper" and c.testable for c in spec.claims.claims)
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
        runs = len(records)
        hours = sum(r.get("train_seconds") or 0 for r in records) / 3600
        name = tally_name(study)
        planned = len({r.run_dir.name for r in spec.runs})
        return (f"{name}: {counts['claims']} claims: {counts['holds here']} hold here, {counts['reversed']} "
                f"reversed, {counts['not detected']} not detected ({counts['underpowered']} of them underpowered: MDE above "
                f"the target), {counts['not testable at this scale']} not "
                f"testable at this scale, {counts['no test']} without a test ({runs} of the {planned} planned runs "
                f"in the record, {hours:.1f} h of training)\n")
    raise ValueError(f"unknown generated block kind {kind!r} (claims, plan, scores, tally)")


def update_docs(paths, root: str | os.PathLike = ".", write: bool = True) -> dict[str, list[str]]:
    """Rewrite every generated block of the files; returns ``{file: [blocks that changed]}``.
    With ``write=False`` nothing is written (what the test uses)."""
    from ...model.io import atomic_write_text

    changed = {}
    for path in map(Path, paths):
        text = path.read_text(encoding="utf-8")
        names = []

        def replace(match):
            body = render_block(match["kind"], match["study"], root)
            if body != match["body"]:
                names.append(f"{match['kind']} {match['study']}")
            return match.group(1) + body + match.group(5)

        new = BLOCK.sub(replace, text)
        if names:
            changed[str(path)] = names
            if write:
                atomic_write_text(path, new)
    return changed


def main(argv=None) -> int:
    """``python -m cselab.workbench.paper_tables.record_report [--check] FILE...``: rewrite (or check) the
    generated blocks of the docs from the committed records."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a block differs")
    args = parser.parse_args(argv)
    changed = update_docs(args.files, write=not args.check)
    for path, names in changed.items():
        print(f"{path}: {'differs' if args.check else 'rewritten'}: {', '.join(names)}")
    return 1 if changed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["claims_of", "committed_record", "rebuild_from_record", "render_block", "scores_table", "study_frame",
           "update_docs"]
