"""Red-team finding RT-6 (false PROVED through certify): a ``> 0`` side condition that
fails on a set of positive measure is accepted because random samples never reach it.

Forward ``sqrt(max(1e8 - x^2, 0))`` (finite everywhere; its derivative is 0 for
``|x| > 1e4``). Backward: the correct ``-x / sqrt(u)`` under ``where`` plus the junk
``sqrt(u) * sqrt(u) - u`` (``u = 1e8 - x^2``). The kernel reads ``sqrt(u) * sqrt(u) = u``
under the condition ``u > 0`` (``pow_add_pos``), so it proves dx = J^T dy under
``100000000 - x[i]^2 > 0``. ``certify.conditions`` accepts a ``> 0`` condition when it is
analytic and holds at the sampled inputs (N(0,1), N(0,10), ...: ``|x|`` never near 1e4);
RT-3's check (backward not finite where the forward is) is sampled at the same inputs.
So ``verigrad certify`` reports PROVED, while for every ``|x| > 1e4`` (a set of positive
measure) the forward is finite (0) and the backward is NaN.

Root cause: a ``> 0`` condition (a base's positivity) is only sampled, not shown to fail
on a null set; its failure set ``u <= 0`` is a half-space-like region of positive
measure whenever ``u`` is not positive outright.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _f():
    f = jax.custom_vjp(lambda x: jnp.sqrt(jnp.maximum(1e8 - x * x, 0.0)))

    def bwd(x, dy):
        u = 1e8 - x * x
        s = jnp.sqrt(jnp.maximum(u, 0.0))
        good = jnp.where(u > 0, -x / jnp.where(u > 0, s, 1.0), 0.0)
        return (dy * good + dy * (jnp.sqrt(u) * jnp.sqrt(u) - u),)
    f.defvjp(lambda x: (f(x), x), bwd)
    return f


def test_rt6_the_backward_is_nan_on_a_region_where_the_forward_is_finite():
    x = jnp.array([2e4, -5e4, 3.0e5])
    assert np.all(np.isfinite(np.asarray(_f()(x))))
    assert np.all(np.isnan(np.asarray(jax.vjp(_f(), x)[1](jnp.ones(3))[0])))


def test_rt6_not_proved():
    cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status != "PROVED" and "--assume" in cert.detail, cert.detail


def test_rt6_a_stated_precondition_is_a_fact():
    """sqrt's own backward: PROVED under --assume 'x > 0' (x reparametrized positive),
    not PROVED without it (its base's bound would only be sampled)."""
    f = jax.custom_vjp(jnp.sqrt)
    f.defvjp(lambda x: (jnp.sqrt(x), x), lambda x, g: (g * 0.5 / jnp.sqrt(x),))
    assert verigrad.certify(f, shapes={"x": "n"}, assume=["x > 0"]).status == "PROVED"
    assert verigrad.certify(f, shapes={"x": "n"}).status != "PROVED"
