"""Which runs of a continuation can still buy a pair.

``cselab reproduce --replan --only`` trains seeds named by hand. A claim's paired difference joins a
seed's two runs only where they are one computation (:func:`.record.computation`: the same code
fingerprint, CPU kind and precisions), so a run whose partner at that seed, in *every* claim that
compares its variant, is already recorded from another computation (another CPU kind, a GPU, older
code) holds a number that no verdict can use. Continuation part 5 trained eight such runs
(ClusterNS −HN at seeds 15–20 beside the GPU's ClusterNS 15–20); :func:`unpaired_runs` finds them
before they train, and :func:`pairable_seeds` names the seeds that would pair instead.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from .record import Computation, computation, variant_of_label


def partners(claims: Iterable, variant: str) -> list[str]:
    """The variants some claim compares ``variant`` with (either side of a pair, an optimum's
    neighbours), in the claims' order."""
    found: dict[str, None] = {}
    for c in claims:
        sides = (c.variant, *c.compared)
        if variant == c.variant:
            found.update(dict.fromkeys(c.compared))
        elif variant in sides:
            found[c.variant] = None
    found.pop(variant, None)
    return list(found)


def _same(a: Computation, b: Computation) -> bool:
    # a legacy line (code known by its commit only) is one computation with nothing new
    return not a.legacy and not b.legacy and (a.code, a.cpu, a.precision) == (b.code, b.cpu, b.precision)


def describe(c: Computation) -> str:
    """A computation in a few words: its CPU kind and precisions, and the code's first 8 hex digits."""
    code = c.code.split(":", 1)[-1][:8] + (" (legacy, by commit)" if c.legacy else "")
    return f"{c.cpu}, {c.precision}, code {code}"


def _blocked(label: str, seed, ps: Sequence[str], records: Mapping[str, Mapping], here: Computation,
             training: set[str]) -> list[str] | None:
    """Why each partner at ``seed`` cannot pair with a run of ``here`` (None: at least one can: it is
    trained now, not recorded yet, or recorded from this computation)."""
    reasons = []
    for p in ps:
        partner = f"{p}-s{seed}"
        if partner in training or partner not in records:
            return None
        c = computation(records[partner])
        if _same(c, here):
            return None
        reasons.append(f"{partner} ran as {describe(c)}")
    return reasons


def unpaired_runs(labels: Sequence[str], claims: Iterable, records: Mapping[str, Mapping],
                  here: Computation, training: Iterable[str] = ()) -> dict[str, str]:
    """``{label: why}`` for each of ``labels`` (the runs about to train, as ``here``) whose every claim
    partner at its seed is recorded (``records``: label → line) from another computation. A run no
    claim compares, or one whose partner trains in the same call (``labels`` and ``training``), is
    never listed."""
    claims, training, out = list(claims), {*labels, *training}, {}
    for label in labels:
        variant, seed = variant_of_label(label)
        ps = partners(claims, variant)
        if seed is None or not ps:
            continue
        reasons = _blocked(label, seed, ps, records, here, training)
        if reasons is not None:
            out[label] = "; ".join(reasons)
    return out


def pairable_seeds(variant: str, claims: Iterable, records: Mapping[str, Mapping], here: Computation,
                   seeds: Iterable[int], count: int = 3) -> list[int]:
    """The first ``count`` of ``seeds`` at which ``variant`` has no record line yet and a run of
    ``here`` could pair in some claim (what :func:`unpaired_runs` would let train)."""
    ps = partners(list(claims), variant)
    found = []
    for seed in seeds:
        if f"{variant}-s{seed}" in records:
            continue
        if not ps or _blocked(f"{variant}-s{seed}", seed, ps, records, here, set()) is None:
            found.append(seed)
            if len(found) == count:
                break
    return found


def this_machine(cfg, execution: Mapping) -> dict:
    """The record fields that name the computation of a run of ``cfg`` trained here (``code``, ``cpu``,
    ``execution``): this checkout's code fingerprint, this machine's CPU kind and the precisions
    ``execution`` resolves (the study's expected settings)."""
    import torch

    from ...model.rundir.layout import code_fingerprint
    from ...model.utils import native_bf16

    return {"code": code_fingerprint(cfg.model),
            "cpu": {"capability": torch.backends.cpu.get_cpu_capability(), "native_bf16": native_bf16()},
            "execution": dict(execution)}


def this_computation(cfg, execution: Mapping) -> Computation:
    """:func:`this_machine` as the :class:`.record.Computation` the pairing rule compares."""
    return computation(this_machine(cfg, execution))
