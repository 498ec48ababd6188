"""Red team RT-23 (fixed: a condition's own indices are renamed away from the values put in; false kernel theorem): a value substituted into a side condition brings
a statement-level free index that the condition's own (universally quantified) index of
the same name captures; ``instantiate`` and ``rewrite`` inside ``At`` alike.

A ``Condition`` holds "for every value of the index variables in it": its free indices are
its own, implicitly bound (``theorem._closed`` names them i, j, ...). RT-22's fix stops
``instantiate`` giving them values, but ``_instantiate_condition`` still substitutes a
variable's *value* into the condition with no renaming, so an index that value brings in
(a free index of the statement, meant as one fixed ``i``) becomes the condition's own
quantified ``i``::

    th = prove_equal(Sum(j, exp(log(x*z[j]))), Sum(j, x*z[j]))      # x scalar, z: (n,)
    |- Sum[j<n](exp(log(x*z[j]))) = Sum[j<n](x*z[j])   [under x*z[i] > 0]   (true)

    instantiate(th, {x: y[i]})
    |- Sum[j<n](exp(log(y[i]*z[j]))) = Sum[j<n](y[i]*z[j])   [under y[i]*z[i] > 0]

The honest instance needs ``y[i0]*z[j] > 0`` for every j (at the statement's i = i0); the
issued condition only asks ``y[i]*z[i] > 0`` for every i, the diagonal. False at n = 2,
y = z = [1, -1]: the condition holds (1, 1), at i = 0 the right side is 1 - 1 = 0, the left
exp(log 1) + exp(log -1) = 2 (the evaluator's reading; no real reading makes it 0). The
witness (``Witness().verdict``) reports it false at random points.

``rewrite`` has the same capture: inside ``At(body, [x], [y[i]])`` it wraps the
rewriting theorem's condition as ``At(x*z[i] > 0, [x], [y[i]])`` and the statement's i in
the value again becomes the condition's own::

    rewrite(th, At(Sum(j, exp(log(x*z[j]))), [x], [y[i]]))
    |- (Sum_j exp(log(x*z[j])))|{x := y[i]} = (Sum_j x*z[j])|{x := y[i]}  [under (x*z[i])|{x := y[i]} > 0]

false at the same point (2 vs 0). Fix direction: rename a condition's own indices away from
the indices the substituted values (or the At values) bring in before substituting /
wrapping (e.g. substitute into ``Lamda(own, term)`` with the capture-avoiding ``subst``).
"""
import numpy as np
import pytest

from _condition_capture import false_at, proved, stepped
from verigrad.kernel import At, Func, IndexVar, SizeSym, Sum, Var, instantiate, rewrite

n = SizeSym("n")
x = Var("x")
y, z = Var("y", (n,)), Var("z", (n,))
i, j = IndexVar("i", n), IndexVar("j", n)
LHS = Sum(j, Func("exp", (Func("log", (x * z[j],)),)))
RHS = Sum(j, x * z[j])
POINT = ({n: 2}, {x: np.array(0.5), y: np.array([1.0, -1.0]), z: np.array([1.0, -1.0])})


def test_the_general_theorem_is_proved():
    th = proved(LHS, RHS)
    (c,) = th.conds
    assert c.kind == "positive" and c.term.free_idx == {i}     # its own i: x*z[i] > 0 for every i
    assert not false_at(th, *POINT)                      # x = 0.5: x*z[1] < 0 breaks it


STEPS = {
    "instantiate": lambda th: instantiate(th, {x: y[i]}),
    "rewrite_at": lambda th: rewrite(th, At(LHS, [x], [y[i]])),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_value_with_a_free_index_is_not_captured_by_a_conditions_index(step):
    out = stepped(STEPS[step], proved(LHS, RHS))
    if out is None:         # refused
        return
    assert not false_at(out, *POINT), f"false {step}: {out.statement()}"
