"""Regression tests of issue 11, cases 1-4 (the jaxpr importer): each wrong backward the
issue found PROVED is now REFUTED (with a counterexample JAX confirms) or UNKNOWN, never
PROVED; the correct twins of the same functions are PROVED. A refusal of the importer
(``JaxprImportError``) counts as UNKNOWN: the certificate then claims nothing."""
import jax.numpy as jnp
import pytest
from jax import lax

import verigrad
from verigrad.frontends.jaxpr import JaxprImportError


def status(forward, backward, shapes) -> str:
    try:
        return verigrad.certify_vjp(forward, backward, shapes=shapes).status
    except JaxprImportError:
        return "UNKNOWN"


def refuted(forward, backward, shapes):
    """The wrong backward must not be PROVED; where the import is accepted, the kernel's
    failure must come with a counterexample JAX confirms."""
    cert = verigrad.certify_vjp(forward, backward, shapes=shapes)
    assert cert.status == "REFUTED", (cert.status, cert.detail)
    return cert


# -- case 1: integer data compared with an index (depends on the kernel deciding integer
# comparisons [u >= 0] among integer-valued terms; the importer writes them so) -----------------

def _mask_lt(x, n):
    return jnp.where(jnp.arange(x.shape[0]) < n, x, 0.0)


def _mask_ge(x, n):
    return jnp.where(jnp.arange(x.shape[0]) >= n, x, 0.0)


def _mask_sum(x, lens):
    return jnp.where(jnp.arange(x.shape[0]) < jnp.sum(lens), x, 0.0)


CASE1_WRONG = [
    ("< forward, <= backward", _mask_lt,
     lambda x, n, g: (jnp.where(jnp.arange(x.shape[0]) <= n, g, 0.0), None), {"x": "m", "n": ":int32"}),
    (">= forward, > backward", _mask_ge,
     lambda x, n, g: (jnp.where(jnp.arange(x.shape[0]) > n, g, 0.0), None), {"x": "m", "n": ":int32"}),
    ("a length that is a sum of int32 entries", _mask_sum,
     lambda x, lens, g: (jnp.where(jnp.arange(x.shape[0]) <= jnp.sum(lens), g, 0.0), None),
     {"x": "m", "lens": "k:int32"}),
    ("integer data converted to float", lambda x, n: jnp.where(jnp.arange(x.shape[0]) < n.astype(jnp.float64), x, 0.0),
     lambda x, n, g: (jnp.where(jnp.arange(x.shape[0]) <= n.astype(jnp.float64), g, 0.0), None),
     {"x": "m", "n": ":int32"}),
]


@pytest.mark.parametrize("name,forward,backward,shapes", CASE1_WRONG, ids=[c[0] for c in CASE1_WRONG])
def test_case1_off_by_one_mask_against_integer_data_is_refuted(name, forward, backward, shapes):
    refuted(forward, backward, shapes)


def test_case1_correct_masks_are_proved():
    assert status(_mask_lt, lambda x, n, g: (jnp.where(jnp.arange(x.shape[0]) < n, g, 0.0), None),
                  {"x": "m", "n": ":int32"}) == "PROVED"
    assert status(_mask_ge, lambda x, n, g: (jnp.where(jnp.arange(x.shape[0]) >= n, g, 0.0), None),
                  {"x": "m", "n": ":int32"}) == "PROVED"


# -- case 2: bitwise operations on integers are arithmetic, not logic -----------------------------

def _odd(x):
    return x * (jnp.arange(x.shape[0]) & 1)


def test_case2_and_read_as_logic_is_refuted():
    cert = refuted(_odd, lambda x, dy: (dy * jnp.arange(x.shape[0]),), {"x": "n"})
    assert cert.counterexample.sizes["n"] >= 3      # wrong from n = 3 on: index 2 has 2 & 1 = 0


def test_case2_or_read_as_logic_is_refuted():
    refuted(lambda x: x * (jnp.arange(x.shape[0]) | 1), lambda x, dy: (dy,), {"x": "n"})


def test_case2_not_of_integer_data_is_the_complement():
    forward = lambda x, k: x * ~k  # noqa: E731
    refuted(forward, lambda x, k, dy: (dy * (1 - k), None), {"x": "n", "k": "n:int32"})
    assert status(forward, lambda x, k, dy: (dy * (-1 - k), None), {"x": "n", "k": "n:int32"}) == "PROVED"


def test_case2_correct_twin_is_proved():
    assert status(_odd, lambda x, dy: (dy * (jnp.arange(x.shape[0]) & 1),), {"x": "n"}) == "PROVED"
    assert status(_odd, lambda x, dy: (dy * (jnp.arange(x.shape[0]) % 2),), {"x": "n"}) == "PROVED"


def test_case2_bitwise_of_integer_data_is_unknown_never_proved():
    """``k & 1`` of an int32 argument needs a floor of a data term: refused (UNKNOWN)."""
    forward = lambda x, k: x * (k & 1)  # noqa: E731
    assert status(forward, lambda x, k, dy: (dy * (k & 1), None), {"x": "n", "k": "n:int32"}) == "UNKNOWN"
    assert status(forward, lambda x, k, dy: (dy * k, None), {"x": "n", "k": "n:int32"}) == "UNKNOWN"


# -- case 3: dynamic_slice clamps its start -----------------------------------------------------

def _tail(x):
    return lax.dynamic_slice(x, (x.shape[0] - 1,), (2,))    # past the end: XLA reads x[n-1], x[n]


def test_case3_backward_ignoring_the_clamp_is_refuted():
    refuted(_tail, lambda x, dy: (jnp.concatenate([jnp.zeros(x.shape[0] - 1), dy[:1]]),), {"x": "n+1"})
    refuted(_tail, lambda x, dy: (jnp.concatenate([jnp.zeros(x.shape[0] - 2), dy[::-1]]),), {"x": "n+1"})


def test_case3_clamped_backward_is_proved():
    assert status(_tail, lambda x, dy: (lax.dynamic_update_slice(jnp.zeros_like(x), dy, (x.shape[0] - 1,)),),
                  {"x": "n+1"}) == "PROVED"
    assert status(_tail, lambda x, dy: (jnp.concatenate([jnp.zeros(x.shape[0] - 2), dy]),),
                  {"x": "n+1"}) == "PROVED"


# -- case 4: is_finite is the domain of the partial operations ---------------------------------

def _guarded(x):
    return jnp.where(jnp.isfinite(jnp.log(x + 4)), x, -x)


def test_case4_is_finite_read_as_one_is_refuted():
    refuted(_guarded, lambda x, dy: (dy,), {"x": "n"})


def test_case4_correct_twin_is_proved():
    assert status(_guarded, lambda x, dy: (jnp.where(x + 4 > 0, dy, -dy),), {"x": "n"}) == "PROVED"


# -- red team: more wrong backwards, each exploiting a rule made exact for issue 11 ---------------

def _io(x):
    return jnp.arange(x.shape[0])


RED_TEAM = [
    ("x & 2 read as x & 1", lambda x: x * (_io(x) & 2), lambda x, dy: (dy * (_io(x) & 1),), {"x": "n"}),
    ("x | 2 read as x + 2", lambda x: x * (_io(x) | 2), lambda x, dy: (dy * (_io(x) + 2),), {"x": "n"}),
    ("x ^ 1 read as logic", lambda x: x * (_io(x) ^ 1), lambda x, dy: (dy * (1 - _io(x)),), {"x": "n"}),
    ("shift right read as halving", lambda x: x * (_io(x) >> 1), lambda x, dy: (dy * _io(x) / 2,), {"x": "n"}),
    ("shift of data", lambda x, k: x * (k << 1), lambda x, k, dy: (dy * k, None), {"x": "n", "k": "n:int32"}),
    ("rem truncates, % floors", lambda x: x * lax.rem(_io(x) - 3, 2), lambda x, dy: (dy * ((_io(x) - 3) % 2),),
     {"x": "n"}),
    ("div truncates, // floors", lambda x: x * lax.div(_io(x) - 3, 2), lambda x, dy: (dy * ((_io(x) - 3) // 2),),
     {"x": "n"}),
    ("unsigned index arithmetic wraps", lambda x: x * (jnp.arange(x.shape[0], dtype=jnp.uint8) - 1),
     lambda x, dy: (dy * (_io(x) - 1),), {"x": "n"}),
    ("select_n clamps an integer predicate", lambda x, k: lax.select_n(k, x, 2 * x, 3 * x),
     lambda x, k, dy: (dy * (1 + k), None), {"x": "n", "k": "n:int32"}),
    ("isnan of sqrt", lambda x: jnp.where(jnp.isnan(jnp.sqrt(x)), 0.0, x), lambda x, dy: (dy,), {"x": "n"}),
    ("NaN compares false", lambda x: jnp.where(jnp.sqrt(x) < 1, x, 0.0), lambda x, dy: (jnp.where(x < 1, dy, 0.0),),
     {"x": "n"}),
    ("isinf of a finite value", lambda x: jnp.where(jnp.isinf(x), 0.0, x), lambda x, dy: (0 * dy,), {"x": "n"}),
    ("is_finite of log", lambda x: jnp.where(jnp.isfinite(jnp.log(x)), x, 0.0), lambda x, dy: (dy,), {"x": "n"}),
    ("is_finite of log1p", lambda x: jnp.where(jnp.isfinite(jnp.log1p(x)), x, 0.0),
     lambda x, dy: (jnp.where(x > 0, dy, 0.0),), {"x": "n"}),
    ("is_finite of rsqrt", lambda x: jnp.where(jnp.isfinite(lax.rsqrt(x)), x, 2 * x),
     lambda x, dy: (jnp.where(x > 0, dy, -dy),), {"x": "n"}),
    ("is_finite of a sum of logs", lambda x: jnp.where(jnp.isfinite(jnp.sum(jnp.log(x))), jnp.sum(x), 0.0),
     lambda x, dy: (dy * jnp.ones_like(x),), {"x": "n"}),
    ("dynamic_update_slice clamps", lambda x, y: lax.dynamic_update_slice(x, y, (x.shape[0] - 1,)),
     lambda x, y, dy: (jnp.concatenate([dy[:-1], jnp.zeros(1)]), dy[-2:]), {"x": "n+1", "y": "2"}),
    ("dynamic_slice at -1 is the last entry", lambda x: lax.dynamic_slice(x, (-1,), (1,)),
     lambda x, dy: (jnp.concatenate([dy, jnp.zeros(x.shape[0] - 1)]),), {"x": "n+1"}),
    ("gather in clip mode clamps", lambda x: x.at[jnp.asarray(x.shape[0]) + 1].get(mode="clip") * x[0],
     lambda x, dy: (jnp.concatenate([(dy * x[-2])[None], jnp.zeros(x.shape[0] - 1)]),), {"x": "n+2"}),
    ("gather in fill mode fills", lambda x: x.at[jnp.asarray(x.shape[0])].get(mode="fill", fill_value=0.0) + x[0],
     lambda x, dy: (jnp.concatenate([dy[None], jnp.zeros(x.shape[0] - 2), dy[None]]),), {"x": "n+1"}),
    ("max(x, x) is x", lambda x: jnp.maximum(x, x), lambda x, dy: (0 * dy,), {"x": "n"}),
    ("one-hot of argmax", lambda x: x * (jnp.argmax(x) == jnp.arange(x.shape[0])), lambda x, dy: (0 * dy,),
     {"x": "n"}),
    ("sign of integer data", lambda x, k: x * jnp.sign(k), lambda x, k, dy: (dy, None), {"x": "n", "k": "n:int32"}),
    ("abs of integer data", lambda x, k: x * jnp.abs(k - 2), lambda x, k, dy: (dy * (k - 2), None),
     {"x": "n", "k": "n:int32"}),
    ("clip of integer data", lambda x, k: x * jnp.clip(k, 0, 2), lambda x, k, dy: (dy * k, None),
     {"x": "n", "k": "n:int32"}),
    ("booleans compared as logic", lambda x: x * ((x > 0) == (x > 1)), lambda x, dy: (0 * dy,), {"x": "n"}),
    ("not of a boolean", lambda x: x * (~(x > 0)), lambda x, dy: (dy * (x > 0),), {"x": "n"}),
    ("any is not all", lambda x, b: x * jnp.any(b), lambda x, b, dy: (dy * jnp.all(b), None),
     {"x": "n", "b": "n:bool"}),
    ("integer data against a constant", lambda x, k: jnp.where(k > 2, x, 0.0),
     lambda x, k, dy: (jnp.where(k >= 2, dy, 0.0), None), {"x": "n", "k": "n:int32"}),
    ("integer data as a float against a constant", lambda x, k: jnp.where(k.astype(jnp.float64) > 1.0, x, 0.0),
     lambda x, k, dy: (jnp.where(k >= 1, dy, 0.0), None), {"x": "n", "k": "n:int32"}),
    ("a cumulative sum of integer data as a mask", lambda x, k: x * (jnp.cumsum(k) > 2),
     lambda x, k, dy: (dy * (jnp.cumsum(k) >= 2), None), {"x": "n", "k": "n:int32"}),
    ("integer division by a size", lambda x: x * lax.div(_io(x), x.shape[0] + 1),
     lambda x, dy: (dy * _io(x) / (x.shape[0] + 1),), {"x": "n"}),
]


@pytest.mark.parametrize("name,forward,backward,shapes", RED_TEAM, ids=[r[0] for r in RED_TEAM])
def test_red_team_wrong_backward_is_refuted(name, forward, backward, shapes):
    refuted(forward, backward, shapes)
