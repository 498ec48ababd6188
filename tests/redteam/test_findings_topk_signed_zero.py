"""Red team RT2-a1 (fixed): ``top_k``'s indices were read as the stable argsort of ``-x``
with ties by index, but XLA ranks ``0.0`` above ``-0.0`` (one real, two floats), so a
key whose tied entries are zeros of opposite signs gives other indices than the model.

Attacked: the jaxpr importer's ``top_k`` rule (``frontends/jaxpr_perm.py``) on keys that
tie at zero identically. ``(1e4 - x[0]) * 0`` is ``0.0`` where ``x[0] < 1e4`` and
``-0.0`` where ``x[0] > 1e4``; ``x[0]^2 * 0`` is always ``0.0``. Both are the real 0, so
the model's ``top_k(keys, 1)`` index is 0 at every input, and the kernel proved

    fwd(x) = x * top_k(keys, 1).index          bwd(x, g) = g * argsort(-keys)[0]

(``argsort`` canonicalizes ``-0.0`` to ``0.0``: a tie, index 0). On the open set
``x[0] > 1e4`` XLA's top_k index is 1 (the ``0.0``), so J^T dy is ``g`` while the backward
gives 0 (PROVED before the fix, at every size; no draw reaches 1e4). A constant key
(``where(i < 12, -0.0, 0.0)``) did the same at every input for n >= 13, past validation's
sizes.

Fixed: a top_k whose key does not vary with the inputs (its normal form has no variable)
refuses its indices; a key that varies states that no two tied entries are zeros of
opposite signs (the values are exact either way; a key known positive needs nothing).
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import verigrad


def _far_keys(x):
    return jnp.stack([(1e4 - x[0]) * 0.0, x[0] * x[0] * 0.0])


def _fwd(x):
    return x * lax.top_k(_far_keys(x), 1)[1][0].astype(x.dtype)


def _wrong():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), lambda r, g: (g * jnp.argsort(-_far_keys(r))[0].astype(g.dtype),))
    return f


def _const_keys(x):
    return jnp.where(jnp.arange(x.shape[0]) < 12, -0.0, 0.0).astype(x.dtype)


def _const_fwd(x):
    return x * lax.top_k(_const_keys(x), 1)[1][0].astype(x.dtype)


def test_the_backward_is_wrong_far_out():
    x, g = jnp.full((3,), 2e4), jnp.ones(3)
    true = jax.vjp(_fwd, x)[1](g)[0]
    got = jax.vjp(_wrong(), x)[1](g)[0]
    np.testing.assert_allclose(np.asarray(true), 1.0)
    np.testing.assert_allclose(np.asarray(got), 0.0)


def test_far_signed_zero_keys_not_proved():
    cert = verigrad.certify(_wrong(), shapes={"x": "n"})
    assert cert.status != "PROVED"
    assert "0.0 above -0.0" in cert.detail


def test_constant_signed_zero_keys_not_proved():
    f = jax.custom_vjp(_const_fwd)
    f.defvjp(lambda x: (_const_fwd(x), x),
             lambda r, g: (g * jnp.argsort(-_const_keys(r))[0].astype(g.dtype),))
    x = jnp.ones(13)
    assert float(jax.vjp(_const_fwd, x)[1](x)[0][0]) == 12.0      # XLA's index is 12 at n = 13
    assert float(jax.vjp(f, x)[1](x)[0][0]) == 0.0
    assert verigrad.certify(f, shapes={"x": "n"}).status != "PROVED"


def _top2(x):
    return lax.top_k(x, 2)[0]


def test_true_neighbour_data_keys_still_proved_with_the_assumption():
    """Top-k values of data with their backward at the indices: PROVED, stating the
    signed-zero reading of the indices."""
    f = jax.custom_vjp(_top2)
    f.defvjp(lambda x: (_top2(x), x), lambda r, g: (jnp.sum(jax.nn.one_hot(lax.top_k(r, 2)[1], r.shape[-1])
                                                             * g[..., None], axis=-2),))
    cert = verigrad.certify(f, shapes={"x": "n, d+1"})
    assert cert.status == "PROVED", cert.detail
    assert any("zeros of opposite signs" in c for c in cert.side_conditions)


def test_a_positive_key_needs_no_assumption():
    """A key known positive (``exp``) has no signed zeros: its indices state nothing."""
    fwd = lambda x: x * lax.top_k(jnp.exp(x), 1)[1][..., :1].astype(x.dtype)  # noqa: E731
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), lambda r, g: (g * lax.top_k(jnp.exp(r), 1)[1][..., :1].astype(g.dtype),))
    cert = verigrad.certify(f, shapes={"x": "n, d+1"})
    assert cert.status == "PROVED", cert.detail
    assert not any("zeros of opposite signs" in c for c in cert.side_conditions)
