"""Red team RT-22 (fixed: instantiate gives a condition's own indices no values; false kernel theorem): a side condition's quantified index is named
like, and so *is*, the statement's own free index; ``instantiate`` then narrows it.

A condition recorded under a binder (here the new ``exp_log`` rule's ``v > 0``, commit
682ece0, for ``v = x[j]`` under ``Sum(j, ...)``; the older ``pow_add_int`` ``x[j] != 0``
alike) holds "for every value of its indices" (``Condition``). ``theorem._closed`` names
those indices ``i, j, l, ...`` from scratch, ignoring the statement's free indices, so the
summed index becomes ``IndexVar("i", n)``, the very (interned) index of a statement that
has a free ``i``::

    th = prove_equal(y[i] + Sum(j, exp(log x[j])), y[i] + Sum(j, x[j]))
    |- y[i] + Sum[j<n](exp(log(x[j]))) = y[i] + Sum[j<n](x[j])   [under x[i] > 0]

(true as the witness reads it: ``x[i] > 0`` for every ``i``). ``instantiate(th, {i: 0})``
substitutes ``i`` in the conditions too, and issues

    |- y[0] + Sum[j<n](exp(log(x[j]))) = y[0] + Sum[j<n](x[j])   [under x[0] > 0]

false at n = 2, x = [1, 0], y = [0, 0]: the condition holds (x[0] = 1), the left side is
exp(log 1) + exp(log 0) = 1 + exp(0) = 2 (log 0 = 0), the right side 1. The witness
check (``W.Witness().verdict``) reports it false at random points (log of a negative
entry). The ``nonzero`` twin, ``Sum(j, x[j] * x[j]^-1) = Sum(j, 1)`` under ``x[0] != 0``
(false at x = [1, 0]: 1 + 0 against 2), predates 682ece0 and is invisible to random
draws. ``abstract`` already refuses an index that occurs in a condition: the two readings
of a condition's index (its own, or the statement's) disagree here.
"""
import numpy as np
import pytest

from _condition_capture import false_at, proved, stepped
from verigrad.kernel import Func, IndexVar, Num, Poly, Pow, SizeSym, Sum, Var, instantiate, prove_equal

n = SizeSym("n")
x, y = Var("x", (n,)), Var("y", (n,))
i, j = IndexVar("i", n), IndexVar("j", n)
POINT = ({n: 2}, {x: np.array([1.0, 0.0]), y: np.array([0.0, 0.0])})

CASES = {
    "exp_log": (y[i] + Sum(j, Func("exp", (Func("log", (x[j],)),))), y[i] + Sum(j, x[j])),
    "nonzero": (y[i] + Sum(j, x[j] * Pow(x[j], -1)), y[i] + Sum(j, Num(1))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_general_theorem_is_proved_and_true_at_the_point(case):
    th = proved(*CASES[case])
    assert not false_at(th, *POINT)       # x[1] = 0 breaks its condition "for every i"


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_instance_is_not_false_under_its_conditions(case):
    inst = stepped(lambda th: instantiate(th, {i: Poly.const(0)}), proved(*CASES[case]))
    if inst is None:        # refused
        return
    assert not false_at(inst, *POINT), f"false instance: {inst.conds}"


def test_sizes_still_reach_a_conditions_indices():
    # n := 3 re-ranges the condition's own index; the condition still holds for every one
    th = prove_equal(*CASES[sorted(CASES)[0]])
    inst = instantiate(th, {n: Poly.const(3)})
    (c,) = inst.conds
    assert all(v.size == Poly.const(3) for v in c.term.free_idx), c
