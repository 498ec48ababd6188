"""Red team RT-47-i1 (helper rt2-i; fixed: ``x ** 0`` and ``1 ** x`` are finite): the jaxpr
importer gave ``integer_pow(x, 0)``, ``pow(x, 0.0)`` and ``pow(1.0, x)`` the risk of their
operand, so where ``x`` may be NaN (``sqrt(u)`` for ``u < 0``) the result was read as NaN
there. XLA (IEEE ``pow``) gives 1 for every operand, NaN and infinities included. A
comparison or ``is_finite`` of the result was then read through that finiteness: ``one > 0.5``
became ``[u >= 0]`` where XLA computes 1.

Attacked: the static facts of values (``jaxpr_rules.Facts.risk``), for operations that map
a non-finite operand to a finite result. With ``u = 1e8 - y^2`` and ``s = sqrt(u)``,

    fwd(y) = y            bwd(y, g) = g * (where(s ** 0 > 0.5, 2, 1) - where(isfinite(s), 1, 0))

the importer read the backward as ``g * (2 [u >= 0] + [u < 0] - [u >= 0]) = g`` = J^T dy,
and certify reported PROVED with no side condition or assumption; XLA computes
``2 g - g [u >= 0]``, that is ``2 g`` for every ``|y| > 10^4``, where the forward is finite.
The validation draws (N(0, 10) at most) never reach ``|y| > 10^4``.

Fixed (``jaxpr_rules._power_rule``, ``_pow``): ``x ** 0`` and ``1 ** x`` are the constant
1 with the facts of a constant (finite, positive, integer), whatever ``x`` is.
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _vjp(one_of, correct=False):
    f = jax.custom_vjp(lambda y: y)

    def bwd(res, g):
        y, = res
        s = jnp.sqrt(1e8 - y * y)                       # NaN for |y| > 1e4
        one = one_of(s)                                 # XLA: 1 everywhere
        k = jnp.where(one > 0.5, 2.0, 1.0)
        t = jnp.where(jnp.isfinite(s), 1.0, 0.0)
        return (g * (k - (1.0 if correct else t)),)
    f.defvjp(lambda y: (y, (y,)), bwd)
    return f


ONES = {
    "integer_pow": lambda s: s ** 0,
    "pow_zero": lambda s: jax.lax.pow(s, jnp.zeros((), s.dtype)),
    "pow_one": lambda s: jnp.power(jnp.ones((), s.dtype), s),
}


def test_rt47_i1_xla_computes_one_for_nan():
    with jax.enable_x64(True):
        y = jnp.array([1.0, 2e4, -3e4])
        for one_of in ONES.values():
            got = np.asarray(jax.vjp(_vjp(one_of), y)[1](jnp.ones(3))[0])
            assert np.array_equal(got, [1.0, 2.0, 2.0]), got       # J^T dy is [1, 1, 1]


def test_rt47_i1_not_proved():
    for name, one_of in ONES.items():
        cert = verigrad.certify(_vjp(one_of), shapes={"y": "n"})
        assert cert.status != "PROVED", (name, cert.as_dict())


def test_rt47_i1_the_true_backward_is_proved():
    """``g * (where(s ** 0 > 0.5, 2, 1) - 1)`` is ``g`` in XLA everywhere: now PROVED."""
    for name, one_of in ONES.items():
        cert = verigrad.certify(_vjp(one_of, correct=True), shapes={"y": "n"})
        assert cert.status == "PROVED", (name, cert.as_dict())
