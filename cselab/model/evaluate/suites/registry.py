"""The suite registry's types and functions (:class:`Suite`, :class:`Option`, :class:`Table`,
:class:`Ref`, :func:`register_suite`, ...), in a module of their own so that each suite module
imports this one, not the package that imports every suite module (no import circle);
:mod:`cselab.model.evaluate.suites` re-exports them."""
from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence


@dataclass(frozen=True)
class Ref:
    """A name in a module, imported when first used: ``Ref("cselab.model.evaluate.sts", "evaluate_sts")``.
    Calling it calls what it names."""

    module: str
    name: str

    def get(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args, **kwargs):
        return self.get()(*args, **kwargs)


def resolve(value):
    """``value``, or what it names when it is a :class:`Ref`."""
    return value.get() if isinstance(value, Ref) else value


@dataclass(frozen=True)
class Option:
    """One ``cselab eval`` option a suite takes. Suites that take the same flag share one argparse
    argument (they must agree on ``kwargs``); its help joins each suite's words. Given with a suite
    that does not declare it, the option is an error, not silently ignored."""

    flag: str                                   # e.g. "--tasks"
    help: str                                   # what it does for this suite
    default: Any = None                         # the value when the option is left out (a Ref: read then)
    kwargs: Mapping[str, Any] = field(default_factory=dict)   # argparse's: nargs, type, choices, metavar, action
    keyword: str | None = None                  # the suite function's keyword (default: the flag's name)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def argument(self) -> str:
        return self.keyword or self.dest


@dataclass(frozen=True)
class Table:
    """A table a suite's results make: which of its tasks (None: every task of its columns) and
    whether their average follows (``Avg.``)."""

    tasks: Sequence[str] | Ref | None = None
    average: bool = True


@dataclass(frozen=True)
class Suite:
    name: str
    run: Callable[..., dict] | Ref         # run(model, data_dir=..., batch_size=..., **options) -> results
    summary: str                           # one line: `cselab eval --help` and `cselab info`
    primary: str                           # the results key of the primary metric
    higher_is_better: bool = True
    options: tuple[Option, ...] = ()       # the `cselab eval` options it takes
    # the options as cselab eval gives them (a left-out option: its default) -> the function's options
    fill_options: Callable[[dict], dict] | None = None
    table: Callable[[dict, str], str] | None = None   # results and the model's label -> what `cselab eval` prints
    # score_pairs(model, pairs, batch_size=..., show_progress_bar=...) -> the suite's score of one set of
    # pairs (training's dev evaluation); None for a suite that scores no pairs
    score_pairs: Callable[..., float] | Ref | None = None
    default: bool = False                  # the suite `cselab eval` and evaluate_run use when none is named
    # --- the evaluation cache (cselab.model.evaluate.cache)
    result_keys: tuple[str, ...] = ()      # keys a stored result must have to be trusted
    final_eval: bool = False               # training writes its default result into results.json, under its name
    extras: tuple[str, ...] = ()           # outputs the function computes when asked (per_pair=True): the cache
    #                                        always asks and keeps them; asking for them names no other entry
    entry_key: Callable[[Mapping], dict] | None = None   # keys naming an entry after a code change of its numbers
    frame_keys: tuple[str, ...] | None = None            # numbers of a result a frame row takes (None: primary)
    # --- the tables
    columns: Mapping[str, str] | Sequence[str] | Ref = ()   # task -> column label as the papers write it
    tables: Mapping[str, Table] | None = None   # None: one table named after the suite, every task and the average

    def primary_metric(self, result: dict) -> float:
        return result[self.primary]

    def task_labels(self) -> dict[str, str]:
        """``{task: column label}`` in the suite's order (a plain task list labels each task by its name)."""
        columns = resolve(self.columns)
        return dict(columns) if isinstance(columns, Mapping) else {task: task for task in columns}

    def result_tables(self) -> dict[str, Table]:
        if self.tables is not None:
            return dict(self.tables)
        return {self.name: Table()} if resolve(self.columns) else {}

    def numbers(self) -> tuple[str, ...]:
        return (self.primary,) if self.frame_keys is None else tuple(self.frame_keys)

    def cli_options(self, args) -> dict:
        """The function's options from ``cselab eval``'s parsed arguments: each declared option as
        given, else its default; then :attr:`fill_options`."""
        values = {}
        for option in self.options:
            given = getattr(args, option.dest, None)
            values[option.argument] = resolve(option.default) if given is None else given
        return self.fill_options(values) if self.fill_options is not None else values


SUITES: dict[str, Suite] = {}


_DECLARED_IN: dict[str, str] = {}   # suite name → the module that registered it


def register_suite(suite: Suite) -> Suite:
    # the module registering it again (importlib.reload, IPython's autoreload) replaces it; any
    # other second registration under the name is refused
    module = sys._getframe(1).f_globals.get("__name__")
    if suite.name in SUITES and _DECLARED_IN.get(suite.name) != module:
        raise ValueError(f"suite {suite.name!r} is registered twice")
    others = [s for s in SUITES.values() if s.name != suite.name]
    if suite.default and any(s.default for s in others):
        raise ValueError(f"suite {suite.name!r}: {default_suite()!r} is the default suite already")
    SUITES[suite.name], _DECLARED_IN[suite.name] = suite, module
    return suite


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise ValueError(f"suite must be one of {tuple(SUITES)}, got {name!r}")
    return SUITES[name]


def default_suite() -> str:
    """The suite ``cselab eval`` and :func:`cselab.model.evaluate.cache.evaluate_run` use when none is named."""
    return next(name for name, suite in SUITES.items() if suite.default)


def task_labels(name: str) -> dict[str, str]:
    """``{task: column label}`` of a suite (``STSBenchmark`` → ``STS-B``)."""
    return get_suite(name).task_labels()


def result_tables() -> dict[str, tuple[Suite, Table]]:
    """Every table the suites' results make, by name: ``{table: (suite, Table)}``."""
    out: dict[str, tuple[Suite, Table]] = {}
    for suite in SUITES.values():
        for name, table in suite.result_tables().items():
            if name in out:
                raise ValueError(f"the table {name!r} is made by both {out[name][0].name!r} and {suite.name!r}")
            out[name] = (suite, table)
    return out


def frame_numbers() -> tuple[str, ...]:
    """The numbers a row of :func:`cselab.model.evaluate.cache.evaluation_frame` takes from any result."""
    return tuple(dict.fromkeys(key for suite in SUITES.values() for key in suite.numbers()))


def cli_flags() -> dict[str, list[tuple[str, Option]]]:
    """``{flag: [(suite, option), ...]}``: every ``cselab eval`` option of the suites, with the suites
    that take it. Suites sharing a flag must declare the same argparse ``kwargs``."""
    out: dict[str, list[tuple[str, Option]]] = {}
    for name, suite in SUITES.items():
        for option in suite.options:
            takers = out.setdefault(option.flag, [])
            if takers and dict(takers[0][1].kwargs) != dict(option.kwargs):
                raise ValueError(f"{option.flag}: suites {takers[0][0]!r} and {name!r} declare it differently "
                                 f"({dict(takers[0][1].kwargs)} vs {dict(option.kwargs)})")
            takers.append((name, option))
    return out
