"""``cselab`` command line: data fetch, train, eval, info."""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path


def _add_data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default=None, help="data root (default: $CSELAB_DATA, else ./data)")


def _add_debug(p: argparse.ArgumentParser) -> None:
    # On every subcommand rather than the main parser, so that it can go at the end of the line.
    p.add_argument("--debug", action="store_true", help="on an error, show the full traceback")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cselab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="manage the data root")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    fetch = data_sub.add_parser("fetch", help="fill the data root from a local mirror or the canonical sources")
    fetch.add_argument("--mirror", default=None, help="copy from this folder (SentEval layout) instead of downloading")
    _add_data_dir(fetch)
    _add_debug(fetch)

    train = sub.add_parser("train", help="train a run from a config file or preset")
    train.add_argument("config", help="YAML/JSON config file or preset name (see `cselab info`)")
    train.add_argument("overrides", nargs="*", help="key=value overrides, e.g. batch_size=32 mixcse.mix_lambda=0.3")
    train.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    train.add_argument("--overwrite", action="store_true", help="replace an existing run of the same name")
    train.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    _add_data_dir(train)
    _add_debug(train)

    ev = sub.add_parser("eval", help="evaluate a run, a saved model, a backbone alias or a Hub id on STS "
                        "(or --suite transfer | clustering | geometry)")
    ev.add_argument("model", help="run directory, saved model folder, backbone alias or Hugging Face id")
    ev.add_argument("--suite", default="sts", choices=["sts", "transfer", "clustering", "geometry"],
                    help="sts (default); transfer = SentEval's 7 tasks; clustering = DBpedia AMI + 8 short-text "
                    "sets; geometry = alignment/uniformity on STS-B")
    ev.add_argument("--tasks", nargs="+", default=None, help="subset of the suite's tasks, e.g. STS12 STS13 STS14 "
                    "STS15 STS16 STSBenchmark SICKRelatedness (default: all of them)")
    ev.add_argument("--fast", action="store_true", help="transfer: 5-fold instead of 10-fold (SimCSE's fasttest)")
    ev.add_argument("--seeds", type=int, nargs="+", default=None, help="clustering: K-means seeds "
                    "(default 0 1 2 3 4)")
    ev.add_argument("--split", default="all", choices=["train", "dev", "test", "all"],
                    help="geometry: the STS-B split (default: all three)")
    ev.add_argument("--pooler", default=None, help="override the pooler (default: the saved one, "
                    "cls_before_pooler for a plain backbone)")
    ev.add_argument("--aggregate", default="all", choices=["all", "mean", "wmean"],
                    help="STS12-16 summary: all = SimCSE (default), mean = SentEval's default")
    ev.add_argument("--batch-size", type=int, default=128)
    ev.add_argument("--device", default="auto")
    ev.add_argument("--output", default=None, help="write the results JSON here")
    _add_data_dir(ev)
    _add_debug(ev)

    info = sub.add_parser("info", help="versions, device, data root, presets and methods")
    _add_data_dir(info)
    _add_debug(info)
    return parser


# Errors that describe bad input or a bad environment (a file, a value, a full disk, a busy run):
# one line and exit status 2. Anything else is a bug: one line too, exit status 1, and --debug
# shows the traceback.
EXPECTED_ERRORS = (ValueError, OSError, FloatingPointError)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        _close_progress_bars()
        print(f"cselab {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        from .io import first_line

        _close_progress_bars()
        if args.debug:
            traceback.print_exc()
        expected = isinstance(e, EXPECTED_ERRORS)
        what = first_line(e) if expected else f"unexpected {type(e).__name__}: {first_line(e)}"
        hint = "" if expected or args.debug else " (rerun with --debug for the traceback)"
        print(f"cselab {args.command}: error: {what}{hint}", file=sys.stderr)
        return 2 if expected else 1


def _close_progress_bars() -> None:
    """End an interrupted progress bar's line, so that the error message stands on its own line."""
    from tqdm.auto import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def cmd_data(args) -> int:
    from .data.fetch import fetch

    root = fetch(args.data_dir, mirror=args.mirror)
    print(f"data root ready: {root}")
    return 0


def cmd_train(args) -> int:
    from .config import load_config
    from .train import train

    cfg = load_config(args.config, args.overrides)
    if args.print_config:
        print(json.dumps(cfg.to_dict(), indent=2))
        return 0
    run = train(cfg, resume=args.resume, overwrite=args.overwrite, data_dir=args.data_dir)
    results = json.loads((run / "results.json").read_text())
    print(f"run: {run}")
    print(f"best STS-B dev: {results['best_stsb_dev']:.2f} at step {results['best_step']}")
    if "sts" in results:
        from .evaluate import format_sts_table

        print(format_sts_table({run.name: results["sts"]}))
    return 0


def resolve_model_path(model: str) -> str:
    """A run directory means its ``best/`` model; a run without one is an error that says what it has."""
    from .io import recorded_step
    from .train.rundir import RunDir

    run = RunDir(Path(model))
    is_run = run.config_file.is_file() and not (run.path / "cselab.json").is_file() and (
        run.metrics_file.exists() or run.best_dir.is_dir() or run.last_dir.is_dir())
    if not is_run:
        return model
    if run.best_dir.is_dir():
        return str(run.best_dir)
    if run.last_dir.is_dir():
        step = recorded_step(run.last_dir)
        at = f" of step {step}" if step != float("-inf") else ""
        hint = f"it has last/, the checkpoint{at}: evaluate that with `cselab eval {run.last_dir}`"
    else:
        hint = "nor a last/ checkpoint: it has not reached its first evaluation"
    raise FileNotFoundError(f"{run.path}: this run has no best/ model yet ({hint})")


def cmd_eval(args) -> int:
    from .data import STS_TASKS
    from .encoder import SentenceEncoder
    from .encoder.model import CONFIG_NAME
    from .evaluate import evaluate_sts, format_sts_table
    from .utils import resolve_device

    if args.batch_size < 1:
        raise ValueError(f"--batch-size: must be >= 1, got {args.batch_size}")
    path = resolve_model_path(args.model)
    saved = (Path(path) / CONFIG_NAME).is_file()
    pooler = args.pooler or (None if saved else "cls_before_pooler")
    encoder = SentenceEncoder.from_pretrained(path, pooler=pooler).to(resolve_device(args.device))
    if args.suite != "sts":
        return _eval_suite(args, encoder)
    result = evaluate_sts(encoder, tasks=args.tasks or STS_TASKS, data_dir=args.data_dir, aggregate=args.aggregate,
                          batch_size=args.batch_size, output=args.output)
    label = f"{args.model} ({encoder.pooler_name})"
    print(format_sts_table({label: result}))
    print(f"{result['sentences_encoded']} unique sentences in {result['seconds']:.1f}s; aggregate={args.aggregate}")
    return 0


def _eval_suite(args, encoder) -> int:
    """``cselab eval --suite transfer | clustering | geometry``: run the suite, print a table."""
    from tabulate import tabulate

    from .evaluate import evaluate_alignment_uniformity, evaluate_clustering, evaluate_transfer
    from .evaluate.clustering import CLUSTERING_TASKS, DEFAULT_SEEDS
    from .evaluate.transfer import TRANSFER_TASKS

    common = {"data_dir": args.data_dir, "batch_size": args.batch_size, "output": args.output}
    seeds = args.seeds or list(DEFAULT_SEEDS)
    if args.suite == "transfer":
        r = evaluate_transfer(encoder, args.tasks or TRANSFER_TASKS, fast=args.fast, **common)
        rows = [[t, d["acc"], d.get("f1", ""), d["seconds"]] for t, d in r["details"].items()]
        rows.append(["Avg.", r["avg"], "", r["seconds"]])
        print(tabulate(rows, headers=["task", f"acc ({r['kfold']}-fold)", "F1", "seconds"], tablefmt="github",
                       floatfmt=".2f"))
    elif args.suite == "clustering":
        r = evaluate_clustering(encoder, args.tasks or CLUSTERING_TASKS, seeds=seeds, **common)
        rows = [[t, r["metric"][t], 100 * d[r["metric"][t]]["mean"], 100 * d[r["metric"][t]]["std"],
                 100 * d["nmi"]["mean"], d["seconds"]] for t, d in r["details"].items()]
        print(tabulate(rows, headers=["task", "metric", "mean ×100", f"std ({len(seeds)} seeds)", "NMI ×100",
                                      "seconds"], tablefmt="github", floatfmt=".2f"))
    else:
        r = evaluate_alignment_uniformity(encoder, args.split, **common)
        print(tabulate([[k, r[k]] for k in ("alignment", "uniformity", "mean_cos", "largest_angle")],
                       headers=["STS-B " + args.split, "value"], tablefmt="github", floatfmt=".4f"))
    return 0


def cmd_info(args) -> int:
    import torch

    from .config import presets
    from .data import data_root
    from .methods import METHODS
    from .train.rundir import git_commit, package_versions

    root = data_root(args.data_dir)
    print("versions:")
    for k, v in package_versions().items():
        print(f"  {k}: {v}")
    print(f"git commit: {git_commit()}")
    cuda = torch.cuda.is_available()
    print(f"device: {'cuda (' + torch.cuda.get_device_name(0) + ')' if cuda else 'cpu'}; "
          f"torch threads: {torch.get_num_threads()}")
    present = [d for d in ("downstream", "corpus", "clustering") if (root / d).is_dir()]
    print(f"data root: {root.resolve()} ({'has ' + ', '.join(present) if present else 'empty: run `cselab data fetch`'})")
    print(f"presets: {', '.join(presets())}")
    print("methods:")
    for name, spec in sorted(METHODS.items()):
        print(f"  {name}: {spec.summary}")
    return 0


COMMANDS = {"data": cmd_data, "train": cmd_train, "eval": cmd_eval, "info": cmd_info}

if __name__ == "__main__":
    sys.exit(main())
