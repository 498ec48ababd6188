"""Red-team finding RT-5 (false kernel theorem): ``instantiate`` checks the ``integer``
fact of a variable's replacement by its normal form's ``integer`` flag
(``theorem._integral``), but drops the conditions that normal form was reached under.

``v = 1/2 - sqrt(lab + 1/2) * sqrt(lab + 1/2)`` (``lab`` integer data) normalizes to ``-lab``
(integer-valued) only under the condition ``lab + 1/2 > 0`` (``pow_add_pos``); at
``lab <= -1`` the kernel's own reading (``x^(1/2) = 0`` for ``x <= 0``) gives ``v = 1/2``.
From the true ``|- [w > 0] = [w - 1 >= 0]`` (integer ``w``, ``indicator_integer``),
``instantiate(th, {w: v})`` issues, with no condition,
``|- [v > 0] = [v - 1 >= 0]``: at ``lab = -2`` the left side is 1, the right 0.
The witness check reports it false.

Root cause: ``_integral`` (verigrad/kernel/theorem.py) ignored ``Normalizer.conds``.
Fixed: a normal form reached under a condition does not show the fact.
"""
from fractions import Fraction

import numpy as np

from verigrad.kernel import KernelError, Num, Pow, RealCond, Theorem, Var, instantiate, prove_equal


def _case():
    w = Var("w", (), ("integer",))
    lab = Var("lab", (), ("integer",))
    th = prove_equal(RealCond(w, ">"), RealCond(w - 1, ">="))
    h = Pow(lab + Fraction(1, 2), Fraction(1, 2))
    return th, w, lab, Num(Fraction(1, 2)) - h * h


def test_rt5_the_instance_is_false():
    from verigrad.certify.evaluate import evaluate
    th, w, lab, v = _case()
    assert isinstance(th, Theorem)
    vals = {lab: np.float64(-2)}
    assert evaluate(RealCond(v, ">"), {}, vals) == 1.0
    assert evaluate(RealCond(v - 1, ">="), {}, vals) == 0.0


def test_rt5_instantiate_does_not_issue_it_unconditionally():
    th, w, lab, v = _case()
    try:
        th2 = instantiate(th, {w: v})
    except KernelError:
        return
    assert th2.conds, "instantiate issued a false theorem with no condition"


def test_rt5_an_integer_value_still_instantiates():
    th, w, lab, _ = _case()
    th2 = instantiate(th, {w: lab * 2 + 1})
    assert isinstance(th2, Theorem) and not th2.conds
