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

import functools
import math
import os
import re
from pathlib import Path

import pandas as pd

from ..claims import claims_table, format_claims, format_plan, mechanism_readings, tally, with_computation
from ..studies.record import read_record, record_path, records_frame, records_series
from ..studies.spec import load_study

STS_COLUMNS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "avg"]
BLOCK = re.compile(r"(<!-- record: (?P<kind>[a-z_]+) (?P<study>[A-Za-z0-9_.+=-]+) -->\n)(?P<body>.*?)(<!-- /record -->)",
                   re.S)
PAPER_STUDY = "paper-"   # a paper's study is named after its method (paper-mixcse): its tally says the method
# where each study's record is committed (the figures root the study runs with)
FIGURES_ROOTS = {"cpu-compare": "figures"}
DEFAULT_FIGURES_ROOT = "figures/cpu-papers"
DOCS_ROOT = "."   # where --from-record finds the committed records of the studies that decide shared claims


def committed_record(study: str, root: str | os.PathLike = ".") -> Path:
    """The committed record of a shipped cpu study."""
    return record_path(Path(root) / FIGURES_ROOTS.get(study, DEFAULT_FIGURES_ROOT), study)


def study_frame(study, records: list[dict]) -> tuple[pd.DataFrame, list[dict]]:
    """The records of the study's own runs (its labels) and their one-row-per-run frame, with the
    computation each ran (CPU kind, precision, code: what the pairing rule compares)."""
    labels = {r.label for r in study.runs}
    own = [r for r in records if r["label"] in labels]
    frame = records_frame(own)
    return (with_computation(frame, own) if not frame.empty else frame), own


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
        stat = source.stat()
        table = _deciding_table(claim.decided_in, str(source), stat.st_mtime_ns, stat.st_size)
        same = table[(table["variant"] == claim.variant) & (table["reference"] == claim.reference)
                     & (table["metric"] == claim.metric)]
        if not same.empty:
            out[claim.claim] = f"{same['verdict'].iloc[0]} (its row: {same['claim'].iloc[0]})"
    return out


@functools.lru_cache(maxsize=16)
def _deciding_table(study: str, source: str, mtime_ns: int, size: int) -> pd.DataFrame:
    """The claims table of a study that decides shared comparisons, once per version of its record
    (the docs' blocks ask for it several times)."""
    other = _study(study)
    frame, records = study_frame(other, read_record(source))
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
                    rows.append({"x": float(x), "avg": r["avg"], spec.get("hue") or "series": hue})
        data = pd.DataFrame(rows)
        return plot_seed_points(data, "x", hue=spec.get("hue") if spec.get("series") else None,
                                xlabel=spec.get("x"), title=spec.get("title"), method=spec.get("method"))
    if kind == "grouped":
        rows = []
        for name, variant in spec["variants"].items():
            group, _, x = name.partition(" · ")
            for _, r in frame[frame["variant"] == variant].iterrows():
                rows.append({"x": float(x), "avg": r["avg"], "hue": group})
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
    panels: dict[str, dict] = {}
    for key in keys:
        panel = panels.setdefault((words.get(key) or _key_words(key)) if len(keys) > 1 else "", {})
        for name, variant in spec["variants"].items():
            panel[name] = records_series([r for r in records if r["variant"] == variant], spec.get("part", "train"), key)
    return plot_seed_curves({}, spec.get("y", keys[0]), title=spec.get("title"), logy=spec.get("scale") == "log",
                            share=spec.get("scale") == "share", panels=panels)


def tally_words(counts: dict[str, int]) -> str:
    """A family's tally in words (:func:`cselab.workbench.claims.tally`)."""
    elsewhere = f", {counts['elsewhere']} decided in another study" if counts["elsewhere"] else ""
    return (f"{counts['claims']} claims: {counts['holds here']} hold here, {counts['reversed']} reversed, "
            f"{counts['not detected']} not detected ({counts['underpowered']} underpowered: MDE above the target; "
            f"{counts['inconclusive']} inconclusive: above it at the spread's upper 95 % bound), "
            f"{counts['not testable at this scale']} not testable at this scale, {counts['no test']} without a test"
            f"{elsewhere}")


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
    table, _ = claims_of(spec, frame, records, root)
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
        runs = len(records)
        hours = sum(r.get("train_seconds") or 0 for r in records) / 3600
        name = tally_name(study)
        planned = len({r.run_dir.name for r in spec.runs})
        return (f"{name}: {tally_words(counts)} ({runs} of the {planned} planned runs in the record, {hours:.1f} h "
                "of training)\n")
    raise ValueError(f"unknown generated block kind {kind!r} (claims, plan, scores, tally)")


def _link_decided(verdict: str) -> str:
    """``decided in paper-mixcse: …`` with the study linked to the page that holds its verdict."""
    from ..claims import DECIDED_IN

    if not verdict.startswith(DECIDED_IN + " "):
        return verdict
    study, _, rest = verdict[len(DECIDED_IN) + 1:].partition(":")
    page = "cpu-compare.md" if FIGURES_ROOTS.get(study) == "figures" else "cpu-papers.md"
    return f"{DECIDED_IN} [{study}]({page}){':' + rest if rest else ''}"


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
