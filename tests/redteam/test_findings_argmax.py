"""Red-team finding RT-2 (false kernel theorem): argmax_unique's ``T_p T_q = T_p [p == q]``
(Normalizer._merge_tops) applied to two sums whose maximum depends on another binder of
the sum (a row-wise max inside a sum over rows).

A1 = sum_c sum_b T(c, b) y[c, b], A2 = sum_c sum_b T(c, b) w[c, b], with
T(c, b) = [x[c, b] - max_b' x[c, b'] >= 0] (b attains row c's maximum). Off ties
A1 = sum_c y[c, b*(c)] and A2 = sum_c w[c, b*(c)]. Inside each SumA the maximum is the
atom max_b' x[_2_0, b'] with the sum's canonical binder free, so both sums' maxima are
the same atom; carrier()/_merge_tops treat them as ONE maximum and merge T(t1, .) with
T(t2, .) for different rows t1, t2. The kernel proves
A1 * A2 = sum_{c, b, c2} T(c, b) y[c, b] w[c2, b] (row c's argmax used for every row c2),
under the condition "3/2 - sum_b T(i, b) > 0" (each row's max unique), which holds for
almost every x; numerically false (0.67 vs 1.01 at a random 3x4 x).
(select() has the same root: its result keeps a fresh temporary of the row binder free.)

Fixed: Normalizer.carrier takes a sum as a carrier of a maximum's argmax only when the
maximum does not depend on the sum's binders.
"""
import numpy as np

from verigrad.kernel import IndexVar, RealCond, ReduceMax, SizeSym, Sum, Theorem, Var, prove_equal


def _terms():
    m, n = SizeSym("m", 1), SizeSym("n", 1)
    x, y, w = Var("x", (m, n)), Var("y", (m, n)), Var("w", (m, n))
    c, c2, b, bp = IndexVar("c", m), IndexVar("c2", m), IndexVar("b", n), IndexVar("bp", n)
    T = lambda cc, bb: RealCond(x[cc, bb] - ReduceMax(bp, x[cc, bp]), ">=")  # noqa: E731
    a1 = Sum(c, Sum(b, T(c, b) * y[c, b]))
    a2 = Sum(c, Sum(b, T(c, b) * w[c, b]))
    wrong = Sum(c, Sum(b, Sum(c2, T(c, b) * y[c, b] * w[c2, b])))
    return a1 * a2, wrong


def test_rt2_the_claim_is_false_off_ties():
    rng = np.random.default_rng(0)
    X, Y, W = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    bs = X.argmax(1)                               # each row's maximum is unique here
    lhs = sum(Y[c, bs[c]] for c in range(3)) * sum(W[c, bs[c]] for c in range(3))
    rhs = sum(Y[c, bs[c]] * W[c2, bs[c]] for c in range(3) for c2 in range(3))
    assert abs(lhs - rhs) > 0.1


def test_rt2_row_maxima_are_not_one_maximum():
    lhs, wrong = _terms()
    th = prove_equal(lhs, wrong)
    assert not isinstance(th, Theorem), th.statement()


def test_rt2_select_does_not_open_a_row_maximum():
    """select() on a sum over rows of a row's argmax value: the row binder must not be
    left free in the result (it was a fresh temporary, unbound)."""
    from verigrad.kernel.normal import Normalizer
    m, n = SizeSym("m", 1), SizeSym("n", 1)
    x, y, z = Var("x", (m, n)), Var("y", (m, n)), Var("z", ())
    c, b, bp = IndexVar("c", m), IndexVar("b", n), IndexVar("bp", n)
    s = Sum(c, Sum(b, RealCond(x[c, b] - ReduceMax(bp, x[c, bp]), ">=") * y[c, b]))
    nf = Normalizer().norm(RealCond(s - z, ">"), ())
    assert not nf.ivars, nf.ivars


def test_rt2_one_maximum_still_merges():
    """The rule where it holds: one row's maximum (its row index free, not summed), two
    sums over its argmax: off ties, (sum_b T_b y_b)(sum_b T_b w_b) = sum_b T_b y_b w_b."""
    m, n = SizeSym("m", 1), SizeSym("n", 1)
    x, y, w = Var("x", (m, n)), Var("y", (m, n)), Var("w", (m, n))
    i, b, bp = IndexVar("i", m), IndexVar("b", n), IndexVar("bp", n)
    T = RealCond(x[i, b] - ReduceMax(bp, x[i, bp]), ">=")
    th = prove_equal(Sum(b, T * y[i, b]) * Sum(b, T * w[i, b]), Sum(b, T * y[i, b] * w[i, b]))
    assert isinstance(th, Theorem) and "argmax_unique" in th.axioms() and th.conds
    # and a dropped factor is not proved
    assert not isinstance(prove_equal(Sum(b, T * y[i, b]) * Sum(b, T * w[i, b]), Sum(b, T * y[i, b])), Theorem)
