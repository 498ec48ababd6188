"""Red team RT-17 (fixed: a scaled index expression states that it fits the integer type JAX
computes it in, int32 with x64 off): certify proves the program JAX traces under x64, not the one JAX runs by
default. With x64 off (JAX's default) ``jnp.arange`` and Python-int arithmetic on it are
int32, and an index expression can wrap; under x64 they are int64 and never do.

``frontends.jaxpr.trace`` traces every function inside ``jax.enable_x64(True)``, and
translation validation runs inside it too (``validate``). So ``jnp.arange(n)`` is an int64
iota in the certified program, and the importer's rule that index expressions of the sizes
fit their dtype (``jaxpr_rules``: "Poly arithmetic is exact: a size is taken to fit its
dtype, and so are the index expressions built from sizes"; docs/primitives.md) holds there
for every realistic size. The program the user runs without x64 computes the same iota in
int32, where ``i * 65536`` wraps to a negative number at ``i = 32768``. Neither the
certificate (JSON or report: "holds for every size ... float rounding, overflow and
underflow are outside the claim") nor the docs say the claim is about x64 integer types,
and nothing is recorded: for integer *data* the same product states "integer arithmetic
does not overflow int32", for an index expression nothing.

    def _keep(x):                     # position code i * 65536 (a packed (row, col) key, say)
        i = jnp.arange(x.shape[0])
        return ((i * 65536) >= 0).astype(x.dtype)

    @jax.custom_vjp
    def f(x):
        return x * _keep(x)
    f.defvjp(lambda x: (f(x), None), lambda r, g: (g,))

    $ verigrad certify f.py:f --shape x=n          -> PROVED (no side conditions, no assumptions)

With x64 off, at every n >= 32769 the forward zeroes entry 32768 (``32768 * 65536 =
2^31`` wraps to ``-2^31``), so J^T dy is 0 there, and the backward returns g: jax.vjp of
the decorated function gives 1.0 at index 32768, jax.vjp of ``f.fun`` gives 0.0 (with x64
on both give 1.0). The same rule with an explicit narrow iota needs no x64 switch:
``jnp.arange(n, dtype=jnp.int8) >= 0`` is read as true, XLA wraps at n >= 129 (the
documented "index expressions fit their dtype" caveat, which is where x64 hides the
int32 case).

Root cause: ``jaxpr.trace`` (and ``validate``) fix ``jax_enable_x64`` on, so the default
integer dtype of the certified program is not the one the user's program has, and the
importer's unrecorded assumption that index expressions fit their dtype is checked
against int64 only.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad


def _keep(x):
    i = jnp.arange(x.shape[0])
    return ((i * 65536) >= 0).astype(x.dtype)


def _fwd(x):
    return x * _keep(x)


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), None), lambda r, g: (g,))
    return f


@pytest.mark.parametrize("x64", [False, True])
def test_rt17_the_backward_is_wrong_at_index_32768_without_x64(x64):
    n = 32769
    with jax.enable_x64(x64):
        x = jnp.ones(n)
        g = jnp.ones(n)
        got = np.asarray(jax.vjp(_f(), x)[1](g)[0])
        want = np.asarray(jax.vjp(_fwd, x)[1](g)[0])
    bad = np.nonzero(got != want)[0].tolist()
    assert bad == ([] if x64 else [32768]), bad
    if not x64:
        assert got[32768] == 1.0 and want[32768] == 0.0


def test_rt17_the_certificate_states_that_the_index_arithmetic_fits_int32():
    # PROVED about the program in exact integers, under the stated assumption that the
    # scaled index does not wrap in int32 (JAX's integer type with x64 off), as integer
    # data arithmetic states that it does not overflow
    cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert any("index arithmetic does not overflow int32" in a for a in cert.assumptions), cert.assumptions
    assert any("index arithmetic does not overflow int32" in c for c in cert.side_conditions)


def test_rt17_with_x64_on_the_integers_are_64_bit_and_nothing_is_assumed():
    with jax.enable_x64(True):
        cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status == "PROVED" and not cert.assumptions, cert.assumptions


def test_rt17_a_narrow_iota_states_that_its_size_fits():
    def fwd(x):
        return x * (jnp.arange(x.shape[0], dtype=jnp.int8) >= 0).astype(x.dtype)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), None), lambda r, g: (g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert any("fits int8" in a for a in cert.assumptions), cert.assumptions


def test_rt17_plain_index_arithmetic_assumes_nothing():
    def fwd(x):
        return x * (jnp.arange(x.shape[0]) + 1 > 0).astype(x.dtype)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), None), lambda r, g: (g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED" and not cert.assumptions, cert.assumptions
