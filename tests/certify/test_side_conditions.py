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
