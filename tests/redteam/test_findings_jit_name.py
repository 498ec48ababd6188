"""Red team RT-12 (fixed: the body is compared with jnp's, traced afresh): the importer models any jitted call *named* ``remainder`` (or
``floor_divide``) as jnp's remainder ``t - k floor(t / k)`` (or ``floor(t / k)``); it
looks at the name only, never at the body, so a user's own helper of that name is given
jnp's semantics.

``jaxpr_perm._jit`` matches ``eqn.params["name"] in ("floor_divide", "remainder")`` with
integer data and a size-expression divisor and builds ``IntDiv`` from it; the call's own
jaxpr is never imported. Translation validation is the only check, and it draws integer
data in [-20, 21], 100..5000 and around compared constants with ``abs(c) < 1e6``
(``inputs.integer_values``), so a helper that agrees with jnp's remainder below 10**6 is
never seen to differ:

    @jax.jit
    def remainder(t, k):                 # a user helper that shares jnp's name
        return jnp.minimum(t, 1_000_000) % k

    @jax.custom_vjp
    def fn(x, idx):
        return x * (remainder(idx, 3) == 0)
    fn.defvjp(lambda x, idx: (fn(x, idx), idx),
              lambda idx, dy: (dy * (idx % 3 == 0), None))

    verigrad certify f.py:fn --shape x=n --shape idx=n:int32   -> PROVED (no assumptions)

At idx = 1_000_002 (an ordinary int32): the forward's mask is min(idx, 10**6) % 3 = 1 != 0,
so J^T dy = 0, while the backward gives dy (1_000_002 % 3 == 0). No rounding or overflow.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad


@jax.jit
def remainder(t, k):                     # named like jnp.remainder; not jnp.remainder
    return jnp.minimum(t, 1_000_000) % k


def _fwd(x, idx):
    return x * (remainder(idx, 3) == 0)


def _bwd(idx, dy):
    return dy * (idx % 3 == 0), None


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x, idx: (_fwd(x, idx), idx), _bwd)
    return f


def test_rt12_the_backward_is_wrong_past_the_cap():
    x = jnp.array([1.5, -2.0, 0.25], jnp.float32)
    idx = jnp.array([1_000_002, 4, 1_000_001], jnp.int32)
    dy = jnp.ones(3, jnp.float32)
    got = np.asarray(jax.vjp(lambda x: _f()(x, idx), x)[1](dy)[0])
    want = np.asarray(jax.vjp(lambda x: _fwd(x, idx), x)[1](dy)[0])
    assert want.tolist() == [0.0, 0.0, 0.0] and got.tolist() == [1.0, 0.0, 0.0]


def test_rt12_not_proved():
    cert = verigrad.certify(_f(), shapes={"x": "n", "idx": "n:int32"})
    assert cert.status != "PROVED", (cert.side_conditions, cert.assumptions)


def _pair(fwd, bwd):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x, idx: (fwd(x, idx), idx), bwd)
    return f


def test_rt12_jnps_own_remainder_and_floor_divide_still_read_exactly():
    # the same mask through jnp's functions on both sides: PROVED (their bodies match)
    fwd = lambda x, idx: x * (jnp.remainder(idx // 2, 3) == 0)
    ok = lambda idx, dy: (dy * ((idx // 2) % 3 == 0), None)
    assert verigrad.certify(_pair(fwd, ok), shapes={"x": "n", "idx": "n:int32"}).status == "PROVED"
    wrong = lambda idx, dy: (dy * ((idx // 2) % 3 == 1), None)
    assert verigrad.certify(_pair(fwd, wrong), shapes={"x": "n", "idx": "n:int32"}).status == "REFUTED"
