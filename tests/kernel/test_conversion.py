"""Conversion: a decision whose two sides are one term read two ways (a definition read
as its body, ``Lamda[i](body)[e]`` as ``body[i := e]``, bound indices renamed) is made
without normal forms, with no condition, resting on ``conversion``. Everything else is
left to the normal forms: a total index (it reads 0 off the axis), binders of other
ranges, a substitution that would capture a binder."""
from verigrad.kernel import (Delta, Func, Index, IndexVar, IntCond, Lamda, Num, SizeSym, Sum, Theorem, Var, define,
                             prove_equal)
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly

n, m = SizeSym("n"), SizeSym("m")
x, y = Var("x", (n,)), Var("y", (n,))
i, j, k = IndexVar("i", n), IndexVar("j", n), IndexVar("k", n)


def by_conversion(lhs, rhs) -> bool:
    th = prove_equal(lhs, rhs)
    return isinstance(th, Theorem) and th.axioms() == ["conversion"] and not th.conds


def test_a_lamda_read_at_an_index_is_its_body_there():
    assert by_conversion(Index(Lamda((i,), x[i] * Func("exp", (y[i],))), (j,)), x[j] * Func("exp", (y[j],)))
    square = Lamda((i, j), x[i] * y[j])                       # fewer indices than binders
    assert by_conversion(Lamda((k,), Index(square, (k,))), Lamda((k,), Lamda((i,), x[k] * y[i])))


def test_definitions_and_bound_names():
    f, _ = define("scaled", Lamda((i,), x[i] * 2))
    assert by_conversion(Sum(j, Index(f, (j,))), Sum(k, x[k] * 2))
    assert by_conversion(Lamda((i,), Sum(j, x[i] * y[j])), Lamda((k,), Sum(i, x[k] * y[i])))


def test_no_capture():
    # Lamda[i](Sum_j x[i] y[j]) read at j: the bound j is renamed, not captured
    read = Index(Lamda((i,), Sum(j, x[i] * y[j])), (j,))
    assert by_conversion(read, Sum(k, x[j] * y[k]))
    th = prove_equal(read, Sum(k, x[k] * y[k]))              # false at n = 2
    assert not isinstance(th, Theorem)


def test_what_conversion_does_not_read():
    # a total index may fall off the axis (reads 0): 1 = 1 is not x[j + 1]'s reading
    ones = Lamda((i,), Num(1))
    off = T.Index(ones, (Poly.sym(j) + 1,), total=True)
    assert not by_conversion(off, Num(1))
    assert not isinstance(prove_equal(off, Num(1)), Theorem)   # false at j = n - 1
    # binders of other ranges
    b = IndexVar("b", m)
    assert not isinstance(prove_equal(Sum(i, Num(1)), Sum(b, Num(1))), Theorem)
    # a decision that needs algebra is still a decision
    th = prove_equal(Sum(i, x[i] + y[i]), Sum(i, y[i]) + Sum(i, x[i]))
    assert isinstance(th, Theorem) and "conversion" not in th.axioms()


def test_identical_sides_need_no_condition():
    z = Var("z", ())
    th = prove_equal(z / z, z / z)       # normalizing z * z^-1 would ask z != 0; the same term needs nothing
    assert isinstance(th, Theorem) and not th.conds
    assert by_conversion(Sum(i, Delta(i, j) * IntCond(i, "<", 3) * x[i]), Sum(k, Delta(k, j) * IntCond(k, "<", 3) * x[k]))
