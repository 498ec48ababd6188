"""Arithmetic: sums, products, powers and floor division.

``+`` and ``*`` are element-wise with NumPy broadcasting (trailing axes aligned). A sum
or product is flattened, its numbers folded into one, and its terms put in a canonical
order as SymPy does (``rank``, then the text); a product of integer expressions is an
integer expression (by cases), otherwise it compiles to a comprehension of entries so
that indexing it later beta-reduces.
"""
from __future__ import annotations

from fractions import Fraction

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly

from ..errors import ProofError
from .atoms import Number, Raw, as_expr, float_number
from .constant_tensors import zeros
from .integers import IntMixin
from .kernel_terms import at, broadcast, int_term, lam, weight_product
from .node import Expr
from .symbols import TensorSymbol


def _at_trailing(e: Expr, idx):
    """``e`` indexed by the trailing part of a broadcast index (kernel terms)."""
    k = len(e.shape)
    if k == 0:
        return e.term
    sub = idx[len(idx) - k:]
    return at(e.term, *[Poly.const(0) if e.shape[j] is Poly.const(1) and s is not Poly.const(1) else v
                        for j, (v, s) in enumerate(zip(sub, e.shape))])


def _elementwise(args, kernel_op):
    """Compile an element-wise combination of arguments with broadcasting, as a
    comprehension of entries (so that indexing it later beta-reduces)."""
    out = broadcast([a.shape for a in args], "element-wise operation")
    if not out:
        return kernel_op(tuple(a.term for a in args))
    terms = [a.term for a in args]
    return lam(out, lambda *I: kernel_op(tuple(_at_trailing(a, [Poly.sym(v) for v in I]) for a in args)), *terms)


def _replace_terms(e, old, new):
    """A sum (product) pattern also matches a sub-multiset of the terms (factors) of a
    longer sum (product); None when it does not."""
    if type(e) is type(old) and len(old.args) < len(e.args):
        rest = list(e.args)
        for a in old.args:
            if a in rest:
                rest.remove(a)
            else:
                return None
        return type(e)(new, *[a.replace(old, new) for a in rest])
    return None


def _sort_key(e: Expr):
    return (e.rank, len(e.args), str(e))


class Add(IntMixin, Expr):
    rank = 6

    def __new__(cls, *args, order=True):
        flat = []
        for a in args:
            a = as_expr(a)
            flat.extend(a.args if isinstance(a, Add) else [a])
        nums = [a for a in flat if isinstance(a, Number)]
        rest = [a for a in flat if not isinstance(a, Number)]
        c = sum((a.value for a in nums), Fraction(0))
        terms = ([Number(c)] if c != 0 or not rest else []) + rest
        shapes = [t.shape for t in terms]
        if len(terms) == 1:
            return terms[0]
        if order:
            terms = sorted(terms, key=_sort_key)
        self = object.__new__(cls)
        Expr.__init__(self, *terms)
        self.is_int = all(t.is_int for t in terms)
        self._shape = broadcast(shapes, "sum")
        return self

    def __init__(self, *args, order=True):
        pass

    def rebuild(self, args):
        return Add(*args, order=False)

    def replace(self, old, new):
        hit = _replace_terms(self, old, new) if self != old else None
        return hit if hit is not None else super().replace(old, new)

    def _int_cases(self):
        out = [(None, Poly.const(0))]
        for a in self.args:
            out = [(weight_product(w1, w2), p1 + p2) for w1, p1 in out for w2, p2 in a.cases]
        return out

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        return _elementwise(self.args, T.Add)

    def _text(self):
        out = self.args[0]._paren(10)
        for a in self.args[1:]:
            neg, b = _negated(a)
            out += (" - " + b._paren(11)) if neg else (" + " + a._paren(10))
        return out, 10


def _negated(a):
    if isinstance(a, Number) and a.value < 0:
        return True, Number(-a.value)
    if isinstance(a, Mul) and isinstance(a.args[0], Number) and a.args[0].value < 0:
        c = -a.args[0].value
        rest = a.args[1:]
        if c != 1:
            rest = (Number(c),) + rest
        return True, rest[0] if len(rest) == 1 else Mul(*rest, order=False)
    return False, a


def _mul_group(e: Expr) -> int:
    """Factors of a product are ordered: numbers, then scalars made of sizes and
    constants only, then everything else in the order written (as SymPy does)."""
    if isinstance(e, Number):
        return 0
    if e.shape == () and not any(isinstance(n, (TensorSymbol, Raw)) for n in e.walk()):
        return 1
    return 2


class Mul(IntMixin, Expr):
    rank = 5

    def __new__(cls, *args, order=True):
        flat = []
        for a in args:
            a = as_expr(a)
            flat.extend(a.args if isinstance(a, Mul) else [a])
        c = Fraction(1)
        rest = []
        for a in flat:
            if isinstance(a, Number):
                c *= a.value
            else:
                rest.append(a)
        if c == 0:
            shape = broadcast([a.shape for a in rest], "product") if rest else ()
            return zeros(shape)
        factors = ([Number(c)] if c != 1 or not rest else []) + rest
        if len(factors) == 1:
            return factors[0]
        if order:
            factors = sorted(factors, key=_mul_group)
        self = object.__new__(cls)
        Expr.__init__(self, *factors)
        self.is_int = all(f.is_int for f in factors)
        self._shape = broadcast([f.shape for f in factors], "product")
        return self

    def __init__(self, *args, order=True):
        pass

    def rebuild(self, args):
        return Mul(*args, order=False)

    def replace(self, old, new):
        hit = _replace_terms(self, old, new) if self != old else None
        return hit if hit is not None else super().replace(old, new)

    def _int_cases(self):
        out = [(None, Poly.const(1))]
        for a in self.args:
            out = [(weight_product(w1, w2), p1 * p2) for w1, p1 in out for w2, p2 in a.cases]
        return out

    def _compile(self):
        if self.is_int:
            return int_term(self.cases)
        return _elementwise(self.args, T.Mul)

    def _text(self):
        if isinstance(self.args[0], Number) and self.args[0].value == -1:
            rest = self.args[1:]
            inner = rest[0] if len(rest) == 1 else Mul(*rest, order=False)
            return "-" + inner._paren(25), 25
        num = [a for a in self.args if not (isinstance(a, Pow) and a.exponent < 0)]
        den = [Pow(a.base, -a.exponent) if a.exponent != -1 else a.base
               for a in self.args if isinstance(a, Pow) and a.exponent < 0]
        s = "*".join(a._paren(20) for a in num) if num else "1"
        if den:
            d = den[0]._paren(30) if len(den) == 1 else "(" + "*".join(a._paren(20) for a in den) + ")"
            s += "/" + d
        return s, 20


class Pow(Expr):
    rank = 3

    def __init__(self, base, exponent):
        base = as_expr(base)
        if isinstance(exponent, Number):
            exponent = exponent.value
        if isinstance(exponent, float):
            exponent = float_number(exponent)
        if not isinstance(exponent, (int, Fraction)) or isinstance(exponent, bool):
            raise ProofError(f"the exponent of {base} must be a rational number, not {exponent!r}")
        super().__init__(base)
        self.exponent = Fraction(exponent)
        self._shape = base.shape

    @property
    def base(self):
        return self.args[0]

    @property
    def exp(self):
        return Number(self.exponent)

    def _data(self):
        return (self.exponent,)

    def rebuild(self, args):
        return Pow(args[0], self.exponent)

    def _compile(self):
        return T.Pow(self.base.term, self.exponent)

    def _text(self):
        e = self.exponent
        if e == Fraction(1, 2):
            return f"sqrt({self.base})", 100
        if e == -1:
            return "1/" + self.base._paren(30), 20
        if e == Fraction(-1, 2):
            return f"1/sqrt({self.base})", 20
        es = str(e) if e.denominator == 1 and e >= 0 else f"({e})"
        return f"{self.base._paren(31)}**{es}", 30


def sqrt(x):
    return Pow(as_expr(x), Fraction(1, 2))


class FloorDiv(IntMixin, Expr):
    rank = 4

    def __init__(self, a, m):
        super().__init__(as_expr(a), as_expr(m))
        self._shape = ()

    def _int_cases(self):
        m = self.args[1].poly
        return [(w, p // m) for w, p in self.args[0].cases]

    def _text(self):
        return f"{self.args[0]._paren(21)} // {self.args[1]._paren(21)}", 20
