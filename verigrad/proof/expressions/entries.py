"""Entries: an index pushed inside an expression, and a comprehension read back.

``push_index(e, idx)`` is ``e[idx]`` with the index moved inward where the structure
allows (SymPy's automatic evaluation of ``X[i]``): into a comprehension's body, the
terms of a sum, the rows of a matrix product, the argument of an element-wise
function. ``tidy_lamda`` goes the other way (``Lamda[j, i](X[i, j]) -> X``). Both are
display choices, untrusted: a step built with them is checked by the kernel.
"""
from __future__ import annotations

from ..errors import ProofError
from .arithmetic import Add, Mul, Pow
from .atoms import Number, as_expr
from .binders import Lamda, Sum
from .constant_tensors import ZeroMatrix, zeros
from .functions import ELEMENTWISE, REDUCE_LAST, ROWWISE, Call
from .indexing import Indexed, Slice
from .matmul import MatMul, Transpose
from .node import Expr


def push_index(e: Expr, idx) -> Expr:
    """``e[idx]`` with the index moved inside where the structure allows (untrusted;
    whatever it returns is checked against ``e[idx]`` by the kernel)."""
    idx = [as_expr(i) for i in idx]
    if not idx:
        return e
    if isinstance(e, Lamda):
        outer = list(reversed(e.variables))
        k = min(len(outer), len(idx))
        body = e.function
        for v, i in zip(outer[:k], idx[:k]):
            body = body.replace(v, i)
        if k < len(outer):
            rest = [(v, n) for v, n in e.limits if v in outer[k:]]
            body = Lamda(body, rest)
        return push_index(body, idx[k:])
    if isinstance(e, (Add, Mul)) and not e.is_int:
        R = len(e.shape)
        args = []
        for a in e.args:
            r = len(a.shape)
            sub = idx[R - r:] if len(idx) > R - r else []
            args.append(push_index(a, sub) if sub else a)
        return type(e)(*args)
    if isinstance(e, Pow):
        return Pow(push_index(e.base, idx), e.exponent)
    if isinstance(e, Call):
        name = e.fn.name
        if name in ELEMENTWISE:
            return Call(e.fn, push_index(e.arg, idx))
        if (name in ROWWISE and len(e.arg.shape) == 2) or (name in REDUCE_LAST and len(e.arg.shape) == 2):
            inner = Call(e.fn, push_index(e.arg, idx[:1]), *e.args[1:])
            return push_index(inner, idx[1:]) if len(idx) > 1 else inner
        return Indexed(e, *idx)
    if isinstance(e, MatMul):
        return push_index(_distribute_matmul(_matmul_index(e, idx[0])), idx[1:])
    if isinstance(e, Transpose):
        x = e.arg
        if len(x.shape) == 2 and len(idx) >= 2:
            return push_index(x, [idx[1], idx[0]] + idx[2:])
        if len(x.shape) == 3:
            return push_index(Transpose(push_index(x, idx[:1])), idx[1:])
        return Indexed(e, *idx)
    if isinstance(e, Sum) and e.shape:
        return Sum(push_index(e.function, idx), e.limits)
    if isinstance(e, Indexed) and not any(isinstance(i, Slice) for i in e.indices):
        return Indexed(e.base, *e.indices, *idx, total=e.total)
    if isinstance(e, ZeroMatrix):
        return zeros(e.shape[len(idx):])
    return Indexed(e, *idx)


def _column(B: Expr, j: Expr) -> Expr:
    """``B[:, j]``."""
    if isinstance(B, Transpose) and len(B.arg.shape) == 2:
        return push_index(B.arg, [j])
    return Indexed(B, slice(None), j)


def _matmul_index(e: MatMul, i: Expr) -> Expr:
    fs = list(e.args)
    a = fs[0]
    if len(a.shape) == 2:
        if len(fs) > 1 and len(fs[1].shape) == 3:        # row-batched
            return MatMul(push_index(a, [i]), push_index(fs[1], [i]), *fs[2:])
        return MatMul(push_index(a, [i]), *fs[1:])
    if len(a.shape) == 3:
        return MatMul(push_index(a, [i]), *fs[1:])
    # a vector first: the index runs over the last factor's columns
    last = fs[-1]
    if len(last.shape) == 2:
        return MatMul(*fs[:-1], _column(last, i))
    raise ProofError(f"cannot index the product {e}")


def _distribute_matmul(e: Expr) -> Expr:
    """Multiply out one factor that is a sum (as SymPy's evaluation of an indexed product)."""
    if not isinstance(e, MatMul):
        return e
    for k, f in enumerate(e.args):
        if isinstance(f, Add):
            return Add(*[MatMul(*e.args[:k], t, *e.args[k + 1:]) for t in f.args], order=False)
    return e


def tidy_lamda(e: Lamda) -> Expr:
    """``Lamda[j, i](X[i, j]) -> X``, ``Lamda(0) -> ZeroMatrix``, element-wise through sums
    and products (a display choice; the kernel checks it)."""
    if not isinstance(e, Lamda):
        return e
    outer = list(reversed(e.variables))
    shape = e.shape

    def eta(body):
        if isinstance(body, Number) and body.value == 0:
            return zeros(shape)
        if isinstance(body, Indexed) and len(body.indices) >= len(outer) and \
                list(body.indices[:len(outer)]) == outer:
            rest = body.indices[len(outer):]
            base = body.base
            if not any(base.has(v) for v in outer) and not any(r.has(v) for r in rest for v in outer):
                x = Indexed(base, *rest) if rest else base
                return x if x.shape == shape else None
        if isinstance(body, (Add, Mul)):
            parts = []
            for a in body.args:
                if a.shape == () and not any(a.has(v) for v in outer):
                    parts.append(a)
                    continue
                t = eta(a)
                if t is None:
                    return None
                parts.append(t)
            return type(body)(*parts, order=False)
        return None
    out = eta(e.function)
    return out if out is not None else e
