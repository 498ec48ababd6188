"""Red team RT-45 (rt2-c; fixed): a derivative was taken of a body rewritten under a side
condition whose set is not open, so the kernel proved false statements about derivatives,
by its decision and by ``rewrite``.

A condition says where a theorem holds: ``sqrt(u) sqrt(u) = u`` under ``u > 0``
(``pow_add_pos``). For a derivative the body must equal its rewriting on a neighbourhood
of the point, which ``u > 0`` gives when ``u`` is continuous. With indicators in ``u`` it
need not be: ``u = sum_b ([y_b >= 0] + [-y_b >= 0]) - n - 1/2 = #{b : y_b = 0} - 1/2``, so
``u > 0`` holds exactly where some ``y_b = 0``, a closed set. At ``y = (0, 1)`` it holds,
but not at ``(t, 1)`` for any ``t != 0``.

- Decision: ``A = sqrt(u) sqrt(u) y_0 - u y_0 + y_0`` normalizes to ``y_0`` under ``u > 0``,
  and the kernel proved ``|- dA/dy_0 = 1`` under that condition alone. But near
  ``y = (0, 1)``, ``A(t, 1) = 0 + t/2 + t = 3t/2`` (and ``A(0, 1) = 0``): the derivative
  is 3/2.
- ``rewrite``: from ``|- sqrt(u) sqrt(u) y_0 = u y_0`` (under ``u > 0``) it gave
  ``|- d(sqrt(u) sqrt(u) y_0)/dy_0 = d(u y_0)/dy_0``: the left side is identically 0 near
  ``(0, 1)`` (derivative 0), the right ``-t/2`` (derivative -1/2).

Fixed (``verigrad/kernel/``): before a derivative is taken of a normalized body, every
condition recorded that depends on the variable is differentiated too, for its own
conditions (its continuity, as an indicator's argument already is: ``Normalizer.continuous``),
here ``y_i != 0`` for every i, so the theorem says nothing at ``(0, 1)``; and ``rewrite``
uses a theorem inside a derivative only when each of its conditions in that variable is
continuous along it (differentiating it needs no condition).
"""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.kernel import (Deriv, IndexVar, KernelError, Lamda, Num, Pow, RealCond, SizeSym, Sum, Theorem, Var,
                             prove_equal, rewrite)

HALF = Fraction(1, 2)
n = SizeSym("n")
y = Var("y", (n,))
b = IndexVar("b", n)
u = Sum(b, RealCond(y[b], ">=") + RealCond(-y[b], ">=")) - n - HALF
SIZES, AT = {n: 2}, {y: np.array([0.0, 1.0])}


def _value(t, values=AT):
    return float(evaluate(t, SIZES, values))


def _conditions_hold(th, values=AT) -> bool:
    """Every condition of ``th`` holds at ``values`` (each for every value of its indices)."""
    for c in th.conds:
        idx = sorted(c.term.free_idx, key=lambda v: v.name)
        ranges = [range(int(evaluate(Lamda([v], Num(0)), SIZES, {}).shape[0])) for v in idx]
        for point in itertools.product(*ranges):
            t = c.term
            if idx:
                t = Lamda(idx, t)[tuple(point)]
            v = _value(t, values)
            if (v <= 0) if c.kind == "positive" else (v == 0) if c.kind in ("nonzero", "offkink") else False:
                return False
    return True


def _derivative_at(f, values=AT, h=1e-4):
    up, down = values[y].copy(), values[y].copy()
    up[0] += h
    down[0] -= h
    return (_value(f, {y: up}) - _value(f, {y: down})) / (2 * h)


def test_the_condition_holds_on_a_closed_set_only():
    assert _value(u) == 0.5                                       # holds at (0, 1)
    assert _value(u, {y: np.array([1e-3, 1.0])}) == -0.5          # and nowhere near it


def test_decision_does_not_prove_the_false_derivative():
    A = Pow(u, HALF) * Pow(u, HALF) * y[0] - u * y[0] + y[0]
    assert abs(_derivative_at(A) - 1.5) < 1e-6                    # the true derivative at (0, 1)
    res = prove_equal(Deriv(A, y, (0,)), Num(1))
    if isinstance(res, Theorem):      # it may be proved only where it says nothing at (0, 1)
        assert not _conditions_hold(res), [str(c) for c in res.conds]


def test_rewrite_does_not_move_a_closed_set_identity_under_a_derivative():
    A, B = Pow(u, HALF) * Pow(u, HALF) * y[0], u * y[0]
    th = prove_equal(A, B)
    assert isinstance(th, Theorem) and _conditions_hold(th)      # true at the point: fine
    assert abs(_derivative_at(A)) < 1e-6 and abs(_derivative_at(B) + 0.5) < 1e-6
    with pytest.raises(KernelError, match="does not occur where it may be used"):
        rewrite(th, Deriv(A, y, (0,)))


def test_true_neighbours_still_prove():
    v, w = Var("v", ()), Var("w", ())
    # a continuous condition: sqrt(v)^2 w = v w for v > 0, an open set
    th = prove_equal(Deriv(Pow(v, HALF) * Pow(v, HALF) * w, w, ()), v)
    assert isinstance(th, Theorem) and [c.kind for c in th.conds] == ["positive"]
    eq = prove_equal(Pow(v, HALF) * Pow(v, HALF) * w, v * w)
    r = rewrite(eq, Deriv(Pow(v, HALF) * Pow(v, HALF) * w, v, ()))
    assert r.rhs is Deriv(v * w, v, ())
    # the closed-set condition does not matter for a derivative in another variable
    z = Var("z", ())
    th2 = prove_equal(Deriv(Pow(u, HALF) * Pow(u, HALF) * z - u * z + z, z, ()), Num(1))
    assert isinstance(th2, Theorem) and _conditions_hold(th2)
    # relu: d(y_0 [y_0 > 0]) = [y_0 > 0] off the kink, as before
    relu = prove_equal(Deriv(y[0] * RealCond(y[0], ">"), y, (0,)), RealCond(y[0], ">"))
    assert isinstance(relu, Theorem) and {c.kind for c in relu.conds} == {"offkink"}
