"""Red team RT-46-g1 (fixed: a size used as a value has the sign its bounds prove): the
jaxpr importer gave every ``dim_as_value`` (a dimension expression read as a number, as
``jnp.asarray(x.shape[0] - 37)`` is) the sign "pos", so a division by it was read as never
dividing by zero, and certify made no finiteness claim for the backward.

Attacked: the facts of size expressions in the jaxpr importer (``jaxpr_rules._dim_as_value``),
as used by hand-written backwards that divide by a count (``n - 1`` of an unbiased variance,
the number of tokens after a prefix). A dimension *expression* is not a size: ``n - 37`` is 0
at n = 37 and negative below. With

    fwd(x) = x            bwd(x, g) = g + 0.0 / (n - 37)

the kernel reads ``0 / (n - 37) = 0`` (its total convention), so the backward is ``g`` =
J^T dy, and certify reported PROVED; but JAX/XLA compute ``0.0 / 0.0 = NaN`` at n = 37, at
every input, where the forward is finite. Validation draws n in {1, ..., 7, 11}, never 37.

Fixed: ``dim_as_value`` is "pos" only when ``p - 1 >= 0`` is proved from the sizes' lower
bounds (``kernel.sizes.nonneg``), "nonneg" when ``p >= 0`` is, else of unknown sign; a
division by it is then a risk, and the backward's finiteness is claimed (and not proved).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _vjp(bwd):
    f = jax.custom_vjp(lambda x: x)
    f.defvjp(lambda x: (x, (x,)), bwd)
    return f


def _by(k):
    def bwd(res, g):
        x, = res
        c = jnp.asarray(x.shape[0] - k, x.dtype)      # a count read as a value
        return (g + 0.0 / c,)
    return _vjp(bwd)


def test_rt46_g1_the_backward_is_nan_at_n_37():
    f = _by(37)
    with jax.enable_x64(True):
        for n, bad in ((36, False), (37, True), (38, False)):
            got = np.asarray(jax.vjp(f, jnp.ones(n))[1](jnp.ones(n))[0])
            assert np.isnan(got).all() == bad and (bad or np.allclose(got, 1.0))


def test_rt46_g1_not_proved():
    cert = verigrad.certify(_by(37), shapes={"x": "n"})
    assert cert.status != "PROVED", cert.as_dict()
    assert "finite" in cert.wrt["x"].detail, cert.wrt["x"].detail


def test_rt46_g1_proved_where_the_count_is_positive():
    """``n + 1`` is positive at every size, and ``n - 37`` from n = 38: no zero divisor."""
    assert verigrad.certify(_by(-1), shapes={"x": "n"}).status == "PROVED"
    assert verigrad.certify(_by(37), shapes={"x": "n"}, minimum={"n": 38}).status == "PROVED"


def test_rt46_g1_a_mean_still_proved():
    """``jnp.mean`` divides by the size itself, which is at least 1."""
    def fwd(x):
        return x - jnp.mean(x)

    def bwd(res, g):
        return (g - jnp.mean(g),)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), (x,)), bwd)
    assert verigrad.certify(f, shapes={"x": "n"}).status == "PROVED"
