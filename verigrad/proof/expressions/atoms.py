"""Leaves of the expression tree that are not symbols, and ``as_expr``.

A rational ``Number``, a named ``Constant`` (``pi``), a size polynomial as an integer
expression (``SizeExpr``: the end of a full slice, the length of an axis) and a kernel
term used as an expression (``Raw``: what the kernel's normal form gives back).
``as_expr`` makes a leaf of a Python number or a size polynomial.
"""
from __future__ import annotations

from fractions import Fraction

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, as_poly, poly_str

from verigrad.frontends.jaxpr_scalar import reading

from ..errors import ProofError
from .integers import IntMixin
from .node import Expr


class Number(IntMixin, Expr):
    rank = 0

    def __init__(self, value):
        super().__init__()
        v = Fraction(value)
        self.value = v
        self.is_int = v.denominator == 1
        self._shape = ()

    def _data(self):
        return (self.value,)

    def rebuild(self, args):
        return self

    def _int_cases(self):
        if self.value.denominator != 1:
            raise ProofError(f"{self} is not an integer")
        return [(None, Poly.const(int(self.value)))]

    def _compile(self):
        return T.Num(self.value)

    def _text(self):
        v = self.value
        s = str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
        return s, (100 if v >= 0 and v.denominator == 1 else 20)


class Constant(Expr):
    rank = 1

    def __init__(self, name):
        super().__init__()
        self.name = name
        self._shape = ()

    def _data(self):
        return (self.name,)

    def rebuild(self, args):
        return self

    def _compile(self):
        return T.Const(self.name)

    def _text(self):
        return self.name, 100


pi = Constant("pi")


class SizeExpr(IntMixin, Expr):
    """A size polynomial as an expression (the end of a full slice)."""
    rank = 1

    def __init__(self, p):
        super().__init__()
        self.p = as_poly(p)
        self._shape = ()

    def _data(self):
        return (self.p.skey,)

    def rebuild(self, args):
        return self

    def _int_cases(self):
        return [(None, self.p)]

    def _text(self):
        return poly_str(self.p), 100


class Raw(Expr):
    """A kernel term used as an expression (results of the kernel's normal form)."""
    rank = 8

    def __init__(self, term):
        super().__init__()
        self._term, self._shape = term, term.shape

    def _data(self):
        return (self._term.skey,)

    def rebuild(self, args):
        return self

    def _text(self):
        return repr(self._term), 50


def float_number(x: float) -> Fraction:
    """The number a float literal of a theorem file stands for, as certify reads one: the
    simplest rational within 4 units in its last place (``1/3``, and ``1 - 0.9`` is 1/10),
    else its shortest decimal (``1e-13`` is 10^-13), never a whole or half number the float
    is not (red team RT-20: with the nearest fraction of denominator at most 10^12,
    ``1e-13 * x = 0`` and ``x**1.0000001 = x`` were proved)."""
    return reading(x)


def as_expr(x) -> Expr:
    """``x`` as an expression: itself, a ``Number`` (an int, a fraction, a float read as
    ``float_number`` reads it) or a ``SizeExpr``."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        raise ProofError(f"{x!r} is not an expression")
    if isinstance(x, (int, Fraction)):
        return Number(x)
    if isinstance(x, float):
        return Number(float_number(x))
    if isinstance(x, Poly):
        return SizeExpr(x)
    raise ProofError(f"{x!r} ({type(x).__name__}) is not an expression")
