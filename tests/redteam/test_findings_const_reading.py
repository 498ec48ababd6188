"""Red team RT-11 (fixed): a comparison constant a few ulps from a whole number is read as that
number, and a comparison with an index is then decided at the wrong integer.

``jaxpr_scalar.reading`` reads a float constant as the simplest rational within 4 ulps of
its dtype (for float32 that is 3e-5 wide at 100). ``np.float32(99.99998)`` is exactly
99.99997711181640625, yet it is imported as 100; compared with an integer-valued operand
(a float iota) the comparison is decided exactly as an integer one, so
``[i > 99.99998]`` becomes ``[i > 100] = [i >= 101]``, while XLA (and the exact reals)
give ``[i >= 100]``: no rounding happens anywhere, both sides are exact in float32 and
float64. Translation validation runs sizes up to 13, so index 100 is never seen.

    C = np.float32(99.99998)
    def fwd(x):                      # x * (2 where index > 100, else 1)
        i = jnp.arange(x.shape[0], dtype=jnp.float32)
        return x * jnp.where(i > 100, 2.0, 1.0).astype(x.dtype)
    def bwd(x, g):                   # the same mask, with the threshold 99.99998
        i = jnp.arange(x.shape[0], dtype=jnp.float32)
        return (g * jnp.where(i > C, 2.0, 1.0).astype(x.dtype),)

    verigrad certify f.py:fn --shape x=n      -> PROVED (no side conditions, no assumptions)

At every size n >= 101 the backward is 2 g at index 100 where J^T dy is g, for every x.
(RT-9 was the same reading of an exponent; its fix took a float exponent near a whole
number exactly, in ``jaxpr_rules._pow`` only.) Real data shows it too: ``[x > C]`` is
read as ``[x > 100]``, wrong on the interval (99.99998, 100), with only the float32-cast
assumption recorded.

Fix: a float that is not a whole or half number is never read as one (``reading``), so
the reading and the float are on the same side of every integer and half-integer. What
remains of the 4-ulp reading is a rounding-scale effect that certificates state: two
different floats within 4 ulps of one simple number (float32 0.33333334 and 0.33333331,
both read 1/3) are read alike, so a threshold or a kink can move by a few ulps.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad

C = np.float32(99.99998)          # exactly 99.99997711181640625; not a whole number


def _fwd(x):
    i = jnp.arange(x.shape[0], dtype=jnp.float32)
    return x * jnp.where(i > 100, 2.0, 1.0).astype(x.dtype)


def _bwd(x, g):
    i = jnp.arange(x.shape[0], dtype=jnp.float32)
    return (g * jnp.where(i > C, 2.0, 1.0).astype(x.dtype),)


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), _bwd)
    return f


@pytest.mark.parametrize("x64", [False, True])
def test_rt11_the_backward_is_wrong_at_index_100(x64):
    with jax.enable_x64(x64):
        for n in (100, 101, 150):
            x = jnp.linspace(-3.0, 3.0, n)
            got = np.asarray(jax.vjp(_f(), x)[1](jnp.ones(n, x.dtype))[0])
            want = np.asarray(jax.vjp(_fwd, x)[1](jnp.ones(n, x.dtype))[0])
            bad = np.nonzero(got != want)[0].tolist()
            assert bad == ([] if n <= 100 else [100]), (n, bad)
            if n > 100:
                assert got[100] == 2.0 and want[100] == 1.0


def test_rt11_not_proved():
    with jax.enable_x64(True):
        cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status != "PROVED", (cert.side_conditions, cert.assumptions)


def _pair(fwd, bwd):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), bwd)
    return f


def test_rt11_float64_threshold_just_below_a_whole_number_is_not_proved():
    c = 100 - 2 ** -46                  # 99.99999999999999, within 4 float64 ulps of 100
    fwd = lambda x: x * jnp.where(jnp.arange(x.shape[0]) > 100, 2.0, 1.0)
    bwd = lambda x, g: (g * jnp.where(jnp.arange(x.shape[0], dtype=x.dtype) > c, 2.0, 1.0),)
    with jax.enable_x64(True):
        assert verigrad.certify(_pair(fwd, bwd), shapes={"x": "n"}).status != "PROVED"


def test_rt11_data_threshold_just_below_a_whole_number_is_not_proved():
    # [x > 99.99998] against [x > 100]: wrong on the interval (99.99998, 100) of inputs
    fwd = lambda x: jnp.where(x > 100.0, 2.0 * x, x)
    bwd = lambda x, g: (g * jnp.where(x > C, 2.0, 1.0).astype(x.dtype),)
    with jax.enable_x64(True):
        assert verigrad.certify(_pair(fwd, bwd), shapes={"x": "n"}).status != "PROVED"


def test_rt11_the_reading_keeps_the_programmers_numbers_and_no_false_whole_ones():
    from fractions import Fraction
    from verigrad.frontends.jaxpr_scalar import reading
    assert reading(float(C), np.float32) != 100
    assert reading(100 - 2 ** -46) != 100
    assert reading(float(np.float32(2.4999998)), np.float32) != Fraction(5, 2)
    assert reading(1 - 0.9) == Fraction(1, 10)            # c + (1 - c) = 1 still holds
    assert reading(float(np.float32(1 / 3)), np.float32) == Fraction(1, 3)
    assert reading(100.0) == 100 and reading(2.5) == Fraction(5, 2)


def test_rt11_the_same_threshold_on_both_sides_still_proves():
    fwd = lambda x: jnp.where(x > C, 2.0 * x, x)
    bwd = lambda x, g: (g * jnp.where(x > C, 2.0, 1.0).astype(x.dtype),)
    with jax.enable_x64(True):
        assert verigrad.certify(_pair(fwd, bwd), shapes={"x": "n"}).status == "PROVED"
