"""Red team RT4-A (helper rt4-a; fixed): what the concrete-size gate
(``verigrad/certify/exact_sizes.py``, RT-49-d) and the forward claim did not hold to
what JAX runs. Each was PROVED while JAX computed something else.

1. Inner custom rules at concrete shapes. The gate imports the function again at one
   concrete size, but the importer reads an inner ``custom_vjp`` / ``custom_jvp`` call by
   its body, and the inner rules were proved only as they trace at symbolic sizes
   (``inner_rules``). A rule taking another path at concrete shapes was never seen:

       ident = custom_vjp identity, bwd: clip(g, -1e5, 1e5) if the shape is concrete else g
       f = custom_vjp(lambda x: 3 * ident(x)) with bwd 3 g  -> PROVED (jax.vjp(f.fun) at g=1e6: 1e5)

   and a call made only at concrete shapes (``2 * scale_grad(x)`` there, ``2 * x`` at
   symbolic sizes, ``scale_grad`` a custom_jvp identity with rule 0.5 t) -> PROVED,
   while JAX's derivative is 1, not 2.
   Fix: the gate refuses a concrete import calling other custom rules; certify proves
   the concrete import's inner rules too (``api._decide``): one not proved leaves TESTED.

2. The total reading and the importer's assumptions. The gate's kernel equations are
   about terms (``0 * log u = 0``) under the importer's assumptions, so a concrete path
   ``3 g + 0 * log(1e8 - x*x)`` (NaN for |x| > 1e4) or ``reduce_precision(g, 5, 23)``
   (read as the identity, stating an assumption only the concrete import made; inf at
   g = 1e6) was proved the symbolic ``3 g``. Fix: the concrete import's finiteness
   indicators must be proved the symbolic's (and be risky nowhere the symbolic one is
   not), and it may make no assumption the symbolic import does not state.

3. The fwd rule's output was claimed equal to ``f``'s in the same total reading, its
   finiteness never: ``fwd = 3 x + 0 * log(1e8 - x*x)`` for ``f = 3 x`` was PROVED, and
   ``jax.vjp(f, 2e4)`` returns NaN as its primal. Fix: a claim ``finite forward output
   k`` (``[f finite] [fwd finite] = [f finite]``, ``obligations._risky_forward``), folded
   into the forward claim; ``log`` computed by both still proves.

4. Inner rules on the outputs not claimed about (``--output``). ``inner_rules`` proved
   only the calls reaching a claimed output; ``jax.vjp`` still hands the others' rules
   their cotangent, 0, and a rule that does not map 0 to 0 changes the claimed one:

       bump = custom_vjp identity with bwd g + 1
       f(x) = (2 x, 3 bump(x)), bwd 2 g0 + 3 g1, --output 0    -> PROVED (2 dy0), while
       jax.vjp(f.fun, x)((1, 0)) is 3

   Fix: each such call is a claim of its own, that its rule's VJP at a zero cotangent is
   0 (``inner_rules._pair(zero=True)``); a linear rule there (a straight-through
   estimator) still proves.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad
from _pairs import custom_vjp as _vjp


def _concrete(shape):
    return all(isinstance(d, int) for d in shape)


def _outer(inner):
    f = jax.custom_vjp(lambda x: 3.0 * inner(x))
    f.defvjp(lambda x: (f(x), None), lambda r, g: (3.0 * g,))
    return f


def _ident(clip_at_concrete):
    @jax.custom_vjp
    def ident(x):
        return x

    def bwd(_, g):
        if clip_at_concrete and _concrete(g.shape):
            g = jnp.clip(g, -1e5, 1e5)
        return (g,)
    ident.defvjp(lambda x: (x, None), bwd)
    return ident


def test_rt4a_inner_rule_clipping_at_concrete_shapes_is_not_proved():
    f = _outer(_ident(True))
    got = jax.vjp(f.fun, jnp.ones(3))[1](jnp.full(3, 1e6))[0]
    assert np.allclose(got, 1e5)            # the claim says 3 g = 3e6
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", cert.status
    assert all(c.status != "PROVED" for c in cert.wrt.values())
    assert "traced at n=2" in cert.detail, cert.detail


def test_rt4a_the_same_inner_rule_at_every_shape_still_proves():
    cert = verigrad.certify(_outer(_ident(False)), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail


def test_rt4a_a_custom_call_made_only_at_concrete_shapes_is_not_proved():
    @jax.custom_jvp
    def scale_grad(x):
        return x
    scale_grad.defjvp(lambda p, t: (p[0], 0.5 * t[0]))
    f = _vjp(lambda x: 2.0 * (scale_grad(x) if _concrete(x.shape) else x), lambda x, g: (2.0 * g,))
    assert np.allclose(jax.vjp(f.fun, jnp.ones(3))[1](jnp.ones(3))[0], 1.0)
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "other custom rules" in cert.detail, cert.detail


def test_rt4a_a_nan_only_at_concrete_shapes_is_not_proved():
    def bwd(x, g):
        return (3.0 * g + (0.0 * jnp.log(1e8 - x * x) if _concrete(g.shape) else 0.0),)
    f = _vjp(lambda x: 3.0 * x, bwd)
    assert np.isnan(jax.vjp(f, jnp.full(2, 2e4))[1](jnp.ones(2))[0]).all()
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "non-finite" in cert.detail, cert.detail


def test_rt4a_an_assumption_made_only_at_concrete_shapes_is_not_proved():
    def bwd(x, g, concrete_only=True):
        if _concrete(g.shape) or not concrete_only:
            g = jax.lax.reduce_precision(g, exponent_bits=5, mantissa_bits=23)
        return (3.0 * g,)
    f = _vjp(lambda x: 3.0 * x, bwd)
    assert np.isinf(jax.vjp(f, jnp.ones(2))[1](jnp.full(2, 1e6))[0]).all()
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "assumes what it does not" in cert.detail, cert.detail
    # the same code at every shape: PROVED, the assumption stated
    cert = verigrad.certify(_vjp(lambda x: 3.0 * x, lambda x, g: bwd(x, g, False)), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail
    assert any("5 exponent" in s for s in cert.side_conditions), cert.side_conditions


def test_rt4a_a_fwd_output_nan_where_f_is_finite_is_not_proved():
    f = jax.custom_vjp(lambda x: 3.0 * x)
    f.defvjp(lambda x: (3.0 * x + 0.0 * jnp.log(1e8 - x * x), None), lambda r, g: (3.0 * g,))
    x = jnp.full(2, 2e4)
    assert np.isfinite(f.fun(x)).all() and np.isnan(jax.vjp(f, x)[0]).all()
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED" and cert.forward[0].status != "PROVED", cert.forward[0].detail
    assert "finite" in cert.forward[0].detail


def test_rt4a_a_fwd_output_nan_only_at_concrete_shapes_is_not_proved():
    f = jax.custom_vjp(lambda x: 3.0 * x)
    f.defvjp(lambda x: (3.0 * x + (0.0 * jnp.log(1e8 - x * x) if _concrete(x.shape) else 0.0), None),
             lambda r, g: (3.0 * g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN" and "non-finite" in cert.detail, cert.detail


def test_rt4a_a_forward_risky_as_f_is_still_proved():
    f = jax.custom_vjp(lambda x: jnp.log(x))
    f.defvjp(lambda x: (jnp.log(x), x), lambda x, g: (g / x,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail
    h = jax.custom_vjp(lambda x: jnp.sqrt(x) * 2.0)
    h.defvjp(lambda x: (2.0 * jnp.sqrt(x), x), lambda x, g: (g / jnp.sqrt(x),))
    assert verigrad.certify(h, shapes={"x": "n"}).forward[0].status == "PROVED"


def _two_outputs(rule_bwd):
    @jax.custom_vjp
    def inner(x):
        return jnp.sin(x)
    inner.defvjp(lambda x: (jnp.sin(x), None), lambda r, g: (rule_bwd(g),))
    f = jax.custom_vjp(lambda x: (2.0 * x, 3.0 * inner(x)))
    f.defvjp(lambda x: (f(x), None), lambda r, g: (2.0 * g[0],))
    return f


def test_rt4a_an_affine_rule_on_an_output_not_claimed_is_not_proved():
    f = _two_outputs(lambda g: g + 1.0)
    got = jax.vjp(f.fun, jnp.ones(3))[1]((jnp.ones(3), jnp.zeros(3)))[0]
    assert np.allclose(got, 3.0)            # the claim says 2 dy0 = 2
    cert = verigrad.certify(f, shapes={"x": "n"}, output=[0])
    assert cert.status != "PROVED" and cert.wrt["x"].status != "PROVED", cert.status
    assert "zero cotangent" in cert.detail, cert.detail


def test_rt4a_a_linear_rule_on_an_output_not_claimed_still_proves():
    cert = verigrad.certify(_two_outputs(lambda g: 5.0 * g), shapes={"x": "n"}, output=[0])
    assert cert.status == "PROVED", cert.detail
