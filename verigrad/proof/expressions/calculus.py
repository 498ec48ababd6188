"""Derivatives and vector-Jacobian products as expressions of the language."""
from __future__ import annotations

from verigrad.kernel import terms as T, vjp_statement

from ..errors import ProofError
from .atoms import as_expr
from .indexing import Indexed
from .kernel_terms import shape_str
from .node import Expr
from .symbols import TensorSymbol


class Derivative(Expr):
    """``Derivative(f, x[k])``: the partial derivative of a scalar ``f`` by one entry."""
    rank = 8

    def __init__(self, f, wrt):
        f, wrt = as_expr(f), as_expr(wrt)
        if f.shape != ():
            raise ProofError(f"Derivative of the non-scalar {f}")
        base, idx = (wrt.base, wrt.indices) if isinstance(wrt, Indexed) else (wrt, ())
        if not isinstance(base, TensorSymbol) or base.definition is not None:
            raise ProofError(f"Derivative by {wrt}: differentiate by an entry of an undefined symbol")
        if len(idx) != len(base.shape):
            raise ProofError(f"Derivative by {wrt}: give an index for every axis of {base.name}")
        super().__init__(f, wrt)
        self._shape = ()

    def _compile(self):
        f, wrt = self.args
        base, idx = (wrt.base, wrt.indices) if isinstance(wrt, Indexed) else (wrt, ())
        return T.Deriv(f.term, base.term, tuple(e.poly for e in idx))

    def _text(self):
        return f"Derivative({self.args[0]}, {self.args[1]})", 100


class Vjp(Expr):
    """``vjp(f, x, dy)``: the transpose-Jacobian of ``f`` (a tensor expression in the
    symbol ``x``) applied to the cotangent ``dy``:
    ``vjp[K] = sum_I dy[I] * d f[I] / d x[K]``."""
    rank = 8

    def __init__(self, f, x, dy):
        f, x, dy = as_expr(f), as_expr(x), as_expr(dy)
        if not isinstance(x, TensorSymbol) or x.definition is not None:
            raise ProofError(f"vjp with respect to {x}, which is not an undefined symbol")
        if dy.shape != f.shape:
            raise ProofError(f"cotangent {dy} has shape {shape_str(dy.shape)}, {f} has {shape_str(f.shape)}")
        super().__init__(f, x, dy)
        self._shape = x.shape

    def _compile(self):
        f, x, dy = self.args
        if not isinstance(dy.term, T.Var):
            raise ProofError(f"the cotangent {dy} must be a symbol")
        return vjp_statement(f.term, x.term, dy.term)

    def _text(self):
        return f"vjp({', '.join(str(a) for a in self.args)})", 100
