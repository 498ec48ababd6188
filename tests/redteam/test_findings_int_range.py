"""Red team RT-38 (helper-1, fixed): integer index arithmetic wraps around in XLA, and the
certificate said nothing. ``verigrad certify`` read every integer expression of the sizes
and indices as an exact integer, stating that it fits its dtype only for a *scaled* one
(RT-17: ``i * 65536``), so each of these wrong backwards (the forward ``x * keep(x)``,
the backward ``g``, i.e. ``keep = 1``) was PROVED with no assumption, though XLA's
``keep`` is 0 at large enough indices::

    (i + 2147483000) > 0                    int32: wraps from i = 648 (x64 on or off)
    arange(n) + 2147483647 > 0              JAX's default int, int32 with x64 off: from i = 1
    arange(n, int8) + int8(100) >= 0        from i = 28 (stated only 'n fits int8')
    arange(n, uint8) + 200 >= 200           from i = 56
    shift_left(arange(n, int32), 20) >= 0   from i = 2048
    arange(n).astype(int8) >= 0             from i = 128
    sum(full(n, 2^20, int32)) >= 0          every entry, from n = 2048
    (i * 2^24 as float).astype(int32) ==    a float converted to int32 saturates: from i = 128
        ((i + 1) * 2^24).astype(int32)

Also: a function read its dtypes while tracing (``1.0 if arange(1).dtype == int64 else
2.0``) and was certified as traced with x64 on, while with x64 off (JAX's default) it
computes twice as much; and a shift by 40 of JAX's default int was read against the
trace's 64 bits, not the 32 it runs in.

Fixed: every integer expression a rule computes is bounded over all index values and all
sizes below 2^31 (the certificate's scope says so: ``jaxpr_rules.index_range``); where it
may leave its dtype's range the certificate states the sizes up to which it stays inside
(``fits``); an integer constant wraps exactly; every rule reads integer widths as XLA
runs them (int32 for JAX's default int with x64 off); and a function whose x64-off trace
is not its x64 trace with narrower types is refused (``frontends/jaxpr_x64``).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad


def _make(keep, dtype=None):
    def fwd(x):
        return x * keep(x).astype(x.dtype)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (f(x), None), lambda r, g: (g,))
    return f


C20 = jnp.int32(1 << 20)
CASES = {
    "offset_int32": (lambda x: (jnp.arange(x.shape[0], dtype=jnp.int32) + 2147483000) > 0, 700),
    "offset_default": (lambda x: (jnp.arange(x.shape[0]) + 2147483647) > 0, 4),
    "offset_int8": (lambda x: (jnp.arange(x.shape[0], dtype=jnp.int8) + jnp.int8(100)) >= 0, 40),
    "offset_uint8": (lambda x: (jnp.arange(x.shape[0], dtype=jnp.uint8) + jnp.uint8(200)) >= 200, 100),
    "shift_left": (lambda x: jnp.left_shift(jnp.arange(x.shape[0], dtype=jnp.int32), jnp.int32(20)) >= 0, 2100),
    "cast_int8": (lambda x: jnp.arange(x.shape[0]).astype(jnp.int8) >= 0, 200),
    "sum": (lambda x: jnp.broadcast_to(jnp.sum(jnp.full(x.shape, C20, jnp.int32)), x.shape) >= 0, 2048),
    "saturate": (lambda x: (jnp.arange(x.shape[0], dtype=jnp.float32) * 2.0 ** 24).astype(jnp.int32)
                 == ((jnp.arange(x.shape[0], dtype=jnp.float32) + 1) * 2.0 ** 24).astype(jnp.int32), 200),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_backward_is_wrong_where_xla_wraps(name):
    keep, n = CASES[name]
    f = _make(keep)
    x, g = jnp.ones(n), jnp.ones(n)
    got = np.asarray(jax.vjp(f, x)[1](g)[0])
    want = np.asarray(jax.vjp(f.fun, x)[1](g)[0])
    assert not np.array_equal(got, want), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_not_proved_without_saying_up_to_which_size(name):
    keep, n = CASES[name]
    cert = verigrad.certify(_make(keep), shapes={"x": "n"})
    if cert.status == "PROVED":
        limits = [a for a in cert.assumptions if "for sizes up to" in a]
        assert limits, cert.assumptions
        # the largest size the certificate covers is below the size where it is wrong
        ups = [int(a.rsplit("for sizes up to ", 1)[1].rstrip(")")) for a in limits]
        assert min(ups) < n, (ups, n)


def test_a_fitting_offset_assumes_nothing():
    """The neighbour: ``i + 1`` fits int32 for every size below 2^31, ``n - 1 - i`` too."""
    f = _make(lambda x: (jnp.arange(x.shape[0]) + 1 > 0) & (x.shape[0] - 1 - jnp.arange(x.shape[0]) >= 0))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED" and not cert.assumptions, cert.assumptions


def test_a_constant_wraps_exactly():
    """``int8(100) + int8(100)`` is -56 in XLA: the kernel reads -56, so the backward that
    takes the sum as positive is not proved."""
    f = _make(lambda x: (jnp.full(x.shape, 100, jnp.int8) + jnp.int8(100)) > 0)
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", cert.status


def _branching():
    def fwd(x):
        return x * (1.0 if jnp.arange(1).dtype == jnp.int64 else 2.0)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (f(x), None), lambda r, g: (g,))
    return f


def test_a_function_that_reads_its_dtypes_while_tracing_is_refused():
    cert = verigrad.certify(_branching(), shapes={"x": "n"})
    assert cert.status == "UNKNOWN" and "traces differently with x64 off" in str(cert.as_dict()), cert.as_dict()


def test_with_x64_on_the_x64_program_is_certified():
    with jax.enable_x64(True):
        cert = verigrad.certify(_branching(), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.as_dict()


def test_a_shift_past_int32_is_read_in_int32():
    """``arange(n) << 40`` is 0 in int32 (past the width), not in int64: the backward that
    keeps only entry 0 is wrong with x64 off and must not be proved."""
    def fwd(x):
        return x * ((jnp.arange(x.shape[0]) << 40) == 0).astype(x.dtype)
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (f(x), None), lambda r, g: (g * (jnp.arange(g.shape[0]) == 0).astype(g.dtype),))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED", cert.status


def test_rt39_int_min_divided_by_minus_one_states_its_range():
    """RT-39 (helper-6): ``lax.div(C - i, -1)`` is ``i - C`` over the integers, but XLA's
    ``INT_MIN / -1`` is INT_MIN: at n = 2^20, where ``C - i`` reaches -2^31, the forward's
    ``> 0`` is false. The quotient states the sizes it stays inside for, below that one."""
    from jax import lax
    c = -2 ** 31 + 2 ** 20 - 1
    f = _make(lambda x: lax.div(jnp.int32(c) - jnp.arange(x.shape[0], dtype=jnp.int32), jnp.int32(-1)) > 0)
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status != "PROVED" or any("div at" in a and "for sizes up to 1048575" in a for a in cert.assumptions), \
        cert.assumptions
    # the constant case wraps exactly: INT_MIN / -1 is INT_MIN, so 'keep' is 0 and the backward g is wrong
    g = _make(lambda x: lax.div(jnp.full(x.shape, -2 ** 31, jnp.int32), jnp.int32(-1)) > 0)
    assert verigrad.certify(g, shapes={"x": "n"}).status != "PROVED"
