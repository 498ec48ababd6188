"""Red-team finding RT-7 (false PROVED through certify): ``conditions.positive_base``
case-splits a base's indicators by replacing each with 0 or 1, but an indicator under a
sum's binder (``[x[b]^2 > 10^10]`` inside ``sum_b``) is one value *per b*, not one value:
the split checks only the two uniform assignments (all b true, all b false), never the
mixed ones.

Forward ``2 x``; backward ``2 g + sqrt(f) / sqrt(f) - 1`` with
``f = (2 S - n)^2``, ``S = sum_b [x_b^2 > 10^10]``. The kernel reads
``f^(1/2) f^(-1/2) = 1`` under ``f > 0`` (``pow_add_pos``) and proves dx = J^T dy under
that condition. ``positive_base`` accepts it: with the indicator 0, f = n^2; with it 1,
f = n^2; both positive by the sign rules. But f = 0 whenever exactly half of the
entries have |x_b| > 10^5 (n even): a set of positive measure where the forward is
finite and JAX's backward is NaN. Samples never reach it (the threshold 10^10 is not
affine in x, and |x| ~ 10^5 is drawn by no distribution), so neither the sampled
condition check nor validate's non-finite-backward note sees it; certify reported PROVED
(CLI: ``verigrad certify FILE:f --shape x=n``).

Root cause: ``positive_base``/``_replaced`` treat an indicator with a bound index
free in it as a single Boolean.

Fixed: an indicator under a binder makes positive_base refuse (one value per entry).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _junk(x):
    n = x.shape[0]
    s = jnp.sum(jnp.where(x * x > 1e10, 1.0, 0.0))
    f = (2.0 * s - n) ** 2
    return jnp.sqrt(f) / jnp.sqrt(f) - 1.0


def _f():
    f = jax.custom_vjp(lambda x: 2.0 * x)
    f.defvjp(lambda x: (2.0 * x, x), lambda x, g: (2.0 * g + _junk(x),))
    return f


def test_rt7_the_backward_is_nan_on_a_region_where_the_forward_is_finite():
    with jax.enable_x64(True):
        for x in ([3e5, 1.5], [3e5, -7e5, 2.5, 3.5], [-2e5, 0.0]):
            x = jnp.asarray(x, dtype=jnp.float64)
            assert np.all(np.isfinite(np.asarray(_f()(x))))
            assert np.all(np.isnan(np.asarray(jax.vjp(_f(), x)[1](jnp.ones(x.shape[0]))[0])))


def test_rt7_not_proved():
    cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.side_conditions
