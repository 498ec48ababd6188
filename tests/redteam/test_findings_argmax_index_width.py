"""Red team RT-47-i4 (helper rt2-i; fixed: an argmax index is counted in its dtype, as an
iota is): ``lax.argmax(x, 0, jnp.int8)`` (or argmin, any narrow index dtype) was read as
the exact position of the maximum, with the facts "nonneg" and integer, and nothing said
that the position fits the index dtype. XLA counts the index in int8, so past 127 it
wraps: at n = 256 with the maximum at position 255 it returns -1 (at 150: -106).

Attacked: the static facts of ``argmax`` (``jaxpr_rules._arg_extremum``: "nonneg") and
their users (a division by ``argmax + 1`` read as never dividing by zero, so no finiteness
claim). With

    fwd(x) = x            bwd(x, g) = g + 0.0 / (float(argmax_int8(x)) + 1)

certify reported PROVED with no assumption, for every n; at n = 256 and any x whose
maximum is at position 255, XLA's backward is ``0.0 / 0.0 = NaN`` at every entry, where
the forward is finite. Validation draws n <= 11.

Fixed: the sizes up to which the index stays inside its dtype are stated (for sizes up to
128 here: then the claim is true), as for an iota (RT-38); a size whose smallest value is
already past the range (``minimum={"n": 200}``) is refused. An int32 index needs nothing.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _vjp(index_dtype):
    f = jax.custom_vjp(lambda x: x)

    def bwd(res, g):
        x, = res
        a = jax.lax.argmax(x, 0, index_dtype)
        return (g + 0.0 / (a.astype(x.dtype) + 1.0),)
    f.defvjp(lambda x: (x, (x,)), bwd)
    return f


def test_rt47_i4_xla_wraps_the_index():
    x = jnp.zeros(256).at[255].set(1.0)
    assert int(jax.jit(lambda v: jax.lax.argmax(v, 0, jnp.int8))(x)) == -1
    assert np.isnan(np.asarray(jax.vjp(_vjp(jnp.int8), x)[1](jnp.ones(256))[0])).all()


def test_rt47_i4_not_proved_for_every_size():
    cert = verigrad.certify(_vjp(jnp.int8), shapes={"x": "n"})
    d = cert.as_dict()
    stated = [a for a in d["assumptions"] if "fits int8" in a and "up to 128" in a]
    assert cert.status != "PROVED" or stated, d
    big = verigrad.certify(_vjp(jnp.int8), shapes={"x": "n"}, minimum={"n": 200})
    assert big.status != "PROVED", big.as_dict()


def test_rt47_i4_an_int32_index_still_proved():
    cert = verigrad.certify(_vjp(jnp.int32), shapes={"x": "n"})
    assert cert.status == "PROVED" and not [a for a in cert.as_dict()["assumptions"] if "index counts" in a], cert.as_dict()
