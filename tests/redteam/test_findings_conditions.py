"""Red-team finding RT-1 (false PROVED through certify): an off-kink side condition
``u != 0`` whose ``u`` vanishes on a whole region far from the origin is accepted,
because the side-condition check (verigrad/certify/conditions.py via
api._failing_condition) samples only N(0, 1) inputs (3 draws per size assignment).

u = sum_k relu(c_k - x^2) for five c_k near 10^4 (five indicator atoms, more than the
kernel's SPLIT_LIMIT, so [u >= 0] is not split into its pieces) is >= 0 everywhere and
0 for |x| > 100.02. The forward x * [u >= 0] is x, so J^T dy = dy; the backward
dy * [u > 0] is 0 for |x| > 100.02. The kernel proves them equal "off the kink u != 0"
(true, vacuously there), and certify reported PROVED.

Fixed: a kink or nonzero condition is accepted only when its quantity is real-analytic
(verigrad/certify/conditions.py, ``piecewise_part``); this one is piecewise, so the
claim is UNKNOWN with that reason.
"""
import jax
import jax.numpy as jnp

import verigrad


def _u(x):
    return sum(jnp.maximum(c - x * x, 0.0) for c in (10000.0, 10001.0, 10002.0, 10003.0, 10004.0))


def _f():
    f = jax.custom_vjp(lambda x: x * jnp.where(_u(x) >= 0, 1.0, 0.0))
    f.defvjp(lambda x: (x * jnp.where(_u(x) >= 0, 1.0, 0.0), x),
             lambda x, g: (g * jnp.where(_u(x) > 0, 1.0, 0.0),))
    return f


def test_rt1_the_backward_is_wrong_on_a_region():
    f = _f()
    x = jnp.array([0.5, 200.0, -300.0])
    got = jax.vjp(f, x)[1](jnp.ones(3))[0]
    want = jax.vjp(lambda x: x * jnp.where(_u(x) >= 0, 1.0, 0.0), x)[1](jnp.ones(3))[0]
    assert list(got) == [1.0, 0.0, 0.0] and list(want) == [1.0, 1.0, 1.0]


def test_rt1_flat_kink_condition_is_not_proved():
    cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.side_conditions
