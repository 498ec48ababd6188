"""Red team rt6b (fixed: ``x < max(x)`` is ``x != max(x)``, not 0): the jaxpr importer's
comparison of an entry with the maximum of a set it belongs to
(``jaxpr_rules._against_extremum``) read the strict comparison toward the extremum
(``x < max``, ``max > x``; for a minimum ``x > min``) as never true. Where both branches
of the ``where`` have the same value (one behind ``stop_gradient``) translation
validation cannot see it, and the kernel differentiated the wrong branch: a backward
returning zeros was PROVED although JAX's gradient is 1 at every entry below the row
maximum.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _below(x):
    m = jnp.max(x, -1, keepdims=True)
    return jnp.where(x < m, x, jax.lax.stop_gradient(x))


def _above_min(x):
    m = jnp.min(x, -1, keepdims=True)
    return jnp.where(m < x, x, jax.lax.stop_gradient(x))


def _rule(fwd, bwd):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), bwd)
    return f


def _zero(x, g):
    return (jnp.zeros_like(g),)


def test_jax_gradient_flows_below_the_max():
    x = jnp.array([[0.3, 1.0, -2.0]])
    g = jax.vjp(_below, x)[1](jnp.ones_like(x))[0]
    assert np.allclose(g, [[1.0, 0.0, 1.0]])


def test_zero_backward_below_the_max_refuted():
    cert = verigrad.certify(_rule(_below, _zero), shapes={"x": "n, d"})
    assert cert.status == "REFUTED", cert.detail


def test_zero_backward_above_the_min_refuted():
    cert = verigrad.certify(_rule(_above_min, _zero), shapes={"x": "n, d"})
    assert cert.status == "REFUTED", cert.detail


def test_right_backward_below_the_max_proved():
    def bwd(x, g):
        return (jnp.where(x == jnp.max(x, -1, keepdims=True), 0.0, g),)
    cert = verigrad.certify(_rule(_below, bwd), shapes={"x": "n, d"})
    assert cert.status == "PROVED", cert.detail


def test_strict_compare_in_the_value_proved():
    """``x < max`` in the value itself (where validation saw it): now imported and proved."""
    def f(x):
        return jnp.where(x < jnp.max(x, -1, keepdims=True), 2.0 * x, x)

    def bwd(x, g):
        return (jnp.where(x < jnp.max(x, -1, keepdims=True), 2.0 * g, g),)
    cert = verigrad.certify(_rule(f, bwd), shapes={"x": "n, d"})
    assert cert.status == "PROVED", cert.detail
