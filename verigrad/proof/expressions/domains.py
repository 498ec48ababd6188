"""Domains of integer symbols: ``oo``, ``Interval`` and ``Range``.

``Symbol.n(domain=Range(2, oo))`` declares a size (``n >= 2``);
``Symbol.i(domain=[0, n - 1])`` or ``domain=Range(0, n)`` an index. ``Interval`` is also
the right side of a ``Contains`` statement (``i in [a, b]``).
"""
from __future__ import annotations

from .atoms import as_expr


class Infinity:
    """``oo``: the open upper end of a domain."""

    def __repr__(self):
        return "oo"


oo = Infinity()


class Interval:
    """The closed integer interval ``[a, b]`` (``Interval(a, b, integer=True)``)."""

    def __init__(self, a, b, integer=True, left_open=False, right_open=False):
        self.a, self.b = as_expr(a), as_expr(b)
        self.integer = integer      # a real interval (integer=False) is refused where a domain is read
        if left_open:
            self.a = self.a + 1
        if right_open:
            self.b = self.b - 1

    def __str__(self):
        return f"[{self.a}, {self.b}]"


class OpenRange:
    """``[a, oo)``: the domain of a size at least ``a``."""

    def __init__(self, a):
        self.a = a


def Range(a, b):
    """The half-open integer range ``[a, b)``."""
    if b is oo:
        return OpenRange(a)
    return Interval(a, as_expr(b) - 1)
