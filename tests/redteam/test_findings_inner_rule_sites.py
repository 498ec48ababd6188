"""Red team RT-49 (two findings, fixed): inner custom rules JAX differentiates through
that certify did not hold to their proofs (``verigrad/certify/custom_rules.py``,
``verigrad/certify/inner_rules.py``).

1. A custom call inside ``jax.checkpoint`` was never seen. ``remat2`` keeps its body as
   a bare ``Jaxpr`` (not a ``ClosedJaxpr``), and the walk over sub-jaxprs
   (``custom_rules._inner``) looked only for an object with a ``.jaxpr``. So
   ``has_custom_calls`` was False, neither the numeric comparison (RT-35) nor the
   kernel proof of the rule (RT-48) ran, and the importer read the body:

       scale_grad = custom_jvp identity with rule t -> 0.5 t
       f = custom_vjp(lambda x: 2 * jax.checkpoint(scale_grad)(x)) with bwd 2 g
       -> PROVED, while jax.vjp(f.fun, x)(1) is 1.0, not 2.0

   Fix: ``_inner`` takes a bare ``Jaxpr`` as it is.

2. An inner rule's proof holds under side conditions about the call's operands
   (``a0[i] != 0`` off a kink), accepted because they fail on a null set of *operand*
   values. But the outer function may feed the call an operand that is 0 on a whole
   region of its inputs (``relu(x)`` for every ``x < 0``), and there JAX's rule is what the
   kernel did not prove; the numeric check perturbs the values reaching the call off
   ties, so it never saw it either:

       h(a, b) = a + b, with rule t_a + where(a == 0, 5 t_b, t_b)
       f = custom_vjp(lambda x: 2 * h(relu(x), x)) with bwd 2 g (1 + [x > 0])
       -> PROVED, while jax.vjp(f.fun, x)(1) at x = -0.7 is 10, not 2

   Fix: each condition of an inner rule's theorems is read at the operand terms the
   importer read at each call and checked as the outer claim's own conditions are
   (``inner_rules._conditions_at_calls``); one not shown to hold almost everywhere
   leaves the rule unproved, so the claim is TESTED.

3. A rule with ``symbolic_zeros=True`` is handed a ``SymbolicZero`` tangent (a
   ``custom_vjp`` fwd, ``perturbed=False``) for an operand JAX does not differentiate,
   and may branch on it. Certify proved (and sampled) it with every operand that depends
   on a differentiated argument perturbed; but JAX's zeros are not that dependence:
   ``sign(x)`` depends on ``x`` and has a symbolic zero tangent:

       g(a, b) = a * b, its jvp rule 2 a t_b when t_a is a SymbolicZero (else the product rule)
       f = custom_vjp(lambda x: g(sign(x), x)) with bwd sign(x) g
       -> PROVED, while jax.vjp(f.fun, x)(1) is 2 sign(x)

   Fix: a rule taking symbolic zeros is proved for every nonempty set of the operands
   that may be differentiated (``inner_rules._patterns``; too many operands: not proved).
"""
import jax
import jax.numpy as jnp
import numpy as np

from jax.custom_derivatives import SymbolicZero

import verigrad
from _pairs import custom_vjp as _vjp


@jax.custom_jvp
def scale_grad(x):
    return x


scale_grad.defjvp(lambda p, t: (p[0], 0.5 * t[0]))


@jax.custom_vjp
def clip_big(x):
    return x


clip_big.defvjp(lambda x: (x, None), lambda r, g: (jnp.clip(g, -1e5, 1e5),))


@jax.custom_jvp
def h(a, b):
    return a + b


h.defjvp(lambda p, t: (p[0] + p[1], t[0] + jnp.where(p[0] == 0, 5.0 * t[1], t[1])))


# -- 1. inside jax.checkpoint ------------------------------------------------------------------

def test_rt49_jax_differentiates_a_checkpointed_call_by_its_rule():
    f = _vjp(lambda x: 2.0 * jax.checkpoint(scale_grad)(x), lambda x, g: (2.0 * g,))
    with jax.enable_x64(True):
        got = jax.vjp(f.fun, jnp.array([0.3, -1.2]))[1](jnp.ones(2))[0]
    assert np.allclose(got, 1.0)            # the backward says 2.0


def test_rt49_a_checkpointed_rule_is_checked():
    f = _vjp(lambda x: 2.0 * jax.checkpoint(scale_grad)(x), lambda x, g: (2.0 * g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "scale_grad" in cert.detail and "not the derivative of its primal body" in cert.detail, cert.detail


def test_rt49_a_checkpointed_rule_is_proved_or_the_claim_is_tested():
    clipped = _vjp(lambda x: 3.0 * jax.checkpoint(clip_big)(x), lambda x, g: (3.0 * g,))
    cert = verigrad.certify(clipped, shapes={"x": "n"})
    assert cert.status == "TESTED" and "clip_big" in cert.detail, (cert.status, cert.detail)
    relu = _vjp(lambda x: 2.0 * jax.checkpoint(jax.nn.relu)(x), lambda x, g: (2.0 * g * (x > 0),))
    cert = verigrad.certify(relu, shapes={"x": "n"})
    assert cert.status == "PROVED", (cert.status, cert.detail)
    assert "proved for every size and value: relu" in cert.settings["custom_rules"]


# -- 2. an operand that is 0 on a region -------------------------------------------------------

def test_rt49_jax_differentiates_by_the_rule_where_the_operand_is_zero():
    f = _vjp(lambda x: 2.0 * h(jax.nn.relu(x), x), lambda x, g: (2.0 * g * (1.0 + (x > 0)),))
    with jax.enable_x64(True):
        x = jnp.array([-0.7, 1.2])
        got = jax.vjp(f.fun, x)[1](jnp.ones(2))[0]
    assert np.allclose(got, [10.0, 4.0])    # the backward says [2, 4]


def test_rt49_a_condition_failing_on_a_region_of_the_outer_inputs_is_not_proved():
    f = _vjp(lambda x: 2.0 * h(jax.nn.relu(x), x), lambda x, g: (2.0 * g * (1.0 + (x > 0)),))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "TESTED", (cert.status, cert.detail)
    assert "h (" in cert.detail and "at the values reaching the call" in cert.detail, cert.detail


def test_rt49_a_condition_holding_almost_everywhere_is_still_proved():
    f = _vjp(lambda x: 2.0 * h(3.0 * x + 1.0, x), lambda x, g: (8.0 * g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED", (cert.status, cert.detail)
    assert any(c.startswith("at each call of h") for c in cert.side_conditions), cert.side_conditions
    dense = _vjp(lambda x, w: h(x @ w, x @ w), lambda x, w, g: (2.0 * g @ w.T, 2.0 * x.T @ g))
    assert verigrad.certify(dense, shapes={"x": "b,n", "w": "n,d"}).status == "PROVED"


# -- 3. a rule taking symbolic zeros -----------------------------------------------------------

def _product(wrong):
    @jax.custom_jvp
    def g(a, b):
        return a * b

    def rule(p, t):
        (a, b), (ta, tb) = p, t
        if isinstance(ta, SymbolicZero):        # a not differentiated by JAX
            return a * b, (2.0 if wrong else 1.0) * a * tb
        if isinstance(tb, SymbolicZero):
            return a * b, ta * b
        return a * b, ta * b + a * tb
    g.defjvp(rule, symbolic_zeros=True)
    return g


@jax.custom_vjp
def gv(a, b):
    return a * b


def _gv_fwd(a, b):
    res = a.value if a.perturbed else 2.0 * a.value      # wrong where JAX does not differentiate a
    return a.value * b.value, (res, b.value)


gv.defvjp(_gv_fwd, lambda r, ct: (ct * r[1], ct * r[0]), symbolic_zeros=True)


def _of_sign(g):
    return _vjp(lambda x: g(jnp.sign(x), x), lambda x, gg: (jnp.sign(x) * gg,))


def test_rt49_jax_hands_the_rule_a_symbolic_zero_for_sign():
    for g in (_product(True), gv):
        f = _of_sign(g)
        with jax.enable_x64(True):
            got = jax.vjp(f.fun, jnp.array([0.3, -1.2]))[1](jnp.ones(2))[0]
        assert np.allclose(got, [2.0, -2.0])        # the backward says [1, -1]


def test_rt49_a_rule_wrong_only_under_a_symbolic_zero_is_not_proved():
    for g in (_product(True), gv):
        f = _of_sign(g)
        cert = verigrad.certify(f, shapes={"x": "n"})
        assert cert.status == "TESTED", (cert.status, cert.detail)
        assert "differentiating only a1 (its rule takes symbolic zeros)" in cert.detail, cert.detail


def test_rt49_a_right_symbolic_zeros_rule_is_still_proved():
    g = _product(False)
    f = _vjp(lambda x: g(jnp.sign(x), x), lambda x, gg: (jnp.sign(x) * gg,))
    assert verigrad.certify(f, shapes={"x": "n"}).status == "PROVED"
    f = _vjp(lambda x: g(x, 2.0 * x), lambda x, gg: (4.0 * x * gg,))
    assert verigrad.certify(f, shapes={"x": "n"}).status == "PROVED"


# -- a rule keeping a tracer of another trace: refused, not a crash ----------------------------

def test_rt49_an_array_nondiff_argnum_of_a_custom_jvp_is_refused_not_a_crash():
    """JAX stops the gradient of an array given for a custom_jvp's nondiff_argnums, and the
    rule closes over the tracer of the trace it was called in; rebinding the call elsewhere
    (the numeric check) compiled a program with that tracer as an extra input and raised a
    TypeError out of certify. Now the import is refused, naming the rule."""
    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def g(s, z):
        return z * s
    g.defjvp(lambda s, p, t: (p[0] * s, t[0] * s))
    f = _vjp(lambda x: g(jnp.sin(x), x), lambda x, gg: (jnp.sin(x) * gg,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN" and "could not be run at concrete sizes" in cert.detail, cert.detail
