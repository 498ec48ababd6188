"""Soundness fuzz: whenever the kernel proves ``a = b``, both sides agree numerically.

Random terms over random shapes (``termgen``) are paired with a rewrite by a true
identity or with a perturbation. The numeric side shares nothing with the kernel's
normal form (derivatives are finite differences). Sizes include 1. The default run
checks 2,000 cases; ``VERIGRAD_FUZZ_CASES=100000 make test-slow`` runs the slow mode.
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from verigrad.certify.evaluate import evaluate, random_values
from verigrad.kernel import Index, Lamda, Theorem, prove_equal
from verigrad.kernel.sizes import KernelError

import termgen

SIZES = [{termgen.n: 1, termgen.m: 1}, {termgen.n: 2, termgen.m: 3}, {termgen.n: 3, termgen.m: 2}]


def _differs(a, b, sizes, seed):
    rng = np.random.default_rng(seed)
    vals = random_values(set(a.atoms) | set(b.atoms) | set(termgen.VARS), sizes, rng)
    out = []
    for kval in range(sizes[termgen.n]):
        ienv_a = evaluate(_at(a, kval), sizes, vals)
        ienv_b = evaluate(_at(b, kval), sizes, vals)
        out.append((float(ienv_a), float(ienv_b)))
    diffs = []
    for u, v in out:
        if not (np.isfinite(u) and np.isfinite(v)):
            return None
        diffs.append(abs(u - v) / max(1.0, abs(u), abs(v)))
    return max(diffs)


def _at(t, kval):
    """``t`` at the free index ``k = kval``."""
    return Index(Lamda([termgen.k], t), (kval,), total=True)


def check_pair(seed):
    a, b, kind = termgen.random_pair(seed)
    try:
        res = prove_equal(a, b)
    except KernelError:
        return kind, None
    proved = isinstance(res, Theorem)
    if proved:
        bad = 0
        for sizes in SIZES:
            votes = [_differs(a, b, sizes, s) for s in (seed, seed + 1, seed + 2)]
            votes = [v for v in votes if v is not None]
            if votes and sum(v > 1e-5 for v in votes) >= 2:
                bad += 1
        assert bad == 0, f"UNSOUND: kernel proved {a!r} = {b!r} (seed {seed})"
    return kind, proved


CASES = int(os.environ.get("VERIGRAD_FUZZ_CASES", "500"))
common = settings(max_examples=CASES, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.mark.parametrize("shard", range(4))
def test_proofs_agree_numerically(shard):
    @common
    @given(st.integers(0, 2**31 - 1))
    def run(seed):
        check_pair(seed * 4 + shard)
    run()


def test_true_rewrites_are_mostly_proved_and_perturbations_rarely():
    """Completeness sanity check (not soundness): the kernel proves most rewrites by
    true identities, and few perturbations."""
    stats = {"same": [0, 0], "perturbed": [0, 0]}
    for seed in range(300):
        kind, proved = check_pair(10_000 + seed)
        if proved is not None:
            stats[kind][0] += proved
            stats[kind][1] += 1
    same_rate = stats["same"][0] / stats["same"][1]
    pert_rate = stats["perturbed"][0] / stats["perturbed"][1]
    assert same_rate > 0.8, stats
    assert pert_rate < 0.2, stats


@pytest.mark.slow
def test_soundness_slow_mode():
    n = int(os.environ.get("VERIGRAD_FUZZ_CASES", "100000"))
    for seed in range(n):
        check_pair(1_000_000 + seed)
