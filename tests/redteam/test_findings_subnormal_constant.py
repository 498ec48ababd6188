"""Red team RT-47-i3 (helper rt2-i; fixed: the jaxpr importer refuses a subnormal float
constant, as the StableHLO importer does since RT-43): XLA flushes subnormal operands to
zero at run time (CPU, float32 and float64 alike), and the jaxpr importer read a subnormal
constant as the positive number it denotes, with the fact "pos". So ``max(y * y, C)`` was
"pos" (a maximum with a positive operand), a division by it was read as never dividing by
zero, and certify made no finiteness claim for the backward.

Attacked: the static facts of constants (``jaxpr_rules._default_facts``: "pos" for every
``v > 0``) and their users (``_div_real``'s risk, ``obligations._risky_cotangents``). With
``C = float32(1.4e-45)`` (the smallest subnormal) or ``5e-324`` in float64:

    fwd(y) = y            bwd(y, g) = g + 0.0 / max(y * y, C)

in exact reals ``0 / max(y^2, C) = 0``, so the backward is ``g`` = J^T dy, and certify
reported PROVED with no side condition or assumption; XLA computes ``max(0, C) = 0`` at
y = 0 (no rounding: y * y is exactly 0, C exactly representable; C is flushed), so
``0.0 / 0.0 = NaN`` there, at the input zeros-initialised code feeds first.

Fixed (``frontends/jaxpr._not_subnormal``): a float constant (a literal or a closed-over
array) with an entry subnormal in its type, or in the float32 a float64 of the x64 trace
is with x64 off, is refused, naming it. The smallest normal float32 (``1.17549435e-38``)
is read as before.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _vjp(c, dtype):
    f = jax.custom_vjp(lambda y: y)

    def bwd(res, g):
        y, = res
        return (g + 0.0 / jnp.maximum(y * y, jnp.asarray(c, dtype)),)
    f.defvjp(lambda y: (y, (y,)), bwd)
    return f


SUBNORMAL = ((float(np.float32(1.4e-45)), jnp.float32), (5e-324, jnp.float64))


def test_rt47_i3_xla_flushes_the_constant():
    with jax.enable_x64(True):
        for c, dt in SUBNORMAL:
            y = jnp.array([0.0, 1.0], dt)
            got = np.asarray(jax.vjp(_vjp(c, dt), y)[1](jnp.ones(2, dt))[0])
            assert np.isnan(got[0]) and got[1] == 1.0, (c, got)


def test_rt47_i3_not_proved():
    for c, dt in SUBNORMAL:
        cert = verigrad.certify(_vjp(c, dt), shapes={"y": "n"})
        assert cert.status != "PROVED", cert.as_dict()
        assert "subnormal" in cert.as_dict()["detail"], cert.as_dict()["detail"]


def test_rt47_i3_the_smallest_normal_still_proved():
    tiny = float(np.finfo(np.float32).tiny)
    with jax.enable_x64(True):
        y = jnp.zeros(2, jnp.float32)
        assert np.array_equal(np.asarray(jax.vjp(_vjp(tiny, jnp.float32), y)[1](jnp.ones(2, jnp.float32))[0]),
                              [1.0, 1.0])
    assert verigrad.certify(_vjp(tiny, jnp.float32), shapes={"y": "n"}).status == "PROVED"
