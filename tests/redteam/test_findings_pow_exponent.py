"""Red team RT-9: a float exponent a few ulps from an integer is read as that integer.

``jaxpr_scalar._reading`` reads a float constant as the simplest rational within 4 ulps,
so ``pow(b, 1.0000000000000002)`` (float64's next float after 1) is imported as ``b ** 1``:
total and FINITE, so no finiteness claim is made. XLA's pow of a negative base with a
non-integer exponent is NaN, so ``0.0 * pow(1e9 - x*x, e)`` is 0 in the kernel and NaN in
JAX for |x| > 31623 (a region no sample reaches): certify reports PROVED for a backward
that is NaN where the forward ``x*x`` is finite.

Fixed: a float exponent near a whole number but not one is taken exactly (jaxpr_rules._pow).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad

E = float(np.nextafter(1.0, 2.0))     # 1.0000000000000002


def _fwd(x):
    return x * x


def _bwd(x, g):
    return (2.0 * g * x + 0.0 * jnp.power(1e9 - x * x, E),)


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), _bwd)
    return f


def test_rt9_the_backward_is_nan_where_the_forward_is_finite():
    with jax.enable_x64(True):
        x = jnp.array([1.0, 5e4])
        assert np.all(np.isfinite(np.asarray(_fwd(x))))
        got = np.asarray(jax.vjp(_f(), x)[1](jnp.ones(2))[0])
        assert got[0] == 2.0 and np.isnan(got[1])


def test_rt9_not_proved():
    with jax.enable_x64(True):
        cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.detail
