"""The jaxpr importer's data (untrusted): bound index names, sizes as kernel ``Poly``s,
``Tensor`` (a value as the term of each entry), constants, dtypes. The interpreter
(``jaxpr``) and the primitive rules (``jaxpr_rules``) both build on it; it imports
neither.
"""
from __future__ import annotations

import itertools

import numpy as np

from verigrad.kernel import Index, KernelError, Lamda, Term, Var
from verigrad.kernel.sizes import ZERO, IndexVar, Poly, SizeSym, as_poly, floordiv

from .jaxpr_errors import JaxprImportError

# -- bound index names ------------------------------------------------------------------
#
# Every index the importer makes is bound (by a Sum, a Lamda or a max), so names need only
# be distinct within one import. Numbering them per import session (``j3``) makes
# importing the same function twice give the same hash-consed terms, instead of an
# ever-growing supply of new ones. Outside a session they are numbered for good (``j_3``).

_session = {"count": None}
_unsessioned = itertools.count()


class import_session:
    """``with import_session():`` numbers bound indices from 0 (sessions do not nest)."""

    def __enter__(self):
        self.outer = _session["count"]
        if self.outer is None:
            _session["count"] = 0
            _session["traced"] = []   # the jaxprs ``trace`` makes (read by ``traced_jaxprs``)
        return self

    def __exit__(self, *exc):
        _session["count"] = self.outer
        if self.outer is None:
            _session["traced"] = None


def bound_index(size, hint: str = "j") -> IndexVar:
    n = _session["count"]
    if n is None:
        return IndexVar(f"{hint}_{next(_unsessioned)}", as_poly(size))
    _session["count"] = n + 1
    return IndexVar(f"{hint}{n}", as_poly(size))


# -- sizes --------------------------------------------------------------------------

def dim_poly(d) -> Poly:
    """A JAX dimension (an int or a symbolic ``_DimExpr``) as a kernel ``Poly``; each
    symbol becomes a ``SizeSym`` with lower bound 1 (JAX's own assumption)."""
    if isinstance(d, (int, np.integer)):
        return Poly.const(int(d))
    terms = getattr(d, "_sorted_terms", None)
    if terms is None:
        raise JaxprImportError(f"dimension {d!r} is neither an integer nor a symbolic dimension")
    total = ZERO
    for term, coeff in terms:
        p = Poly.const(int(coeff))
        for factor, power in term._factors:
            if factor.var is not None:
                base = Poly.sym(SizeSym(factor.var, _lower_bound(d, factor.var)))
            elif factor.operation in ("floordiv", "mod"):
                a, m = (dim_poly(x) for x in factor.operands)
                try:
                    base = floordiv(a, m) if factor.operation == "floordiv" else a % m
                except KernelError as e:
                    raise JaxprImportError(f"dimension {d}: {e}") from None
            else:
                raise JaxprImportError(f"dimension {d} uses {factor.operation}, which the kernel cannot "
                                       "express; give shapes for which JAX needs no max/min")
            for _ in range(int(power)):
                p = p * base
        total = total + p
    return total


_SCOPE_LOWER: dict = {}     # id(symbolic scope) -> (scope, {symbol: lower bound})


def _lower_bound(d, name: str) -> int:
    """The lower bound of the size symbol ``name`` in ``d``'s symbolic scope (``--min``)."""
    entry = _SCOPE_LOWER.get(id(getattr(d, "scope", None)))
    return entry[1].get(name, 1) if entry is not None and entry[0] is getattr(d, "scope", None) else 1


def shape_polys(shape) -> tuple:
    return tuple(dim_poly(d) for d in shape)


# -- tensors --------------------------------------------------------------------------

class Tensor:
    """A jaxpr value: ``shape`` (Polys), ``kind`` ('real', 'int' or 'bool': a bool entry is
    a 0/1-valued term such as an indicator), and ``at(idx)``, the term of one entry.

    ``const`` is set for a constant filled with one Python number (possibly ``inf`` or
    ``nan``, which has no term: reading an entry of it is an error, but rules such as
    ``max(x, -inf) = x`` and a ``select`` that never takes it use it fine)."""

    __slots__ = ("shape", "kind", "_entry", "_memo", "_term", "const", "where")

    def __init__(self, shape, entry, kind: str = "real", const=None, where: str = ""):
        self.shape = tuple(as_poly(s) for s in shape)
        self.kind, self._entry, self.const, self.where = kind, entry, const, where
        self._memo: dict = {}
        self._term = None

    def at(self, idx=()) -> Term:
        idx = tuple(idx)
        hit = self._memo.get(idx)
        if hit is None:
            if len(idx) != len(self.shape):
                raise JaxprImportError(f"internal: {len(idx)} indices for a rank-{len(self.shape)} value"
                                       + (f" from {self.where}" if self.where else ""))
            try:
                hit = self._entry(idx)
            except (KernelError, JaxprImportError) as e:
                if getattr(e, "located", False):
                    raise
                raise JaxprImportError(f"{self.where}: {e}" if self.where else str(e), bool(self.where)) from None
            self._memo[idx] = hit
        return hit

    def term(self) -> Term:
        """The whole tensor as one term: ``Lamda[I](at(I))`` (a variable stays itself)."""
        if self._term is None:
            if not self.shape:
                self._term = self.at(())
            else:
                try:
                    idx = [bound_index(s, h) for s, h in zip(self.shape, "ijklmpqr" * 4)]
                except KernelError as e:
                    raise JaxprImportError(f"a value of shape ({', '.join(map(str, self.shape))})"
                                           + (f" from {self.where}" if self.where else "")
                                           + f": {e} (choose sizes that JAX divides exactly)") from None
                self._term = Lamda(idx, self.at(tuple(Poly.sym(v) for v in idx)))
        return self._term

    @staticmethod
    def of(t: Term, kind: str = "real") -> "Tensor":
        """The tensor of a term (a variable: entries are ``x[I]``). An index JAX keeps in
        range but the kernel's oracle cannot place (``(c // m) * m + r``) is read with the
        total index, which agrees with the strict one wherever JAX reads."""
        from verigrad.frontends.ops import at

        def entry(idx):
            if not idx:
                return t
            try:
                return at(t, *idx)
            except KernelError:
                if not isinstance(t, Var):
                    raise
                return Index(t, idx, total=True)
        out = Tensor(t.shape, entry, kind)
        out._term = t
        return out

    def __repr__(self):
        return f"Tensor({', '.join(map(str, self.shape))}; {self.kind})"


def scalar_const(value, shape=(), kind="real", dtype=None, exact=False) -> Tensor:
    """A tensor filled with one Python number (``dtype``: the float type it was written in;
    ``exact``: read as the rational the float is, its ``const`` an ``ExactFloat``)."""
    from .jaxpr_scalar import ExactFloat, number
    v = float(value) if kind == "real" else int(value)
    if kind == "real" and not np.isfinite(v):
        def entry(idx):
            raise JaxprImportError(f"the non-finite constant {v} reaches a value the kernel must represent")
        return Tensor(shape, entry, kind, const=v)
    t = number(value, dtype if kind == "real" else None, exact=exact)
    return Tensor(shape, lambda idx: t, kind, const=ExactFloat(v) if exact and kind == "real" else v)


def array_const(arr: np.ndarray, kind: str, limit: int = 256, exact=False) -> Tensor:
    """A small constant array: entry ``I`` is ``sum_K arr[K] [I == K]`` (``exact``: each
    float read as the rational it is)."""
    arr = np.asarray(arr)
    dtype = arr.dtype if arr.dtype.kind == "f" else None
    if arr.ndim == 0 or np.all(arr == arr.flat[0]):
        return scalar_const(arr.flat[0] if arr.size else 0, arr.shape, kind, dtype, exact)
    if arr.size > limit:
        raise JaxprImportError(f"a constant array of {arr.size} entries (shape {arr.shape}) is too large "
                               f"to import (at most {limit}); pass it as an argument instead")
    from verigrad.kernel import Delta
    from .jaxpr_scalar import add, mul, number

    def entry(idx):
        out = number(0)
        for pos in np.ndindex(*arr.shape):
            if arr[pos] == 0:
                continue
            ind = number(1)
            for e, p in zip(idx, pos):
                ind = mul(ind, Delta(e, p))
            out = add(out, mul(number(arr[pos].item(), dtype, exact=exact), ind))
        return out
    return Tensor(arr.shape, entry, kind)


# -- dtypes ------------------------------------------------------------------------

def kind_of(dtype) -> str:
    dt = np.dtype(dtype) if not hasattr(dtype, "kind") else dtype
    name = str(dt)
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint")):
        return "int"
    if name == "float0":
        return "float0"
    if name.startswith(("float", "bfloat")):
        return "real"
    raise JaxprImportError(f"values of dtype {name} are not supported (only real, integer and boolean)")


# -- the interpreter -----------------------------------------------------------------

def where_of(eqn) -> str:
    from jax._src import source_info_util
    try:
        return source_info_util.summarize(eqn.source_info)
    except Exception:  # noqa: BLE001 - location is a courtesy
        return "an unknown source line"
