"""Red team RT-18 (fixed: the binder must range over the whole alive axis): ``any(mask, -1)`` is taken to keep alive the rows of a *slice* of the mask,
so the tie condition of a masked row maximum is accepted where whole rows of the slice are
masked: a backward wrong there (by a factor of k) is PROVED.

``conditions.tie_cover`` reduces the condition that a masked row maximum ``M = max_b B(b)``,
``B(b) = [mask_b] x_b + (1 - [mask_b]) (min_q x_q - 1)``, is attained once to ties of the
unmasked entries ``x_b``, when ``any(mask, axis)`` is assumed along ``b``'s axis
(``_alive_branch``). It checks that the mask is indexed by ``b`` itself on an assumed
axis, but not that ``b`` ranges over that whole axis. A mask one column wider than the
scores, sliced to them (``mask[:, :k]``, a padded mask), satisfies ``any(mask, -1)`` with
only its last column true, and then its slice's row is masked throughout: every entry of
``B`` is ``min x - 1``, ``M`` is attained k times, and the condition fails for every ``x``.
(The importer's own ``_alive_by_assumption`` requires the mask's shape to match; and
``positive_by_assumption``, for a masked sum's positivity, has the same missing check.)

    def _b(x, mask):                  # the importer's masked row maximum, written out
        low = jnp.min(x, -1, keepdims=True) - 1.0
        return jnp.where(mask[:, :x.shape[1]], x, low)

    fwd(x, mask) = jnp.max(_b(x, mask), -1)
    bwd: g * (T * [mask] + sum_b T_b (1 - [mask_b]) * [x == min x]),  T = [B >= max B]
         (the kernel's derivative of the max, off ties: no division by the number of maximizers)

    $ verigrad certify f.py:f --shape x=n,24 --shape 'mask=n,25:bool' --assume 'any(mask, -1)'
      -> PROVED (side conditions: the two attained-once conditions; assumes any(mask, -1))

With symbolic k the draws reach a masked-out row and the condition is refused; at a
concrete k = 24 (or with ``--min k=20``) a draw masks all 24 entries of a row with
probability about 2^-24, so none does. At mask[0, :24] all false, mask[0, 24] true
(any(mask, -1) holds), the forward is finite (min x - 1) and JAX ties all 24 entries,
averaging: jax.vjp of ``f.fun`` gives 1.0 at argmin x[0], the custom backward 24.0.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad

K = 24


def _b(x, mask):
    low = jnp.min(x, -1, keepdims=True) - 1.0
    return jnp.where(mask[:, :x.shape[1]], x, low)


def _fwd(x, mask):
    return jnp.max(_b(x, mask), -1)


def _bwd(res, g):
    x, mask = res
    B = _b(x, mask)
    T = jnp.where(B >= jnp.max(B, -1, keepdims=True), 1.0, 0.0)
    mk = jnp.where(mask[:, :x.shape[1]], 1.0, 0.0)
    amin = jnp.where(x <= jnp.min(x, -1, keepdims=True), 1.0, 0.0)
    return g[:, None] * (T * mk + jnp.sum(T * (1.0 - mk), -1, keepdims=True) * amin), None


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x, mask: (_fwd(x, mask), (x, mask)), _bwd)
    return f


def test_rt18_the_backward_is_wrong_where_a_row_of_the_slice_is_masked():
    f = _f()
    with jax.enable_x64(True):
        x = jnp.asarray(np.random.default_rng(0).normal(size=(2, K)))
        mask = np.zeros((2, K + 1), bool)
        mask[:, K] = True           # any(mask, -1) holds; row 0 of mask[:, :K] is all false
        mask[1, 3] = True
        mask = jnp.asarray(mask)
        assert bool(jnp.all(jnp.any(mask, -1)))
        assert np.all(np.isfinite(np.asarray(f.fun(x, mask))))
        g = jnp.ones(2)
        got = np.asarray(jax.vjp(lambda x: f(x, mask), x)[1](g)[0])
        want = np.asarray(jax.vjp(lambda x: f.fun(x, mask), x)[1](g)[0])
    j = int(np.argmin(np.asarray(x[0])))
    assert abs(want[0, j] - 1.0) < 1e-12 and abs(got[0, j] - K) < 1e-12
    assert np.allclose(got[1], want[1])         # a row with a true entry in the slice is right


def test_rt18_not_proved():
    cert = verigrad.certify(_f(), {"x": f"n, {K}", "mask": f"n, {K + 1}:bool"}, assume=["any(mask, -1)"])
    assert cert.status != "PROVED", cert.side_conditions
