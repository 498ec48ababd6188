"""Red team RT11 (2026-12-03, found while rechecking the last session's "no false theorem
found" about kernel subclasses): two ways to hand the kernel a value that lies, both
through public constructors, no monkeypatching.

RT11-A, a term class defined outside the kernel. The normalizer calls the
``normal_form`` method of any term that has one (the hook ``permutation.py``'s terms use),
so a user class whose ``normal_form`` said 1, then 2, gave ``|- Evil = 1`` and
``|- Evil = 2``, and by ``trans`` ``|- 1 = 2``. A subclass of a genuine class (``Index``,
``Num``) could likewise bring its own ``_canon`` and skip the checks.

RT11-B, a ``str`` subclass that hashes as "<" and equals anything. ``IntCond`` accepted
it as the relation ">=" (``rel in ("<", ...)`` compares with ``==``), prints it as
``[n >= 1]``, and the normalizer's table lookup read it as "<": ``|- [n >= 1] = 0``.

Fixed at the root: only ``verigrad.kernel`` defines subclasses of the kernel's classes
(``_Frozen.__init_subclass__``), and a term, a function symbol or a polynomial is made
only of exact ``str``, ``int`` and ``Fraction`` values (``sizes.plain``).
"""
from fractions import Fraction

import numpy as np
import pytest

from verigrad.certify import witness as W
from verigrad.kernel import (Func, IndexVar, IntCond, KernelError, Num, Pow, RealCond, ReduceMax, SizeSym, Sum,
                             Theorem, Var, prove_equal, symm, trans)
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly
from verigrad.kernel.terms import ScalarFn


class Liar(str):
    """Any string, hashing as "<" and equal to everything."""

    def __hash__(self):
        return hash("<")

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


class Big(int):
    """An int that says it is at least anything."""

    def __ge__(self, other):
        return True

    def __lt__(self, other):
        return False

    @property
    def numerator(self):                 # so that Fraction(Big(3)) keeps the lying int
        return self


def test_a_term_class_from_outside_the_kernel_is_refused():
    calls = [0]
    with pytest.raises(KernelError, match="outside verigrad.kernel"):
        class Evil(T.Term):
            @classmethod
            def _canon(cls, x):
                return (x,)

            def _build(self, x):
                self._set((), "evil")

            def normal_form(self, nz, idx, env):
                calls[0] += 1
                return nz.norm(Num(calls[0]), idx, env)

        e = Evil(Num(0))                                 # (before the fix: |- 1 = 2)
        with W.paused():
            one, two = prove_equal(e, Num(1)), prove_equal(e, Num(2))
        assert not isinstance(trans(symm(one), two), Theorem)


@pytest.mark.parametrize("base", [T.Num, T.Index, T.IntCond, IndexVar, Poly, ScalarFn])
def test_no_kernel_class_is_subclassed_outside_the_kernel(base):
    with pytest.raises(KernelError, match="outside verigrad.kernel"):
        type("Sub", (base,), {})


def test_a_relation_that_lies_is_refused():
    n = SizeSym("n_rt11")
    with pytest.raises(KernelError, match="not a plain"):
        t = IntCond(n, Liar(">="), 1)                     # (before the fix: |- [n >= 1] = 0)
        with W.paused():
            assert not isinstance(prove_equal(t, Num(0)), Theorem)
    with pytest.raises(KernelError):
        RealCond(Var("x_rt11"), Liar(">"))


@pytest.mark.parametrize("make", [
    lambda: Func(Liar("exp"), (Num(0),)),
    lambda: ReduceMax(IndexVar("i_rt11", SizeSym("n_rt11")), Num(1), Liar("max")),
    lambda: Var(Liar("x_rt11")),
    lambda: Var("x_rt11b", facts=(Liar("positive"),)),
    lambda: ScalarFn(Liar("f_rt11")),
    lambda: ScalarFn("f_rt11b", Big(1)),
])
def test_every_name_kind_and_fact_must_be_a_plain_value(make):
    with pytest.raises(KernelError):
        make()


def _refused_or_honest(make):
    """What ``make()`` builds, or None when the kernel refuses it. (The kernel may also
    answer with the honest object already made, which the lying value equals and hashes
    as: then nothing in it may be the liar.)"""
    try:
        return make()
    except KernelError:
        return None


def test_numbers_that_lie_are_refused():
    from verigrad.kernel.sizes import nonneg
    p = _refused_or_honest(lambda: Poly({(): Big(-1)}))           # a coefficient that says it is >= 0
    assert p is None or (all(type(c) is int for c in p.terms.values()) and not nonneg(p))
    q = _refused_or_honest(lambda: Poly({((SizeSym("n_rt11_power"), Big(1)),): 1}))   # a power that says >= anything
    assert q is None or all(type(k) is int for m in q.terms for _, k in m)
    lying = Fraction(Big(3))
    assert type(lying.numerator) is Big
    for x in (lying, Big(3)):                                     # a Fraction holding a lying int, the int
        num = _refused_or_honest(lambda: Num(x))
        assert num is None or (type(num.value) is Fraction and type(num.value.numerator) is int)


def test_plain_values_still_make_terms():
    n = SizeSym("n_rt11")
    i = IndexVar("i_rt11", n)
    assert isinstance(prove_equal(Sum(i, IntCond(i, ">=", 0)), T.IntVal(n)), Theorem)
    assert isinstance(prove_equal(Num(np.float64(0.5)) * 2, Num(1)), Theorem)   # a float64 is read exactly
    assert isinstance(prove_equal(Pow(Var("x_rt11c", facts=("positive",)), Fraction(1, 2)) ** 2,
                                  Var("x_rt11c", facts=("positive",))), Theorem)
