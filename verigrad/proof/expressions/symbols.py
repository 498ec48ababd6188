"""``Symbol``: integer symbols (sizes, indices) and tensor symbols of the proof language.

::

    n = Symbol.n(domain=[2, oo], integer=True)      # a size, n >= 2
    n = Symbol(domain=Range(2, oo))                 # the same; the name is taken from the line
    i = Symbol.i(integer=True, domain=[0, n - 1])   # an index, 0 <= i <= n - 1
    W = Symbol.W(shape=(n, n), real=True)           # a tensor variable
    eps = Symbol.eps(positive=True)                 # a positive scalar
    S = Symbol.S(definition=softmax(Q @ K.T / sqrt(d)) @ V)   # a definition

A tensor symbol with ``definition=`` is the kernel's transparent definition: the
kernel sees through it, so it can never be misused.
"""
from __future__ import annotations

import linecache
import re
import sys

from .expr import Infinity, IntSymbol, ProofError, TensorSymbol, as_expr, oo
from .statements import Interval, _OpenRange

_ASSIGN = re.compile(r"^\s*([A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)\s*=\s*Symbol\s*\(")


def _name_from_line(depth: int) -> str:
    frame = sys._getframe(depth)
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = _ASSIGN.match(line)
    if not m:
        raise ProofError(f"Symbol(...) without a name: write `x = Symbol(...)` or Symbol.x(...) "
                         f"(line {frame.f_lineno})")
    return m.group(1)


def _domain(name, domain):
    """``(kind, lower, upper)`` from a domain: ``[a, b]`` closed, ``Range(a, b)`` half open,
    ``Interval(a, b)`` closed; an upper end ``oo`` makes a size."""
    if domain is None:
        return None, None, None
    if isinstance(domain, _OpenRange):
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


def make_symbol(name, domain=None, integer=False, shape=(), definition=None, real=True, complex=False,
                positive=False, nonnegative=False, nonzero=False, **unknown):
    bad = set(unknown) - {"hermitian", "extended_real", "finite", "given", "random"}
    if bad:
        raise ProofError(f"Symbol {name}: unknown options {sorted(bad)}")
    if definition is not None:
        if domain is not None or integer:
            raise ProofError(f"Symbol {name}: a definition of an integer symbol is not supported")
        return TensorSymbol(name, shape, (), complex, definition)
    if integer or domain is not None:
        if shape:
            raise ProofError(f"Symbol {name}: integer tensors are not supported (an integer symbol is a "
                             f"size or an index)")
        kind, lo, hi = _domain(name, domain)
        if kind is None and positive:
            kind, lo = "size", 1
        return IntSymbol(name, lo, hi, kind)
    facts = [f for f, on in (("positive", positive), ("nonneg", nonnegative), ("nonzero", nonzero)) if on]
    return TensorSymbol(name, shape, facts, complex)


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
