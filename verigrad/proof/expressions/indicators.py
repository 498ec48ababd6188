"""Indicators, Kronecker deltas, cases, Min and Max (the language's piecewise part).

``Bool(i < j)`` is the 0/1 indicator of a relation; ``KroneckerDelta(a, b)`` of an
equation of integers; ``Piecewise((a, cond), (b, True))`` is ``a`` where ``cond`` holds and
``b`` elsewhere (its ``else`` weight is ``1 - [cond]``). ``Min``/``Max`` of integer
expressions compile to weighted cases (see ``integers.IntMixin.cases``): they may index a
tensor, as the clipped relative position of Shaw et al. does. ``Relational`` (``a < b``)
is not a node: it is what a comparison of expressions gives, and what ``Bool``,
``Piecewise`` and ``Contains`` take.
"""
from __future__ import annotations

from verigrad.kernel import terms as T

from ..errors import ProofError
from .atoms import as_expr
from .integers import IntMixin
from .kernel_terms import at, broadcast, int_term, lam, weight_product
from .node import Expr

_REL = {"<", "<=", ">", ">=", "=="}


class Relational:
    """``a < b`` and friends: used inside ``Bool``, ``Piecewise``, ``Contains``."""

    def __init__(self, lhs, op, rhs):
        if op not in _REL:
            raise ProofError(f"unknown relation {op}")
        self.lhs, self.op, self.rhs = as_expr(lhs), op, as_expr(rhs)

    def __str__(self):
        return f"{self.lhs} {self.op} {self.rhs}"

    def __bool__(self):
        # Python reads ``0 < x < 1`` as ``(0 < x) and (x < 1)``, asking the truth of the
        # first relation: answered, the chain would silently become its second half
        raise ProofError(f"the relation {self} has no Python truth value (a chained comparison such as "
                         "0 < x < 1 is not a relation here: write Bool(0 < x) * Bool(x < 1))")

    def weight(self) -> T.Term:
        """The 0/1 indicator of the relation as a kernel term."""
        a, b = self.lhs, self.rhs
        if a.is_int and b.is_int:
            parts = []
            for w1, p1 in a.cases:
                for w2, p2 in b.cases:
                    c = T.Delta(p1, p2) if self.op == "==" else T.IntCond(p1, self.op, p2)
                    w = weight_product(w1, w2)
                    parts.append(c if w is None else T.Mul((w, c)))
            return parts[0] if len(parts) == 1 else T.Add(tuple(parts))
        if self.op == "==":
            raise ProofError("== between real expressions has no indicator here")
        d = (a - b).term
        return T.RealCond(d, self.op)

    @property
    def key(self):
        return ("Rel", self.op, self.lhs.key, self.rhs.key)


class Bool(Expr):
    """The indicator ``[relation]`` (1 where it holds, 0 elsewhere)."""
    rank = 4

    def __init__(self, rel):
        if not isinstance(rel, Relational):
            raise ProofError(f"Bool of {rel!r}, which is not a relation")
        super().__init__(rel.lhs, rel.rhs)
        self.op = rel.op
        self._shape = broadcast([rel.lhs.shape, rel.rhs.shape], "relation")

    @property
    def rel(self):
        return Relational(self.args[0], self.op, self.args[1])

    def _data(self):
        return (self.op,)

    def rebuild(self, args):
        return Bool(Relational(args[0], self.op, args[1]))

    def _compile(self):
        if self._shape:
            d = (self.args[0] - self.args[1]).term
            return lam(d.shape, lambda *I: T.RealCond(at(d, *I), self.op), d)
        return self.rel.weight()

    def _text(self):
        return f"Bool({self.rel})", 100


class KroneckerDelta(Expr):
    rank = 3

    def __init__(self, a, b):
        a, b = as_expr(a), as_expr(b)
        if not (a.is_int and b.is_int):
            raise ProofError(f"KroneckerDelta({a}, {b}) needs integer arguments")
        super().__init__(a, b)
        self._shape = ()

    def _compile(self):
        return Relational(self.args[0], "==", self.args[1]).weight()

    def _text(self):
        return f"KroneckerDelta({self.args[0]}, {self.args[1]})", 100


class Piecewise(Expr):
    """``Piecewise((a, cond), (b, True))``: ``a`` where ``cond`` holds, else ``b``."""
    rank = 8

    def __init__(self, *pieces):
        vals, conds = [], []
        for v, c in pieces:
            vals.append(as_expr(v))
            conds.append(c)
        if conds[-1] is not True:
            raise ProofError("the last piece of a Piecewise must have the condition True")
        super().__init__(*vals)
        self.conds = tuple(conds)
        self._shape = broadcast([v.shape for v in vals], "Piecewise")

    def _data(self):
        return tuple(c.key if isinstance(c, Relational) else c for c in self.conds)

    def rebuild(self, args):
        return Piecewise(*zip(args, self.conds))

    def _compile(self):
        rest = T.Num(1)
        parts = []
        for v, c in zip(self.args, self.conds):
            w = rest if c is True else T.Mul((rest, c.weight()))
            parts.append(T.Mul((w, v.term)))
            if c is not True:
                rest = T.Mul((rest, T.Add((T.Num(1), T.Mul((T.Num(-1), c.weight()))))))
        return parts[0] if len(parts) == 1 else T.Add(tuple(parts))

    def _text(self):
        return "Piecewise(" + ", ".join(f"({v}, {c})" for v, c in zip(self.args, self.conds)) + ")", 100


class _MinMax(IntMixin, Expr):
    rel = "<="
    rank = 4

    def __new__(cls, *args):
        args = [as_expr(a) for a in args]
        if len(args) == 1:
            return args[0]
        self = object.__new__(cls)
        Expr.__init__(self, *args)
        self.is_int = all(a.is_int for a in args)
        self._shape = broadcast([a.shape for a in args], cls.__name__)
        return self

    def __init__(self, *args):
        pass

    def rebuild(self, args):
        return type(self)(*args)

    def _int_cases(self):
        cur = self.args[0].cases
        for b in self.args[1:]:
            out = []
            for w1, p1 in cur:
                for w2, p2 in b.cases:
                    c = T.IntCond(p1, self.rel, p2)
                    w = weight_product(w1, w2)
                    out.append((weight_product(w, c), p1))
                    out.append((weight_product(w, T.Add((T.Num(1), T.Mul((T.Num(-1), c))))), p2))
            cur = out
        return cur

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        rel = ">=" if self.rel == ">=" else "<="
        cur = self.args[0].term
        for b in self.args[1:]:
            bt = b.term
            c = T.RealCond(T.Add((bt, T.Mul((T.Num(-1), cur)))), ">=" if rel == "<=" else "<=")
            cur = T.Add((T.Mul((c, cur)), T.Mul((T.Add((T.Num(1), T.Mul((T.Num(-1), c)))), bt))))
        return cur

    def _text(self):
        return f"{type(self).__name__}({', '.join(str(a) for a in self.args)})", 100


class Min(_MinMax):
    rel = "<="


class Max(_MinMax):
    rel = ">="
