"""Multi-process training on CPU (gloo, 2 processes started with torch.multiprocessing): the loss and
every gradient equal a single process on the same global batch for every method (and with gradient
caching), method state stays identical on every process, only process 0 writes, and resume is exact."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from safetensors.torch import load_file, save_file

from cselab.model.config import load_config
from cselab.model.data import load_corpus
from cselab.model.train import train
from cselab.model.train.ddp import Processes

from step_cases import BATCH, STEPS, assert_same, build, run_steps

WORLD = 2
DDP_CASES = [("simcse", None), ("mixcse", None), ("gs_infonce", None), ("clusterns", None), ("apincse", None),
             ("interlayer_projected", None), ("apincse", 4), ("clusterns", 4),
             ("esimcse", None), ("simcse_pp", None)]   # (case, mini_batch_size)


def _join(rank: int, init_file: str) -> Processes:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    return Processes(rank, WORLD, torch.device("cpu"))


def _step_worker(rank: int, init_file: str, model_path: str, batches: list[list[str]], out_dir: str) -> None:
    processes = _join(rank, init_file)
    try:
        for case, mini in DDP_CASES:
            encoder, loss_fn = build(model_path, case)
            local = [processes.local_slice(b) for b in batches]
            out = run_steps(encoder, loss_fn, local, processes, mini_batch_size=mini, model=processes.wrap(encoder))
            save_file(out, str(Path(out_dir) / f"{case}-{mini}-{rank}.safetensors"))
    finally:
        dist.destroy_process_group()


def test_two_processes_compute_the_single_process_loss_and_gradients(tiny_model, data_dir, tmp_path):
    corpus = load_corpus("wiki1m-head", BATCH * STEPS, data_dir)
    batches = [corpus[s * BATCH:(s + 1) * BATCH] for s in range(STEPS)]
    mp.spawn(_step_worker, args=(str(tmp_path / "init"), str(tiny_model), batches, str(tmp_path)), nprocs=WORLD)
    for case, mini in DDP_CASES:
        reference = run_steps(*build(tiny_model, case), batches)   # one process, whole batch, no caching
        per_rank = [load_file(str(tmp_path / f"{case}-{mini}-{rank}.safetensors")) for rank in range(WORLD)]
        for out in per_rank:   # loss, averaged gradients, queue / centroids, random state
            assert_same(reference, out)
        state = [k for k in reference if k.startswith("state.")]
        assert all(torch.equal(per_rank[0][k], per_rank[1][k]) for k in state)   # bit-identical on both processes
    assert any("queue.entries" in k for k in load_file(str(tmp_path / "apincse-None-0.safetensors")))


def test_local_slices_partition_the_global_batch():
    batch = [f"s{i}" for i in range(10)]
    slices = [Processes(rank, 2).local_slice(batch) for rank in range(2)]
    assert slices == [batch[:5], batch[5:]]
    assert [Processes(rank, 2).local_slice(batch[:7]) for rank in range(2)] == [batch[:3], batch[3:6]]
    with pytest.raises(ValueError, match="batch_size=15 is the global batch and must be divisible by the 2 processes"):
        Processes(0, 2).check_config(load_config({"batch_size": 15}))


class Crash(Exception):
    pass


def _train_worker(rank: int, init_file: str, configs: dict) -> None:
    processes = _join(rank, init_file)

    def crash_at_3(state, record):
        if state.step == 3:
            raise Crash

    try:
        train(load_config(configs["equal"]), data_dir=configs["data_dir"], progress=False)
        train(load_config(configs["straight"]), data_dir=configs["data_dir"], progress=False)
        with pytest.raises(Crash):
            train(load_config(configs["resumed"]), data_dir=configs["data_dir"], callbacks=[crash_at_3], progress=False)
        train(load_config(configs["resumed"]), resume=True, data_dir=configs["data_dir"], progress=False)
        assert processes.rank == dist.get_rank()
    finally:
        dist.destroy_process_group()


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_torchrun_style_training_writes_once_equals_one_process_and_resumes(tiny_config, data_dir, tmp_path):
    """``train()`` in 2 processes: with dropout 0 its metrics and weights equal a one-process run;
    with dropout on, a run killed after step 3 and resumed (every process's random stream restored)
    equals the uninterrupted 2-process run. Only process 0 wrote (one metrics line per record)."""
    base = {**tiny_config, "max_sentences": 96, "batch_size": 16, "max_steps": 6, "eval_every": 2, "log_every": 1,
            "precision": "fp32", "eval_precision": "fp32", "method": ["gs_infonce"]}
    configs = {"data_dir": str(data_dir),
               "equal": {**base, "dropout": 0.0, "output_dir": str(tmp_path / "two")},
               "straight": {**base, "output_dir": str(tmp_path / "straight")},
               "resumed": {**base, "output_dir": str(tmp_path / "resumed")}}
    mp.spawn(_train_worker, args=(str(tmp_path / "init"), configs), nprocs=WORLD)
    one = train(load_config({**base, "dropout": 0.0, "output_dir": str(tmp_path / "one")}), data_dir=data_dir,
                progress=False)
    name = one.name
    resumed_name = load_config(configs["straight"]).default_run_name()
    # The tiny random model's embeddings are nearly collinear, so its STS-B dev Spearman moves by a few
    # hundredths with 1e-7 changes of the weights (one thread per process here, two in the single
    # process): dev scores are compared to 0.2 between 1 and 2 processes, exactly after a resume.
    for a, b, tol, dev_tol in ((one, tmp_path / "two" / name, 1e-5, 0.2),
                               (tmp_path / "straight" / resumed_name, tmp_path / "resumed" / resumed_name, 1e-6, 1e-9)):
        ra, rb = _records(a), _records(b)
        assert [(r["kind"], r["step"]) for r in ra] == [(r["kind"], r["step"]) for r in rb]   # written once each
        for x, y in zip(ra, rb):
            for key in x:
                if x["kind"] == "eval" and dev_tol > 0.1 and key in ("improved", "best_stsb_dev"):
                    continue   # follows from the noisy dev score (below)
                if isinstance(x[key], (str, bool)):
                    expected = x[key]
                elif key == "stsb_dev":
                    expected = pytest.approx(x[key], abs=dev_tol)
                else:
                    expected = pytest.approx(x[key], rel=1e-4, abs=tol)
                assert y[key] == expected, (b, x["step"], key)
        wa, wb = load_file(str(a / "last" / "model.safetensors")), load_file(str(b / "last" / "model.safetensors"))
        assert all(torch.allclose(wa[k], wb[k], atol=tol) for k in wa)
    results = json.loads((tmp_path / "two" / name / "results.json").read_text())
    assert results["world_size"] == 2 and results["steps"] == 6
