"""A PROVED rests on side conditions that hold almost everywhere: a condition failing at
random inputs (a set of positive measure) withholds the PROVED."""
import jax
import jax.numpy as jnp

import verigrad


def _custom(primal, fwd_primal, backward):
    f = jax.custom_vjp(primal)
    f.defvjp(lambda x: (fwd_primal(x), x), lambda x, g: (backward(x, g),))
    return f


def test_a_vacuous_kink_condition_is_not_accepted():
    # x_j - max x >= 0 versus > 0: equal "off the kink x_j - max x != 0", which fails at every argmax
    f = _custom(lambda x: jnp.sum(jnp.where(x - jnp.max(x) >= 0, x, 0.0)),
                lambda x: jnp.sum(jnp.where(x - jnp.max(x) > 0, x, 0.0)),
                lambda x, g: jnp.zeros_like(x))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.forward[0].status == "REFUTED", cert.forward[0].detail


def test_a_genuine_kink_condition_is_accepted():
    relu = _custom(lambda x: jnp.maximum(x, 0.0), lambda x: jnp.maximum(x, 0.0),
                   lambda x, g: jnp.where(x >= 0, g, 0.0))
    cert = verigrad.certify(relu, shapes={"x": "n"})
    assert cert.status == "PROVED" and any("kink" in c for c in cert.side_conditions)


# -- a kink must be of a real-analytic quantity: its zero set is then of measure zero ---------

def _flat(x):       # >= 0, and 0 wherever |x| > 100.02: far from any input a sample draws
    return sum(jnp.maximum(c - x * x, 0.0) for c in (10000.0, 10001.0, 10002.0, 10003.0, 10004.0))


def test_a_kink_of_a_piecewise_quantity_is_not_accepted():
    # [u >= 0] versus [u > 0] agree off u = 0, and u = 0 on the region |x| > 100.02
    f = _custom(lambda x: x * jnp.where(_flat(x) >= 0, 1.0, 0.0), lambda x: x * jnp.where(_flat(x) >= 0, 1.0, 0.0),
                lambda x, g: g * jnp.where(_flat(x) > 0, 1.0, 0.0))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED" and "piecewise" in cert.detail, cert.detail


def test_a_kink_of_an_analytic_quantity_is_accepted():
    # the same comparison of an analytic u = 10000 - x^2: its zero set is two points
    f = _custom(lambda x: x * jnp.where(10000.0 - x * x >= 0, 1.0, 0.0),
                lambda x: x * jnp.where(10000.0 - x * x >= 0, 1.0, 0.0),
                lambda x, g: g * jnp.where(10000.0 - x * x > 0, 1.0, 0.0))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED" and any("kink" in c for c in cert.side_conditions), cert.detail


def test_what_counts_as_analytic():
    from verigrad.certify.conditions import piecewise_part
    from verigrad.kernel import Func, IndexVar, Num, RealCond, ReduceMax, SizeSym, Sum, Var
    n = SizeSym("n")
    x, k = Var("x", (n,)), Var("k", (n,), facts={"integer"})
    i, j = IndexVar("i", n), IndexVar("j", n)
    assert piecewise_part(Sum(j, Func("exp", (x[j],)) * x[i]) + Num(2)) is None
    assert piecewise_part(Func("tanh", (x[i] ** 2,)) - Func("log", (Func("exp", (x[i],)),))) is None
    assert piecewise_part(x[i] * RealCond(x[i], ">")) is not None           # relu inside
    assert piecewise_part(x[i] - ReduceMax(j, x[j])) is not None            # a max: ties on whole regions
    assert piecewise_part(x[i] - k[i]) is not None                           # integer data


def _masked_softmax(s, mask):
    s = jnp.where(mask, s, -jnp.inf)
    p = jnp.exp(s - jnp.max(s, -1, keepdims=True))
    return p / jnp.sum(p, -1, keepdims=True)


def test_a_masked_softmax_denominator_is_positive_only_along_the_assumed_axis():
    f = jax.custom_vjp(_masked_softmax)
    f.defvjp(lambda s, m: (_masked_softmax(s, m), _masked_softmax(s, m)),
             lambda p, g: (p * (g - jnp.sum(g * p, -1, keepdims=True)), None))
    shapes = {"s": "n, k", "mask": "n, k:bool"}
    assert verigrad.certify(f, shapes, assume=["any(mask, -1)"]).status == "PROVED"
    # rows assumed alive along the other axis: a row along -1 may be masked throughout
    cert = verigrad.certify(f, shapes, assume=["any(mask, 0)"], search_seconds=2)
    assert cert.status != "PROVED", cert.detail


def test_ties_must_be_of_analytic_entries():
    """A ``> 0`` condition off ties is accepted when the compared entries are analytic
    (maxima of them included), not when they are piecewise: the ties of max(x, -100)
    fill the region where every entry is below -100."""
    from fractions import Fraction
    from verigrad.certify.conditions import tie_piecewise_part
    from verigrad.kernel import IndexVar, Num, RealCond, ReduceMax, SizeSym, Sum, Var
    n = SizeSym("n")
    x = Var("x", (n,))
    b, c = IndexVar("b", n), IndexVar("c", n)

    def ties(s):            # 3/2 - #{b: s_b = max s} > 0, the max's condition
        return Num(Fraction(3, 2)) - Sum(b, RealCond(s(b) - ReduceMax(c, s(c)), ">="))

    assert tie_piecewise_part(ties(lambda i: x[i])) is None
    assert tie_piecewise_part(ties(lambda i: x[i] * x[i] + Num(1))) is None
    clipped = lambda i: x[i] * RealCond(x[i] + Num(100), ">") - Num(100) * RealCond(x[i] + Num(100), "<=")  # noqa: E731
    assert tie_piecewise_part(ties(clipped)) is not None
