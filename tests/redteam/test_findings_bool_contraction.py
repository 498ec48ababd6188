"""Red team RT2-a2 (fixed): a ``dot_general`` (and a ``conv_general_dilated``) of booleans
with a boolean result was read as the count of the products, but XLA computes the ``or``
of the ``and``s: ``lax.dot(m, m)`` of a boolean vector is ``True``, not 2.

Attacked: the jaxpr importer's contraction rules (``frontends/jaxpr_rules.py``) on the
``bool`` dtype. With ``m2 = m & ((i == 0) | (i >= 12))`` at most one entry is ever true
below size 13, so count and ``or`` agree at every size validation runs (k <= 12):

    fwd(x, m) = x * dot(m2, m2)              (XLA: x * any(m2))
    bwd(m, g) = g * sum(m2)                  (the count)

was PROVED with no side condition; at k = 13 with m all true, J^T dy is g and the
backward gives 2 g.

Fixed: a contraction with a boolean result is ``[count >= 1]`` (``_bool_sum``); an
integer or float ``preferred_element_type`` keeps the count, as XLA does.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import verigrad


def _m2(m):
    i = jnp.arange(m.shape[0])
    return m & ((i == 0) | (i >= 12))


def _fwd(x, m):
    m2 = _m2(m)
    return x * lax.dot(m2, m2).astype(x.dtype)


def _vjp(bwd):
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x, m: (_fwd(x, m), m), bwd)
    return f


_WRONG = _vjp(lambda m, g: (g * jnp.sum(_m2(m).astype(g.dtype)), None))
_SHAPES = {"x": "n", "m": "k:bool"}


def test_the_count_is_wrong_at_k_13():
    x, m = jnp.ones(3), jnp.ones(13, bool)
    true = jax.vjp(lambda x: _fwd(x, m), x)[1](x)[0]
    got = jax.vjp(lambda x: _WRONG(x, m), x)[1](x)[0]
    np.testing.assert_allclose(np.asarray(true), 1.0)
    np.testing.assert_allclose(np.asarray(got), 2.0)


def test_the_count_is_not_proved():
    assert verigrad.certify(_WRONG, _SHAPES).status != "PROVED"


def test_a_small_boolean_dot_is_refuted_not_mismodelled():
    """Without the size gate validation sees it; now the kernel refutes the count."""
    fwd = lambda x, m: x * lax.dot(m, m).astype(x.dtype)  # noqa: E731
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x, m: (fwd(x, m), m), lambda m, g: (g * jnp.sum(m.astype(g.dtype)), None))
    cert = verigrad.certify(f, _SHAPES)
    assert cert.status == "REFUTED"
    assert "VALIDATION FAILED" not in (cert.detail or "")


def test_true_neighbours_still_proved():
    same = _vjp(lambda m, g: (g * lax.dot(_m2(m), _m2(m)).astype(g.dtype), None))
    assert verigrad.certify(same, _SHAPES).status == "PROVED"
    # an integer accumulation keeps the count, as XLA does
    fwd = lambda x, m: x * lax.dot(_m2(m), _m2(m), preferred_element_type=jnp.int32).astype(x.dtype)  # noqa: E731
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x, m: (fwd(x, m), m), lambda m, g: (g * jnp.sum(_m2(m).astype(g.dtype)), None))
    cert = verigrad.certify(f, _SHAPES)
    assert cert.status == "PROVED", cert.detail


def test_a_boolean_convolution_is_an_or():
    """``conv_general_dilated`` of booleans: the same reading, checked against XLA at sizes
    past 12 through the importer's validation of a correct backward."""
    def fwd(x, m):
        mm = _m2(m)[None, None, :]
        return x * lax.conv(mm, mm[..., :13] | True, (1,), "VALID").astype(x.dtype).sum()
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x, m: (fwd(x, m), m), lambda m, g: (jax.vjp(lambda x: fwd(x, m), jnp.zeros_like(g))[1](g)[0], None))
    cert = verigrad.certify(f, {"x": "n", "m": "k+13:bool"})
    assert cert.status == "PROVED", cert.detail
    m = jnp.ones(14, bool)
    assert float(fwd(jnp.ones(1), m)[0]) == 2.0     # two windows, each an or of two trues (a count: 4)
