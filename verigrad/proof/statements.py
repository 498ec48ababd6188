"""Statements: what a fact states (an equation, or an integer in an interval) and the
kernel equation each one means."""
from __future__ import annotations

from verigrad.kernel import terms as T

from .expr import Number, ProofError, _shape_str, _weight, as_expr, oo, zeros


class Statement:
    """What a fact states. ``sides`` names the navigable parts; ``pair()`` is the kernel
    equation ``(L, R)`` it means."""

    def pair(self):
        raise NotImplementedError

    def replace_side(self, name, new):
        raise NotImplementedError

    # Notebook display (verigrad.report.notebook): the kernel equation it means.
    def _repr_latex_(self):
        from verigrad.report.notebook import dollars, pair_latex
        return dollars(pair_latex(*self.pair()))

    def _repr_html_(self):
        from verigrad.report.notebook import statement_html
        return statement_html(self)


class Equality(Statement):
    def __init__(self, lhs, rhs):
        self.lhs, self.rhs = as_expr(lhs), as_expr(rhs)
        if self.lhs.shape != self.rhs.shape:
            if self.rhs == Number(0):
                self.rhs = zeros(self.lhs.shape)
            elif self.lhs == Number(0):
                self.lhs = zeros(self.rhs.shape)
            else:
                raise ProofError(f"the sides of {self.lhs} = {self.rhs} have shapes "
                                 f"{_shape_str(self.lhs.shape)} and {_shape_str(self.rhs.shape)}")

    sides = ("lhs", "rhs")

    def pair(self):
        return self.lhs.term, self.rhs.term

    def side(self, name):
        return getattr(self, name)

    def replace_side(self, name, new):
        return Equality(new, self.rhs) if name == "lhs" else Equality(self.lhs, new)

    def reversed(self):
        return Equality(self.rhs, self.lhs)

    @property
    def key(self):
        return ("Eq", self.lhs.key, self.rhs.key)

    def __str__(self):
        return f"{self.lhs} = {self.rhs}"


class Interval:
    """The closed integer interval ``[a, b]`` (``Interval(a, b, integer=True)``)."""

    def __init__(self, a, b, integer=True, left_open=False, right_open=False):
        self.a, self.b = as_expr(a), as_expr(b)
        if left_open:
            self.a = self.a + 1
        if right_open:
            self.b = self.b - 1

    def __str__(self):
        return f"[{self.a}, {self.b}]"


def Range(a, b):
    """The half-open integer range ``[a, b)``."""
    if b is oo:
        return _OpenRange(a)
    return Interval(a, as_expr(b) - 1)


class _OpenRange:
    def __init__(self, a):
        self.a = a


class Contains(Statement):
    """``x in [a, b]`` for an integer expression x: as a kernel equation, the indicator
    ``[a <= x][x <= b]`` (summed over the cases of x) equals 1."""

    def __init__(self, x, interval):
        self.lhs, self.rhs = as_expr(x), interval
        if not self.lhs.is_int:
            raise ProofError(f"Contains({self.lhs}, ...) needs an integer expression")

    sides = ("lhs",)

    def pair(self):
        parts = []
        lo, hi = self.rhs.a.cases, self.rhs.b.cases
        for w, p in self.lhs.cases:
            for wl, pl in lo:
                for wh, ph in hi:
                    c = T.Mul((T.IntCond(pl, "<=", p), T.IntCond(p, "<=", ph)))
                    ww = _weight(w, wl, wh)
                    parts.append(c if ww is None else T.Mul((ww, c)))
        return (parts[0] if len(parts) == 1 else T.Add(tuple(parts))), T.Num(1)

    def side(self, name):
        if name != "lhs":
            raise ProofError("only the element of a Contains can be rewritten")
        return self.lhs

    def replace_side(self, name, new):
        return Contains(new, self.rhs)

    @property
    def key(self):
        return ("In", self.lhs.key, self.rhs.a.key, self.rhs.b.key)

    def __str__(self):
        return f"{self.lhs} in {self.rhs}"
