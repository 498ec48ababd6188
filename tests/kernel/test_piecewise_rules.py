"""Rules met in real hand-written backwards (issue 12, notes/kernel-requests/real-world.md
items 3, 4, 5, 7): indicators inside functions, implications between indicators of one
real line, positive integer denominators, the first argmax under a unique maximum.
Each rule is shown to prove its identity, and its wrong neighbours (a dropped term, a
shifted bound, a wrong denominator, ties treated as unique) never to be PROVED."""
import json
from fractions import Fraction

from verigrad.kernel import (Func, IndexVar, IntCond, IntVal, Lamda, Num, RealCond, ReduceMax, SizeSym, Sum,
                             Theorem, Var, prove_equal, vjp_statement)
from verigrad.trace.replay import replay
from verigrad.trace import trace_of

n = SizeSym("n")
x, y, dy = Var("x", (n,)), Var("y", (n,)), Var("dy", (n,))
s, c = Var("s", ()), Var("c", ())
i, j, k, q = IndexVar("i", n), IndexVar("j", n), IndexVar("k", n), IndexVar("q", n)
e = lambda t: Func("exp", (t,))  # noqa: E731


def proved(a, b):
    th = prove_equal(a, b)
    assert isinstance(th, Theorem), th
    (_, again), = replay(json.loads(json.dumps(trace_of([("rule", th)]))))     # the proof replays
    assert again.lhs is th.lhs and again.rhs is th.rhs and again.conds == th.conds
    return th


def not_proved(a, b):
    th = prove_equal(a, b)
    assert not isinstance(th, Theorem), th.statement()


# -- item 3: exp of an indicator-weighted exponent (indicator_split) ---------------------------

def test_exp_of_an_indicator_weighted_exponent():
    ind = RealCond(x[k] - y[k], ">")
    th = proved(e(3 * x[k] * ind + y[k]), e(y[k]) * (1 - ind + ind * e(3 * x[k])))
    assert "indicator_split" in th.axioms()
    not_proved(e(3 * x[k] * ind + y[k]), e(y[k]) * (1 + ind * e(3 * x[k])))        # a dropped term
    not_proved(e(3 * x[k] * ind + y[k]), e(y[k]) * ind * e(3 * x[k]))               # exp(0) is not 0
    not_proved(e(3 * x[k] * ind), 1 - ind + ind * e(2 * x[k]))                      # another constant


def test_a_power_of_a_piecewise_sum_splits():
    """(u0 + [P] u1)^-1 = (1 - [P]) u0^-1 + [P] (u0 + u1)^-1: each piece keeps its own sign
    (here u0 = 1 + e^x is positive, u0 + u1 = e^x + e^y too)."""
    ind = RealCond(x[k] - y[k], ">")
    z = 1 + e(x[k]) + ind * (e(y[k]) - 1)
    proved(z ** -1, (1 - ind) / (1 + e(x[k])) + ind / (e(x[k]) + e(y[k])))
    proved(e(x[k]) / z + (1 - ind) / (1 + e(x[k])) + ind * e(y[k]) / z, Num(1))    # a common denominator per piece
    not_proved(z ** -1, (1 - ind) / (1 + e(x[k])) + ind / (1 + e(y[k])))            # a wrong piece
    not_proved(z ** -1, 1 / (1 + e(x[k])) + ind / (e(x[k]) + e(y[k])))               # a dropped term


def test_under_a_binder_exp_keeps_its_indicator_and_a_sum_of_exps_stays_positive():
    """sum_i exp(x_i + c [y_i > 0]) (a masked softmax's denominator, finite mask value) is
    seen to be positive, so log and exp cancel; its terms are split only once a free
    index replaces the binder."""
    S = Sum(i, e(x[i] + 3 * RealCond(y[i], ">")))
    proved(e(Func("log", (S,))), S)
    proved(Sum(i, IntCond(i, "<=", k) * IntCond(k, "<=", i) * e(x[i] + 3 * RealCond(y[i], ">"))),
           e(x[k]) * (1 - RealCond(y[k], ">") + RealCond(y[k], ">") * e(Num(3))))


def test_softplus_with_max_and_abs_is_the_sigmoid_vjp():
    """log1p(exp(-|x|)) + max(x, 0), the backward sigmoid(x): corpus #12's logaddexp."""
    pos = RealCond(x[i], ">")
    absx = x[i] * (2 * pos - 1)
    f = Lamda([i], x[i] * pos + Func("log", (1 + e(-absx),)))
    sig = Lamda([i], dy[i] / (1 + e(-x[i])))
    th = proved(sig, vjp_statement(f, x, dy))
    assert all(cd.kind == "offkink" for cd in th.conds)
    not_proved(Lamda([i], dy[i] / (1 + e(x[i]))), vjp_statement(f, x, dy))        # sigmoid(-x)


def test_an_indicator_of_a_piecewise_argument_splits():
    """[1 - max(d, -1) > 0] (a clip) is [d < 1] where d >= -1 and 1 where d < -1."""
    below = RealCond(-1 - x[k], ">")                  # d < -1
    mx = x[k] + (-1 - x[k]) * below                   # max(d, -1)
    proved(RealCond(1 - mx, ">", ), below + (1 - below) * RealCond(1 - x[k], ">"))
    proved(RealCond(1 - mx, ">"), RealCond(1 - x[k], ">"))                           # (d < -1 implies d < 1)
    not_proved(RealCond(1 - mx, ">"), RealCond(2 - x[k], ">"))                       # a shifted bound
    not_proved(RealCond(2 + mx, ">"), RealCond(2 + x[k], ">"))                       # the other piece dropped


# -- item 4: implications between indicators of one line (indicator_order) ---------------------

def test_indicators_of_one_line_imply_each_other():
    d = x[k] - y[k]
    th = proved(RealCond(d - 1, ">") * RealCond(d + 1, ">"), RealCond(d - 1, ">"))
    assert "indicator_order" in th.axioms() and not th.conds
    proved(RealCond(2 * d - 2, ">") * RealCond(1 - d, ">"), Num(0))                  # scaled, opposite sides
    proved(RealCond(d - 1, ">=") * RealCond(3 - 3 * d, ">"), Num(0))                 # d >= 1 and d < 1
    proved(RealCond(d + 1, ">=") * RealCond(d + 1, ">"), RealCond(d + 1, ">"))       # the strict one kept
    proved(RealCond(1 - d, ">") * RealCond(-1 - d, ">="), RealCond(-1 - d, ">="))    # two upper bounds
    not_proved(RealCond(d - 1, ">") * RealCond(d + 1, ">"), RealCond(d + 1, ">"))     # the weaker one kept
    proved(RealCond(d - 1, ">") * RealCond(d + 2, "<"), Num(0))                       # d > 1 and d < -2
    not_proved(RealCond(d - 1, ">") * RealCond(d - 2, "<"), Num(0))                   # 1 < d < 2 is not empty
    not_proved(RealCond(d - 1, ">") * RealCond(x[k] + y[k] - 2, ">"), RealCond(d - 1, ">"))    # another line


def test_a_single_point_is_not_empty_but_only_off_its_kink():
    """[d >= 1][d <= 1] is [d == 1]: 0 only where d != 1, which the theorem must say."""
    d = x[k] - y[k]
    th = prove_equal(RealCond(d - 1, ">=") * RealCond(d - 1, "<="), Num(0))
    assert not isinstance(th, Theorem) or any(cd.kind == "offkink" for cd in th.conds)


def test_huber_backward_is_the_clip():
    """Corpus #21: sum where(|d| <= 1, d^2/2, |d| - 1/2), backward clip(d, -1, 1)."""
    d = x[i]
    pos = RealCond(d, ">")
    absd = d * (2 * pos - 1)
    small = RealCond(1 - absd, ">=")
    f = Sum(i, small * d * d / 2 + (1 - small) * (absd - Fraction(1, 2)))
    lo = x[i] + (-1 - x[i]) * RealCond(-1 - x[i], ">")            # max(d, -1)
    clip = lo + (1 - lo) * RealCond(lo - 1, ">")                   # min(., 1)
    g = Var("g", ())
    proved(Lamda([i], g * clip), vjp_statement(f, x, g))
    wrong = x[i] + (-2 - x[i]) * RealCond(-2 - x[i], ">")          # clipped at -2: a shifted bound
    not_proved(Lamda([i], g * (wrong + (1 - wrong) * RealCond(wrong - 1, ">"))), vjp_statement(f, x, g))


# -- item 5: positive integer denominators ------------------------------------------------------

def test_a_size_minus_one_is_a_positive_denominator_when_the_size_is_at_least_two():
    kk = SizeSym("kk", 2)
    low = (1 - c) / IntVal(kk - 1)
    th = proved(c + IntVal(kk - 1) * low, Num(1))
    assert not th.conds
    not_proved(c + IntVal(kk - 2) * low, Num(1))                                     # a wrong denominator
    k1 = SizeSym("k1", 1)                                                            # k1 - 1 may be 0
    low1 = (1 - c) / IntVal(k1 - 1)
    th = prove_equal(c + IntVal(k1 - 1) * low1, Num(1))
    assert not isinstance(th, Theorem) or any(cd.kind in ("nonzero", "positive") for cd in th.conds)


# -- item 7: the first argmax under a unique maximum -------------------------------------------

M = ReduceMax(j, x[j])
top = lambda p: RealCond(x[p] - M, ">=")  # noqa: E731     x[p] attains the maximum
first = lambda p: RealCond(Sum(q, IntCond(q, "<", p) * top(q)) - Fraction(1, 2), "<")  # noqa: E731
argmax = Sum(i, IntVal(i) * top(i) * first(i))
onehot = lambda p: RealCond(argmax - IntVal(p), ">=") * RealCond(IntVal(p) - argmax, ">=")  # noqa: E731


def test_the_first_attainer_is_the_attainer_where_one_index_alone_attains_the_max():
    th = proved(top(k) * first(k), top(k))
    assert "argmax_unique" in th.axioms() and th.conds, "the uniqueness is a recorded condition"
    not_proved(top(k) * first(k), first(k))
    not_proved(top(k) * first(k), Num(0))


def test_one_hot_of_argmax_is_the_vjp_of_max():
    """Corpus #40: the backward of max is one_hot(argmax) * g, off ties (recorded)."""
    g = Var("g", ())
    th = proved(Lamda([k], g * onehot(k)), vjp_statement(M, x, g))
    assert th.conds and all(cd.kind == "positive" for cd in th.conds)
    not_proved(Lamda([k], g * RealCond(argmax - IntVal(k) - 1, ">=") * RealCond(IntVal(k) + 1 - argmax, ">=")),
               vjp_statement(M, x, g))                                           # the next index
    not_proved(Lamda([k], g * first(k)), vjp_statement(M, x, g))                 # "no earlier hit" alone


def test_argmax_indicators_are_locally_constant_off_ties():
    """d one_hot(argmax x) / dx = 0 where one index alone attains the max (top-1 gate)."""
    from verigrad.kernel import Deriv
    th = proved(Deriv(onehot(k), x, (i,)), Num(0))
    assert th.conds and "deriv_argmax" in th.axioms()
    not_proved(Deriv(x[k] * onehot(k), x, (i,)), Num(0))


# -- item 10: positive denominators inside a sum (cancel_sums) ----------------------------------

def test_a_sigmoid_identity_inside_a_sum():
    """sum_i a_i s_i (1 - s_i) = sum_i a_i e^-x_i / (1 + e^-x_i)^2 with s = sigmoid(x): the
    sum splits by monomial, and only the merged body cancels over a common denominator."""
    a = Var("a", (n,))
    sig = 1 / (1 + e(-x[i]))
    lhs = Sum(i, a[i] * sig * (1 - sig))
    th = proved(lhs, Sum(j, a[j] * e(-x[j]) / (1 + e(-x[j])) ** 2))
    assert not th.conds
    not_proved(lhs, Sum(j, a[j] / (1 + e(-x[j])) ** 2))                        # a dropped factor
    not_proved(lhs, Sum(j, a[j] * e(-x[j]) / (1 + e(-x[j])) ** 2) + Sum(j, a[j]))  # an extra sum
    not_proved(lhs, Sum(j, a[j] * e(-x[j]) / (1 + e(-2 * x[j])) ** 2))         # another denominator


# -- item 6: indicators of a non-negative quantity (indicator_nonneg) ------------------------------

def test_indicators_of_a_nonnegative_quantity():
    pe = Var("pe", (n,), ("nonneg",))
    th = proved(RealCond(pe[k] + x[k] ** 2, ">="), Num(1))                           # exact: no condition
    assert not th.conds and "indicator_nonneg" in th.axioms()
    proved(RealCond(-pe[k], ">"), Num(0))                                             # -pe > 0 never
    th = proved(pe[k] * RealCond(pe[k], ">"), pe[k])                                  # u [u > 0] = u
    th = proved(RealCond(pe[k], ">"), Num(1))                                         # only where pe != 0
    assert any(cd.kind == "offkink" for cd in th.conds)
    not_proved(RealCond(x[k], ">="), Num(1))                                          # x may be negative
    not_proved(RealCond(pe[k] - 1, ">="), Num(1))                                     # a shifted bound
    th = prove_equal(RealCond(pe[k], "<="), Num(0))
    assert not isinstance(th, Theorem) or any(cd.kind == "offkink" for cd in th.conds)
