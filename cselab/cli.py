"""``cselab`` command line: data fetch, train, eval, export, reproduce, info."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from pathlib import Path


def _add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default=None, help="data root (default: $CSELAB_DATA, else ./data)")


def _add_debug(p: argparse.ArgumentParser) -> None:
    # On every subcommand rather than the main parser, so that it can go at the end of the line.
    p.add_argument("--debug", action="store_true", help="on an error, show the full traceback")


def _add_suite_arguments(ev: argparse.ArgumentParser) -> None:
    """``--suite`` and every option of the suites, read from the suite registry
    (:mod:`cselab.model.evaluate.suites`: light, its suites' code is imported when one runs). An option
    that several suites take is one argument whose help says what it does for each."""
    from .model.evaluate.suites import SUITES, cli_flags, default_suite

    default = default_suite()
    ev.add_argument("--suite", default=default, choices=list(SUITES),
                    help="; ".join(f"{name}{' (default)' if name == default else ''} = {suite.summary}"
                                   for name, suite in SUITES.items()))
    for flag, takers in cli_flags().items():
        words = "; ".join(f"{suite}: {option.help}" for suite, option in takers)
        ev.add_argument(flag, default=None, help=words, **dict(takers[0][1].kwargs))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cselab", description=__doc__)
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help="debug messages too (cselab's and transformers')")
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="warnings and errors only, no progress bars (sets TQDM_DISABLE=1)")
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="manage the data root")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    fetch = data_sub.add_parser("fetch", help="fill the data root from a local mirror or the canonical sources")
    fetch.add_argument("--mirror", default=None, help="copy from this folder (SentEval layout) instead of downloading")
    _add_data_dir(fetch)
    _add_debug(fetch)

    train = sub.add_parser("train", help="train a run from a config file or preset")
    train.add_argument("config", help="YAML/JSON config file or preset name (see `cselab info`)")
    train.add_argument("overrides", nargs="*", help="key=value overrides, e.g. batch_size=32 <method>.<key>=0.3")
    train.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    train.add_argument("--overwrite", action="store_true", help="replace an existing run of the same name")
    train.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    _add_data_dir(train)
    _add_debug(train)

    ev = sub.add_parser("eval", help="evaluate a run, a saved model, a backbone alias or a Hub id on one of the "
                        "evaluation suites (--suite)")
    ev.add_argument("model", help="run directory, saved model folder, backbone alias or Hugging Face id")
    _add_suite_arguments(ev)
    ev.add_argument("--pooler", default=None, help="override the pooler (default: the saved one, "
                    "cls_before_pooler for a plain backbone)")
    ev.add_argument("--batch-size", type=int, default=128)
    ev.add_argument("--device", default="auto")
    ev.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                    help="autocast of the encoder (auto: bf16 on a CPU with native bf16 and on CUDA, else fp32); "
                    "the results JSON records the one used")
    ev.add_argument("--output", default=None, help="write the results JSON here")
    _add_data_dir(ev)
    _add_debug(ev)

    rep = sub.add_parser("reproduce", help="run a study: its runs (reusing finished ones, resuming partial ones) "
                         "and its notebooks; see docs/studies.md")
    rep.add_argument("study", help="a shipped study name (cselab/workbench/studies/<name>.yaml) or a study file")
    rep.add_argument("--profile", default="cpu", help="the study's profile to run (default: cpu)")
    rep.add_argument("--jobs", type=int, default=1, help="runs at once, then notebooks at once (default 1); each gets the cores / N threads")
    rep.add_argument("--dry-run", action="store_true", help="list the runs, their status and estimated cost; "
                     "write nothing")
    rep.add_argument("--launcher", default="local", choices=["local", "submitit-local", "slurm"],
                     help="local (default), slurm (one SLURM job per run via submitit) or submitit-local "
                     "(the same path on this machine)")
    rep.add_argument("--slurm", nargs="+", default=[], metavar="KEY=VALUE",
                     help="submitit parameters over the study's slurm: section, e.g. timeout_min=120 "
                     "slurm_partition=gpu gpus_per_node=1")
    rep.add_argument("--runs-dir", default="runs", help="shared runs root (default: runs)")
    rep.add_argument("--reports-dir", default="reports", help="executed notebooks and index (default: reports)")
    rep.add_argument("--figures-dir", default=None, help="figures root, the study's folder (record.jsonl, figures) "
                     "inside it (default: the study file's figures_dir, else figures)")
    rep.add_argument("--runs-only", action="store_true", help="train (and record) the runs, execute no notebook")
    rep.add_argument("--replan", action="store_true", help="re-estimate the power plan from the spreads the "
                     "study's record shows (seeds up to the plan's cap where the pilot's spread was too small)")
    rep.add_argument("--only", nargs="+", default=[], metavar="LABEL",
                     help="train only the runs whose labels match these patterns (fnmatch, e.g. 'mine-s1?'), "
                     "in the study's order; needs --runs-only; with --replan, any seed up to twice the plan's cap of a group the "
                     "power plan sizes (a continuation pairs seeds within one computation)")
    rep.add_argument("--allow-unpaired", action="store_true", help="with --only: train a run even where every "
                     "claim partner at its seed is recorded from another computation (CPU kind, GPU, code), so "
                     "that it buys no pair (refused otherwise; --dry-run lists such runs)")
    rep.add_argument("--from-record", action="store_true", help="train nothing: rebuild the claims table, the "
                     "study's tables and its seed-level figures from the committed record "
                     "(<figures-dir>/<study>/record.jsonl) alone, in seconds")
    _add_data_dir(rep)
    _add_debug(rep)
    export = sub.add_parser("export", help="write a run's best model (or any model) as a folder that "
                            "sentence-transformers, transformers and cselab load, with a model card")
    export.add_argument("model", help="run directory (its best/ model), saved model folder, backbone alias or "
                        "Hugging Face id")
    export.add_argument("output", help="the folder to write (must not exist or be empty, unless --overwrite)")
    export.add_argument("--pooler", default=None, help="override the pooler (default: the saved one, "
                        "cls_before_pooler for a plain backbone)")
    export.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    _add_debug(export)

    info = sub.add_parser("info", help="versions, device, data root, presets, methods and evaluation suites")
    _add_data_dir(info)
    _add_debug(info)
    # An abbreviated option is an error, not a guess: `--over` must not quietly mean --overwrite.
    for p in (parser, data, *sub.choices.values(), *data_sub.choices.values()):
        p.allow_abbrev = False
    return parser


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a message is logged (notebooks and tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def configure_logging(verbose: bool = False, quiet: bool = False) -> None:
    """The CLI's log output: cselab's INFO messages by default (run progress, evaluations,
    exports), DEBUG with ``--verbose``, warnings only with ``--quiet`` (which also silences the
    progress bars through ``TQDM_DISABLE``)."""
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    package = logging.getLogger("cselab")
    package.setLevel(level)
    if not any(isinstance(h, _StderrHandler) for h in package.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
        package.addHandler(handler)
    if verbose:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_info()
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"
# Errors that describe bad input or a bad environment (a file, a value, a full disk, a busy run):
# one line and exit status 2. Anything else is a bug: one line too, exit status 1, and --debug
# shows the traceback.
EXPECTED_ERRORS = (ValueError, OSError, FloatingPointError, ImportError)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose, args.quiet)
    # the figures a study's notebooks save name this command as what drew them (their kernels inherit it)
    import os
    import shlex

    os.environ.setdefault("CSELAB_COMMAND", shlex.join(["cselab", *map(_portable, sys.argv[1:] if argv is None else argv)]))
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        _close_progress_bars()
        print(f"cselab {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        from .model.io import first_line

        _close_progress_bars()
        if args.debug:
            traceback.print_exc()
        expected = isinstance(e, EXPECTED_ERRORS)
        what = first_line(e) if expected else f"unexpected {type(e).__name__}: {first_line(e)}"
        hint = "" if expected or args.debug else " (rerun with --debug for the traceback)"
        print(f"cselab {args.command}: error: {what}{hint}", file=sys.stderr)
        return 2 if expected else 1


def _portable(argument: str) -> str:
    """A command-line argument as a figure's provenance may keep it: a path inside the working
    directory relative to it (``/home/me/cselab/data`` → ``data``), so no path of this machine is
    committed with the figures."""
    import os

    head, sep, value = argument.partition("=") if argument.startswith("--") and "=" in argument else ("", "", argument)
    if os.path.isabs(value):
        cwd = os.path.abspath(os.getcwd())
        if os.path.abspath(value) == cwd or os.path.abspath(value).startswith(cwd + os.sep):
            value = os.path.relpath(os.path.abspath(value), cwd)
    return f"{head}{sep}{value}" if sep else value


def _close_progress_bars() -> None:
    """End an interrupted progress bar's line, so that the error message stands on its own line."""
    from tqdm.auto import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def cmd_data(args) -> int:
    from .model.data.fetch import fetch

    root = fetch(args.data_dir, mirror=args.mirror)
    print(f"data root ready: {root}")
    return 0


def cmd_train(args) -> int:
    from .model.config import load_config
    from .model.io import read_json
    from .model.export import run_facts
    from .model.rundir import RunDir
    from .model.train import train

    cfg = load_config(args.config, args.overrides)
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    run = train(cfg, resume=args.resume, overwrite=args.overwrite, data_dir=args.data_dir)
    if int(os.environ.get("RANK", "0")) != 0:   # torchrun: process 0 writes results.json and reports
        return 0
    results = read_json(RunDir(run).results_file)
    print(f"run: {run}")
    print(f"best/ chosen by {results.get('select_by', 'stsb_dev')}: step {results['best_step']} "
          f"(STS-B dev {results['best_stsb_dev']:.2f})")
    table = run_facts(run).sts_table   # the final evaluation's table (final_eval), as the model card shows it
    if table is not None:
        print(table)
    return 0


def resolve_model_path(model: str) -> str:
    """A run directory means its ``best/`` model; a run without one is an error that says what it has."""
    from .model.rundir import RunDir

    run = RunDir(Path(model))
    return str(run.best_model()) if run.is_run() else model


def cmd_eval(args) -> int:
    from .model.encoder import SentenceEncoder
    from .model.encoder.backbone import is_saved_encoder
    from .model.evaluate.suites import get_suite
    from .model.utils import resolve_device

    suite = get_suite(args.suite)
    if args.batch_size < 1:
        raise ValueError(f"--batch-size: must be >= 1, got {args.batch_size}")
    check_suite_options(args)
    path = resolve_model_path(args.model)
    saved = is_saved_encoder(path)
    pooler = args.pooler or (None if saved else "cls_before_pooler")
    encoder = SentenceEncoder.from_pretrained(path, pooler=pooler).to(resolve_device(args.device))
    encoder.eval_precision = args.precision
    result = suite.run(encoder, data_dir=args.data_dir, batch_size=args.batch_size, **suite.cli_options(args))
    _write_output(args, encoder, result)
    label = f"{args.model} ({encoder.pooler_name})"
    print(suite.table(result, label) if suite.table is not None else json.dumps({label: result}, indent=2, default=str))
    return 0


def check_suite_options(args) -> None:
    """Refuse an option the chosen suite does not take (it would be silently ignored); the suite
    fills in the defaults of those left out (:meth:`cselab.model.evaluate.suites.Suite.cli_options`)."""
    from .model.evaluate.suites import cli_flags

    for flag, takers in cli_flags().items():
        suites = [suite for suite, _ in takers]
        if getattr(args, takers[0][1].dest, None) is not None and args.suite not in suites:
            raise ValueError(f"{flag}: does not apply to --suite {args.suite} (only to --suite "
                             f"{' / '.join(suites)}); remove it")


def _write_output(args, encoder, result: dict) -> None:
    """Record the precision the encoder ran in, then write ``--output`` (atomically) if given."""
    from .model.io import atomic_write_json

    result["precision"] = encoder.resolved_eval_precision()
    if args.output is not None:
        atomic_write_json(Path(args.output), result)


def cmd_reproduce(args) -> int:
    from .model.options import parse_key_values
    from .workbench.studies import reproduce, study_figures_dir

    # one home for a study's record: the study file says where (the paper studies' records are committed
    # under figures/cpu-papers/), so every documented command finds it with the defaults
    figures_dir = args.figures_dir if args.figures_dir is not None else study_figures_dir(args.study)
    if args.from_record:
        from .workbench.paper_tables.record_report import rebuild_from_record

        return rebuild_from_record(args.study, profile=args.profile, figures_dir=figures_dir,
                                   reports_dir=args.reports_dir)
    return reproduce(args.study, profile=args.profile, jobs=args.jobs, dry_run=args.dry_run, launcher=args.launcher,
                     runs_dir=args.runs_dir, data_dir=args.data_dir, reports_dir=args.reports_dir,
                     figures_dir=figures_dir, slurm=parse_key_values(args.slurm, "--slurm"),
                     notebooks=not args.runs_only, replan=args.replan, only=args.only,
                     allow_unpaired=args.allow_unpaired)
def cmd_export(args) -> int:
    from .model.encoder.backbone import read_model_config
    from .model.encoder.export import RECIPE_KEY
    from .model.encoder.model_card import CARD_NAME
    from .model.export import export_model
    from .model.io import read_json

    out = export_model(args.model, args.output, pooler=args.pooler, overwrite=args.overwrite)
    recipe = read_model_config(out)[RECIPE_KEY]
    print(f"exported: {out}")
    print(f"pooler: {recipe['pooler']}; model card: {out / CARD_NAME}")
    custom = any(m["type"].startswith("cselab.") for m in read_json(out / "modules.json"))
    print(f"sentence-transformers: SentenceTransformer({str(out)!r}"
          + (", trust_remote_code=True)  # needs cselab installed" if custom else ")"))
    print("AutoModel: " + (f"the embedding is {recipe['output']}" if recipe["output"] else recipe["note"]))
    return 0


def cmd_info(args) -> int:
    import torch

    from .model.config import presets
    from .model.data import data_root
    from .model.data.fetch import MIRROR_FOLDERS
    from .model.evaluate.suites import SUITES
    from .model.methods import METHODS
    from .model.rundir import git_commit, package_versions
    from .workbench.studies import available_studies
    from .model.utils import (NATIVE_BF16_ENV, cpu_has_amx, cpu_supports_bf16, native_bf16, native_bf16_override,
                        precision_name, resolve_device, resolve_precision)

    root = data_root(args.data_dir)
    print("versions:")
    for k, v in package_versions().items():
        print(f"  {k}: {v}")
    print(f"git commit: {git_commit()}")
    cuda = torch.cuda.is_available()
    print(f"device: {'cuda (' + torch.cuda.get_device_name(0) + ')' if cuda else 'cpu'}; "
          f"torch threads: {torch.get_num_threads()}")
    device = resolve_device("auto")
    train_auto, eval_auto = (precision_name(resolve_precision("auto", device, evaluation=e)) for e in (False, True))
    print(f"precision auto: training {train_auto} (autocast), evaluation {eval_auto} (weights); native bf16: "
          f"{native_bf16()} (CPU with native bf16: {cpu_supports_bf16()}, AMX: {cpu_has_amx()})"
          + (f"; {NATIVE_BF16_ENV}={native_bf16_override()} overrides what torch reports"
             if native_bf16_override() != "auto" else ""))
    present = [d for d in MIRROR_FOLDERS if (root / d).is_dir()]
    print(f"data root: {root.resolve()} ({'has ' + ', '.join(present) if present else 'empty: run `cselab data fetch`'})")
    print(f"presets: {', '.join(presets())}")
    print(f"studies: {', '.join(available_studies()) or 'none shipped yet'}")
    print("methods:")
    for name, spec in sorted(METHODS.items()):
        print(f"  {name}: {spec.summary}")
    print("evaluation suites (cselab eval --suite):")
    for name, suite in SUITES.items():
        print(f"  {name}: {suite.summary}")
    return 0


COMMANDS = {"data": cmd_data, "train": cmd_train, "eval": cmd_eval, "export": cmd_export, "reproduce": cmd_reproduce,
            "info": cmd_info}

if __name__ == "__main__":
    sys.exit(main())
