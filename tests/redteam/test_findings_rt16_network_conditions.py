"""Red team RT16 (2026-12-03, a helper against ``verigrad.nn.almost_everywhere`` the hour it
landed; fixed): three networks accepted whose composed side conditions fail on a set of
positive measure, each with a backward wrong there.

- F1: the per-example evaluation ran at batch 1 (example 0 only), but a condition could
  depend on the example's index: ``dup`` with a mark ``[i = 0]`` added to example 0, then a
  pair maximum whose ties send nothing: the condition holds at example 0 only. Now the
  example index may appear only as the first index of a batch input's reads.
- F2: a drop-path site ``s`` is 0 or ``1/keep``, not a density, but was read as one (a
  shift ``s[i]``, a random real ``s``): a branch ``[0, 1]`` added under the site ties the
  pair wherever the example is dropped. Now each condition is shown for ``s = 0`` and for
  ``s`` a nonzero constant held out of the shifts, partials and evaluations.
- F3: float64 absorption read an identically zero condition as a steady nonzero value:
  ``(h + C) - C`` with ``C = 10^20 (sin(h)^2 + cos(h)^2)``. Now only integer polynomials are
  evaluated, at integer inputs, exactly.
"""
import jax.numpy as jnp
import pytest
from jax import lax

from verigrad.nn import builder as nb
from verigrad.nn.layers.core import Layer
from test_findings_rt15_vacuous_network import dup, pairmax


def _marked(x):
    B, n = x

    def forward(params, x):
        first = lax.broadcasted_iota(jnp.int32, x.shape, 0) == 0
        return jnp.concatenate([x, x + jnp.where(first, 1.0, 0.0).astype(x.dtype)], axis=1)
    return Layer("marked", (B, n), (B, 2 * n), forward, lambda params, x, dy: (dy[:, :n] + dy[:, n:], {}))


def _constant_pair(x):
    B, m = x
    n = m // 2
    return Layer("constant_pair", (B, m), (B, m),
                 lambda p, u: jnp.concatenate([0.0 * u[:, :n], 0.0 * u[:, n:] + 1.0], axis=1),
                 lambda p, u, dy: (jnp.zeros_like(u), {}))


def _absorbed(x):
    B, n = x

    def forward(params, x):
        big = 1e20 * (jnp.sin(x) ** 2 + jnp.cos(x) ** 2)
        return jnp.concatenate([x, (x + big) - big], axis=1)
    return Layer("absorbed", (B, n), (B, 2 * n), forward, lambda params, x, dy: (dy[:, :n] + dy[:, n:], {}))


@pytest.mark.parametrize("middle", [
    [nb.Custom(_marked)],
    [nb.Custom(dup), nb.Residual(nb.Custom(_constant_pair), drop_path=True)],
    [nb.Custom(_absorbed)],
], ids=["F1_example_index", "F2_dropped_site", "F3_absorption"])
def test_a_condition_failing_on_a_set_of_positive_measure_is_refused(middle):
    with pytest.raises(nb.NetworkError, match="almost every input"):
        nb.network("rt16", [nb.Dense(8), *middle, nb.Custom(pairmax), nb.Head(pool="flatten")], input=(8,), classes=3)


def test_a_site_with_a_branch_that_moves_the_pair_apart_in_both_cases_is_certified():
    """The neighbour that must still pass: a residual with a site whose branch is a dense
    layer, then a relu (its condition: a bias outside the site, shown for s = 0 and s != 0)."""
    m = nb.network("ok", [nb.Dense(8), nb.Residual(nb.Dense(8), nb.Relu(), nb.Dense(8), drop_path=True),
                          nb.Dense(8), nb.Relu(), nb.Head()], input=(8,), classes=3)
    assert m.certificate.unshown is None


def test_a_condition_reading_other_examples_sites_is_refused():
    """A batch norm after a block with a site, then a pair maximum: the pair's statistics
    read every example's site, some 0 and some not in one batch, which neither case (all
    dropped, none dropped) covers. (A relu there passes: its condition is shifted by the
    batch norm's own shift, whatever the sites are.)"""
    with pytest.raises(nb.NetworkError, match="other examples"):
        nb.network("bn_after_site", [nb.Dense(8), nb.Residual(nb.Dense(8), drop_path=True), nb.BatchNorm(),
                                     nb.Custom(pairmax), nb.Head()], input=(8,), classes=3)
    m = nb.network("bn_relu_after_site", [nb.Dense(8), nb.Residual(nb.Dense(8), drop_path=True), nb.BatchNorm(),
                                          nb.Relu(), nb.Head()], input=(8,), classes=3)
    assert m.certificate.unshown is None
