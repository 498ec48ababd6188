"""Soundness fuzz: whenever the kernel proves ``a = b``, both sides agree numerically.

Random term pairs (``termgen``: random expressions, and the shapes of the issue-10
audit: windows and indicators with constant and symbolic bounds, sums over ``n - c``,
floor division and remainder, ``At`` with facts, integer data) are given to
``prove_equal``. Every theorem it returns is checked numerically by the witness check
(``verigrad.certify.witness``: float64, finite-difference derivatives, sharing nothing
with the kernel's normal form) at several size assignments (each size at its lower
bound, +1, +2 and a random one up to 9, varied independently; every value of the free
indices) with values that satisfy the variables' facts and the theorem's conditions;
then it is instantiated at small concrete sizes (1 included, where the lower bound
allows) and the instance is checked the same way.

The default run checks 2,400 cases (2,000 in four shards and 400 in the completeness
check; about 30 s on one core). The slow mode runs
100,000 (``VERIGRAD_FUZZ_CASES=100000 make test-slow``, or just ``make test-slow``; any
count can be given). A failure names the seed; ``termgen.random_case(seed)`` rebuilds it.
"""
import collections
import os
import random

import pytest

from verigrad.certify import witness as W
from verigrad.kernel import KernelError, SizeSym, Theorem, instantiate, prove_equal

import termgen

CASES = int(os.environ.get("VERIGRAD_FUZZ_CASES", "100000"))
DEFAULT_CASES = 2_000
SHARDS = 4
SLOW_SHARDS = 16


@pytest.fixture(autouse=True)
def _own_witness():
    """The fuzz checks every theorem itself, at more sizes: the suite-wide witness check
    would repeat the work."""
    with W.paused():
        yield


def _checker():
    return W.Witness(budget_s=0.5, raise_errors=False)


def _sizes_of(th) -> list:
    out = set()
    for t in (th.lhs, th.rhs):
        out |= t.sizes
        for v in t.free_idx:
            out |= {s for s in v.size.symbols() if isinstance(s, SizeSym)}
    return sorted(out, key=lambda s: s.skey)


def check_case(seed: int, checker: W.Witness, stats: collections.Counter | None = None):
    """Prove the case's pair; a theorem must agree numerically, and so must its instance
    at small sizes. Returns ``(family, kind, proved)``; ``proved`` is None when a kernel
    constructor or rule refused the terms."""
    case = termgen.random_case(seed)
    try:
        res = prove_equal(case.a, case.b)
    except KernelError:
        return case.family, case.kind, None
    proved = isinstance(res, Theorem)
    if proved:
        verdict, msg = checker.verdict(res)
        assert msg is None, f"UNSOUND (seed {seed}, {case.family}/{case.kind}):\n{msg}"
        if stats is not None:
            stats[verdict] += 1
        rng = random.Random(seed)
        sizes = {s: s.lower + rng.randrange(3) for s in _sizes_of(res)}
        if sizes:
            inst = instantiate(res, sizes)
            verdict, msg = checker.verdict(inst)
            assert msg is None, f"UNSOUND instance at {sizes} (seed {seed}, {case.family}/{case.kind}):\n{msg}"
            if stats is not None:
                stats["instances " + verdict] += 1
    return case.family, case.kind, proved


@pytest.mark.parametrize("shard", range(SHARDS))
def test_proofs_agree_numerically(shard):
    checker = _checker()
    for j in range(DEFAULT_CASES // SHARDS):
        check_case(j * SHARDS + shard, checker)


def test_the_generator_makes_pairs_the_kernel_proves():
    """Completeness sanity check (not soundness): in every family the kernel proves most
    true rewrites, and few perturbations (a perturbation may happen to be true); each
    family's proved theorems are checked, not skipped."""
    stats = collections.defaultdict(lambda: [0, 0])
    verdicts: collections.Counter = collections.Counter()
    checker = _checker()
    for seed in range(400):
        family, kind, proved = check_case(50_000 + seed, checker, verdicts)
        if proved is not None:
            stats[family, kind][0] += proved
            stats[family, kind][1] += 1
    rate = {key: p / t for key, (p, t) in stats.items()}
    for family in termgen.FAMILIES:
        assert rate[family, "same"] > 0.6, (family, dict(stats))
        assert rate[family, "perturbed"] < 0.3, (family, dict(stats))
    assert verdicts["checked"] > 0.9 * sum(v for k, v in verdicts.items() if not k.startswith("instances")), verdicts
    assert verdicts["instances checked"] > 0.9 * sum(v for k, v in verdicts.items() if k.startswith("instances")), \
        verdicts


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SLOW_SHARDS))
def test_soundness_slow_mode(shard):
    """``VERIGRAD_FUZZ_CASES`` cases in all (default 100,000), in shards."""
    checker = _checker()
    for j in range(shard, CASES, SLOW_SHARDS):
        check_case(1_000_000 + j, checker)
