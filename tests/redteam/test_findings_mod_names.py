"""Red team RT-44 (rt2-c; fixed): the arithmetic oracle named the remainders it reads as
indices per call, so a nested call reused an outer call's name for another remainder,
and the kernel proved ``|- [p >= 0] = 1`` for an integer expression ``p`` that is -1 at
some indices; instantiated, that is ``|- [-1 >= 0] = 1``, and with the kernel's own
``[-1 >= 0] = 0``, ``|- 1 = 0``.

``sizes._mods_as_indices`` writes each ``alpha*(a - m*(a // m))`` as ``alpha*r`` for an
index ``r`` of range ``m``, and named ``r`` ``mod{k}`` by the floor division's position
``k`` in that call's sorted list. ``_bound`` then asks ``nonneg`` of a coefficient, which
calls ``_mods_as_indices`` afresh and numbers from 0 again: with

    p = (a%2 + e%2 - b%2) * (d%2) + a//2 + e//2        (a, b, d, e indices below n >= 2)

written out with floor divisions, the outer call reads ``b % 2`` as ``mod1`` and ``d % 2`` as
``mod2``; the coefficient of ``mod2``, ``a%2 + e%2 - mod1``, read in the nested call, gets
``a % 2`` as ``mod0`` and ``e % 2`` as ``mod1``: the same index variable (same name, range 2,
tag) as the outer ``b % 2``, so the coefficient is ``mod0 + mod1 - mod1 = mod0 >= 0``. But at
a = 0, b = 1, d = 1, e = 0 it is -1, and so is ``p``.

Fixed (``verigrad/kernel/sizes.py``): each remainder's index is named by its floor
division's key, so one name is one remainder in every call.
"""
import itertools

from verigrad.kernel import IndexVar, IntCond, Num, SizeSym, Theorem, instantiate, prove_equal, symm, trans
from verigrad.kernel.sizes import Poly, nonneg

n = SizeSym("n", 2)
A, B, D, E = (IndexVar(x, n) for x in "abde")
a, b, d, e = map(Poly.sym, (A, B, D, E))


def _p(extra=0):
    """(a%2 + e%2 - b%2 + extra) * (d%2) + a//2 + e//2, spelled with floor divisions."""
    return ((a - 2 * (a // 2)) + (e - 2 * (e // 2)) - (b - 2 * (b // 2)) + extra) * (d - 2 * (d // 2)) \
        + a // 2 + e // 2


def _value(av, bv, dv, ev, extra=0):
    return (av % 2 + ev % 2 - bv % 2 + extra) * (dv % 2) + av // 2 + ev // 2


def test_the_expression_is_negative_somewhere():
    assert _value(0, 1, 1, 0) == -1
    assert min(_value(*v) for v in itertools.product(range(4), repeat=4)) == -1


def test_the_oracle_does_not_call_it_nonnegative():
    assert not nonneg(_p())


def test_the_kernel_does_not_prove_the_indicator_one():
    res = prove_equal(IntCond(_p(), ">=", 0), Num(1))
    assert not isinstance(res, Theorem), res
    # the chain the hole allowed: the instance at the counterexample, against [-1 >= 0] = 0
    if isinstance(res, Theorem):      # (kept so the test states the falsehood it guards)
        inst = instantiate(res, {n: 2, A: 0, B: 1, D: 1, E: 0})
        zero = prove_equal(inst.lhs, Num(0))
        assert not isinstance(trans(symm(inst), zero), Theorem)


def test_true_neighbours_are_still_proved():
    # the same shape with the coefficient of d%2 shifted to be >= 0: true, and proved
    assert min(_value(*v, extra=1) for v in itertools.product(range(4), repeat=4)) >= 0
    assert nonneg(_p(extra=1))
    assert isinstance(prove_equal(IntCond(_p(extra=1), ">=", 0), Num(1)), Theorem)
    assert nonneg((e - 2 * (e // 2)) - (b - 2 * (b // 2)) + 1)      # e%2 - b%2 + 1 >= 0
    assert not nonneg((e - 2 * (e // 2)) - (b - 2 * (b // 2)))      # e%2 - b%2 may be -1
