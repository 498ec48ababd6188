"""A ``Poly`` built directly from a map of monomials is canonical, as one built by arithmetic.

Before: a key that repeated a symbol (``((i, 1), (i, 1), (j, 1))``) stayed a monomial
apart from the ``((i, 2), (j, 1))`` that arithmetic makes, and the oracle, bounding each
monomial alone, proved ``i*j - i*i*j >= 0`` (false at i = 2, j = 1) in-process.
"""
import pytest

from verigrad.kernel import IndexVar, KernelError, Poly, SizeSym, nonneg

n = SizeSym("n")
i, j = IndexVar("i", n), IndexVar("j", n)
r = IndexVar("r_refused", n)    # in no other polynomial: a map equal to one already made (1.0 == 1) gives that one


def test_a_repeated_symbol_is_merged_into_the_monomial_arithmetic_makes():
    assert Poly({((i, 1), (i, 1), (j, 1)): -1}) is -(i * i * j)
    assert Poly({((j, 1), (i, 2)): 3}) is 3 * i * i * j          # unsorted key
    assert Poly({((i, 0), (j, 1)): 1, (): 0}) is Poly.sym(j)        # zero power, zero coefficient
    assert Poly({((i, 1), (j, 1)): 1, ((j, 1), (i, 1)): -1}) is Poly.const(0)   # one monomial twice: cancels


def test_the_false_inequality_is_not_proved():
    p = Poly({((i, 1), (i, 1), (j, 1)): -1}) + i * j      # i*j - i^2*j: -2 at i = 2, j = 1
    assert p is i * j - i * i * j
    assert not nonneg(p)


@pytest.mark.parametrize("terms", [
    {((r, -1),): 1},            # a negative power
    {((r, 1.0),): 1},           # a power that is not an integer
    {((r, True),): 1},
    {(("r", 1),): 1},           # not a symbol
    {((r, 1),): 0.5},           # a coefficient that is not an integer
    {((r, 1),): True},
])
def test_what_is_not_an_integer_polynomial_is_refused(terms):
    with pytest.raises(KernelError):
        Poly(terms)
