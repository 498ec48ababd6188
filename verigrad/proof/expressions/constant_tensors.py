"""Tensors of one constant entry: ``ZeroMatrix(n, d)``, ``OneMatrix(n, d)``, ``zeros``."""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import poly_str

from .atoms import Number
from .kernel_terms import lam
from .node import Expr
from .symbols import as_size


class ZeroMatrix(Expr):
    rank = 1

    def __init__(self, *shape):
        super().__init__()
        self._shape = tuple(as_size(s) for s in shape)

    def _data(self):
        return tuple(s.skey for s in self._shape)

    def rebuild(self, args):
        return self

    def _compile(self):
        if not self._shape:
            return T.Num(0)
        return lam(self._shape, lambda *I: T.Num(0))

    def _text(self):
        if not self._shape:
            return "0", 100
        return f"ZeroMatrix({', '.join(poly_str(s) for s in self._shape)})", 100


class OneMatrix(ZeroMatrix):
    def _compile(self):
        return lam(self._shape, lambda *I: T.Num(1)) if self._shape else T.Num(1)

    def _text(self):
        return f"OneMatrix({', '.join(poly_str(s) for s in self._shape)})", 100


def zeros(shape) -> Expr:
    """The zero of a shape: ``ZeroMatrix`` of it, or the number 0 for a scalar."""
    return ZeroMatrix(*shape) if shape else Number(0)
