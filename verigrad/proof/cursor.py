"""Cursors: a position inside a fact (``Eq[-1].this.rhs.args[1]``) and the tactics
applied there.

``fact.this`` starts at the whole fact; ``.lhs``/``.rhs`` pick a side, ``.args[k]`` a
child, ``.function`` (or ``.expr``) the body of a ``Sum``/``Lamda``, ``.find(Cls)`` the
first node of a kind. Calling a tactic there (``.distribute()``, ``.definition``)
rewrites that node, rebuilds the fact around it, and asks the kernel to prove the
changed side equal to the old one; the result is a new fact equivalent to the old.

The facts layer, below ``facts``: a cursor reads its fact's ``statement`` and asks the
fact for the rewritten one (``fact.rewritten``), so it needs nothing of ``facts``.
"""
from __future__ import annotations

from .errors import ProofError
from .expressions import Call, Expr, Fn
from .tactics import TACTICS, TacticError


class Cursor:
    def __init__(self, fact, path):
        self.fact, self.path = fact, tuple(path)

    # -- navigation -------------------------------------------------------------------
    def _side(self):
        if not self.path:
            return "rhs" if self.fact.rule == "this" else None
        return self.path[0]

    def _full_path(self):
        if self.path:
            return self.path
        side = self._side()
        if side is None:
            raise ProofError(f"{self.fact}: choose a side first (.lhs or .rhs)")
        return (side,)

    @property
    def node(self) -> Expr:
        path = self._full_path()
        e = self.fact.statement.side(path[0])
        for k in path[1:]:
            e = e.args[k]
        return e

    @property
    def lhs(self):
        return Cursor(self.fact, ("lhs",))

    @property
    def rhs(self):
        return Cursor(self.fact, ("rhs",))

    @property
    def args(self):
        return _Args(self)

    @property
    def function(self):
        return self._child(0)

    expr = function
    arg = function
    base = function

    def _child(self, k):
        path = self._full_path()
        n = len(self.node.args)
        if not -n <= k < n:
            raise ProofError(f"{self.node} has {n} arguments; there is no argument {k}")
        return Cursor(self.fact, path + (k % n,))

    def find(self, cls):
        """The first node (pre-order) of a class (``Indexed``, ``Sum``), a call of a
        function (``softmax``), or equal to an expression."""
        path = self._full_path()

        def hit(e):
            if isinstance(cls, Fn):
                return isinstance(e, Call) and e.fn is cls
            if isinstance(cls, type):
                return isinstance(e, cls)
            return isinstance(cls, Expr) and e == cls

        def search(e, p):
            if hit(e):
                return p
            for k, a in enumerate(e.args):
                r = search(a, p + (k,))
                if r is not None:
                    return r
            return None
        found = search(self.node, path)
        if found is None:
            raise ProofError(f"find: no {getattr(cls, '__name__', cls)} in {self.node}")
        return Cursor(self.fact, found)

    # -- tactics --------------------------------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in TACTICS:
            raise ProofError(f"unknown tactic {name!r} (known: {', '.join(sorted(TACTICS))})")
        rule, is_property = TACTICS[name]
        if is_property:
            return self._apply(name, rule, (), {})
        return lambda *a, **kw: self._apply(name, rule, a, kw)

    def statement_exprs(self):
        st = self.fact.statement
        return [st.side(s) for s in st.sides]

    def _apply(self, name, rule, a, kw):
        path = self._full_path()
        node = self.node
        try:
            out = rule(node, self, *a, **kw)
        except TacticError:
            raise
        using = None
        if isinstance(out, tuple):
            out, using = out
        if out.shape != node.shape:
            raise TacticError(f"{name}: {out} has another shape than {node}")
        new_side = _set(self.fact.statement.side(path[0]), path[1:], out)
        st = self.fact.statement.replace_side(path[0], new_side)
        inputs = tuple(x for x in a if hasattr(x, "theorem") and hasattr(x, "statement"))
        return self.fact.rewritten(st, name, using=using, inputs=inputs)

    def __repr__(self):
        return f"<cursor at {self.node}>"


class _Args:
    def __init__(self, cursor):
        self.cursor = cursor

    def __getitem__(self, k):
        if isinstance(k, slice):
            return self.cursor.node.args[k]
        return self.cursor._child(k)

    def __len__(self):
        return len(self.cursor.node.args)

    def __iter__(self):
        return (self.cursor._child(k) for k in range(len(self)))


def _set(e: Expr, path, new: Expr) -> Expr:
    if not path:
        return new
    k = path[0]
    args = list(e.args)
    args[k] = _set(args[k], path[1:], new)
    return e.rebuild(args)
