"""Statements: what a fact states (an equation, or an integer in an interval) and the
kernel equation each one means.

The layer above expressions: a statement is made of expressions and knows nothing of
how it is proved (that is a fact's business, ``facts``).
"""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.report.printing import skeleton

from .errors import ProofError
from .expressions import IntSymbol, Number, TensorSymbol, as_expr, shape_str, weight_product, zeros


def one_symbol_per_name(*sides):
    """Refuse two different symbols of one name in one statement where one is a tensor
    symbol (RT-34): the statement's text shows each by its bare name, so a variable ``x``
    and a constant defined as ``x`` (or two variables ``x`` of other shapes or facts, or a
    real ``n`` beside a size ``n``) would read as one, and ``x + z = x`` for
    ``z = Symbol.x(definition=ZeroMatrix(n))`` was shown proved as ``x + x = x``. (Two
    integer symbols of one name are bound indices of two binders, as in any text.)"""
    by_name, seen, stack = {}, set(), list(sides)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (TensorSymbol, IntSymbol)):
            # names that read alike are one name (RT2-D4: a Cyrillic х beside a Latin x)
            same = by_name.setdefault(skeleton(e.name), [])
            if all(o.key != e.key for o in same):
                same.append(e)
            if len(same) > 1 and any(isinstance(o, TensorSymbol) for o in same):
                a, b = same[0], same[-1]
                named = a.name if a.name == b.name else f"{ascii(a.name)} and {ascii(b.name)}, which read alike,"
                raise ProofError(f"two different symbols are named {named} in one statement ({_what(a)} and "
                                 f"{_what(b)}): they would read as one; give them different names")
        stack.extend(getattr(e, "args", ()))


def _what(sym) -> str:
    if isinstance(sym, IntSymbol):
        return "an integer symbol"
    if sym.definition is not None:
        return "a definition"
    return f"a variable of shape {shape_str(sym.shape)}" + (f" ({', '.join(sym.facts)})" if sym.facts else "")


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
        one_symbol_per_name(self.lhs, self.rhs)
        if self.lhs.shape != self.rhs.shape:
            if self.rhs == Number(0):
                self.rhs = zeros(self.lhs.shape)
            elif self.lhs == Number(0):
                self.lhs = zeros(self.rhs.shape)
            else:
                raise ProofError(f"the sides of {self.lhs} = {self.rhs} have shapes "
                                 f"{shape_str(self.lhs.shape)} and {shape_str(self.rhs.shape)}")

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


class Contains(Statement):
    """``x in [a, b]`` for an integer expression x (``interval`` an ``Interval``): as a
    kernel equation, the indicator ``[a <= x][x <= b]`` (summed over the cases of x)
    equals 1."""

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
                    ww = weight_product(w, wl, wh)
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
