"""Python's syntax for expressions: what ``+ - * / ** @ // % < <= > >=``, ``.T``,
``x[i]`` and ``.subs`` build.

The top of the expression layer. ``node.Expr`` forwards each operator to the table
``node.SYNTAX``; this module fills it with the node kinds defined between the two
(SymPy's reading: ``a - b`` is ``a + (-1)*b``, ``a / b`` is ``a * b**-1``, ``a % m`` is
``a - m*(a // m)``). Operands that are Python numbers become ``Number`` leaves.
"""
from __future__ import annotations

from .arithmetic import Add, FloorDiv, Mul, Pow
from .atoms import Number, as_expr
from .indexing import Indexed
from .indicators import Relational
from .matmul import MatMul, Transpose
from .node import SYNTAX


def _mod(a, m):
    a, m = as_expr(a), as_expr(m)
    return a - m * FloorDiv(a, m)


def _index(e, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    return Indexed(e, *idx)


def _subs(e, old, new=None):
    if new is None and isinstance(old, (list, tuple, dict)):
        pairs = old.items() if isinstance(old, dict) else old
        out = e
        for o, n in pairs:
            out = out.subs(o, n)
        return out
    return e.replace(as_expr(old), as_expr(new))


SYNTAX.update({
    "+": lambda a, b: Add(as_expr(a), as_expr(b)),
    "-": lambda a, b: Add(as_expr(a), -as_expr(b)),
    "neg": lambda a: Mul(Number(-1), a),
    "*": lambda a, b: Mul(as_expr(a), as_expr(b)),
    "/": lambda a, b: Mul(as_expr(a), Pow(as_expr(b), -1)),
    "**": Pow,
    "@": lambda a, b: MatMul(as_expr(a), as_expr(b)),
    "//": lambda a, b: FloorDiv(a, as_expr(b)),
    "%": _mod,
    "<": lambda a, b: Relational(a, "<", b),
    "<=": lambda a, b: Relational(a, "<=", b),
    ">": lambda a, b: Relational(a, ">", b),
    ">=": lambda a, b: Relational(a, ">=", b),
    ".T": Transpose,
    "[]": _index,
    "subs": _subs,
})
