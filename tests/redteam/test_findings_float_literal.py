"""Red team RT-20 (fixed: float literals are read as certify reads constants): a float literal in a theorem file is read as a whole number it is
not, so ``verigrad verify`` reports false statements proved (exit 0, ``--no-cache``).

``as_expr`` (verigrad/proof/expressions/atoms.py) reads a float operand as
``Fraction(x).limit_denominator(10 ** 12)``, and ``Pow`` (verigrad/proof/expressions/
arithmetic.py) reads a float exponent as ``limit_denominator(10 ** 6)``. Anything below
half of 1/10^12 becomes 0, an exponent within 1/(2*10^6) of a whole number becomes that
number; ``Mul`` then folds ``0 * x`` to the zero tensor. The kernel proves the compiled
``0 = 0`` / ``x**0 = 1`` (true), but the file states something else. README: "A float
constant is read as the simplest number within 4 units in its last place ..., never as a
whole or half number it is not" -- 1e-13 is read as 0, far outside 4 ulps.

Reproduction::

    $ cat tiny.py
    from verigrad.proof import *

    @apply
    def apply(x):
        return Equality(1e-13 * x, 0)

    @prove
    def prove(Eq):
        x = Symbol.x(real=True)
        Eq << apply(x)
    $ verigrad verify --no-cache --steps tiny.py        # exit 0
    tiny  proved
             Eq[0]  proved   0 = 0

    False at x = 1: 1e-13 * 1 = 1e-13 != 0.

The same with ``Equality(x ** 1e-7, 1)`` for ``x = Symbol.x(positive=True)`` (proved, axiom
ring; false at x = 2: 2**1e-7 = 1.0000000693...) and ``Equality(x ** 1.0000001, x)``
(false at x = 2). An exact small constant (``x / 10**13``) is read exactly.

Root: ``atoms.as_expr`` and ``arithmetic.Pow.__init__`` round floats to a bounded
denominator instead of the float's own value (or the 4-ulp simplest-rational reading the
importers use), with no check that the reading is within a few ulps of the literal.
"""
import pytest

from _verify_files import own_cache, verify_statement

CASES = {
    "coefficient": ("1e-13 * x", "0", "real"),       # false at x = 1
    "exponent": ("x ** 1e-7", "1", "positive"),      # false at x = 2
    "near_one": ("x ** 1.0000001", "x", "positive"),  # false at x = 2
}


def test_rt20_the_statements_are_false():
    assert 1e-13 * 1.0 != 0.0
    assert 2.0 ** 1e-7 != 1.0
    assert 2.0 ** 1.0000001 != 2.0


@pytest.mark.parametrize("case", sorted(CASES))
def test_rt20_a_rounded_float_literal_is_not_proved(case, tmp_path, monkeypatch):
    own_cache(tmp_path, monkeypatch)
    lhs, rhs, kind = CASES[case]
    rec = verify_statement(tmp_path / f"float_{case}.py", lhs, rhs, kind)
    assert rec.status != "proved", f"{lhs} = {rhs} reported proved"


def test_rt20_the_programmers_numbers_still_read_as_written(tmp_path, monkeypatch):
    from fractions import Fraction
    from verigrad.proof.expressions.atoms import float_number
    assert float_number(0.5) == Fraction(1, 2) and float_number(1e-13) == Fraction(1, 10 ** 13)
    assert float_number(1 - 0.9) == Fraction(1, 10) and float_number(1 / 3) == Fraction(1, 3)
    assert float_number(1.0000001) != 1
