"""sin, cos and the derivative of max off ties (issue 12's kernel features)."""
from verigrad.kernel import (Deriv, Func, IndexVar, Lamda, Num, RealCond, ReduceMax, SizeSym, Sum, Theorem, Var,
                             prove_equal, vjp_statement)

n = SizeSym("n")
i, j = IndexVar("i", n), IndexVar("j", n)
x, dy = Var("x", (n,)), Var("dy", (n,))
s, c = (lambda t: Func("sin", (t,))), (lambda t: Func("cos", (t,)))


def proved(a, b):
    return isinstance(prove_equal(a, b), Theorem)


def test_sin_and_cos():
    t = Var("t", ())
    assert proved(Deriv(s(t) * c(t), t, ()), c(t) * c(t) - s(t) * s(t))
    assert proved(c(-t) + s(-t), c(t) - s(t))
    assert proved(Lamda([i], dy[i] * c(x[i])), vjp_statement(Lamda([i], s(x[i])), x, dy))
    assert not proved(Deriv(s(t), t, ()), -c(t))                      # a sign slip
    assert not proved(Lamda([i], dy[i] * s(x[i])), vjp_statement(Lamda([i], c(x[i])), x, dy))


def test_the_derivative_of_max_holds_where_the_maximum_is_unique():
    M = ReduceMax(j, x[j])
    th = prove_equal(Lamda([i], Sum(j, dy[j]) * RealCond(x[i] - M, ">=")), vjp_statement(Lamda([j], M), x, dy))
    assert isinstance(th, Theorem)
    (cond,) = th.conds
    assert cond.kind == "positive" and "max" in repr(cond.term)
    # wrong: the gradient of max spread over every entry, or taken at the minimum
    assert not proved(Lamda([i], Sum(j, dy[j])), vjp_statement(Lamda([j], M), x, dy))
    m = ReduceMax(j, x[j], "min")
    assert not proved(Lamda([i], Sum(j, dy[j]) * RealCond(x[i] - m, "<=")), vjp_statement(Lamda([j], M), x, dy))
