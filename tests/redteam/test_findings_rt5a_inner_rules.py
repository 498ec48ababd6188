"""Red team rt5a (fixed): two ways an inner custom rule's claim left out what JAX runs.

1. An inner rule's integer (or boolean) outputs. ``inner_rules._pair`` claimed the rule's
   primal outputs equal to the body's for the real outputs only, but JAX carries on with
   the rule's integer outputs too (a ``custom_jvp`` rule's primal output):

       g(x) = (x, 0) with jvp rule primal (x, 1);  f = custom_vjp(y * (1 + i)), bwd ct
       -> PROVED, while jax.vjp(f.fun, x) gives 2 ct (JAX's forward computes 2 x).

   Fix: the call's integer and boolean outputs are claimed as real outputs held by
   ``stop_gradient`` (no derivative), so the fwd claim compares them.

   On the way: the counterexample search of a claim about a scalar (a fwd rule's
   constant output) drew at assignments without the arguments' sizes and stopped with
   ``no value for n`` (``verigrad certify: error: no value for n`` on the command line);
   the search now keeps only assignments giving every argument's size.

2. The conditions of an inner rule proved at the concrete size. ``api._decide`` proves
   each inner rule again as the concrete import calls it (RT4-A) and dropped that
   proof's side conditions ("the symbolic calls' conditions stand for these sizes
   too"). A rule that is another at concrete shapes, ``g`` off ``a0 == 0`` but ``5 g``
   at 0, is proved there under ``a0[i] != 0``, which the certificate then stated
   nowhere: PROVED with no side condition while jax.vjp(f.fun, 0) is 15, not 3.
   Fix: a concrete proof resting on a condition the symbolic call's proof does not state
   leaves that rule UNKNOWN (the outer claim TESTED), as the gate refuses an assumption
   only the concrete import makes.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _int_output(rule_value):
    @jax.custom_jvp
    def g(x):
        return x, jnp.int32(0)

    @g.defjvp
    def g_jvp(p, t):
        (x,), (tx,) = p, t
        return (x, jnp.int32(rule_value)), (tx, np.zeros((), jax.dtypes.float0))

    def body(x):
        y, i = g(x)
        return y * (1.0 + i.astype(x.dtype))
    f = jax.custom_vjp(body)
    f.defvjp(lambda x: (body(x), None), lambda r, ct: (ct,))
    return f


def test_rt5a_an_inner_rules_integer_output_is_compared():
    f = _int_output(1)
    x = jnp.array([0.5, 1.0])
    assert np.allclose(jax.vjp(f.fun, x)[1](jnp.ones(2))[0], 2.0)     # the claim says ct
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", cert.status
    assert all(c.status != "PROVED" for c in cert.wrt.values())
    assert "forward output 1" in cert.detail, cert.detail


def test_rt5a_an_inner_rule_with_the_bodys_integer_output_still_proves():
    assert verigrad.certify(_int_output(0), shapes={"x": "n"}).status == "PROVED"


def test_rt5a_a_fwd_rules_wrong_scalar_output_is_refuted():
    f = jax.custom_vjp(lambda x: (x, 0.0 * jnp.sum(x)))
    f.defvjp(lambda x: ((x, 1.0 + 0.0 * jnp.sum(x)), None), lambda r, ct: (ct[0],))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "REFUTED", cert.detail


def _kink_rule(concrete_only):
    @jax.custom_vjp
    def ident(x):
        return x

    def bwd(x, g):
        if not concrete_only or all(isinstance(d, int) for d in g.shape):
            g = jnp.where(x == 0.0, 5.0 * g, g)
        return (g,)
    ident.defvjp(lambda x: (x, x), bwd)
    f = jax.custom_vjp(lambda x: 3.0 * ident(x))
    f.defvjp(lambda x: (f(x), None), lambda r, g: (3.0 * g,))
    return f


def test_rt5a_a_condition_only_the_concrete_rule_rests_on_is_not_dropped():
    f = _kink_rule(True)
    got = jax.vjp(f.fun, jnp.array([0.0, 1.0]))[1](jnp.ones(2))[0]
    assert np.allclose(got, [15.0, 3.0])          # the claim says 3 g everywhere
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", (cert.status, cert.side_conditions)
    assert "traced at n=2" in cert.detail and "a0[i] != 0" in cert.detail, cert.detail


def test_rt5a_the_same_condition_at_every_shape_is_stated_and_proves():
    cert = verigrad.certify(_kink_rule(False), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail
    assert any("a0[i] != 0" in s for s in cert.side_conditions), cert.side_conditions
