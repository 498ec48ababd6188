"""Symbols: sizes, indices and tensors, and ``Symbol``, which declares them.

::

    n = Symbol.n(domain=[2, oo], integer=True)      # a size, n >= 2
    n = Symbol(domain=Range(2, oo))                 # the same; the name is taken from the line
    i = Symbol.i(integer=True, domain=[0, n - 1])   # an index, 0 <= i <= n - 1
    W = Symbol.W(shape=(n, n), real=True)           # a tensor variable
    eps = Symbol.eps(positive=True)                 # a positive scalar
    S = Symbol.S(definition=softmax(Q @ K.T / sqrt(d)) @ V)   # a definition

An integer symbol is a size (``n >= lower``: a kernel size symbol), an index
(``0 <= i <= upper``: a kernel index variable), or not yet known (no domain): it becomes
a size where it gives a shape and an index where it indexes an axis. A tensor symbol
with ``definition=`` is the kernel's transparent definition: the kernel sees through
it, so it can never be misused.
"""
from __future__ import annotations

import itertools
import linecache
import re
import sys

from verigrad.kernel import define
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, KernelError, Poly, SizeSym

from ..errors import ProofError
from .atoms import Number, as_expr
from .domains import Infinity, Interval, OpenRange, oo
from .integers import IntMixin
from .kernel_terms import SPARE_NAMES, shape_str
from .node import Expr


class IntSymbol(IntMixin, Expr):
    """An integer symbol: a size (``n >= lower``), an index (``0 <= i <= upper``), or not
    yet known (no domain): it becomes a size where it gives a shape and an index where
    it indexes an axis."""
    rank = 1

    def __init__(self, name, lower=None, upper=None, kind=None):
        super().__init__()
        self.name, self.lower, self.upper, self.kind = name, lower, upper, kind
        self._shape = ()
        self._sym = None
        if kind == "size":
            lo = 1 if lower is None else int(_constant(lower))
            if lo < 1:
                raise ProofError(f"size symbol {name} ranges from {lo}; a size is at least 1")
            self._sym = SizeSym(name, lo)
        elif kind == "index":
            lo = 0 if lower is None else lower
            if not (isinstance(lo, int) and lo == 0) and not (isinstance(lo, Expr) and lo == Number(0)):
                raise ProofError(f"index symbol {name}: a domain must start at 0, not {lo}")
            self._sym = IndexVar(name, as_size(upper) + 1)

    @staticmethod
    def bound(name, size: Poly) -> "IntSymbol":
        return IntSymbol.wrap(IndexVar(name, size))

    @staticmethod
    def wrap(var: IndexVar) -> "IntSymbol":
        """The symbol of an existing kernel index variable."""
        s = IntSymbol(var.name)
        s.kind, s._sym = "index", var
        return s

    @property
    def key(self):
        # an unresolved symbol is identified by the object (it may resolve later)
        return ("IntSymbol", self.name, self._sym.skey if self._sym is not None else id(self))

    def rebuild(self, args):
        return self

    def own_names(self) -> set:
        return {self.name}

    def resolve_size(self):
        if self._sym is None and self.lower is not None:
            raise ProofError(f"{self.name} is declared nonnegative (0 allowed), and a size is at least 1: "
                             f"declare it positive=True or domain=[1, oo] to use it as a size")
        if self._sym is None:
            self.kind, self._sym = "size", SizeSym(self.name, 1)
        elif self.kind != "size":
            raise ProofError(f"{self.name} is an index; it cannot give a size")
        return self._sym

    def resolve_index(self, size: Poly):
        if self._sym is None:
            self.kind, self._sym = "index", IndexVar(self.name, size)
        return self._sym

    @property
    def sym(self):
        if self._sym is None:
            raise ProofError(f"the integer symbol {self.name} has no domain; give it one, "
                             f"e.g. domain=[0, n - 1]")
        return self._sym

    @property
    def size(self) -> Poly:
        """The number of values of an index symbol."""
        if self.kind != "index":
            raise ProofError(f"{self.name} is not an index symbol")
        return self._sym.size

    def copy(self, domain=None, **kw):
        return make_symbol(self.name, domain=domain, integer=True, **kw)

    def _int_cases(self):
        return [(None, Poly.sym(self.sym))]

    def _text(self):
        return self.name, 100


def _constant(x) -> int:
    e = as_expr(x)
    p = e.poly
    if not p.is_const():
        raise ProofError(f"{e} must be a constant")
    return p.const_value()


def as_size(x) -> Poly:
    """A size expression: a polynomial in size symbols (an integer symbol without a
    domain becomes a size symbol here)."""
    if isinstance(x, Poly):
        return x
    e = as_expr(x)
    if not e.is_int:
        raise ProofError(f"size {e} is not an integer expression")
    if isinstance(e, IntSymbol):
        e.resolve_size()
    for n in e.walk():
        if isinstance(n, IntSymbol) and n.kind is None:
            n.resolve_size()
    cases = e.cases
    if len(cases) != 1 or cases[0][0] is not None:
        raise ProofError(f"size {e} must be a polynomial (no Min/Max)")
    return cases[0][1]


class TensorSymbol(Expr):
    """A real (or complex, see below) tensor symbol, possibly defined by an expression.

    A defined symbol compiles to the kernel's transparent definition
    ``verigrad.kernel.define(name, body)``: the kernel sees through it, so a definition
    can never be misused. ``complex=True`` is accepted for proofs that use only ring
    operations (checked by the proof runner, ``complex_symbols``): a polynomial
    identity that holds over the reals holds over the complex numbers."""
    rank = 1

    def __init__(self, name, shape=(), facts=(), complex=False, definition=None):
        super().__init__()
        self.name, self.facts, self.complex = name, tuple(sorted(facts)), complex
        self.definition = definition
        if definition is not None:
            definition = as_expr(definition)
            self.definition = definition
            if shape and tuple(as_size(s) for s in shape) != definition.shape:
                raise ProofError(f"{name}: shape {shape_str(tuple(as_size(s) for s in shape))} does not match "
                                 f"its definition's {shape_str(definition.shape)}")
            self._shape = definition.shape
        else:
            self._shape = tuple(as_size(s) for s in shape)
        self._def_thm = None

    def _data(self):
        return (self.name, tuple(s.skey for s in self._shape), self.facts,
                self.definition.key if self.definition is not None else None)

    def rebuild(self, args):
        return self

    def own_names(self) -> set:
        return {self.name}

    def _compile(self):
        if self.definition is None:
            return T.Var(self.name, self._shape, self.facts)
        self._define()
        return self._term

    def _define(self):
        if self._def_thm is None:
            try:
                self._term, self._def_thm = define(self.name, self.definition.term)
            except KernelError as e:
                raise ProofError(f"definition of {self.name}: {e}") from None
        return self._def_thm

    @property
    def definition_theorem(self):
        """The kernel's ``|- name = body``."""
        if self.definition is None:
            raise ProofError(f"{self.name} has no definition")
        return self._define()

    def _text(self):
        return self.name, 100


_LETTERS = "ijklpqrstuvw"


def fresh_symbol(size, *avoid, prefer=_LETTERS) -> IntSymbol:
    """A bound index symbol over ``[0, size)`` whose name no symbol of ``avoid`` uses."""
    used = set()
    for e in avoid:
        used |= e.symbol_names()
    for name in itertools.chain(prefer, SPARE_NAMES):
        if name not in used:
            return IntSymbol.bound(name, size)
    raise ProofError("no fresh index name")


# -- declaring symbols --------------------------------------------------------------------

def _domain(name, domain):
    """``(kind, lower, upper)`` from a domain: ``[a, b]`` closed, ``Range(a, b)`` half open,
    ``Interval(a, b)`` closed; an upper end ``oo`` makes a size."""
    if domain is None:
        return None, None, None
    if isinstance(domain, OpenRange):
        return "size", domain.a, None
    if isinstance(domain, Interval):
        lo, hi = domain.a, domain.b
    elif isinstance(domain, (list, tuple)) and len(domain) == 2:
        lo, hi = domain
    else:
        raise ProofError(f"{name}: domain {domain!r} is not [a, b], Range(a, b) or Interval(a, b)")
    if isinstance(hi, Infinity) or hi is oo:
        return "size", lo, None
    return "index", lo, as_expr(hi)


# Options that only narrow a symbol's domain (or say nothing of it) may be dropped: a
# statement proved for every real tensor holds for the hermitian ones, the given ones.
# An option that widens the domain past what the symbol is compiled as must be refused:
# dropped, it would make the kernel prove a statement about fewer values than the one
# the file states (``real=False`` read as real proves ``log(exp(x)) = x``).
_NARROWING = {"hermitian", "given", "random"}


def _refuse_widening(name, real, complex, extended_real, finite):
    if real is False and not complex:
        raise ProofError(f"Symbol {name}: real=False declares a symbol that is not real; the kernel reasons "
                         f"over the reals (complex=True declares a complex symbol, for ring operations only)")
    if extended_real is True:
        raise ProofError(f"Symbol {name}: extended_real=True admits -oo and oo, which the kernel's reals do not "
                         f"have (oo - oo is undefined); declare it real")
    if extended_real is False and not complex:
        raise ProofError(f"Symbol {name}: extended_real=False declares a symbol that is not real; the kernel "
                         f"reasons over the reals (complex=True declares a complex symbol)")
    if finite is False:
        raise ProofError(f"Symbol {name}: finite=False admits infinities, which the kernel's reals do not have; "
                         f"declare it real")


# What a symbol may be named: statements show symbols by their bare names, so a name that
# is not one reads as an expression (RT2-D6: a definition named "x + x" made the proved
# x + z = x read x + x + x = x).
_NAME = re.compile(r"[^\W\d]\w*(\^[^\W\d]\w*)?'*")


def make_symbol(name, domain=None, integer=None, shape=(), definition=None, real=None, complex=False,
                positive=False, nonnegative=False, nonzero=False, extended_real=None, finite=None, **unknown):
    """The symbol ``Symbol.name(**options)`` declares.

    Every option either is acted on or only narrows the domain (``hermitian``, ``given``,
    ``random``); an option that would widen it past what the symbol is compiled as (a real
    tensor, a size ``n >= 1``, an index of an axis) is refused with a ProofError."""
    bad = set(unknown) - _NARROWING
    if bad:
        raise ProofError(f"Symbol {name}: unknown options {sorted(bad)}")
    if not (isinstance(name, str) and _NAME.fullmatch(name)):
        raise ProofError(f"Symbol {name!r}: a name is an identifier, optionally with a superscript label "
                         f"(W^Q) and primes")
    _refuse_widening(name, real, complex, extended_real, finite)
    if definition is not None:
        if domain is not None or integer:
            raise ProofError(f"Symbol {name}: a definition of an integer symbol is not supported")
        return TensorSymbol(name, shape, (), complex, definition)
    if domain is not None and not integer and (real or complex or integer is False or
                                               not getattr(domain, "integer", True)):
        raise ProofError(f"Symbol {name}: a domain {domain} of a real symbol is not supported: a domain makes "
                         f"an integer symbol (a size or an index); write integer=True for one")
    if integer or domain is not None:
        if shape:
            raise ProofError(f"Symbol {name}: integer tensors are not supported (an integer symbol is a "
                             f"size or an index)")
        kind, lo, hi = _domain(name, domain)
        if kind is None and positive:
            kind, lo = "size", 1
        elif kind is None and nonzero:
            raise ProofError(f"Symbol {name}: an integer declared nonzero may be negative, and a size is at "
                             f"least 1, an index at least 0: give it a domain (e.g. domain=[1, oo])")
        elif kind is None and nonnegative:
            lo = 0      # not a size (a size is at least 1); it may still index an axis
        return IntSymbol(name, lo, hi, kind)
    facts = [f for f, on in (("positive", positive), ("nonneg", nonnegative), ("nonzero", nonzero)) if on]
    return TensorSymbol(name, shape, facts, complex)


_ASSIGN = re.compile(r"^\s*([A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)\s*=\s*Symbol\s*\(")


def _name_from_line(depth: int) -> str:
    frame = sys._getframe(depth)
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = _ASSIGN.match(line)
    if not m:
        raise ProofError(f"Symbol(...) without a name: write `x = Symbol(...)` or Symbol.x(...) "
                         f"(line {frame.f_lineno})")
    return m.group(1)


class _SymbolFactory:
    """``Symbol.name(**options)`` or ``name = Symbol(**options)`` (or ``Symbol("name", ...)``)."""

    def __call__(self, name=None, **kw):
        if name is None:
            name = _name_from_line(2)
        return make_symbol(name, **kw)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda **kw: make_symbol(name, **kw)


Symbol = _SymbolFactory()
