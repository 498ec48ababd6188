"""The node of the expression tree: structure, compilation, display, syntax.

A theorem file writes tensor expressions the way a mathematician (or SymPy) does:
``softmax(Q @ K.T / sqrt(d)) @ V``, ``Sum[j:n](alpha[i, j] * V[j])``. Every node is an
``Expr``: it keeps that structure, so proof steps can navigate it (``.args[1]``,
``.function``) and tactics can rewrite it, and it *compiles* to a kernel term
(``node.term``) that says what it means. Only compiled terms ever reach the kernel; a
wrong compile rule can make a proof fail or state something unintended, but it cannot
make the kernel accept a false equation.

This module is the base of the expression layer and knows none of the node kinds
above it. What Python's syntax builds (``a + b`` an ``Add``, ``x[i]`` an ``Indexed``,
``X.this`` a cursor on ``X = X``) is looked up in the table ``SYNTAX``, which the
layers defining those kinds fill in: ``expressions.syntax`` the operators, ``facts``
``this``. (JAX's ``core.Tracer`` forwards its operators the same way, to methods that
``jax.numpy`` installs.)
"""
from __future__ import annotations

from verigrad.kernel.sizes import KernelError
from verigrad.kernel.terms import Term

from ..errors import ProofError

SYNTAX: dict = {}        # "+", "[]", "this", ... -> the function building what it means

_compiled: dict = {}     # node key -> kernel term


def _build(syntax: str, *operands):
    rule = SYNTAX.get(syntax)
    if rule is None:
        raise ProofError(f"`{syntax}` is not defined for expressions: import verigrad.proof")
    return rule(*operands)


class Expr:
    """A node: ``args`` are its children (for navigation), ``shape`` a tuple of size
    polynomials, ``term`` the kernel term it compiles to."""

    is_int = False      # an integer-valued scalar (sizes, indices, their arithmetic)
    rank = 9            # sort rank among the terms of a sum (SymPy-like canonical order)

    def __init__(self, *args):
        self.args = tuple(args)
        self._term = None
        self._key = None

    # -- structure ------------------------------------------------------------------------
    def rebuild(self, args):
        """The same kind of node with other children."""
        return type(self)(*args)

    def _data(self):
        """Non-child data that distinguishes nodes with equal children."""
        return ()

    @property
    def key(self):
        if self._key is None:
            self._key = (type(self).__name__, self._data(), tuple(a.key for a in self.args))
        return self._key

    def __eq__(self, other):
        return isinstance(other, Expr) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    @property
    def func(self):
        return lambda *args: self.rebuild(args)

    def walk(self):
        """Pre-order traversal of the tree."""
        yield self
        for a in self.args:
            yield from a.walk()

    def has(self, *nodes) -> bool:
        return any(n in nodes for n in self.walk())

    def own_names(self) -> set:
        """The symbol names this node itself introduces (a symbol its name, a binder its
        bound variables'); none for other nodes."""
        return set()

    def symbol_names(self) -> set:
        """Names of every symbol (integer or tensor, free or bound) in the tree."""
        out = set()
        for n in self.walk():
            out |= n.own_names()
        return out

    def find(self, cls):
        """The first sub-node (pre-order) that is an instance of ``cls`` (or equal to it)."""
        for n in self.walk():
            if (isinstance(cls, type) and isinstance(n, cls)) or n == cls:
                return n
        raise ProofError(f"no {getattr(cls, '__name__', cls)} in {self}")

    def replace(self, old: "Expr", new: "Expr") -> "Expr":
        """``self`` with every occurrence of ``old`` replaced by ``new``. Node kinds with
        more to match refine it: a product (sum) pattern also matches a run of factors
        (a sub-multiset of terms), and a binder's own variables are never replaced."""
        if self == old:
            return new
        if not self.args:
            return self
        new_args = [a.replace(old, new) for a in self.args]
        if all(a is b for a, b in zip(new_args, self.args)):
            return self
        return self.rebuild(new_args)

    def subs(self, old, new=None):
        """Structural substitution ``old -> new`` (also of a run of factors of a
        product); ``subs([(a, b), ...])`` and ``subs({a: b})`` substitute in turn."""
        return _build("subs", self, old, new)

    _subs = subs

    # -- compilation ----------------------------------------------------------------------
    @property
    def term(self) -> Term:
        """The kernel term this node means. Structurally equal nodes (equal ``key``, which
        covers everything compiling reads) compile to the same term, so it is shared."""
        if self._term is None:
            key = self.key
            t = _compiled.get(key)
            if t is None:
                try:
                    t = _compiled[key] = self._compile()
                except KernelError as e:
                    raise ProofError(f"{self}: {e}") from None
            self._term = t
        return self._term

    def _compile(self) -> Term:
        raise ProofError(f"{type(self).__name__} cannot be compiled")

    @property
    def shape(self):
        return self._shape

    @property
    def is_scalar(self):
        return self.shape == ()

    # -- display ----------------------------------------------------------------------------
    def __str__(self):
        return self._text()[0]

    def __repr__(self):
        return str(self)

    def _text(self):
        """``(text, precedence)``: how the node prints, and how tightly it binds."""
        return type(self).__name__ + "(" + ", ".join(str(a) for a in self.args) + ")", 100

    def _paren(self, prec):
        s, p = self._text()
        return s if p >= prec else "(" + s + ")"

    # -- Python syntax (SymPy-like; see SYNTAX) ------------------------------------------------
    def __add__(self, o):
        return _build("+", self, o)

    def __radd__(self, o):
        return _build("+", o, self)

    def __sub__(self, o):
        return _build("-", self, o)

    def __rsub__(self, o):
        return _build("-", o, self)

    def __neg__(self):
        return _build("neg", self)

    def __mul__(self, o):
        return _build("*", self, o)

    def __rmul__(self, o):
        return _build("*", o, self)

    def __truediv__(self, o):
        return _build("/", self, o)

    def __rtruediv__(self, o):
        return _build("/", o, self)

    def __pow__(self, e):
        return _build("**", self, e)

    def __matmul__(self, o):
        return _build("@", self, o)

    def __rmatmul__(self, o):
        return _build("@", o, self)

    def __floordiv__(self, o):
        return _build("//", self, o)

    def __mod__(self, o):
        return _build("%", self, o)

    def __lt__(self, o):
        return _build("<", self, o)

    def __le__(self, o):
        return _build("<=", self, o)

    def __gt__(self, o):
        return _build(">", self, o)

    def __ge__(self, o):
        return _build(">=", self, o)

    @property
    def T(self):
        return _build(".T", self)

    def __getitem__(self, idx):
        return _build("[]", self, idx)

    @property
    def this(self):
        """A cursor on ``self = self``: ``X.this.definition`` states ``X = <X unfolded>``."""
        return _build("this", self)
