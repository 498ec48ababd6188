"""Sums over one range whose bodies cancel only together, with different factors outside
them (``Normalizer.cancel_sums``, its second grouping): ``sum_j c_j R_j S_j = sum_b sum_j
c_j R_j body_j(b)`` (``sum_pull``, ``sum_linear``), 0 when the merged body is 0 at every
``b`` once multiplied by the positive sums it divides by (``cancel_positive``).

An attention sink's ``dsinks`` needs it: ``exp(sink)`` comes out of one of the sums over
rows. The identities are PROVED; their wrong twins (a factor off, an indicator outside
the sum that is 0 somewhere, another range, the sink's gradient with the wrong sign) are
not."""
import json

import jax
import jax.numpy as jnp

import verigrad
from verigrad.kernel import Func, IndexVar, RealCond, SizeSym, Sum, Theorem, Var, prove_equal
from verigrad.trace import trace_of
from verigrad.trace.replay import replay

n, m = SizeSym("n"), SizeSym("m")
z, y, u = Var("z", (n,)), Var("y", (n,)), Var("u", (m,))
w = Var("w", ())
i, j, a = IndexVar("i", n), IndexVar("j", n), IndexVar("a", m)
e = lambda t: Func("exp", (t,))  # noqa: E731


def _p(k):                  # exp(y_k) + exp(w), positive
    return e(y[k]) + e(w)


LHS = e(w) * Sum(i, z[i] / _p(i)) + Sum(j, z[j] * e(y[j]) / _p(j))      # = sum_i z_i


def proved(lhs, rhs):
    th = prove_equal(lhs, rhs)
    assert isinstance(th, Theorem), th
    (_, again), = replay(json.loads(json.dumps(trace_of([("rule", th)]))))     # the proof replays
    assert again.lhs is th.lhs and again.rhs is th.rhs and again.conds == th.conds
    return th


def not_proved(lhs, rhs):
    th = prove_equal(lhs, rhs)
    assert not isinstance(th, Theorem), th


def test_sums_with_different_factors_cancel_together():
    th = proved(LHS, Sum(i, z[i]))
    assert not th.conds
    assert {"sum_pull", "cancel_positive", "sum_linear"} <= set(th.axioms())
    proved(LHS - Sum(i, z[i]), 0 * w)


def test_wrong_twins_are_not_proved():
    not_proved(LHS, e(w) * Sum(i, z[i]))                                   # a factor off
    not_proved(LHS, Sum(i, z[i]) + Sum(i, z[i] * e(w)))                    # an extra sum
    # an indicator outside the sum: 0 where w <= 0, where the identity fails
    not_proved(RealCond(w, ">") * Sum(i, z[i] / _p(i)) + Sum(j, z[j] * e(y[j]) / _p(j)), Sum(i, z[i]))
    # sums over two ranges are not merged
    not_proved(e(w) * Sum(a, u[a] / (e(u[a]) + e(w))) + Sum(j, z[j] * e(y[j]) / _p(j)), Sum(i, z[i]))


# -- end to end: a softmax with an attention sink, per row, its gradient for the sink ----------------

def _core(x, sink):
    mx = jnp.maximum(jnp.max(x, -1), sink)
    ex = jnp.exp(x - mx[:, None])
    tot = jnp.sum(ex, -1) + jnp.exp(sink - mx)
    return ex / tot[:, None], mx + jnp.log(tot)


def _sink_softmax(sign):
    def bwd(res, g):
        p, lse, sink = res
        return p * (g - jnp.sum(g * p, -1, keepdims=True)), sign * jnp.sum(jnp.exp(sink - lse)[:, None] * g * p)

    f = jax.custom_vjp(lambda x, sink: _core(x, sink)[0])
    f.defvjp(lambda x, sink: (_core(x, sink)[0], (*_core(x, sink), sink)), bwd)
    return f


def test_a_sink_softmax_backward_is_proved_for_the_sink():
    cert = verigrad.certify(_sink_softmax(-1), {"x": "n, k", "sink": ""})
    assert cert.status == "PROVED", cert.detail
    assert any("sink - max" in c and "kink" in c for c in cert.side_conditions), cert.side_conditions


def test_the_sink_gradient_with_the_wrong_sign_is_refuted():
    cert = verigrad.certify(_sink_softmax(1), {"x": "n, k", "sink": ""}, search_seconds=3)
    assert cert.status == "REFUTED", cert.detail
