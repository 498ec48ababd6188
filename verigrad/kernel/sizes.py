"""Integer expressions: tensor sizes and index arithmetic (trusted).

A size symbol ``n`` ranges over the integers ``>= lower`` (``lower >= 1``, so a size
is always positive and may be raised to rational powers). An index variable ``i``
ranges over ``[0, size)`` for a size expression ``size`` that is provably ``>= 0`` (so a
sum over ``i`` has ``size`` terms, never a negative number of them). ``Poly`` is a polynomial
with integer coefficients over these symbols and over floor divisions ``a // m``
(``a % m`` is written ``a - m * (a // m)``, so floor division is the only operator).

``nonneg`` is the arithmetic oracle of the whole kernel: it proves ``p >= 0`` for
every value of the symbols in their ranges, or gives up. It is sound by construction:
an index variable is replaced by the end of its range that makes ``p`` smallest (the
coefficient's sign is proved first), and a size polynomial is shifted to its lower
bounds and must then have only non-negative coefficients.
"""
from __future__ import annotations

import re
from fractions import Fraction
from math import gcd
from types import MappingProxyType


class VerigradError(Exception):
    """The base of every exception verigrad raises on purpose (``verigrad.VerigradError``)."""


class KernelError(VerigradError):
    """An ill-formed term or an illegal use of a kernel rule, naming the culprit."""


_interned: dict = {}


def _intern(cls, args):
    key = (cls, args)
    obj = _interned.get(key)
    if obj is None:
        obj = object.__new__(cls)
        object.__setattr__(obj, "_args", args)
        obj._init(*args)
        _interned[key] = obj
    return obj


class _Frozen:
    """Hash-consed values are shared, so none may change after it is made: attributes
    are set once, by the constructor, through ``object.__setattr__``."""
    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    __delattr__ = __setattr__

    def __init_subclass__(cls, **kw):
        # Only the kernel defines these classes: one defined elsewhere could bring its own
        # checks or normal form (a Term whose ``normal_form`` said 1, then 2, proved |- 1 = 2).
        if not cls.__module__.startswith("verigrad.kernel."):
            raise KernelError(f"{cls.__qualname__}: the kernel's classes are not extended outside verigrad.kernel")
        super().__init_subclass__(**kw)


def plain(args) -> bool:
    """Whether every string, number and flag among ``args`` (and in their tuples) is of its
    exact built-in type. A subclass can lie in comparisons and hashes: a ``str`` that hashed
    as "<" and equalled anything made ``[n >= 1]`` normalize as ``[n < 1]`` (|- [n >= 1] = 0)."""
    return all(plain(a) if type(a) is tuple
               else type(a.numerator) is int is type(a.denominator) if type(a) is Fraction
               else type(a) in (str, int, float, bool, type(None)) or isinstance(a, _Frozen) for a in args)


def _set(obj, **attrs):
    for k, v in attrs.items():
        object.__setattr__(obj, k, v)


class IntSym(_Frozen):
    """An integer-valued symbol; hash-consed, so equality is identity. Arithmetic on
    symbols builds ``Poly``s: ``n + 1``, ``2 * i + k``."""

    def __lt__(self, other):
        return self.skey < other.skey

    def __repr__(self):
        return self.name


class SizeSym(IntSym):
    """A tensor size ``name >= lower`` (lower >= 1). Exact ``str`` and ``int``: a subclass can lie in comparisons."""

    def __new__(cls, name: str, lower: int = 1):
        if type(name) is not str or not str.isidentifier(name):
            raise KernelError(f"size symbol name {name!r} is not an identifier")
        if type(lower) is not int or lower < 1:
            raise KernelError(f"size symbol {name}: lower bound {lower!r} must be an integer >= 1")
        return _intern(cls, (name, lower))

    def _init(self, name, lower):
        _set(self, name=name, lower=lower, skey=f"s:{name}>{lower}")


class IndexVar(IntSym):
    """An index ranging over ``[0, size)``; ``size`` must be provably ``>= 0``.

    Indices made here are the statement-level ones (``tag`` ""). The kernel's own
    indices (canonical binders of normal forms, temporaries of a decision) carry a tag
    and are made only by ``_reserved``: no term a rule accepts may contain one, so a
    user cannot forge a name the normal form relies on being fresh."""

    def __new__(cls, name: str, size):
        return _reserved(name, size, "")

    def _init(self, name, size, tag):
        _set(self, name=name, size=size, tag=tag, skey=f"i{tag}:{spell(name)}<{size.skey}")


PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


def check_name(name, what: str) -> str:
    if type(name) is not str or not name:
        raise KernelError(f"{what} name {name!r} must be a non-empty string")
    return name


def spell(name: str) -> str:
    """``name`` as the keys that order and compare terms spell it: bare when an identifier
    (``x``, ``j'``), else quoted (``"x@net.0"``) with ``"`` and ``\\`` escaped and a character
    that does not print written ``\\u{...}`` (RT20-F2: a line break faked report lines). Keys
    must be injective: a name holding a separator (``a!nonneg``) would spell another term."""
    if PLAIN_NAME.fullmatch(name):
        return name
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{{{ord(c):x}}}" for c in quoted) + '"'


def _reserved(name: str, size, tag: str) -> IndexVar:
    check_name(name, "index")
    size = as_poly(size)
    if size.index_atoms():
        raise KernelError(f"index {name}: its range {size} must be a size expression, not depend on indices")
    if not nonneg(size):
        raise KernelError(f"index {name}: its range [0, {size}) has a length not provably >= 0")
    return _intern(IndexVar, (name, size, tag))


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__", "__mod__"):
    setattr(IntSym, _op, lambda self, o, _op=_op: getattr(Poly.sym(self), _op)(o))
IntSym.__neg__ = lambda self: -Poly.sym(self)


# Temporaries ("t", "k") are numbered per decision (``reset_temporaries``), so the same
# decision makes the same names in any process and a proof can be replayed elsewhere.
# Placeholders that code outside the kernel makes (tag "h") are numbered for good.
_counters: dict = {}


def reset_temporaries(tags=("t", "k")):
    for tag in tags:
        _counters.pop(tag, None)


def fresh_index(size, hint: str = "t", tag: str = "t") -> IndexVar:
    """A reserved index distinct from every other of its tag since the last reset (and,
    being reserved, from every index of the terms a rule accepts): tag "t" for a binder
    being built, "k" for a free index of a decision, "h" for a placeholder outside."""
    n = _counters[tag] = _counters.get(tag, 0) + 1
    return _reserved(f"{hint}_{n}", size, tag)


def bound_index(height: int, position: int, size) -> IndexVar:
    """The canonical name of binder ``position`` of a sum of nesting height ``height``."""
    return _reserved(f"_{height}_{position}", size, "b")


FLOORDIVS: list = []     # every floor division made, for normal.divisions


class FloorDiv(IntSym):
    """``a // m`` for a positive size expression ``m``; built only by ``floordiv``."""

    def __new__(cls, a, m):
        return _intern(cls, (a, m))

    def _init(self, a, m):
        _set(self, a=a, m=m, name=f"floor(({a})/({m}))", skey=f"f:({a.skey})//({m.skey})")
        FLOORDIVS.append(self)

    def symbols(self):
        return self.a.symbols() | self.m.symbols()


class Poly(_Frozen):
    """A polynomial with integer coefficients over IntSyms; canonical and interned.
    ``terms`` maps each monomial (a sorted tuple of ``(symbol, power)``) to its coefficient."""
    __slots__ = ("_args", "terms", "skey", "_vars", "_ivars", "__weakref__")

    def __new__(cls, terms: dict):
        pairs = tuple(terms.items())        # read once; a table may return an object made of equal keys,
        key = frozenset(pairs)              # but stores only keys checked plain (red team RT12-C)
        hit = _poly_cache.get(key)
        if hit is None:
            canon: dict = {}
            for m, c in pairs:
                if type(c) is not int:
                    raise KernelError(f"coefficient {c!r} of a polynomial is not an integer")
                if type(m) is not tuple or not all(type(sk) is tuple and len(sk) == 2 for sk in m):
                    raise KernelError(f"{m!r} is not a monomial: a tuple of pairs of a symbol and a power")
                cm = _canonical.get(m)
                if cm is None:
                    cm = _canonical[m] = _canonical_mono(m)
                canon[cm] = canon.get(cm, 0) + c
            items = tuple(sorted([(m, c) for m, c in canon.items() if c != 0], key=lambda mc: _mono_key(mc[0])))
            hit = _poly_cache[key] = _intern(cls, items)
        return hit

    def _init(self, *items):
        _set(self, terms=MappingProxyType(dict(items)), _vars=None, _ivars=None,
             skey="+".join([f"{c}*{_mono_key(m)}" for m, c in items]) or "0")

    # -- construction -------------------------------------------------------------
    @staticmethod
    def const(c: int) -> "Poly":
        if type(c) is not int:
            raise KernelError(f"{c!r} is not an integer")
        hit = _consts.get(c)
        if hit is None:
            hit = _consts[c] = Poly({(): c}) if c else ZERO
        return hit

    @staticmethod
    def sym(s: IntSym) -> "Poly":
        if not isinstance(s, IntSym):
            raise KernelError(f"{s!r} is not an integer symbol")
        hit = _syms.get(s)
        if hit is None:
            hit = _syms[s] = Poly({((s, 1),): 1})
        return hit

    # -- queries ---------------------------------------------------------------------
    def is_const(self) -> bool:
        return all(m == () for m in self.terms)

    def const_value(self) -> int:
        return self.terms.get((), 0)

    def symbols(self) -> frozenset:
        """Every IntSym occurring, including those inside floor divisions."""
        if self._vars is None:
            out = set()
            for m in self.terms:
                for s, _ in m:
                    out.add(s)
                    if isinstance(s, FloorDiv):
                        out |= s.a.symbols() | s.m.symbols()
            object.__setattr__(self, "_vars", frozenset(out))
        return self._vars

    def index_atoms(self) -> frozenset:
        return frozenset([s for s in self.symbols() if isinstance(s, (IndexVar, FloorDiv))])

    def index_vars(self) -> frozenset:
        if self._ivars is None:     # (kept: asked of every index of every atom and term made)
            object.__setattr__(self, "_ivars", frozenset([s for s in self.symbols() if isinstance(s, IndexVar)]))
        return self._ivars

    def top_atoms(self) -> set:
        return {s for m in self.terms for s, _ in m}

    # -- arithmetic ----------------------------------------------------------------
    def __add__(self, other):
        other = as_poly(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    __radd__ = __add__

    def __neg__(self):
        hit = _negs.get(self)
        if hit is None:
            hit = _negs[self] = Poly({m: -c for m, c in self.terms.items()})
        return hit

    def __sub__(self, other):
        other = as_poly(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            out[m] = out.get(m, 0) - c
        return Poly(out)

    def __rsub__(self, other):
        return as_poly(other) - self

    def __mul__(self, other):
        other = as_poly(other)
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m = m1 + m2             # a key the constructor spells canonically
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return floordiv(self, as_poly(other))

    def __mod__(self, other):
        other = as_poly(other)
        return self - other * floordiv(self, other)

    def subst(self, mapping: dict) -> "Poly":
        """Simultaneous substitution of IntSyms by Polys (floor divisions rebuilt), memoized."""
        if not mapping or self.symbols().isdisjoint(mapping):
            return self
        if type(mapping) is not dict:       # read as the memo's key is (RT12-D: items() told another mapping)
            mapping = dict(mapping)
        key = (self, frozenset([(s, as_poly(v)) for s, v in mapping.items() if s in self._vars]))
        if key in _substs:
            return _substs[key]
        out: dict = {}
        for m, c in self.terms.items():
            term = {(): c}              # this monomial's image, multiplied out as a map
            for s, k in m:
                if s in mapping:
                    base = as_poly(mapping[s])
                elif isinstance(s, FloorDiv):
                    base = floordiv(s.a.subst(mapping), s.m.subst(mapping))
                else:
                    base = Poly.sym(s)
                for _ in range(k):
                    prod: dict = {}
                    for m1, c1 in term.items():
                        for m2, c2 in base.terms.items():
                            mm = m1 + m2             # a key the constructor spells canonically
                            prod[mm] = prod.get(mm, 0) + c1 * c2
                    term = prod
            for mm, cc in term.items():
                out[mm] = out.get(mm, 0) + cc
        _substs[key] = Poly(out)
        return _substs[key]

    def linear_in(self, v: IntSym):
        """``(a, b)`` with ``self == a*v + b`` and ``v`` in neither, or None."""
        a, b = {}, {}
        for m, c in self.terms.items():
            k = dict(m).get(v, 0)
            if k > 1 or any(isinstance(s, FloorDiv) and v in s.symbols() for s, _ in m):
                return None
            if k:
                a[tuple([(s, e) for s, e in m if s is not v])] = c
            else:
                b[m] = c
        return Poly(a), Poly(b)

    def content(self) -> int:
        """The gcd of the non-constant coefficients (0 for a constant)."""
        return gcd(*(c for m, c in self.terms.items() if m))

    def __repr__(self):
        return poly_str(self)

    def __lt__(self, other):
        return self.skey < other.skey


_poly_cache: dict = {}
_substs: dict = {}          # Poly.subst's memo
_canonical: dict = {}       # each monomial key given to Poly, as arithmetic spells it
_consts: dict = {}
_syms: dict = {}
_negs: dict = {}
_mono_keys: dict = {}


def _mono_key(m) -> str:
    k = _mono_keys.get(m)
    if k is None:
        k = _mono_keys[m] = ".".join([f"{s.skey}^{k}" for s, k in m])
    return k


def _canonical_mono(m) -> tuple:
    """The monomial ``m`` spelled as arithmetic spells it: each symbol once, with its total
    power, none zero, sorted by key. A key given otherwise (``((i, 1), (i, 1), (j, 1))``)
    would be a monomial apart from the ``((i, 2), (j, 1))`` that arithmetic makes, and the
    oracle, bounding each monomial alone, would prove ``i*j - i*i*j >= 0``."""
    powers: dict = {}
    for s, k in m:
        if not isinstance(s, IntSym) or type(k) is not int or k < 0:
            raise KernelError(f"{m!r} is not a monomial: pairs of a symbol and a power >= 0")
        powers[s] = powers.get(s, 0) + k
    return tuple(sorted([(s, k) for s, k in powers.items() if k], key=lambda sk: sk[0].skey))


ZERO = Poly({})
ONE = Poly.const(1)


def as_poly(x) -> Poly:
    if isinstance(x, Poly):
        return x
    if isinstance(x, bool):
        raise KernelError(f"{x!r} is not an integer expression")
    if isinstance(x, int):
        return Poly.const(x)
    if isinstance(x, IntSym):
        return Poly.sym(x)
    raise KernelError(f"{x!r} ({type(x).__name__}) is not an integer expression")


def poly_str(p: Poly) -> str:
    if not p.terms:
        return "0"
    parts = []
    for m, c in sorted(p.terms.items(), key=lambda mc: (-len(mc[0]), _mono_key(mc[0]))):
        # an index's name is spelled (quoted unless an identifier): no name reads as a number
        names = [spell(s.name) if isinstance(s, IndexVar) else s.name for s, _ in m]
        body = "*".join(nm if k == 1 else f"{nm}^{k}" for nm, (_, k) in zip(names, m))
        parts.append(str(c) if not body else body if c == 1 else "-" + body if c == -1 else f"{c}*{body}")
    return parts[0] + "".join(" - " + x[1:] if x.startswith("-") else " + " + x for x in parts[1:])


# -- the arithmetic oracle -----------------------------------------------------------

def _range_of(s: IntSym):
    """(low, high) inclusive bounds of an index atom as Polys, or None if unknown."""
    if isinstance(s, IndexVar):
        return ZERO, s.size - 1
    if isinstance(s, FloorDiv):
        if not nonneg(s.a):
            return None
        hi = _bound(s.a, want_low=False)
        q, r = divide_exact(hi + 1, s.m) if hi is not None else (None, None)
        return ZERO, (q - 1 if r is ZERO else None)
    return None


def _bound(p: Poly, want_low: bool):
    """A Poly free of index atoms bounding ``p`` from below (or above), or None."""
    while True:
        atoms = sorted([a for a in p.top_atoms() if isinstance(a, (IndexVar, FloorDiv))])
        if not atoms:
            return p
        v = atoms[-1]
        split = p.linear_in(v)
        rng = _range_of(v)
        if split is None or rng is None:
            return None
        a, b = split
        up = nonneg(a)      # a >= 0: the low end of v's range gives the low end of a*v
        if not (up or nonneg(-a)):
            return None
        pick = rng[0] if want_low == up else rng[1]
        if pick is None:
            return None
        p = a * pick + b


def _mods_as_indices(p: Poly) -> Poly:
    """Write each ``alpha*(a - m*(a // m))`` in ``p`` (that is, ``alpha*(a % m)``) as
    ``alpha*r`` for a new index ``r`` of range ``m``: ``a % m`` lies in ``[0, m)``. Each ``r`` is
    named by its floor division's key, one name one remainder in nested calls too (red team:
    numbered per call, an inner ``e % 2`` took an outer ``b % 2``'s name: ``e%2 - b%2 = 0``)."""
    for fd in sorted(s for s in p.top_atoms() if isinstance(s, FloorDiv)):
        split = p.linear_in(fd)
        if split is None:
            continue
        q, r = divide_exact(split[0], fd.m)
        if r is ZERO and q is not ZERO:
            alpha = -q
            p = alpha * Poly.sym(_reserved(f"mod:{fd.skey}", fd.m, "m")) + split[1] - alpha * fd.a
    return p


_nonneg_cache: dict = {}


def nonneg(p) -> bool:
    """Proves ``p >= 0`` for all values of its symbols in their ranges (else False).
    Memoized: the answer depends only on the interned polynomial, and is that of
    ``_renamed(p)`` (so a decision's fresh temporaries do not defeat the memo)."""
    p = as_poly(p)
    hit = _nonneg_cache.get(p)
    if hit is None:
        q = _renamed(p)
        hit = _nonneg_cache[p] = _nonneg(p) if q is p else nonneg(q)
    return hit


_outside_cache: dict = {}


def outside(p: Poly, size: Poly) -> bool:
    """Proves ``p`` outside ``[0, size)`` for a size expression ``size``: ``nonneg(-p - 1) or
    nonneg(p - size)``, memoized as ``nonneg`` is (by ``p``'s renamed copy, whose two
    polynomials are the renamed copies of ``p``'s)."""
    key = (p, size) = (as_poly(p), as_poly(size))
    hit = _outside_cache.get(key)
    if hit is None:
        v = lone_index(p)
        if v is not None and v.size is size:
            # v itself on its own axis: both bounds reduce to -size >= 0 (what the oracle
            # finds, bounding v by 0 and size - 1), true only for an empty axis
            hit = _outside_cache[key] = nonneg(-size)
        else:
            q = _renamed(p)
            hit = _outside_cache[key] = nonneg(-p - 1) or nonneg(p - size) if q is p else outside(q, size)
    return hit


def lone_index(p: Poly):
    """The index variable ``v`` when ``p`` is ``v`` itself, else None."""
    if len(p.terms) == 1:
        (mono, c), = p.terms.items()
        if c == 1 and len(mono) == 1 and mono[0][1] == 1 and isinstance(mono[0][0], IndexVar):
            return mono[0][0]
    return None


def _renamed(p: Poly) -> Poly:
    """``p`` with its temporaries (tag "t") renamed ``_0000``, ``_0001``, ... in their order
    (keeping their ranges). The oracle's work on ``p`` depends on its symbols only
    through their ranges, types and order (``_bound`` eliminates the largest first); when
    every other symbol is a size (keyed "s:...") or keyed below "it:" (the temporaries'
    prefix), this one-to-one renaming keeps every comparison, every step and the answer
    the same. Left alone with a floor division (its key spells the names)."""
    temps = sorted([s for s in p.symbols() if isinstance(s, IndexVar) and s.tag == "t"])
    if not temps or len(temps) > 9999 or any(
            isinstance(s, FloorDiv) or not (isinstance(s, SizeSym) or s.skey < "it:" or s in temps) for s in p.symbols()):
        return p
    new = {v: _reserved(f"_{k:04d}", v.size, "t") for k, v in enumerate(temps)}
    return Poly({tuple([(new.get(s, s), k) for s, k in m]): c for m, c in p.terms.items()})


def _nonneg(p: Poly) -> bool:
    if p.is_const():
        return p.const_value() >= 0
    if p.index_atoms():
        # Interval bounds first; then again with each a % m read as an index below m.
        low = _bound(p, want_low=True)
        if low is not None and nonneg(low):
            return True
        q = _mods_as_indices(p)         # (the same p when it has no a % m: its bound is known)
        low = _bound(q, want_low=True) if q is not p else None
        return low is not None and nonneg(low)
    # Only size symbols remain: shift each to its lower bound, n = lower + t, t >= 0.
    shift = {s: Poly.sym(s) + s.lower for s in p.symbols() if isinstance(s, SizeSym)}
    shifted = p.subst(shift)
    return all(c >= 0 for c in shifted.terms.values())


def positive(p) -> bool:
    return nonneg(as_poly(p) - 1)


def divide_exact(a: Poly, m: Poly):
    """``(q, r)``: the part of ``a`` divisible by ``m`` term by term (``a = m*q + r``).

    ``m`` must be a positive integer or a single monomial with coefficient 1."""
    if m.is_const():
        k = m.const_value()
        q = {mono: c // k for mono, c in a.terms.items() if c % k == 0}
        r = {mono: c for mono, c in a.terms.items() if c % k != 0}
        return Poly(q), Poly(r)
    if len(m.terms) != 1 or next(iter(m.terms.values())) != 1:
        return ZERO, a
    need = dict(next(iter(m.terms)))
    q, r = {}, {}
    for mono, c in a.terms.items():
        have = dict(mono)
        if all(have.get(s, 0) >= k for s, k in need.items()):
            rest = {s: k - need.get(s, 0) for s, k in have.items()}
            q[tuple(sorted([(s, k) for s, k in rest.items() if k], key=lambda sk: sk[0].skey))] = c
        else:
            r[mono] = c
    return Poly(q), Poly(r)


def floordiv(a: Poly, m: Poly) -> Poly:
    """``a // m`` for a provably positive ``m``, simplified where that is provable:
    ``(m*q + r) // m == q`` when ``0 <= r < m``."""
    a, m = as_poly(a), as_poly(m)
    if not positive(m):
        raise KernelError(f"floor division by {m}, which is not provably >= 1")
    if m is ONE:
        return a
    if a.is_const() and m.is_const():
        return Poly.const(a.const_value() // m.const_value())
    q, r = divide_exact(a, m)
    if q is not ZERO:
        # Shift the remainder into [0, m) when it is a constant.
        if r.is_const() and m.is_const():
            return q + Poly.const(r.const_value() // m.const_value())
        if nonneg(r) and nonneg(m - 1 - r):
            return q
        return q + floordiv(r, m) if r is not ZERO else q
    if nonneg(a) and nonneg(m - 1 - a):
        return ZERO
    return Poly.sym(FloorDiv(a, m))
