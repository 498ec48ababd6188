"""Red team RT-8: the backward's finiteness is never claimed when the forward is risky.

``obligations._risky_cotangents`` returns ``{}`` as soon as any primal output's facts
have a risk above FINITE ("where the forward itself may be non-finite, it is not
claimed"). That skip is per function, not per input: a forward that is non-finite only
at a single point (``log(x*x)`` at ``x = 0``) switches off G1's finiteness claim for
every input, so a backward that XLA computes as NaN on a region of positive measure
where the forward is finite (``0 * log(1e8 - x*x)`` for |x| > 1e4, which the kernel
reads as 0 and no sample reaches) is reported PROVED.

Fixed: the finiteness claim is made for every cotangent the importer cannot show finite,
whatever the forward's own risk (obligations._risky_cotangents).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _fwd(x):
    return jnp.log(x * x)       # non-finite only at x = 0


def _risky_forward_far_nan():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), lambda x, g: (2.0 * g / x + 0.0 * jnp.log(1e8 - x * x),))
    return f


def test_rt8_the_backward_is_nan_where_the_forward_is_finite():
    x = jnp.array([1.0, 2e4])
    assert np.all(np.isfinite(np.asarray(_fwd(x))))
    got = np.asarray(jax.vjp(_risky_forward_far_nan(), x)[1](jnp.ones(2))[0])
    assert got[0] == 2.0 and np.isnan(got[1])


def test_rt8_not_proved():
    cert = verigrad.certify(_risky_forward_far_nan(), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.detail
