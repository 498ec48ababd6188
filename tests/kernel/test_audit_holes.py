"""Regression tests for the holes an outside audit found in the kernel (issue 10).

Each false statement the audit derived must now be refused (a ``KernelError`` or a
``Failure``), and its true neighbour must still be proved. Where a chain of rules used to
end in a falsehood, the chain is replayed and whatever it still proves is evaluated at
small sizes, where it must hold.
"""
from fractions import Fraction

import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.kernel import (At, Deriv, Func, IndexVar, IntCond, IntVal, KernelError, Lamda, Num, Pow,
                             RealCond, SizeSym, Sum, Theorem, Var, abstract, at_elim, index, instantiate,
                             prove_equal, refl, rewrite, symm, trans)
from verigrad.kernel import sizes as S
from verigrad.kernel import theorem as TH

n = SizeSym("n")
b = IndexVar("b", n)


def proved(lhs, rhs):
    return isinstance(prove_equal(lhs, rhs), Theorem)


def holds(th, sizes, values=None):
    """Both sides of ``th`` evaluated at concrete sizes agree (free indices at 0)."""
    lhs, rhs = th.lhs, th.rhs
    idx = sorted(lhs.free_idx | rhs.free_idx, key=lambda v: v.name)
    if idx:
        lhs, rhs = Lamda(idx, lhs), Lamda(idx, rhs)
    a = np.asarray(evaluate(lhs, sizes, values or {}))
    c = np.asarray(evaluate(rhs, sizes, values or {}))
    return np.allclose(a, c)


# -- K1: a window's length can go negative ------------------------------------------------

def test_k1_window_past_the_end_is_not_n_minus_2():
    assert not proved(Sum(b, IntCond(b, ">=", 2)), IntVal(n - 2))
    assert not proved(Sum(b, IntCond(b, ">=", 1) * IntCond(b, ">=", 2)), IntVal(n - 2))


def test_k1_an_index_range_must_be_provably_nonnegative():
    with pytest.raises(KernelError, match="range"):
        IndexVar("j", n - 2)


def test_k1_true_neighbours_still_prove():
    assert proved(Sum(b, IntCond(b, ">=", 1)), IntVal(n - 1))
    n2 = SizeSym("n", 2)
    j = IndexVar("j", n2 - 1)
    assert proved(Sum(j, Num(1)), IntVal(n2 - 1))
    n3 = SizeSym("n", 3)
    c = IndexVar("c", n3)
    assert proved(Sum(c, IntCond(c, ">=", 2)), IntVal(n3 - 2))
    i = IndexVar("i", n)
    assert proved(IntVal((i // 2) * 2 + i % 2), IntVal(i))


def test_k1_instantiating_at_one_gives_no_falsehood():
    th = prove_equal(Sum(b, IntCond(b, ">=", 1)), IntVal(n - 1))
    at1 = instantiate(th, {n: 1})
    assert holds(at1, {})


# -- K2: rewriting under At must respect the parameters' facts ----------------------------

def test_k2_rewrite_under_at_checks_the_values_facts():
    p = Var("p", (), ("positive",))
    v = Var("v", ())
    th = prove_equal(Pow(Pow(p, 2), Fraction(1, 2)), p)          # sqrt(p^2) = p for p > 0
    assert isinstance(th, Theorem)
    target = At(Pow(Pow(p, 2), Fraction(1, 2)), (p,), (v,))
    with pytest.raises(KernelError):
        rewrite(th, target)
    # at a value that is provably positive the rewrite is fine
    w = Var("w", (), ("positive",))
    ok = rewrite(th, At(Pow(Pow(p, 2), Fraction(1, 2)), (p,), (w,)))
    assert holds(trans(symm(at_elim(ok.lhs)), trans(ok, at_elim(ok.rhs))), {}, {w: np.array(0.7)})


# -- K3: instantiating a size re-ranges the free indices ----------------------------------

def test_k3_instantiate_reranges_free_indices():
    i = IndexVar("i", n)
    th = prove_equal(IntCond(i, "<", n), Num(1))
    at1 = instantiate(th, {n: 1})
    for v in at1.lhs.free_idx | at1.rhs.free_idx:
        assert n not in v.size.symbols(), "a free index still ranges over the substituted size"
    # the audit's chain: abstract, index into a sum, and normalize; it must not reach 1 = n
    lam = abstract(at1, [i])
    summed = rewrite(lam, Sum(i, Lamda([i], at1.lhs)[i]))
    for sz in (1, 2, 3):
        assert holds(summed, {n: sz})


def test_k3_instantiate_at_a_size_with_a_colliding_index_name():
    i, i1 = IndexVar("i", n), IndexVar("i", 1)
    x1 = Var("x1", (1,))
    th = prove_equal(IntCond(i, "<", n) * x1[i1], x1[i1])
    at1 = instantiate(th, {n: 1})
    assert holds(at1, {}, {x1: np.array([2.5])})


def test_subst_renaming_a_binder_does_not_capture_a_free_index():
    j1 = IndexVar("j", 1)
    x = Var("x", (n,))
    y = Var("y", (1,))
    j = IndexVar("j", n)
    th = refl(Sum(j, x[j] * y[j1]))
    at1 = instantiate(th, {n: 1})
    assert at1.lhs.idx is not j1 and j1 in at1.lhs.free_idx
    assert holds(at1, {}, {Var("x", (1,)): np.array([2.0]), y: np.array([3.0])})


# -- K4: reserved index names cannot be forged ---------------------------------------------

def test_k4_public_indices_have_no_tag():
    with pytest.raises(TypeError):
        IndexVar("_1_0", n, "b")


def test_k4_kernel_names_are_refused_in_rule_inputs():
    x, z = Var("x", (n,)), Var("z", (n, n))
    forged = S.bound_index(1, 0, n)           # a kernel-internal name, made through the back door
    j = IndexVar("j", n)
    with pytest.raises(KernelError, match="reserved"):
        prove_equal(Sum(j, x[j] * z[j, forged]), Sum(j, x[j] * z[j, j]))
    temp = S.fresh_index(n, "j")
    with pytest.raises(KernelError, match="reserved"):
        refl(x[temp])


# -- K5: the off-kink derivative needs a continuous argument -------------------------------

def test_k5_indicator_of_a_discontinuous_argument():
    x = Var("x", ())
    u = RealCond(x, ">") + x - Fraction(1, 2)
    res = prove_equal(Deriv(RealCond(u, ">"), x, ()), Num(0))
    if isinstance(res, Theorem):
        # it may be proved only under a condition that excludes x = 0, where it jumps
        at0 = {x: np.array(0.0)}
        assert any(float(evaluate(c.term, {}, at0)) == 0.0 for c in res.conds), \
            [str(c) for c in res.conds]


# -- Theorems and terms are not mutable, and forged theorems are refused -----------------

def test_forged_theorems_are_refused_by_the_rules():
    x = Var("x", (n,))
    th = refl(x)
    fake = Theorem.__new__(Theorem)
    for k, v in zip(Theorem.__slots__, (frozenset(), frozenset(), x, Var("y", (n,)), "refl", (), frozenset())):
        object.__setattr__(fake, k, v)
    with pytest.raises(KernelError, match="not a theorem"):
        symm(fake)
    object.__setattr__(th, "rhs", Var("y", (n,)))
    with pytest.raises(KernelError, match="not a theorem"):
        trans(th, refl(Var("y", (n,))))
    assert not hasattr(TH, "_TOKEN")


def test_sizes_and_terms_are_immutable():
    m = SizeSym("m")
    with pytest.raises(AttributeError):
        m.lower = 0
    x = Var("x", (m,), ("positive",))
    with pytest.raises(AttributeError):
        x.facts = frozenset()
    with pytest.raises(TypeError):
        (m + 1).terms[()] = 5
    with pytest.raises(AttributeError):
        index(refl(x), (0,)).lhs.total = True
