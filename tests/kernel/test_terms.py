"""Terms: hash-consing, shape checking with clear errors, printing."""
from fractions import Fraction

import pytest

from verigrad.kernel import (Add, Delta, Deriv, Func, Index, IndexVar, IntVal, KernelError, Lamda, Num, SizeSym,
                             Sum, Var)
from verigrad.report.printing import latex, text
from verigrad.kernel.sizes import Poly, floordiv, nonneg

n, d = SizeSym("n"), SizeSym("d")


def test_hash_consing_makes_equal_terms_identical():
    x = Var("x", (n,))
    i = IndexVar("i", n)
    assert Sum(i, x[i] * x[i]) is Sum(i, x[i] * x[i])
    assert Var("x", (n,)) is x
    assert Var("x", (d,)) is not x


def test_index_out_of_range_names_the_term():
    x = Var("x", (n,))
    i = IndexVar("i", n)
    with pytest.raises(KernelError, match=r"index i \+ 1 is not provably inside \[0, n\) in x"):
        x[i + 1]
    # A total index may leave the shape (it reads 0 there), e.g. for padding.
    assert Index(x, (i + 1,), total=True).shape == ()


def test_mismatched_shapes_are_rejected_with_both_shapes():
    x, y = Var("x", (n,)), Var("y", (d,))
    with pytest.raises(KernelError, match=r"sum of terms with different shapes \(d\), \(n\)"):
        x + y


def test_free_use_of_a_bound_index_is_rejected():
    """A sum's index is not in scope outside it: using it outside is an ill-formed
    Lamda/indexing and is caught when its range cannot be established."""
    x = Var("x", (n,))
    j = IndexVar("j", d)
    with pytest.raises(KernelError, match="not provably inside"):
        x[j]                           # an index of range d on an axis of size n
    s = Sum(IndexVar("i", n), x[IndexVar("i", n)])
    assert s.free_idx == frozenset()   # bound, not free


def test_unknown_functions_and_facts_are_named():
    with pytest.raises(KernelError, match="unknown function 'softplus'"):
        Func("softplus", (Num(1),))
    with pytest.raises(KernelError, match=r"unknown facts \['big'\]"):
        Var("x", (), ("big",))
    with pytest.raises(KernelError, match="size symbol n: lower bound 0 must be an integer >= 1"):
        SizeSym("n", 0)


def test_derivative_needs_one_index_per_axis():
    x = Var("x", (n, d))
    with pytest.raises(KernelError, match="needs 2 indices, got 1"):
        Deriv(Num(1), x, (0,))


def test_text_and_latex_printers():
    x = Var("x", (n,))
    i, j = IndexVar("i", n), IndexVar("j", n)
    sm = Lamda([i], Func("exp", (x[i],)) / Sum(j, Func("exp", (x[j],))))
    assert text(sm) == "Lamda[i<n](exp(x[i])/Sum[j<n](exp(x[j])))"
    tex = latex(sm)
    assert r"\exp\left(x_{i}\right)" in tex and r"\sum_{j=0}^{n - 1}" in tex and r"\frac" in tex
    assert text(x[i] - 2 * x[j]) == "x[i] - 2*x[j]"
    assert text(Delta(i, j)) == "delta(i, j)"
    assert text(IntVal(n) ** Fraction(-1, 2)) == "1/sqrt(n)"


def test_integer_oracle():
    i = IndexVar("i", n)
    assert nonneg(Poly.sym(i)) and nonneg(n - 1 - Poly.sym(i))
    assert not nonneg(n - 2 - Poly.sym(i))
    m = SizeSym("m", 2)
    assert nonneg(m * m - 4) and not nonneg(Poly.sym(n) - 2)
    a, b = IndexVar("a", n), IndexVar("b", d)
    assert floordiv(Poly.sym(a) * d + Poly.sym(b), Poly.sym(d)) is Poly.sym(a)
    assert (Poly.sym(a) * d + Poly.sym(b)) % Poly.sym(d) is Poly.sym(b)
    assert floordiv(Poly.const(7), Poly.const(2)) is Poly.const(3)
    with pytest.raises(KernelError, match="not provably >= 1"):
        floordiv(Poly.sym(a), Poly.sym(a))
    _ = Add
