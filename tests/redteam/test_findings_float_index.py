"""Red team RT-36 (F3) and RT-37 (F4), fixed: float values meeting index expressions were
read past what the float is, and wrong backwards were PROVED.

RT-36 (``/work/scratch/redteam/i_const_scaled.py``). A float constant is read as the
simplest number within 4 ulps (``jaxpr_scalar.reading``). ``C = float32(0.0009999999)``
(one ulp below float32(0.001), exactly 0.000999999931...) is read as 1/1000, so

    i = arange(n, dtype=float32)
    fwd(x) = x * where(i * C >= 1, 2, 1)          # exact and XLA: 2 from i = 1001
    bwd(x, g) = g * where(arange(n) >= 1000, 2, 1)

was PROVED: the kernel's mask switched at 1000. Wrong at index 1000 for every input at
every n >= 1001; translation validation runs sizes up to 13. On data a reading a few ulps
off moves a threshold by a few ulps; on a value of the indices it moved it by a whole entry.

Fixed (``frontends/jaxpr_exact.py``): a value computed from indices, sizes, integer or
boolean values and constants alone carries a twin with each float constant read as the
rational it is; a rule that decides something of it (a comparison, a sign, a conversion
to an integer or a boolean, an order, ``is_finite``, a pole: a divisor or a log / root
argument not known positive) reads the twin, so ``[i * C >= 1]`` is ``[4294967 i - 2^32
>= 0] = [i >= 1001]``; smooth uses keep the reading (``(1 - 0.1) * onehot + 0.1 / k``
still sums to one, ``i * 0.57735026`` is still ``i / sqrt(3)``). A comparison of index
expressions with rational coefficients is an integer comparison
(``jaxpr_scalar.scaled_int_poly``).

RT-37 (``/work/scratch/redteam/b_bf16_iota.py``). ``arange(n, dtype=float16)`` (exact only
up to 2048) and ``arange(n).astype(bfloat16)`` (up to 256) were read as exact integers with
no assumption, so ``x * (1 + bf16(i) - i)`` with the backward ``g`` (wrong from n = 258) and
``x * (f16(i) + 1 > f16(i))`` with ``g`` (wrong from n = 2049) were PROVED. Integer *data*
converted to a float already stated "the integers converted to ... are exact in it".

Fixed: a float iota states ``the size n is at most 2^11 = 2048 (...; for sizes up to
2048)`` (float32: 2^24; float64: nothing, sizes are below 2^31), a concrete size past it
is refused; an index expression converted to a float type states the sizes up to which
it stays within ``2^(mantissa + 1)``; an integer constant that the float rounds is refused.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad

C = np.float32(0.0009999999)       # 1 ulp below float32(0.001)


def _pair(fwd, bwd):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), bwd)
    return f


def _i32(x):
    return jnp.arange(x.shape[0], dtype=jnp.float32)


def _idx(x):
    return jnp.arange(x.shape[0])


def _mask(p, x):
    return jnp.where(p, 2.0, 1.0).astype(x.dtype)


def _f3(threshold):
    return _pair(lambda x: x * _mask(_i32(x) * C >= 1, x), lambda x, g: (g * _mask(_idx(x) >= threshold, x),))


def _wrong_at(f, n):
    x = jnp.linspace(-2.0, 2.0, n)
    got = np.asarray(jax.vjp(f, x)[1](jnp.ones(n, x.dtype))[0])
    want = np.asarray(jax.vjp(f.fun, x)[1](jnp.ones(n, x.dtype))[0])
    return np.nonzero(got != want)[0].tolist()


def _proved(f, shape="n"):
    return verigrad.certify(f, shapes={"x": shape})


# -- RT-36 -----------------------------------------------------------------------------

def test_rt36_the_backward_switching_at_1000_is_wrong_there():
    assert _wrong_at(_f3(1000), 1000) == []
    assert _wrong_at(_f3(1000), 1001) == [1000]
    assert _wrong_at(_f3(1001), 1200) == []


def test_rt36_not_proved_and_the_exact_threshold_is():
    assert _proved(_f3(1000)).status != "PROVED"
    cert = _proved(_f3(1001))
    assert cert.status == "PROVED", cert.as_dict()
    assert all("float32" in a and "2^24" in a for a in cert.assumptions), cert.assumptions    # RT-37's only


def test_rt36_the_reading_itself_is_unchanged():
    from fractions import Fraction
    from verigrad.frontends.jaxpr_scalar import reading
    assert reading(float(C), np.float32) == Fraction(1, 1000)


# each: (a keep mask whose reading decides wrongly, the wrong backward, the right one)
VARIANTS = {
    # a constant as a select branch, then scaled and compared: 1000 C < 1 in exact arithmetic
    "branch": (lambda x: jnp.where(_idx(x) >= 0, C, np.float32(0)) * np.float32(1000) >= 1,
               lambda x, g: (2 * g,), lambda x, g: (g,)),
    # a piecewise constant value of the data: sign(x) * C * 1000 >= 1 never holds
    "sign": (lambda x: jnp.sign(x).astype(jnp.float32) * C * np.float32(1000) >= 1,
             lambda x, g: (g * _mask(x > 0, x),), lambda x, g: (g,)),
    # a pole: 1 / (i C - 1) is finite at every index (its reading is infinite at i = 1000)
    "pole": (lambda x: ~jnp.isfinite(1 / (_i32(x) * C - 1)),
             lambda x, g: (g * _mask(_idx(x) == 1000, x),), lambda x, g: (g,)),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_rt36_other_ways_a_reading_decides_are_read_exactly(name):
    keep, wrong, right = VARIANTS[name]
    fwd = lambda x: x * _mask(keep(x), x)     # noqa: E731
    assert _wrong_at(_pair(fwd, wrong), 1001) != []
    assert _wrong_at(_pair(fwd, right), 1001) == []
    assert _proved(_pair(fwd, wrong)).status != "PROVED"
    assert _proved(_pair(fwd, right)).status == "PROVED"


def test_rt36_a_scan_passes_the_twins_on():
    """Rows of a scanned value keep their exact twins: the imported mask switches at 1001."""
    from verigrad.frontends import ops
    from verigrad.frontends.jaxpr import ArgSpec, import_function
    from verigrad.kernel import IntCond, Theorem, prove_equal
    from verigrad.kernel.sizes import Poly

    def fwd(x):   # x: (4, n)
        xs = jnp.broadcast_to(jnp.arange(x.shape[1], dtype=jnp.float32) * C, x.shape)
        m, _ = jax.lax.scan(lambda c, r: (jnp.where(r >= 1, c * 0 + 2, c * 0 + 1), None),
                            jnp.zeros(x.shape[1:], x.dtype), xs)
        return x * m[None, :]
    imp = import_function(fwd, [ArgSpec("x", ("4", "n"))])
    (x,) = imp.variables
    want = ops.lam(list(x.shape), lambda a, b: x[a, b] * (1 + IntCond(Poly.sym(b), ">=", Poly.const(1001))))
    assert isinstance(prove_equal(want, imp.outputs[0].term()), Theorem)


NEIGHBOURS = {
    # exact constants decide as before
    "half": (lambda x: x * _mask(_i32(x) * 0.5 >= 3, x), lambda x, g: (g * _mask(_idx(x) >= 6, x),)),
    "tenth": (lambda x: x * _mask(_i32(x) * np.float32(0.1) >= 1, x), lambda x, g: (g * _mask(_idx(x) >= 10, x),)),
    # a half-integer index expression, read exactly: (i + 1/2) C >= 1 from i = 1000
    "half_offset": (lambda x: x * _mask((_i32(x) + 0.5) * C >= 1, x), lambda x, g: (g * _mask(_idx(x) >= 1000, x),)),
    # smooth uses keep the programmer's numbers: i * float32(1/sqrt(3)) is i / sqrt(3)
    "sqrt3": (lambda x: x * (_i32(x) * np.float32(1 / np.sqrt(3))), lambda x, g: (g * _i32(x) / np.sqrt(3.0),)),
    "sqrt_d": (lambda x: x * (_idx(x) / jnp.sqrt(x.shape[0])), lambda x, g: (g * _idx(x) / jnp.sqrt(x.shape[0]),)),
    # a float32 iota in a mask
    "mask32": (lambda x: x * (_i32(x) < 5).astype(x.dtype), lambda x, g: (g * (_idx(x) < 5).astype(x.dtype),)),
}


@pytest.mark.parametrize("name", sorted(NEIGHBOURS))
def test_rt36_true_neighbours_still_prove(name):
    cert = _proved(_pair(*NEIGHBOURS[name]))
    assert cert.status == "PROVED", cert.as_dict()


def test_rt36_label_smoothing_still_sums_to_one():
    """The reading stays where a discrete value only flows on: smoothed one-hot targets."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "examples" / "certify" / "cross_entropy.py"
    spec = importlib.util.spec_from_file_location("xent", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cert = verigrad.certify(mod.cross_entropy, shapes={"logits": "n, k", "labels": "n:int32"},
                            assume="0 <= labels < k")
    assert cert.status == "PROVED", cert.as_dict()


# -- RT-37 -----------------------------------------------------------------------------

def _bf16(x):
    i = _idx(x)
    return x * (1.0 + (i.astype(jnp.bfloat16).astype(jnp.float32) - i.astype(jnp.float32)).astype(x.dtype))


def _f16(x):
    i = jnp.arange(x.shape[0], dtype=jnp.float16)
    return x * (i + 1.0 > i).astype(x.dtype)


RT37 = {"bf16_cast": (_bf16, 258), "f16_iota": (_f16, 2049)}


@pytest.mark.parametrize("name", sorted(RT37))
def test_rt37_the_identity_backward_is_wrong_past_the_exact_integers(name):
    fwd, n = RT37[name]
    f = _pair(fwd, lambda x, g: (g,))
    assert _wrong_at(f, n - 1) == []
    assert _wrong_at(f, n) != []


@pytest.mark.parametrize("name", sorted(RT37))
def test_rt37_proved_only_for_the_sizes_where_it_is_true(name):
    fwd, n = RT37[name]
    cert = _proved(_pair(fwd, lambda x, g: (g,)))
    if cert.status == "PROVED":
        ups = [int(a.rsplit("for sizes up to ", 1)[1].rstrip(")")) for a in cert.assumptions if "for sizes up to" in a]
        assert ups and min(ups) < n, cert.assumptions


@pytest.mark.parametrize("name", sorted(RT37))
def test_rt37_a_concrete_size_past_them_is_not_proved(name):
    fwd, n = RT37[name]
    assert _proved(_pair(fwd, lambda x, g: (g,)), str(n + 10)).status != "PROVED"
    cert = _proved(_pair(fwd, lambda x, g: (g,)), "200")       # exact there: nothing to assume
    assert cert.status == "PROVED" and not cert.assumptions, cert.as_dict()


def test_rt37_a_float32_iota_states_2_to_the_24_and_float64_nothing():
    cert = _proved(_pair(*NEIGHBOURS["mask32"]))
    assert any("2^24" in a and "for sizes up to 16777216" in a for a in cert.assumptions), cert.assumptions
    f64 = _pair(lambda x: x * jnp.arange(x.shape[0], dtype=x.dtype), lambda x, g: (g * _idx(x).astype(x.dtype),))
    with jax.enable_x64(True):
        cert = _proved(f64)
    assert cert.status == "PROVED" and not cert.assumptions, cert.as_dict()


def test_rt37_an_integer_constant_the_float_rounds_is_refused():
    """``float16(4097)`` is 4096, so the mask is 0: read as 4097, the backward ``g`` (that of
    mask 1) would be PROVED."""
    keep = lambda x: ((_idx(x) * 0 + 4097).astype(jnp.float16).astype(jnp.float32)      # noqa: E731
                      == np.float32(4097)).astype(x.dtype)
    f = _pair(lambda x: x * keep(x), lambda x, g: (g,))
    assert _wrong_at(f, 5) == [0, 1, 2, 3, 4]
    cert = _proved(f)
    assert cert.status != "PROVED", cert.as_dict()
    assert "not exact in it" in str(cert.as_dict()) or cert.status == "REFUTED", cert.as_dict()
