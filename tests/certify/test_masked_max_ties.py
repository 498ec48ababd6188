"""The condition that a maximum is attained once (``3/2 - #{b: B(b) = M} > 0``, off its
ties) for the importer's row maximum of a -inf mask, ``M = max_b([mask_b] s_b + (1 -
[mask_b])(min s - 1))``, whose cases the kernel multiplies out (``conditions.tie_cover``).

With ``any(mask, -1)`` the masked entries (``min s - 1``, below every unmasked entry)
never attain ``M``, so it fails only where two unmasked entries tie, ``s_b = s_c``:
measure zero. Without the assumption a row masked throughout has every entry at
``min s - 1``, tied identically, and the condition is refused. A masked log-sum-exp's
backward is PROVED under the assumption (it was UNKNOWN on this condition); a wrong one
is REFUTED."""
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

import verigrad
from _max_conditions import b, d, i, mask, masked_max, n, s, verdict
from verigrad.certify.conditions import tie_cover
from verigrad.kernel import Num, RealCond, ReduceMax, Sum


def _sample(sizes, rng):        # every row of mask has a true entry (the assumption's draws)
    shape = (sizes[n], sizes[d])
    m = rng.random(shape) < 0.5
    m[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = True
    return {s: rng.normal(size=shape), mask: m.astype(float)}


def _verdict(term, alive):
    return verdict("positive", term, _sample, alive=alive)


def _once(M, scale=1):
    return Num(Fraction(3, 2)) - Num(scale) * Sum(b, RealCond(M.body - M, ">="))


def test_attained_once_is_accepted_when_rows_are_alive():
    M = masked_max(i)
    assert tie_cover(_once(M), {mask: {1}}) is not None
    assert _verdict(_once(M), {mask: {1}}) is None


def test_without_live_rows_masked_entries_tie_identically():
    M = masked_max(i)
    assert "agree" in _verdict(_once(M), {})
    assert "agree" in _verdict(_once(M), {mask: {0}})           # alive along the other axis


def test_only_the_attained_once_condition_is_read_so():
    M = masked_max(i)
    assert tie_cover(_once(M, 2), {mask: {1}}) is None          # not the count of maximizers
    assert _verdict(_once(M, 2), {mask: {1}}) is not None


def test_entries_that_tie_identically_are_refused():
    M = ReduceMax(b, s[i, 0] + Num(0) * s[i, b])          # every entry is s[i, 0]
    assert _verdict(Num(Fraction(3, 2)) - Sum(b, RealCond(M.body - M, ">=")), {}) is not None


# -- end to end: a masked log-sum-exp -----------------------------------------------------------

def _lse(x, mask):
    t = jnp.where(mask, x, -jnp.inf)
    m = jnp.max(t, -1)
    return m + jnp.log(jnp.sum(jnp.exp(t - m[:, None]), -1))


def _probs(x, mask):
    t = jnp.where(mask, x, -jnp.inf)
    e = jnp.exp(t - jnp.max(t, -1, keepdims=True))
    return e / jnp.sum(e, -1, keepdims=True)


def _f(scale):
    f = jax.custom_vjp(_lse)
    f.defvjp(lambda x, mask: (_lse(x, mask), (x, mask)),
             lambda res, g: (scale * g[:, None] * _probs(*res), None))
    return f


SHAPES = {"x": "n, k", "mask": "n, k:bool"}


def test_a_masked_logsumexp_backward_is_proved_with_live_rows():
    cert = verigrad.certify(_f(1.0), SHAPES, assume=["any(mask, -1)"])
    assert cert.status == "PROVED", cert.detail
    cert = verigrad.certify(_f(1.0), SHAPES, assume=["any(mask, 0)"], search_seconds=2)
    assert cert.status != "PROVED"


def test_a_wrong_masked_logsumexp_backward_is_refuted():
    cert = verigrad.certify(_f(0.5), SHAPES, assume=["any(mask, -1)"])
    assert cert.status == "REFUTED"
    assert np.all(np.any(np.asarray(cert.counterexample.inputs["mask"]), -1))
