"""Red team RT22 (2026-12-04, a helper against certify's side conditions; fixed): a backward
that float32 rounding makes wrong on a whole region was PROVED.

``u(x) = (x + 1e8) - 1e8`` is ``x`` in the reals (and within 1e-8 of it in float64, where
validation runs), but exactly 0 in float32 for every |x| < 4, op by op as JAX runs it with
x64 off (its default; under jit XLA happens to simplify it to ``x``). A backward masking by
``u(x) > 0`` for a forward masking by ``u(x) >= 0`` is the exact VJP in the reals, off the
kink, and 0 where JAX's derivative is 1 at every N(0,1) input in float32. The exact-real
claim leaves rounding out, but here rounding decides the code: now the derivative check is
also run in float32, each operation rounded as written (XLA's algebraic simplifier off), and
a backward that differs on a tenth of the entries is not PROVED (UNKNOWN, the rounding named).
"""
import jax
import numpy as np

import verigrad


def _u(x):
    return (x + 1e8) - 1e8


def _fwd(x):
    return x * (_u(x) >= 0).astype(x.dtype)


def _custom(mask):
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), lambda x, g: (g * mask(_u(x)).astype(x.dtype),))
    return f


def test_a_backward_rounding_makes_wrong_is_not_proved():
    f = _custom(lambda v: v > 0)
    x = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    assert np.all(jax.vjp(f, x)[1](np.ones_like(x))[0] == 0)         # as JAX runs it: 0 everywhere
    assert np.all(jax.vjp(_fwd, x)[1](np.ones_like(x))[0] == 1)      # the forward's derivative: 1
    cert = verigrad.certify(f, {"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "float32" in cert.wrt["x"].detail and "rounding decides the code" in cert.wrt["x"].detail


def test_the_same_code_with_a_backward_that_rounds_alike_is_still_proved():
    cert = verigrad.certify(_custom(lambda v: v >= 0), {"x": "n"})
    assert cert.status == "PROVED", (cert.status, cert.detail)
