"""Red team RT-47-i2 (helper rt2-i; fixed: a gather's fill that is not a whole number makes
its result not integer-valued): the jaxpr importer's gather at integer expressions of the
sizes (``jaxpr_rules._gather``) kept the operand's ``integral`` fact in mode FILL_OR_DROP,
whatever the fill. A float iota gathered with ``fill_value=0.5`` was then compared as an
integer: ``[v > 0]`` was read ``[v - 1 >= 0]``, the same as ``[v >= 1]``, though at a filled
entry ``v = 0.5`` is above 0 and below 1. (The gather at data indices already dropped the
fact where its fill may show.)

Attacked: the static facts of values (``Facts.integral``), which decide whether a
comparison is read as an integer one (``_how``). With ``p = i + n * (n // 12)`` (inside
``[0, n)`` for n < 12, past the end at every entry from n = 12):

    v = take(arange(n, float), p, mode="fill", fill_value=0.5)
    fwd(x) = x            bwd(x, g) = g * (1 + [v > 0] - [v >= 1])

the importer read the backward as ``g`` = J^T dy, and certify reported PROVED (assumptions:
only that the sizes fit int32, up to n = 160523); XLA computes ``2 g`` at every n >= 12.
Validation draws n in {1, ..., 7, 11}, where the fill never shows.

Fixed: in mode FILL_OR_DROP the result is integer-valued only when the operand is and the
fill is a whole number.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _vjp(fill):
    f = jax.custom_vjp(lambda x: x)

    def bwd(res, g):
        x, = res
        n = x.shape[0]
        p = jnp.arange(n) + n * (n // 12)
        v = jnp.take(jnp.arange(n, dtype=x.dtype), p, mode="fill", fill_value=fill)
        junk = jnp.where(v > 0, 1.0, 0.0) - jnp.where(v >= 1, 1.0, 0.0)     # 0 at integers
        return (g * (1.0 + junk),)
    f.defvjp(lambda x: (x, (x,)), bwd)
    return f


def test_rt47_i2_the_backward_is_wrong_from_n_12():
    f = _vjp(0.5)
    with jax.enable_x64(True):
        for n, want in ((11, 1.0), (12, 2.0), (13, 2.0)):
            got = np.asarray(jax.vjp(f, jnp.ones(n))[1](jnp.ones(n))[0])
            assert np.all(got == want), (n, got)


def test_rt47_i2_not_proved():
    cert = verigrad.certify(_vjp(0.5), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.as_dict()


def test_rt47_i2_a_whole_fill_still_proved():
    """With ``fill_value=3`` every entry is an integer, and the backward is ``g``."""
    cert = verigrad.certify(_vjp(3.0), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.as_dict()
