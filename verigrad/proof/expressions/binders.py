"""Binders: comprehensions ``Lamda``, sums ``Sum`` and ``ReduceMax``.

``Lamda[j:n, i:m](f)`` and ``Sum[j:n, i:m](f)`` list limits innermost first (SymPy's
convention), so ``Lamda[j:n, i:m](f)[i, j] = f``; ``Sum[j](f)`` takes the range from
j's domain. Each limit's symbol is bound: inside the binder it is an index over
exactly that range (a copy, substituted in the body, where the given symbol has
another domain).
"""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, Poly, as_poly, poly_str

from ..errors import ProofError
from .atoms import Number, as_expr
from .kernel_terms import index_names, index_vars_by_name
from .node import Expr
from .symbols import IntSymbol, as_size


class Binder(Expr):
    """Common part of ``Lamda``, ``Sum`` and ``ReduceMax``: a body and limits (innermost
    first), each ``(symbol, size)``; the symbols are bound index symbols. Written
    ``Name[limits](body)``, and shown so."""

    def __class_getitem__(cls, spec):
        return _BinderSyntax(cls, _limits(spec))

    @classmethod
    def make(cls, body, limits):
        return cls(body, limits)

    def __init__(self, body, limits):
        # each limit's symbol made an index of exactly its range however the binder is
        # written: Sum(x[i], [(i, 1)]) with i of domain [0, n) compiled over [0, n) (RT-31)
        body, lims = _bind_symbols(body, [(sym, as_poly(size)) for sym, size in limits])
        super().__init__(body)
        self.limits = tuple(lims)

    @property
    def function(self):
        return self.args[0]

    expr = function

    @property
    def variables(self):
        return tuple(s for s, _ in self.limits)

    def _data(self):
        return tuple((s.key, n.skey) for s, n in self.limits)

    def rebuild(self, args):
        return type(self)(args[0], self.limits)

    def own_names(self) -> set:
        return {s.name for s in self.variables}

    def replace(self, old, new):
        """A bound symbol is not the free one of that name: it is never replaced."""
        if self != old and any(s == old for s in self.variables):
            return self
        return super().replace(old, new)

    def _lim_text(self):
        return ", ".join(f"{s.name}:{poly_str(n)}" for s, n in self.limits)

    def _text(self):
        return f"{type(self).__name__}[{self._lim_text()}]({self.function})", 100

    def bind(self):
        """``(kernel index vars outer-first, body)`` for compiling; a bound index is
        renamed where another index of the body has its name (display only: the kernel
        tells them apart anyway)."""
        vs, body = [s.sym for s, _ in reversed(self.limits)], self.function.term
        if not (index_names(body) & {v.name for v in vs}):
            return vs, body
        clash = index_vars_by_name(body)
        out = []
        for v in vs:
            if any(w is not v for w in clash.get(v.name, ())):
                taken = set(clash) | {u.name for u in out}
                name = next(c for c in [v.name + "'", v.name + "''"] + [f"{v.name}{k}" for k in range(1, 99)]
                            if c not in taken)
                w = IndexVar(name, v.size)
                body = T.subst(body, {v: Poly.sym(w)})
                v = w
            out.append(v)
        return out, body


class _BinderSyntax:
    """``Lamda[j:n, i:m](body)`` / ``Sum[j:n](body)`` / ``Sum[j](body)``."""

    def __init__(self, cls, limits):
        self.cls, self.limits = cls, limits

    def __call__(self, body):
        return self.cls.make(body, self.limits)


def _limits(spec):
    if not isinstance(spec, tuple):
        spec = (spec,)
    out = []
    for s in spec:
        if isinstance(s, slice):
            sym, lo, hi = s.start, s.stop, s.step
            if hi is not None:          # j:a:b
                lo, hi = lo, hi
            else:
                lo, hi = 0, lo
            if not (isinstance(lo, int) and lo == 0) and as_expr(lo) != Number(0):
                raise ProofError(f"a limit {sym.name}:{lo}:{hi} must start at 0")
            out.append((sym, as_size(hi)))
        elif isinstance(s, IntSymbol):
            if s.kind != "index":
                raise ProofError(f"{s.name} has no range; write {s.name}:n")
            out.append((s, s.size))
        else:
            raise ProofError(f"bad limit {s!r}")
    return out


def _bind_symbols(body, limits):
    """Make each limit's symbol an index of exactly that range (a copy if the given
    symbol has another domain, substituted in the body)."""
    out = []
    body = as_expr(body)
    for sym, size in limits:
        if not isinstance(sym, IntSymbol):
            raise ProofError(f"{sym!r} cannot be bound (not an integer symbol)")
        if sym.kind == "index" and sym.size is size:
            out.append((sym, size))
            continue
        b = IntSymbol.bound(sym.name, size)
        body = body.replace(sym, b)
        out.append((b, size))
    return body, out


class Lamda(Binder):
    rank = 8

    def __init__(self, body, limits):
        super().__init__(body, limits)
        self._shape = tuple(n for _, n in reversed(self.limits)) + self.function.shape

    def _compile(self):
        vs, body = self.bind()
        return T.Lamda(vs, body)


class Sum(Binder):
    rank = 7

    def __init__(self, body, limits):
        super().__init__(body, limits)
        self._shape = self.function.shape

    def _compile(self):
        vs, body = self.bind()
        for v in reversed(vs):
            body = T.Sum(v, body)
        return body


class ReduceMax(Binder):
    """``ReduceMax[j:n](f)``: the largest value of ``f`` over ``j`` (a scalar). The kernel
    cannot differentiate it; it must cancel (as the row max of a stable softmax does)."""
    rank = 7

    def __init__(self, body, limits):
        super().__init__(body, limits)
        if len(self.limits) != 1 or self.function.shape != ():
            raise ProofError("ReduceMax takes one limit and a scalar body")
        self._shape = ()

    def _compile(self):
        vs, body = self.bind()
        return T.ReduceMax(vs[0], body, "max")
