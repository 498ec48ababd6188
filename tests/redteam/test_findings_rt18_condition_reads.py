"""Red team RT18 (2026-12-04, a helper against ``verigrad.nn.almost_everywhere``; fixed):
two composed side conditions accepted as failing only on a null set, though each vanishes
on a set of positive measure.

- F1: a drop-path site read at two entries, ``s[i] x[j] + y[i] (2 - s[j])``. The cases
  (the whole site 0, the whole site a nonzero constant) miss ``s[i] = 0, s[j] = 2``, where
  the condition is 0 at every input; ``s[0]`` (example 0's site, read at every example)
  likewise. Now one site must be read at one entry, of the condition's own indices.
- F2: an indicator under a binder of an index named like a free one of the condition:
  ``y[i] Sum[i]([x[i] > 0] - [x[i] <= 0])`` was split as if its indicator were one value
  per entry ``i`` (each piece, ``+-B y[i]``, nonzero), but the sum counts positive minus
  non-positive entries of ``x``, 0 on a set of positive measure at even ``B``. Now only an
  indicator no enclosing binder rebinds is split.
"""
from verigrad.kernel import IndexVar, SizeSym, Var
from verigrad.kernel import terms as T
from verigrad.kernel.theorem import Condition
from verigrad.nn import almost_everywhere as AE


class _Stated:
    """What ``unshown`` reads of a theorem: its side conditions."""

    def __init__(self, *terms):
        self.conds = [Condition("nonzero", u) for u in terms]


B = SizeSym("B")
i, j = IndexVar("i", B), IndexVar("j", B)
x, y, s = Var("x", (B,)), Var("y", (B,)), Var("s", (B,))


def at(v, k):
    return T.Index(v, [k])


def test_a_site_read_at_two_entries_is_refused():
    u = at(s, i) * at(x, j) + at(y, i) * (T.Num(2) - at(s, j))
    why = AE.unshown([_Stated(u)], discrete=[s])
    assert why is not None and "drop-path site s at more than one entry" in why


def test_a_site_read_at_a_constant_entry_is_refused():
    u = at(s, i) * at(x, i) + at(y, i) * (T.Num(2) - T.Index(s, [0]))
    why = AE.unshown([_Stated(u)], discrete=[s])
    assert why is not None and "drop-path site s of other examples" in why


def test_a_site_read_at_its_own_entry_is_still_shown():
    assert AE.unshown([_Stated(at(s, i) * at(x, i) + at(y, i))], discrete=[s]) is None
    assert AE.unshown([_Stated(at(s, i) * at(x, i) + at(s, i) * at(y, i) + at(y, i))], discrete=[s]) is None


def test_an_indicator_under_a_binder_of_the_same_name_is_not_split():
    count = T.Sum(i, T.RealCond(at(x, i), ">") - T.RealCond(at(x, i), "<="))
    u = at(y, i) * count
    assert AE._outer_arguments(u) == []
    assert AE._with_pattern(u, {at(x, i): 1}) is u
    why = AE.unshown([_Stated(u)])
    assert why is not None and "not shown to fail only on a set of measure zero" in why


def test_the_same_indicator_outside_the_binder_is_still_split():
    inside = T.Sum(i, T.RealCond(at(x, i), ">"))
    u = at(y, i) * (T.RealCond(at(x, i), ">") + T.Num(1)) + at(y, i) * inside
    assert AE._outer_arguments(u) == [at(x, i)]
    got = AE._with_pattern(u, {at(x, i): 1})
    assert got == at(y, i) * (T.Num(1) + T.Num(1)) + at(y, i) * inside        # the sum's reads kept
    assert AE.unshown([_Stated(at(y, i) * (T.RealCond(at(x, i), ">") + T.Num(1)))]) is None
