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
allows; every other time its free indices too, at values in their new ranges) and the
instance is checked the same way.

Chains of rules applied to proved pairs (``check_chain``: symm, trans, abstract, index,
rewrite in a context, under a sum or ``At``, instantiate) are checked the same way: the
audit's holes K2 and K3 were in such chains, not in one decision.

The default run checks 2,400 cases (2,000 in four shards and 400 in the completeness
check) and 300 chains, in about 30 s on one core. The slow mode runs 100,000 cases and a
chain for every tenth (``VERIGRAD_FUZZ_CASES=100000 make test-slow``, or just ``make
test-slow``; any count can be given). A failure names the seed;
``termgen.random_case(seed)`` rebuilds the case.
"""
import collections
import os
import random

import pytest

from verigrad.certify import witness as W
from verigrad.kernel import (At, Func, IndexVar, IntVal, KernelError, SizeSym, Sum, Theorem, abstract, index,
                             instantiate, prove_equal, rewrite, symm, trans)

import termgen

CASES = int(os.environ.get("VERIGRAD_FUZZ_CASES", "100000"))
DEFAULT_CASES = 2_000
CHAINS = 300
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
    constructor or rule refused the terms, "conditional" for a theorem with side
    conditions."""
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
            # the sizes, and every other time a free index too, at a value in its new range
            mapping = dict(sizes)
            for v in sorted(res.lhs.free_idx | res.rhs.free_idx, key=lambda v: v.skey):
                top = v.size.subst(sizes)
                if rng.random() < 0.5 and top.is_const() and top.const_value() > 0:
                    mapping[v] = rng.randrange(top.const_value())
            inst = instantiate(res, mapping)
            verdict, msg = checker.verdict(inst)
            assert msg is None, f"UNSOUND instance at {mapping} (seed {seed}, {case.family}/{case.kind}):\n{msg}"
            if stats is not None:
                stats["instances " + verdict] += 1
    return case.family, case.kind, ("conditional" if proved and res.conds else proved)


def check_chain(seed: int, checker: W.Witness, stats: collections.Counter | None = None) -> int:
    """A proved pair, then a few rules applied to it at random (the audit's holes K2 and
    K3 were in chains of rules, not in one decision): symm, trans with another proof,
    abstract over a free index, index at a constant or a new index, rewrite inside a
    context (under a sum, under At), instantiate. Every theorem made must agree
    numerically. Returns the number of rule applications that made a theorem."""
    case = termgen.random_case(seed)
    try:
        th = prove_equal(case.a, case.b)
    except KernelError:
        return 0
    if not isinstance(th, Theorem):
        return 0
    rng, w, made = random.Random(seed), case.world, 0
    for _ in range(rng.randint(2, 5)):
        try:
            new = _rule(th, rng, w)
        except KernelError:
            continue
        if not isinstance(new, Theorem):
            continue
        th, made = new, made + 1
        verdict, msg = checker.verdict(th)
        assert msg is None, f"UNSOUND after {th.rule} (chain seed {seed}, {case.family}/{case.kind}):\n{msg}"
        if stats is not None:
            stats[th.rule, verdict] += 1
    return made


def _rule(th, rng, w):
    free = sorted(th.lhs.free_idx | th.rhs.free_idx, key=lambda v: v.skey)
    op = rng.choice(["symm", "trans", "abstract", "index", "rewrite", "rewrite_sum", "rewrite_at", "instantiate"])
    if op == "symm":
        return symm(th)
    if op == "trans":
        other = termgen.same(th.rhs, rng, w)
        step = prove_equal(th.rhs, other)
        return trans(th, step) if isinstance(step, Theorem) else None
    if op == "abstract" and free:
        return abstract(th, [rng.choice(free)])
    if op == "index" and th.lhs.shape:
        size = th.lhs.shape[0]
        if rng.random() < 0.5:
            return index(th, (IndexVar("k2", size),))
        low = min(size.subst({s: s.lower for s in size.symbols() if isinstance(s, SizeSym)}).const_value(), 3)
        return index(th, (rng.randrange(max(low, 1)),))
    if op == "rewrite":
        return rewrite(th, th.lhs * w.s + Func("exp", (th.lhs,)) if not th.lhs.shape else th.lhs + th.lhs)
    if op == "rewrite_sum" and free and not th.lhs.shape:
        v = rng.choice(free)       # a sum over one of its free indices: used under the binder only
        return rewrite(th, Sum(v, th.lhs * w.x[v] if v.size is w.n.__add__(0) else th.lhs) + th.lhs)
    if op == "rewrite_at" and not th.lhs.shape and w.p in th.lhs.mentions:
        v = rng.choice([w.s, w.x[w.k], Func("exp", (w.s,)), w.q[w.k], IntVal(w.n)])
        return rewrite(th, At(th.lhs + w.p, (w.p,), (v,)))
    if op == "instantiate":
        sizes = {s: s.lower + rng.randrange(3) for s in _sizes_of(th)}
        mapping = dict(sizes)
        for v in free:
            top = v.size.subst(sizes)
            if rng.random() < 0.5 and top.is_const() and top.const_value() > 0:
                mapping[v] = rng.randrange(top.const_value())
        return instantiate(th, mapping) if mapping else None
    return None


@pytest.mark.parametrize("shard", range(SHARDS))
def test_proofs_agree_numerically(shard):
    checker = _checker()
    for j in range(DEFAULT_CASES // SHARDS):
        check_case(j * SHARDS + shard, checker)


def test_rule_chains_agree_numerically():
    checker, made = _checker(), 0
    for seed in range(CHAINS):
        made += check_chain(200_000 + seed, checker)
    assert made > CHAINS, made      # the chains do apply rules


def test_the_generator_makes_pairs_the_kernel_proves():
    """Completeness sanity check (not soundness): in every family the kernel proves most
    true rewrites, and few perturbations outright (a perturbation may happen to be true;
    one that holds under a side condition, such as ``exp(log p) = p`` for ``p`` no longer
    known positive, is proved with that condition, as it should be); each family's proved
    theorems are checked, not skipped."""
    stats = collections.defaultdict(lambda: [0, 0])
    verdicts: collections.Counter = collections.Counter()
    checker = _checker()
    for seed in range(400):
        family, kind, proved = check_case(50_000 + seed, checker, verdicts)
        if proved is not None:
            outright = proved is True or (proved == "conditional" and kind == "same")
            stats[family, kind][0] += outright
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
        if j % 10 == 0:         # and a chain of rules for every tenth case
            check_chain(5_000_000 + j, checker)
