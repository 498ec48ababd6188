"""Red team RT21 (2026-12-04, a helper against ``verigrad.nn.almost_everywhere``; fixed):
a drop-path site's stand-in read as a free variable.

- F1: in the case "site nonzero" a site ``s`` is replaced by a positive stand-in that the
  check's own partials and evaluations hold fixed; but a piece that still holds a maximum
  went to ``conditions.unshown``, which reads every variable as a density and showed
  ``(s[i] - 2) max_k x[i, k]`` nonzero by its partial in the stand-in. A kept site is one
  constant (``1/keep``, 2 at rate 1/2), and there the condition is 0 at every input: on
  about half of all draws. Now only what holds at every positive value of the stand-in
  (a term positive at every input) passes there.
"""
import numpy as np

from verigrad.kernel import IndexVar, SizeSym, Var
from verigrad.kernel import terms as T
from verigrad.kernel.theorem import Condition
from verigrad.nn import almost_everywhere as AE


class _Stated:
    """What ``unshown`` reads of a theorem: its side conditions."""

    def __init__(self, *terms):
        self.conds = [Condition("nonzero", u) for u in terms]


B = SizeSym("B")
i, k = IndexVar("i", B), IndexVar("k", 3)
x, s = Var("x", (B, 3)), Var("s", (B,))
row_max = T.ReduceMax(k, T.Index(x, [i, k]))


def test_a_site_times_a_maximum_that_vanishes_at_every_kept_example_is_refused():
    u = (T.Index(s, [i]) - T.Num(2)) * row_max
    why = AE.unshown([_Stated(u)], discrete=[s])
    assert why is not None and "where s nonzero" in why and "a kept site is one constant" in why
    # the claim refused is false on a set of positive measure: drop-path at rate 1/2
    rng = np.random.default_rng(0)
    xs, sites = rng.normal(size=(1000, 3)), rng.choice([0.0, 2.0], size=1000)
    zero = (sites - 2) * xs.max(axis=1) == 0
    assert 0.4 < zero.mean() < 0.6


def test_a_maximum_without_a_site_still_goes_as_certify_takes_it():
    assert AE.unshown([_Stated(row_max)]) == AE._as_certify_takes_it(Condition("nonzero", row_max), frozenset())


def test_a_kept_site_itself_is_still_shown_nonzero():
    held = Var("s'held", (B,), ("positive",))
    assert AE._as_certify_takes_it(Condition("nonzero", T.Index(held, [i])), frozenset({held})) is None
    assert AE._as_certify_takes_it(Condition("nonzero", T.Index(held, [i]) * row_max), frozenset({held})) is not None
