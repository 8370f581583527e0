"""Training configuration: one dataclass, loaded from YAML/JSON or a named preset, overridden with
``key=value`` pairs, validated (unknown keys and bad values are errors naming the key) and hashed
(a run's identity is a stable hash of its resolved config).
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from .options import (YAML_MAX_BYTES, ConfigError, build_dataclass, check_type, field_types, load_json, load_yaml,
                      parse_key_values, shown, unknown_key_error)
from .io import read_utf8

PRESET_DIR = Path(__file__).parent / "configs"
# The method of a config that names none: the InfoNCE core alone, which cselab.model.methods.registry
# registers under this name (every other default here is SimCSE's too). Every comparison's
# default baseline; the one place outside cselab/model/methods/ that names a method.
DEFAULT_METHOD = "simcse"


@dataclass
class TrainConfig:
    """Defaults reproduce SimCSE's unsupervised BERT-base script (run_unsup_example.sh) on top of
    Hugging Face Trainer defaults (AdamW without weight decay, gradient clipping at 1.0, linear
    decay without warm-up), except the backbone, which defaults to the offline MiniLM.

    ``batch_size`` is the global batch: with ``torchrun --nproc_per_node W`` each of the W processes
    encodes ``batch_size / W`` sentences of the same global batch (W must divide it) and every
    process's loss sees all ``batch_size`` sentences, so a config means the same run on 1 or W
    processes. ``mini_batch_size`` turns on gradient caching: each process encodes its sentences in
    chunks of that many (the last chunk may be smaller) and the loss still sees the whole batch
    (:mod:`cselab.model.train.step`). ``precision`` is the training autocast (``auto``: bf16 on a CPU with
    native bf16 and on CUDA, fp32 elsewhere; the InfoNCE itself always runs in fp32);
    ``eval_precision`` is the same choice for every evaluation pass (STS-B dev during training,
    probes, the final STS table).
    """

    # model
    model: str = "all-minilm-l6"
    pooler: str = "cls"
    mlp_only_train: bool = True
    dropout: float = 0.1
    # training-mode dropout masks on CPU: "fast" (one 64-bit draw per four elements, the drop probability
    # a multiple of 2^-15: cselab.model.encoder.cpu_dropout) or "torch" (bernoulli_, as cselab before 2026-12-02)
    cpu_dropout: str = "fast"
    pooler_options: dict = field(default_factory=dict)
    # objective
    method: list = field(default_factory=lambda: [DEFAULT_METHOD])
    temperature: float = 0.05
    symmetric: bool = False
    # data
    corpus: str = "wiki1m"
    max_sentences: typing.Optional[int] = None
    max_len: int = 32
    shuffle: bool = True
    drop_last: bool = False
    # no sentence (exact string) twice in a batch: a copy is a false negative (cselab.model.train.batches).
    # Off by default: SimCSE's Trainer samples in plain random order, which the papers' numbers used.
    no_duplicates: bool = False
    # optimisation
    batch_size: int = 64                     # global: all processes together
    mini_batch_size: typing.Optional[int] = None   # gradient caching: sentences per encoder chunk
    lr: float = 3e-5
    epochs: int = 1
    max_steps: typing.Optional[int] = None
    weight_decay: float = 0.0
    warmup_ratio: float = 0.0
    max_grad_norm: typing.Optional[float] = 1.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    # evaluation and logging
    eval_every: int = 125
    # STS-B dev during training on a fixed sample of this many of its 1,500 pairs (null: all, the
    # papers'); a quick study's way to spend less on evaluation than on training
    dev_max_pairs: typing.Optional[int] = None
    eval_batch_size: int = 128
    early_stopping_patience: typing.Optional[int] = None
    # which checkpoint becomes best/ (cselab.model.train.selection): stsb_dev (the papers'), last, or
    # heldout_infonce (the InfoNCE of heldout_sentences corpus sentences left out of training: no STS data)
    select_by: str = "stsb_dev"
    heldout_sentences: int = 1024
    final_eval: bool = True
    log_every: int = 10
    report_to: list = field(default_factory=list)   # experiment loggers besides metrics.jsonl: [tensorboard]
    # training probes (cselab.model.train.probes): geometry of a fixed STS-B dev probe set every N steps
    probe_every: typing.Optional[int] = None
    probe_sentences: int = 256
    log_embedding_grad_norm: bool = False   # ‖∂L/∂z‖ of both views in every train record (MixCSE gradient analysis)
    snapshot_every: typing.Optional[int] = None   # model-only snapshots/step-NNNNNN/ every N steps (and step 0)
    # runtime
    seed: int = 42
    precision: str = "auto"
    eval_precision: str = "auto"
    device: str = "auto"
    output_dir: str = "runs"
    run_name: typing.Optional[str] = None
    # per-method hyper-parameters, keyed by method name (filled from the config's method sections)
    method_params: dict = field(default_factory=dict)

    def __post_init__(self):
        if isinstance(self.method, str):
            self.method = [self.method]
        if isinstance(self.report_to, str):
            self.report_to = [self.report_to]
        self.method_params = resolve_method_params(self.method, self.method_params)
        validate(self)

    # --------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "method_params"}
        for name, params in self.method_params.items():
            d[name] = dataclasses.asdict(params)
        return d

    def identity(self) -> dict:
        """The part of the config that determines the result (no output locations)."""
        d = self.to_dict()
        for key in NON_IDENTITY_KEYS:
            d.pop(key, None)
        for key, default in LATER_KEYS.items():
            if d.get(key) == default:
                d.pop(key)
        return d

    def config_hash(self, length: int = 10) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:length]

    def default_run_name(self) -> str:
        return f"{'+'.join(self.method)}-{self.config_hash()}"


NON_IDENTITY_KEYS = ("output_dir", "run_name", "device", "log_every", "eval_batch_size",
                     # observation only: they neither consume randomness nor change the updates
                     "probe_every", "probe_sentences", "log_embedding_grad_norm", "snapshot_every", "report_to")
# Keys added after runs were made: left out of the identity while at their default, so that every
# earlier config keeps its hash (and its run directory); set to anything else, they are identity.
# cpu_dropout is the exception that changed the default: every earlier run drew torch's masks, so "torch" is
# what an earlier config meant, and the new default ("fast") gives a config a new identity.
LATER_KEYS = {"no_duplicates": False, "select_by": "stsb_dev", "heldout_sentences": 1024, "dev_max_pairs": None,
              "cpu_dropout": "torch"}
SELECT_BY = ("stsb_dev", "last", "heldout_infonce")   # cselab.model.train.selection
STS_SELECTED = ("stsb_dev",)   # the choices that read STS data (the tables' † mark)


STS_SELECTED_MARK = "†"
STS_SELECTED_NOTE = ("† checkpoint chosen on STS-B dev (`select_by: stsb_dev`, the papers' protocol): these "
                     "numbers are not free of STS labels (STS-B test comes from the same source); "
                     "`select_by: last` or `heldout_infonce` uses none.")


def uses_sts(select_by: str | None) -> bool:
    """Whether a run's best/ was chosen on STS data (runs made before ``select_by`` existed were)."""
    return (select_by or "stsb_dev") in STS_SELECTED


PRECISIONS = ("auto", "fp32", "bf16", "fp16")
CPU_DROPOUTS = ("fast", "torch")
# The smallest temperature whose logits fp32 still carries. The InfoNCE runs in fp32 on logits
# cos/τ with |cos| ≤ 1, so they reach 1/τ, and fp32 rounds a number of magnitude x by up to x·2⁻²⁴.
# The loss is a difference of such logits (log-sum-exp minus the positive's), so its rounding is
# about (1/τ)·2⁻²⁴; keeping that below 2⁻¹¹ ≈ 5e-4 nat (the loss and the softmax weights right to
# three decimals) needs τ ≥ 2⁻¹³ ≈ 1.22e-4. SimCSE's smallest ablated temperature, 0.001, is 8×
# above it; τ = 1e-12 (loss ≈ 5e10 at step 1, pure rounding) is refused.
TEMPERATURE_MIN = 2.0 ** -13
# A run folder's siblings add at most this many bytes to its name: <run>.overwrite/ (a replacement
# in progress), <run>.old/ (a swap), .<run>.lock.
RUN_NAME_RESERVE = len(".overwrite")
REPORTERS = ("tensorboard",)   # the values ``report_to`` accepts (cselab.model.train.reporting)


def _methods() -> dict:
    """The method registry. Imported when a config is built, not when this module is: the methods
    (and the poolers they import) need torch, reading this module does not."""
    from .methods import METHODS

    return METHODS


def resolve_method_params(methods: list[str], given: dict) -> dict:
    METHODS = _methods()
    if not isinstance(methods, list) or not methods or not all(isinstance(m, str) for m in methods):
        raise ConfigError(f"method: expected a method name or a non-empty list of names "
                          f"({', '.join(sorted(METHODS))}), got {shown(methods)}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ConfigError(f"method: unknown method {shown(unknown[0])}; choose from {', '.join(sorted(METHODS))}")
    if len(set(methods)) != len(methods):
        raise ConfigError(f"method: {methods} lists a method twice")
    out = {}
    for name in methods:
        value = given.get(name, {})
        out[name] = value if dataclasses.is_dataclass(value) else build_dataclass(METHODS[name].params, value, name)
    extra = [k for k in given if k not in methods]
    if extra:
        raise ConfigError(f"{extra[0]}: hyper-parameters given for a method that is not selected "
                          f"(method: {methods})")
    return out


def validate(cfg: TrainConfig) -> None:
    hints = field_types(TrainConfig)
    for f in fields(cfg):
        if f.name != "method_params":
            setattr(cfg, f.name, check_type(f.name, getattr(cfg, f.name), hints[f.name]))

    def need(cond: bool, key: str, msg: str):
        if not cond:
            raise ConfigError(f"{key}: {msg}, got {shown(getattr(cfg, key))}")

    from .encoder import pooler_options   # the package registers every pooler

    pooler_options(cfg.pooler, cfg.pooler_options)
    need(0.0 <= cfg.dropout < 1.0, "dropout", "must be in [0, 1)")
    need(cfg.cpu_dropout in CPU_DROPOUTS, "cpu_dropout", f"must be one of {CPU_DROPOUTS}")
    need(cfg.temperature > 0, "temperature", "must be > 0")
    need(cfg.temperature >= TEMPERATURE_MIN, "temperature",
         f"must be >= 2^-13 ≈ {TEMPERATURE_MIN:.3g}: the logits cos/τ reach 1/τ, and fp32 (the InfoNCE's "
         "precision) rounds a logit that large by more than 5e-4 nat, so the loss is rounding, not signal")
    need(cfg.batch_size >= 2, "batch_size", "must be >= 2 (in-batch negatives)")
    need(cfg.lr > 0, "lr", "must be > 0")
    need(cfg.epochs >= 1, "epochs", "must be >= 1")
    need(cfg.max_steps is None or cfg.max_steps >= 1, "max_steps", "must be >= 1")
    need(cfg.max_sentences is None or cfg.max_sentences >= 2, "max_sentences", "must be >= 2 (in-batch negatives)")
    need(cfg.max_len >= 4, "max_len", "must be >= 4")
    need(cfg.weight_decay >= 0, "weight_decay", "must be >= 0")
    need(0.0 <= cfg.warmup_ratio < 1.0, "warmup_ratio", "must be in [0, 1)")
    need(cfg.max_grad_norm is None or cfg.max_grad_norm > 0, "max_grad_norm", "must be > 0 or null")
    need(cfg.eval_every >= 1, "eval_every", "must be >= 1")
    need(cfg.dev_max_pairs is None or cfg.dev_max_pairs >= 10, "dev_max_pairs",
         "must be >= 10 (a Spearman correlation over fewer pairs is noise) or null (all 1,500)")
    need(cfg.log_every >= 1, "log_every", "must be >= 1")
    need(cfg.probe_every is None or cfg.probe_every >= 1, "probe_every", "must be >= 1 or null")
    need(cfg.snapshot_every is None or cfg.snapshot_every >= 1, "snapshot_every", "must be >= 1 or null")
    need(cfg.probe_sentences >= 2, "probe_sentences", "must be >= 2")
    need(cfg.eval_batch_size >= 1, "eval_batch_size", "must be >= 1")
    need(cfg.early_stopping_patience is None or cfg.early_stopping_patience >= 1, "early_stopping_patience",
         "must be >= 1 or null")
    need(cfg.select_by in SELECT_BY, "select_by", f"must be one of {SELECT_BY}")
    need(cfg.heldout_sentences >= 2, "heldout_sentences", "must be >= 2")
    need(cfg.select_by != "last" or cfg.early_stopping_patience is None, "early_stopping_patience",
         "stops on a score that select_by: last does not compute; use select_by stsb_dev or heldout_infonce, or null")
    need(cfg.precision in PRECISIONS, "precision", f"must be one of {PRECISIONS}")
    need(all(isinstance(r, str) and r in REPORTERS for r in cfg.report_to) and len(set(cfg.report_to)) ==
         len(cfg.report_to), "report_to", f"must be a list of distinct values from {list(REPORTERS)}")
    need(cfg.eval_precision in PRECISIONS, "eval_precision", f"must be one of {PRECISIONS}")
    need(cfg.mini_batch_size is None or cfg.mini_batch_size >= 1, "mini_batch_size", "must be >= 1 or null")
    need(cfg.device == "auto" or cfg.device == "cpu" or cfg.device.startswith("cuda") or cfg.device == "mps",
         "device", "must be auto, cpu, cuda[:N] or mps")
    METHODS = _methods()
    check_run_name(cfg)
    for name, params in cfg.method_params.items():
        try:
            run_method_check(METHODS[name].config_check, params, cfg)
        except ValueError as e:
            raise ConfigError(f"{name}: {e}") from None
    if cfg.mini_batch_size is not None:
        for name, params in cfg.method_params.items():
            try:
                run_method_check(METHODS[name].gradient_cache_check, params, cfg)
            except ValueError as e:
                raise ConfigError(f"mini_batch_size={cfg.mini_batch_size} with method {name}: {e} "
                                  "(remove mini_batch_size or this method)") from None


def run_method_check(check, params, cfg: TrainConfig) -> None:
    """Call a method's config-time check with its params and the values of the config keys that its
    keyword-only parameters name (a method knows its own parameters and asks for the rest by name)."""
    if check is None:
        return
    keys = [p.name for p in inspect.signature(check).parameters.values() if p.kind is p.KEYWORD_ONLY]
    unknown = [k for k in keys if k not in TrainConfig.__dataclass_fields__ or k == "method_params"]
    if unknown:
        raise TypeError(f"{check.__qualname__} asks for {unknown[0]!r}, which is not a training config key")
    check(params, **{k: getattr(cfg, k) for k in keys})


def check_run_name(cfg: TrainConfig) -> None:
    """``run_name`` is one plain folder name inside ``output_dir``: with a separator, ``..`` or an
    absolute path the run would land (and ``--overwrite`` would delete) outside the runs root."""
    from .io import name_max, path_component_problem

    if cfg.run_name is None:
        return
    system = name_max(cfg.output_dir)
    problem = path_component_problem(cfg.run_name, system - RUN_NAME_RESERVE)
    if problem is not None and "bytes long" in problem:
        problem = (f"is {len(os.fsencode(cfg.run_name))} bytes long; at most {system - RUN_NAME_RESERVE} fit (the file "
                   f"system's {system} minus {RUN_NAME_RESERVE} for the run's <name>.overwrite/ staging folder)")
    if problem is not None:
        raise ConfigError(f"run_name: {shown(cfg.run_name)} {problem}; a run name is one folder name inside "
                          f"output_dir ({cfg.output_dir})")


# ------------------------------------------------------------------- loading
def parse_mapping(mapping: dict, where: str = "config") -> TrainConfig:
    if not isinstance(mapping, dict):
        raise ConfigError(f"{where}: expected a mapping at the top level")
    METHODS = _methods()
    top = {f.name for f in fields(TrainConfig)} - {"method_params"}
    plain, sections = {}, {}
    for key, value in mapping.items():
        if key in top:
            plain[key] = value
        elif key in METHODS:
            sections[key] = value
        else:
            raise unknown_key_error(f"{where}: ", key, sorted(top | set(METHODS)))
    method = plain.get("method", [DEFAULT_METHOD])
    plain["method"] = [method] if isinstance(method, str) else method
    return TrainConfig(**plain, method_params=sections)


def read_config_file(path: str | os.PathLike) -> dict:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    if path.stat().st_size > YAML_MAX_BYTES:   # before reading it: a config is a page, not gigabytes
        raise ConfigError(f"{path}: {path.stat().st_size:,} bytes; a config file has at most {YAML_MAX_BYTES:,}")
    text = read_utf8(path, ConfigError)
    try:
        data = load_json(text) if path.suffix == ".json" else load_yaml(text)
    except RecursionError:
        raise ConfigError(f"{path}: cannot parse (nested too deeply)") from None
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else (f":{e.lineno}" if hasattr(e, "lineno") else "")
        raise ConfigError(f"{path}{line}: cannot parse ({getattr(e, 'problem', None) or e})") from None
    if data is None:  # an empty file (or only comments) is a mistake, not "all defaults"
        raise ConfigError(f"{path}: config file is empty (write at least one key, e.g. `model: all-minilm-l6`)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of keys at the top level, got a {type(data).__name__}")
    return data


def presets() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_config(source: str | os.PathLike | dict | None = None, overrides: list[str] | dict | None = None) -> TrainConfig:
    """A config from a file (YAML/JSON), a preset name, a mapping or nothing (defaults), with
    ``overrides`` as ``["key=value", "mixcse.mix_lambda=0.3"]`` or a mapping (dotted keys allowed)."""
    if source is None:
        mapping, where = {}, "config"
    elif isinstance(source, dict):
        mapping, where = dict(source), "config"
    else:
        path = Path(source)
        if not path.exists() and str(source) in presets():
            path = PRESET_DIR / f"{source}.yaml"
        elif not path.exists():
            raise ConfigError(f"{source}: no such config file or preset (presets: {', '.join(presets())})")
        mapping, where = read_config_file(path), str(path)
    known = ({f.name for f in fields(TrainConfig)} - {"method_params"}) | set(_methods())
    for key, value in _parse_overrides(overrides).items():
        head = key.split(".")[0]
        if head not in known:
            raise unknown_key_error("override: ", head, sorted(known))
        _set_dotted(mapping, key, value)
    return parse_mapping(mapping, where)


def _parse_overrides(overrides) -> dict:
    if overrides is None:
        return {}
    if isinstance(overrides, dict):
        return overrides
    return parse_key_values(overrides, "override")


def _set_dotted(mapping: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = mapping
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise ConfigError(f"override {key}: {part} is not a section")
        node = child
    node[parts[-1]] = value
