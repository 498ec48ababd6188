"""The normal form: the decision procedure's data and algebra (trusted).

A normalized scalar term (``NF``) is a finite sum ``sum_t c_t * m_t`` of monomials
with rational coefficients; a monomial (``Mono``) is a product ``prod a^e`` of atoms
with rational exponents. Atoms:

=========  ==============================================================
EntryA     ``x[e1..ek]`` (``x[]`` for a scalar variable); reads 0 off the shape
IntA       an integer symbol read as a real (a size, an index, a floor division)
ConstA     ``pi``;  PrimeA ``p`` (only under non-integer exponents)
DeltaA     ``[p == 0]``;  IndA ``[p >= 0]`` for an integer polynomial p
RIndA      ``[u rel 0]`` for a normalized real u
ExpA       ``exp(m)`` for a monomial m (``exp(sum c m) = prod exp(m)^c``)
LogA, FnA  ``log u``, ``tanh u``, ``erf u``, opaque ``f(u..)``; DFnA its partials
ParenA     a sum ``u`` that cannot be multiplied out (a negative or fractional power)
SumA       ``sum_{b1..bk} m``: the binders of one connected block of factors
MaxA       ``max_b u`` / ``min_b u``
ApplyA     ``f(T1..Tk)[I]`` for an opaque TensorFn, or its Jacobian entries ``[I, K]``
=========  ==============================================================

Everything is hash-consed, so two terms are equal in normal form exactly when their
NFs are the same object. Sums are kept miniscoped (every factor that does not depend
on a binder is outside the sum, and independent blocks are separate sums), binders
are named canonically by height and position (alpha-equivalence), and Kronecker
deltas are eliminated against binders.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
from fractions import Fraction
from math import gcd, lcm

from . import sizes as S
from .sizes import (ZERO as PZERO, FloorDiv, IndexVar, KernelError, Poly, SizeSym, _intern, bound_index,
                    divide_exact, floordiv, fresh_index, lone_index, nonneg, outside, positive as ppositive)
from . import terms as T


SPLIT_LIMIT = 4      # indicator atoms in the arguments of one function split on (Normalizer.split)


class NotDifferentiable(KernelError):
    """The derivative needs a rule the kernel does not have (max, a second derivative)."""


_EMPTY: frozenset = frozenset()
F0, F1 = 0, 1


def _q(x):
    """A rational as an int when it is whole (ints hash and compare much faster than
    Fractions, and ``Fraction(2) == 2`` with equal hashes, so both may be mixed)."""
    if type(x) is int:
        return x
    return x.numerator if x.denominator == 1 else x


def _fr(e) -> str:
    return str(e) if e.denominator == 1 else f"{e.numerator}/{e.denominator}"


# -- monomials and sums ---------------------------------------------------------------

class Mono:
    """A product of atoms with nonzero rational exponents, sorted by atom key."""
    __slots__ = ("_args", "factors", "skey", "ivars", "tvars", "height", "positive", "nonneg", "integer",
                 "__weakref__")

    def __new__(cls, factors: tuple):
        return _intern(cls, factors)

    def _init(self, *factors):
        self.factors = factors
        keys, ivars, tvars, height, pos, nn, integer = [], [], [], 0, True, True, True
        for a, e in factors:       # (one loop: monomials are made by the thousand)
            keys.append(f"{a.skey}^{e if type(e) is int else _fr(e)}")
            ivars.append(a.ivars)
            tvars.append(a.tvars)
            height = a.height if a.height > height else height
            whole = type(e) is int or e.denominator == 1
            if not a.positive:
                pos = False
                nn = nn and (a.nonneg or (whole and e % 2 == 0))
            # integer-valued: integer-valued atoms to whole positive powers
            integer = integer and a.integer and whole and e > 0
        self.skey = "*".join(keys)
        self.ivars, self.tvars = _EMPTY.union(*ivars), _EMPTY.union(*tvars)
        self.height, self.positive, self.nonneg, self.integer = height, pos, nn, integer


_mono_cache: dict = {}
_nf_cache: dict = {}


def _of(cache: dict, cls, d: dict):
    """The interned ``cls`` of a map (atom -> exponent, or monomial -> coefficient): the
    zero entries dropped, the rest sorted by key."""
    key = frozenset(d.items())
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = cls(tuple(sorted([(x, _q(v)) for x, v in d.items() if v != 0], key=lambda xv: xv[0].skey)))
    return hit


def mono_of(d: dict) -> "Mono":
    return _of(_mono_cache, Mono, d)


ONE_MONO = Mono(())


class NF:
    """A sum of monomials with nonzero rational coefficients, sorted by monomial key."""
    __slots__ = ("_args", "terms", "skey", "ivars", "tvars", "height", "integer", "__weakref__")

    def __new__(cls, terms: tuple):
        return _intern(cls, terms)

    def _init(self, *terms):
        self.terms = terms
        keys, ivars, tvars, height, integer = [], [], [], 0, True
        for m, c in terms:          # (one loop, as Mono's)
            whole = type(c) is int or c.denominator == 1
            keys.append(f"{c if type(c) is int else _fr(c)}:{m.skey}")
            ivars.append(m.ivars)
            tvars.append(m.tvars)
            height = m.height if m.height > height else height
            integer = integer and whole and m.integer
        self.skey = "(" + " + ".join(keys) + ")"
        self.ivars, self.tvars = _EMPTY.union(*ivars), _EMPTY.union(*tvars)
        self.height, self.integer = height, integer

    def const(self):
        """The value if this is a constant, else None."""
        if not self.terms:
            return F0
        if len(self.terms) == 1 and self.terms[0][0] is ONE_MONO:
            return self.terms[0][1]
        return None

    def single(self):
        """``(mono, coef)`` if this is one monomial, else None."""
        return self.terms[0] if len(self.terms) == 1 else None

    @property
    def positive(self) -> bool:
        return bool(self.terms) and all(c > 0 and m.nonneg for m, c in self.terms) \
            and any(m.positive for m, c in self.terms)


def nf_of(d: dict) -> NF:
    return _of(_nf_cache, NF, d)


ZERO = NF(())
ONE = NF(((ONE_MONO, F1),))


def nf_const(c) -> NF:
    return NF(((ONE_MONO, _q(Fraction(c))),)) if c else ZERO


def nf_atom(a, e=1) -> NF:
    return NF(((Mono(((a, _q(e)),)), 1),))


def nf_mono(m: Mono, c=1) -> NF:
    return NF(((m, _q(c)),)) if c else ZERO


# -- atoms ----------------------------------------------------------------------------

class Atom:
    """A factor of a monomial. A subclass's ``_build`` arguments are kept under their
    names; ``ivars`` (free indices), ``tvars`` (variables and function symbols) and
    ``height`` (of nested sums) are those of its arguments (and of the tuples among
    them), and ``_build`` sets the key and the signs it can show with ``_set``."""
    __slots__ = ("_args", "skey", "ivars", "tvars", "height", "positive", "nonneg", "nonzero", "idem", "integer",
                 "__weakref__", "__dict__")

    def __new__(cls, *args):
        return _intern(cls, args)

    def __init_subclass__(cls):
        cls._fields = tuple(inspect.signature(cls._build).parameters)[1:]

    def _init(self, *args):
        self.__dict__.update(zip(self._fields, args))
        iv, tv, h = set(), set(), 0
        for y in args:
            for x in (y if isinstance(y, tuple) else (y,)):
                if isinstance(x, (NF, Mono, TensorNF)):
                    iv |= x.ivars
                    tv |= x.tvars
                    h = max(h, x.height)
                elif isinstance(x, (Poly, S.IntSym)):
                    iv |= S.as_poly(x).index_vars()
                elif isinstance(x, (T.Var, T._Symbol)):
                    tv.add(x)
        self.ivars, self.tvars, self.height = frozenset(iv), frozenset(tv), h
        self._build(*args)

    def _set(self, skey, positive=False, nonneg=False, nonzero=False, idem=False, integer=False):
        """``integer``: the atom takes only integer values (entries of integer variables,
        integer expressions, indicators, sums and extrema of integer-valued terms)."""
        self.skey, self.positive, self.idem = skey, positive, idem
        self.nonneg, self.nonzero, self.integer = nonneg or positive, nonzero or positive, integer or idem

    __repr__ = lambda self: self.skey  # noqa: E731


class EntryA(Atom):
    def _build(self, var, idx):
        f = var.facts if isinstance(var, T.Var) else frozenset()
        # An entry off the shape reads 0, so entrywise facts other than nonneg hold only
        # where the indices are provably in range (the common case, checked here).
        inside = ("positive" in f or "nonzero" in f) \
            and all(nonneg(p) and nonneg(s - 1 - p) for p, s in zip(idx, var.shape))
        self._set(f"{var.skey}[{','.join([p.skey for p in idx])}]", positive="positive" in f and inside,
                  nonneg="nonneg" in f, nonzero="nonzero" in f and inside, integer="integer" in f)


class IntA(Atom):
    def _build(self, sym):
        self._set(f"int:{sym.skey}", positive=isinstance(sym, SizeSym), integer=True,
                  nonneg=isinstance(sym, IndexVar) or (isinstance(sym, FloorDiv) and nonneg(sym.a)))


class ConstA(Atom):
    def _build(self, name):
        self._set(f"const:{name}", positive=True)


class PrimeA(Atom):
    def _build(self, p):
        self._set(f"prime:{p:020d}", positive=True)


class DeltaA(Atom):
    def _build(self, p):
        self._set(f"delta:{p.skey}", nonneg=True, idem=True)


class IndA(Atom):
    def _build(self, p):
        self._set(f"ind:{p.skey}", nonneg=True, idem=True)


class RIndA(Atom):
    def _build(self, u, rel):
        self._set(f"rind:{u.skey}{rel}0", nonneg=True, idem=True)
        # The same condition on the line through u: ``w rel' t`` with ``u = lam w + c``, w's
        # first coefficient 1, t = -c / lam, rel' = rel (flipped for lam < 0). ``lo``: a
        # lower bound on w (> or >=); ``strict``: > or <. Compared by ``_ind_order``.
        var = [(m, c) for m, c in u.terms if m is not ONE_MONO]
        lam = Fraction(var[0][1]) if var else None
        if lam is None:
            self.w = None
            return
        c0 = sum((Fraction(c) for m, c in u.terms if m is ONE_MONO), Fraction(0))
        if lam < 0:
            rel = {">": "<", ">=": "<=", "<": ">", "<=": ">="}[rel]
        self.w = NF(tuple([(m, _q(Fraction(c) / lam)) for m, c in var]))
        self.t, self.lo, self.strict = -c0 / lam, rel in (">", ">="), rel in (">", "<")


class ExpA(Atom):
    def _build(self, m):
        self._set(f"exp:{m.skey}", positive=True)


class LogA(Atom):
    def _build(self, u):
        self._set(f"log:{u.skey}")


class FnA(Atom):
    def _build(self, fn, args):
        self._set(f"fn:{fn if isinstance(fn, str) else fn.skey}(" + ",".join([u.skey for u in args]) + ")")


class DFnA(Atom):
    def _build(self, fn, k, args):
        self._set(f"dfn{k}:{fn.skey}(" + ",".join(u.skey for u in args) + ")")


class ParenA(Atom):
    def _build(self, u, pos):
        self._set(f"paren{'+' if pos else ''}:{u.skey}", positive=pos)


class SumA(Atom):
    def _build(self, binders, m):
        self._set(f"sum[{','.join([b.skey for b in binders])}]{{{m.skey}}}",
                  positive=m.positive and all(ppositive(b.size) for b in binders), nonneg=m.nonneg, integer=m.integer)
        self.ivars, self.height = m.ivars - set(binders), m.height + 1


class MaxA(Atom):
    def _build(self, b, u, kind):
        self._set(f"{kind}[{b.skey}]{{{u.skey}}}", positive=u.positive, integer=u.integer)
        self.ivars, self.height = u.ivars - {b}, u.height + 1


class TensorNF:
    """A tensor in normal form: ``Lamda[b1..bk](u)`` with canonically named binders."""
    __slots__ = ("_args", "binders", "u", "skey", "ivars", "tvars", "height", "__weakref__")

    def __new__(cls, binders, u):
        return _intern(cls, (binders, u))

    def _init(self, binders, u):
        self.binders, self.u = binders, u
        self.skey = f"lam[{','.join(b.skey for b in binders)}]{{{u.skey}}}"
        self.ivars, self.tvars, self.height = u.ivars - set(binders), u.tvars, u.height + 1


class ApplyA(Atom):
    """``f(T1..Tk)[I]``, or with ``argno`` the Jacobian entry ``d f(T)[I] / d T_argno[K]``
    at ``idx = I + K``."""
    def _build(self, fn, argno, args, idx):
        self._set(f"ap{'' if argno is None else argno}:{fn.skey}(" + ",".join(a.skey for a in args)
                  + f")[{','.join(p.skey for p in idx)}]")


# -- rational powers of rationals -------------------------------------------------------

def _factor(n: int) -> dict:
    out, p = {}, 2
    while p * p <= n and p < 100000:
        while n % p == 0:
            out[p] = out.get(p, 0) + 1
            n //= p
        p += 1
    if n > 1:
        out[n] = out.get(n, 0) + 1  # a prime, or a large cofactor kept whole (still positive)
    return out


def _expansion_small(x: NF, e: Fraction) -> bool:
    """Whether ``x ** e`` (``e`` whole) multiplies out into at most 4096 monomials (else it stays whole)."""
    return math.comb(len(x.terms) + int(e) - 1, int(e)) <= 4096


def _ratpow(c: Fraction, e: Fraction):
    """``c ** e`` for ``c > 0``: a rational coefficient and leftover prime powers."""
    if e.denominator == 1:
        return Fraction(c) ** int(e), {}
    coef, atoms = F1, {}
    for n, sign in ((c.numerator, 1), (c.denominator, -1)):
        for p, k in _factor(n).items():
            total = sign * k * e
            whole = total.numerator // total.denominator
            coef *= Fraction(p) ** whole
            if total != whole:
                atoms[PrimeA(p)] = total - whole
    return coef, atoms


# -- the normalizer -------------------------------------------------------------------

class Normalizer:
    """Normal forms of terms, with every rule family used (``axioms``) and every condition
    needed (``conds``: a base that must be nonzero, a kink that must be avoided), so each
    result states what it rests on.

    One Normalizer serves one decision: its caches are private to it, so the axioms it
    records are exactly those used for that decision. ``derive`` (the calculus of
    ``derivative.py``, which installs it: the normal form does not import its calculus)
    normalizes a ``Deriv``."""
    derive = None
    decide_ge = sum_count = merge_eqs = None    # installed by permutation.py: [P[a] + r >= 0], sum_i [P[i] == b]

    def __init__(self, strict_kinks: bool = False, choices: "Choices | None" = None):
        self.strict_kinks, self.axioms, self.conds, self._depth, self.open = strict_kinks, set(), {}, 0, set()
        self.choices = choices or Choices()
        self._mm, self._sub, self._norm, self._der, self._sign, self._ren = {}, {}, {}, {}, {}, {}
        self._tops: dict = {}
        self._subt, self._renaming = {}, False     # substitutions up to renaming (subst_atom)

    def use(self, name: str):
        self.axioms.add(name)

    def need(self, kind: str, u: NF, open_along=None):
        """Record a side condition: ``u != 0`` (kind 'nonzero'), ``u > 0`` ('positive')
        or ``u != 0`` at a kink of an indicator ('offkink'). ``open_along=(var, P)``: its set is
        open along var[P] where the conditions recorded with it hold (``continuous`` skips it)."""
        self.conds[(kind, u)] = (kind, u)      # the interned NF itself: keys are for ordering
        if open_along is not None:
            self.open.add((u, *open_along))

    def continuous(self, var, P):
        """Before ``d body / d var[P]`` of a body normalized under conditions: the normal form
        equals the body where they hold, so its derivative is the body's only where they
        hold near the point, along var[P]. Each condition in ``var`` is differentiated for
        its own conditions (continuity, as an indicator's argument is; red team: under
        ``u > 0``, ``u = #{b: y_b = 0} - 1/2``, a closed set, ``d(sqrt(u)^2 y_0 - u y_0 + y_0)/dy_0``
        was read as 1, while it is 3/2 at y = (0, 1))."""
        done = set()
        while todo := [u for _, u in self.conds.values() if var in u.tvars and u not in done and (u, var, P) not in self.open]:
            for u in todo:
                done.add(u)
                self.derive(u, var, P)

    # -- ring operations ----------------------------------------------------------------
    def add(self, *xs: NF) -> NF:
        xs = [x for x in xs if x.terms]
        if len(xs) <= 1:
            return xs[0] if xs else ZERO
        out: dict = {}
        for x in xs:
            for m, c in x.terms:
                out[m] = out.get(m, F0) + c
        return nf_of(out)

    def scale(self, x: NF, c) -> NF:
        if c == 1:
            return x
        if c == 0:
            return ZERO
        return NF(tuple([(m, _q(k * c)) for m, k in x.terms]))

    def sub(self, a: NF, b: NF) -> NF:
        return self.add(a, self.scale(b, -1))

    def mul(self, a: NF, b: NF) -> NF:
        if a is ONE:
            return b
        if b is ONE:
            return a
        if not a.terms or not b.terms:
            return ZERO
        self.choices.spend(len(a.terms) * len(b.terms))
        out: dict = {}
        for m1, c1 in a.terms:
            for m2, c2 in b.terms:
                for m, c in self.mono_mul(m1, m2).terms:
                    out[m] = out.get(m, F0) + c * c1 * c2
        return nf_of(out)

    def prod(self, xs) -> NF:
        return functools.reduce(self.mul, xs, ONE)      # (left to right, each x made as it is needed)

    def mono_mul(self, m1: Mono, m2: Mono) -> NF:
        if m1 is ONE_MONO:
            return nf_mono(m2)
        if m2 is ONE_MONO:
            return nf_mono(m1)
        key = (m1, m2) if m1.skey <= m2.skey else (m2, m1)
        hit = self._mm.get(key)
        if hit is None:
            d = dict(m1.factors)
            for a, e in m2.factors:
                d[a] = self.combine(a, d[a], e) if a in d else e
            hit = self._mm[key] = self.finish(d)
        return hit

    def combine(self, a, e1: Fraction, e2: Fraction) -> Fraction:
        """The exponent of ``a^e1 * a^e2``, recording what that rests on."""
        if a.idem:
            self.use("indicator_idempotent")
            return F1
        s = e1 + e2
        if a.positive:
            self.use("pow_add_pos")
            return s
        if e1.denominator == 1 and e2.denominator == 1:
            self.use("pow_add_int")
            if s == 0 and not a.nonzero:
                self.need("nonzero", nf_atom(a))
            return s
        self.use("pow_add_pos")
        self.need("positive", nf_atom(a))
        return s

    def finish(self, d: dict) -> NF:
        """A monomial from a factor map: expand whole powers of sums, turn whole powers of
        primes into coefficients, and substitute along Kronecker deltas."""
        coef = F1
        expand = []
        for a, e in list(d.items()):
            if e == 0:
                del d[a]
            elif a.idem and e != 1:
                d[a] = F1
            elif isinstance(a, PrimeA) and not 0 <= e < 1:   # whole part into the coefficient
                whole = e.numerator // e.denominator
                coef *= Fraction(a.p) ** whole
                if e == whole:
                    del d[a]
                else:
                    d[a] = e - whole
            elif isinstance(a, ParenA) and e > 0 and e.denominator == 1 and _expansion_small(a.u, e):
                expand.append((a, int(e)))
                del d[a]
        if sum(isinstance(a, RIndA) for a in d) > 1:
            n, disjoint = len(d), not _ind_order(d)
            if disjoint or len(d) < n:
                self.use("indicator_order")
            if disjoint:
                return ZERO
        if not expand and len(d) > 1 and (merged := self._merge_tops(d)) is not None:
            return self.scale(merged, coef)
        if not expand and len(d) > 1 and self.merge_eqs is not None and (hit := self.merge_eqs(self, d)) is not None:
            return self.scale(hit, coef)    # [P[a] == b][P[a] == c] = [P[a] == b][b == c] (permutation.py)
        if expand:
            self.use("pow_expand")
            out = nf_mono(mono_of(d), coef)
            for a, k in expand:
                out = self.mul(out, self.pow(a.u, Fraction(k)))
            return out
        if len(d) > 1 and self._depth < 8:
            deltas = [a for a in d if isinstance(a, DeltaA)]
            if deltas:
                self._depth += 1
                try:
                    res = self._delta_subst(d, deltas)
                finally:
                    self._depth -= 1
                if res is not None:
                    return self.scale(res, coef)
        return nf_mono(mono_of(d), coef)

    def _delta_subst(self, d: dict, deltas):
        """``[p == 0] f(v) = [p == 0] f(s)`` where ``p == 0`` solves ``v = s``: ``v`` is the
        largest-keyed index of ``p`` with a unit coefficient (temporaries before bound
        indices before user indices), so every monomial has one canonical spelling."""
        for delta in sorted(deltas, key=lambda a: a.skey):
            cands = [v for v in delta.ivars if _solve_unit(delta.p, v) is not None]
            if not cands:
                continue
            v = max(cands, key=lambda v: v.skey)
            if not any(v in a.ivars for a in d if a is not delta):
                continue
            self.use("delta_subst")
            rest = {a: e for a, e in d.items() if a is not delta}
            out = self.subst_mono(mono_of(rest), {v: _solve_unit(delta.p, v)})
            return self.mul(out, nf_atom(delta))
        return None

    def pow(self, x: NF, e, pos_hint: bool = False) -> NF:
        e = Fraction(e)
        if e == 1:
            return x
        if e == 0:
            return ONE
        if not x.terms:
            return ZERO
        one = x.single()
        if one is not None:
            m, c = one
            if e.denominator == 1:
                d = {}
                for a, k in m.factors:
                    if k.denominator != 1 and not a.positive:
                        self.need("positive", nf_atom(a))
                    d[a] = k * e
                self.use("pow_mul")
                return self.scale(self.finish(d), Fraction(c) ** int(e))
            if c > 0 and m.positive:
                coef, primes = _ratpow(c, e)
                d = {a: k * e for a, k in m.factors}
                for p, k in primes.items():
                    d[p] = d.get(p, F0) + k
                self.use("pow_mul_pos")
                return self.scale(self.finish(d), coef)
        elif e > 0 and e.denominator == 1 and _expansion_small(x, e):
            self.use("pow_expand")
            return self.prod([x] * int(e))
        # (u0 + [P] u1)^e by cases; the pieces' signs are their own (the hint was the whole's)
        if (split := self.split((x,), lambda v: self.pow(v, e))) is not None:
            return split
        return self.paren(x, e, pos_hint or x.positive or _int_positive(x))

    def paren(self, x: NF, e: Fraction, pos: bool) -> NF:
        """``x^e`` for a sum ``x`` kept whole: its positive content is taken out first."""
        g = Fraction(gcd(*[c.numerator for _, c in x.terms]), lcm(*[c.denominator for _, c in x.terms]))
        if g != 1 and (e.denominator == 1 or pos):
            self.use("pow_content")
            coef, primes = _ratpow(g, e)
            inner = self.scale(x, 1 / g)
            d = {ParenA(inner, pos): e}
            d.update(primes)
            return self.scale(self.finish(d), coef)
        return nf_atom(ParenA(x, pos), e)

    # -- substitution of indices ------------------------------------------------------
    def subst_nf(self, x: NF, mp: dict) -> NF:
        if x.ivars.isdisjoint(mp):
            return x
        return self.add(*[self.scale(self.subst_mono(m, mp), c) for m, c in x.terms])

    def subst_mono(self, m: Mono, mp: dict) -> NF:
        if m.ivars.isdisjoint(mp):
            return nf_mono(m)
        out, keep = ONE, {}
        for a, e in m.factors:
            if not a.ivars.isdisjoint(mp) and isinstance(a, ExpA) and e != 1:
                # exp(m)^e = exp(e m): an exp split by an indicator is not raised to a power
                self.use("exp_add")
                out = self.mul(out, self.exp(self.scale(self.subst_mono(a.m, mp), e)))
            elif not a.ivars.isdisjoint(mp):
                out = self.mul(out, self.pow(self.subst_atom(a, mp), e, a.positive))
            else:
                keep[a] = e
        return self.mul(self.finish(keep), out) if keep else out

    def subst_atom(self, a: Atom, mp: dict) -> NF:
        mp = {k: v for k, v in mp.items() if k in a.ivars}
        key = (a, tuple(sorted(mp.items(), key=lambda kv: kv[0].skey)))
        hit = self._sub.get(key)
        if hit is None:
            shape, new = (None, None) if self._renaming else _shape(a, key[1])
            old = self._subt.get(shape) if shape is not None else None
            if old is not None:
                # The same substitution into the same atom was made before, up to the
                # temporaries its values bring in: a[mp0] = R (under this normalizer's
                # conditions, each for every value of its free indices), where mp is mp0
                # with those temporaries renamed by rho, a bijection between temporaries of
                # one range and tag, none of them in ``a``. Renaming in that identity gives
                # a[mp] = rho(R): R's free temporaries are ``a``'s or rho's (as it was
                # stored), and ``a`` binds only canonical indices. A renaming that meets a
                # substitution computes it (no second renaming inside: no cycle).
                self._renaming = True
                try:
                    hit = self.rename_nf(old[0], {t: Poly.sym(u) for t, u in zip(old[1], new)})
                finally:
                    self._renaming = False
            else:
                hit = self._subst_atom(a, mp)
                if shape is not None and all(v.tag not in ("t", "k") or v in a.ivars or v in new for v in hit.ivars):
                    self._subt[shape] = (hit, new)
            self._sub[key] = hit
        return hit

    def _subst_atom(self, a: Atom, mp: dict) -> NF:
        """``a`` with indices substituted, normalized again (its binders made fresh)."""
        if isinstance(a, IntA):
            return self.int_value(Poly.sym(a.sym).subst(mp))
        if isinstance(a, SumA):
            temps = [fresh_index(b.size) for b in a.binders]
            return self.sum(temps, self.subst_mono(a.m, {**mp, **{b: Poly.sym(t) for b, t in zip(a.binders, temps)}}))
        if isinstance(a, MaxA):
            t = fresh_index(a.b.size)
            return self.max(t, self.subst_nf(a.u, {**mp, a.b: Poly.sym(t)}), a.kind)
        args = _map_args(a, {Poly: lambda p: p.subst(mp), NF: lambda u: self.subst_nf(u, mp),
                             Mono: lambda m: self.subst_mono(m, mp), TensorNF: lambda x: self.subst_tensor(x, mp)})
        renormalize = _RENORMALIZE.get(type(a))
        return renormalize(self, *args) if renormalize else nf_atom(type(a)(*args))

    def subst_tensor(self, x: TensorNF, mp: dict) -> TensorNF:
        if x.ivars.isdisjoint(mp):
            return x
        temps = [fresh_index(b.size) for b in x.binders]
        inner = {**mp, **{b: Poly.sym(t) for b, t in zip(x.binders, temps)}}
        return self.tensor(temps, self.subst_nf(x.u, inner))

    def rename_atom(self, a: Atom, mp: dict) -> Atom:
        """Apply a one-to-one renaming of indices (to indices used nowhere else) to an
        atom. Renaming preserves normal forms, so atoms are rebuilt directly; only a
        sum over several binders is normalized again (its best binder order may
        change)."""
        if a.ivars.isdisjoint(mp):
            return a
        key = (a, frozenset([kv for kv in mp.items() if kv[0] in a.ivars]))
        hit = self._ren.get(key)
        if hit is None:
            hit = self._ren[key] = self._rename(a, mp)
        return hit

    def _rename(self, a: Atom, mp: dict) -> Atom:
        if isinstance(a, IntA):
            (s,) = Poly.sym(a.sym).subst(mp).top_atoms()
            return IntA(s)
        if isinstance(a, DeltaA) or isinstance(a, SumA) and len(a.binders) > 1:
            return _the_atom(self.subst_atom(a, mp))
        rn = lambda u: self.rename_nf(u, mp)  # noqa: E731
        return type(a)(*_map_args(a, {Poly: lambda p: p.subst(mp), NF: rn, Mono: lambda m: self.rename_mono(m, mp),
                                      TensorNF: lambda x: TensorNF(x.binders, rn(x.u))}))

    def rename_mono(self, m: Mono, mp: dict) -> Mono:
        if m.ivars.isdisjoint(mp):
            return m
        return mono_of(self._gather((self.rename_atom(a, mp), e) for a, e in m.factors))

    def rename_nf(self, u: NF, mp: dict) -> NF:
        if u.ivars.isdisjoint(mp):
            return u
        out: dict = {}
        for m, c in u.terms:        # two monomials made one (see _gather): their coefficients add
            r = self.rename_mono(m, mp)
            out[r] = out.get(r, F0) + c
        return nf_of(out)

    def _gather(self, pairs) -> dict:
        """A factor map of ``(atom, exponent)`` pairs, a repeated atom's exponents combined
        (``combine``, its condition recorded). Renaming can make two atoms one: a sum over
        several binders is normalized again, with a binder order chosen again (red team
        RT3-C1: alpha-equivalent sums of two binder orders, ``A - B``, became one, and the
        last monomial's coefficient overwrote the other's: ``g(B - A) = g(A)``)."""
        d: dict = {}
        for a, e in pairs:
            d[a] = self.combine(a, d[a], e) if a in d else e
        return d

    # -- atoms with their simplification rules --------------------------------------------
    def entry(self, var, idx) -> NF:
        """``var[idx]``; an index provably off its axis reads 0."""
        for p, size in zip(idx, var.shape):
            if outside(p, size):
                self.use("entry_off_shape")
                return ZERO
        return nf_atom(EntryA(var, tuple(idx)))

    def int_value(self, p: Poly) -> NF:
        out: dict = {}
        for m, c in p.terms.items():
            mono = mono_of({IntA(s): Fraction(k) for s, k in m})
            out[mono] = out.get(mono, F0) + c
        return nf_of(out)

    def delta(self, p: Poly) -> NF:
        """``[p == 0]``: decided when provable, else scaled by the content and signed."""
        if p.is_const():
            return ONE if p.const_value() == 0 else ZERO
        g = p.content()
        if g > 1:
            if p.const_value() % g:
                self.use("delta_decide")
                return ZERO
            p = Poly({m: c // g for m, c in p.terms.items()})
        lead = min((m for m in p.terms if m), key=S._mono_key)
        if p.terms[lead] < 0:
            p = -p
        if ppositive(p) or ppositive(-p):
            self.use("delta_decide")
            return ZERO
        if nonneg(p) and nonneg(-p):
            self.use("delta_decide")
            return ONE
        for m in sorted((x for x in p.symbols() if isinstance(x, SizeSym)), key=lambda x: x.skey):
            q, r = divide_exact(p, Poly.sym(m))   # p = m q + r with |r| < m: q == 0 and r == 0
            if q is not PZERO and r is not PZERO and nonneg(r + m - 1) and nonneg(m - 1 - r):
                self.use("delta_radix")
                return self.mul(self.delta(q), self.delta(r))
        return nf_atom(DeltaA(p))

    def ind(self, p: Poly) -> NF:
        """``[p >= 0]``: decided when provable, else scaled by the content."""
        if nonneg(p):
            return ONE
        if nonneg(-p - 1):
            return ZERO
        if nonneg(-p):                      # p <= 0, so p >= 0 means p == 0
            return self.delta(p)
        # p >= -1, so p >= 0 means p != -1 (free indices only: in a sum, shifting the
        # binder is the canonical form)
        if nonneg(p + 1) and all(v.tag not in ("t", "b") for v in p.index_vars()):
            return self.sub(ONE, self.delta(p + 1))
        for m in sorted((x for x in p.symbols() if isinstance(x, SizeSym)), key=lambda x: x.skey):
            q, r = divide_exact(p, Poly.sym(m))   # p = m q + r: with 0 <= r < m, p >= 0 iff q >= 0
            if q is not PZERO and r is not PZERO:
                if nonneg(r) and nonneg(m - 1 - r):
                    self.use("delta_radix")
                    return self.ind(q)
                if nonneg(r + m) and nonneg(-1 - r):
                    self.use("delta_radix")
                    return self.ind(q - 1)
        g = p.content()
        if g > 1:
            p = Poly({m: c // g for m, c in p.terms.items() if m}) + p.const_value() // g
        return nf_atom(IndA(p))

    def rind(self, u: NF, rel: str, strict=None) -> NF:
        """``[u rel 0]``. An integer-valued ``u`` has no kink: its indicators are read exactly,
        all as ``[v >= 0]``. ``strict`` (default: the normalizer's) reads ``[u >= 0]`` as ``[u > 0]`` off the kink."""
        c = u.const()
        if c is not None:
            return ONE if {">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0}[rel] else ZERO
        if u.positive:
            return ONE if rel in (">", ">=") else ZERO
        if (split := self.split((u,), lambda v: self.rind(v, rel, strict), bound=True)) is not None:
            return split
        if (sel := self.select((u,), lambda v: self.rind(v, rel, strict))) is not None:
            return sel
        if u.integer and (p := _int_poly(u)) is not None:
            # a comparison of integer expressions (sizes, indices) is the indicator of a Poly
            self.use("indicator_integer")
            return self.ind({">=": p, ">": p - 1, "<=": -p, "<": -p - 1}[rel])
        if u.integer:
            return self._integer_ind(u, rel)
        # Scaled so that the first non-constant coefficient is 1 (a negative factor flips
        # the relation): [2 - 2 x > 0] and [x - 1 < 0] are one atom.
        lam = next(c for m, c in u.terms if m is not ONE_MONO)
        if lam < 0:
            rel = {">": "<", ">=": "<=", "<": ">", "<=": ">="}[rel]
        u = self.scale(u, Fraction(1) / lam)
        if all(c > 0 and m.nonneg for m, c in u.terms):
            # u >= 0: [u >= 0] = 1 and [u < 0] = 0 exactly; [u > 0] = 1 and [u <= 0] = 0 where
            # u != 0, which the strict reading records
            if rel in (">=", "<"):
                self.use("indicator_nonneg")
                return ONE if rel == ">=" else ZERO
            if self.strict_kinks if strict is None else strict:
                self.use("indicator_nonneg")
                self.need("offkink", u)
                return ONE if rel == ">" else ZERO
        if (self.strict_kinks if strict is None else strict) and rel != ">":
            # Off the kink u != 0 (recorded): [u >= 0] = [u > 0] and [u < 0] = [u <= 0] = 1 - [u > 0].
            self.use("indicator_off_kink")
            self.need("offkink", u)
            pos = nf_atom(RIndA(u, ">"))
            return pos if rel == ">=" else self.sub(ONE, pos)
        return nf_atom(RIndA(u, rel))

    def _integer_ind(self, u: NF, rel: str) -> NF:
        """``[u rel 0]`` for an integer-valued ``u``, by ``indicator_integer``'s forms (``g`` the
        content of the non-constant part; the complement when the leading coefficient is
        negative, so a comparison and its complement share one atom)."""
        neg = self.scale(u, -1)
        if rel != ">=":
            self.use("indicator_integer")
            return self.rind({">": self.sub(u, ONE), "<=": neg, "<": self.sub(neg, ONE)}[rel], ">=")
        if neg.positive:
            return ZERO
        if self.decide_ge is not None and (hit := self.decide_ge(self, u)) is not None:
            return hit                      # the range of a permutation's entry (permutation.py)
        c = next((c for m, c in u.terms if m is ONE_MONO), 0)
        g = gcd(*(int(c) for m, c in u.terms if m is not ONE_MONO))
        if g > 1:
            self.use("indicator_integer")
            return self.rind(self.add(self.scale(self.sub(u, nf_const(c)), Fraction(1, g)), nf_const(int(c) // g)), ">=")
        if next(c for m, c in u.terms if m is not ONE_MONO) < 0:
            self.use("indicator_integer")
            return self.sub(ONE, self.rind(self.sub(neg, ONE), ">="))
        return nf_atom(RIndA(u, ">="))

    # -- sums whose bodies cancel -------------------------------------------------------------
    def cancel_sums(self, diff: NF) -> NF:
        """``diff`` without its groups of monomials ``c_j R S_j`` (one factor ``R``, ``S_j`` a
        sum over binders of the same ranges) whose merged body ``sum_j c_j body_j`` is 0
        once multiplied by the positive sums it divides by: ``sum_j c_j R S_j = R sum_b
        sum_j c_j body_j(b)`` (``sum_linear``, the binders renamed alike), and at each ``b``
        the body is 0 iff its product with a positive quantity is (``cancel_positive``).
        The identities of a sigmoid inside a sum (SwiGLU's ``silu``) need this: the sum is
        split by monomial, each body alone does not cancel.

        Groups of one ``R`` are tried first; then the sums left, of any factors ``R_j``, are
        grouped by their ranges alone: ``sum_j c_j R_j S_j = sum_b sum_j c_j R_j body_j(b)``
        (``sum_pull``: ``R_j`` lies outside the sum, so it does not depend on its binders).
        An attention sink's ``dsinks`` needs this: ``exp(sink)`` comes out of one of the
        sums over rows, whose bodies cancel only together. A group is dropped only whole,
        when its merged body is 0 at every ``b``, so the sum of the group is 0."""
        gone = set()
        for coarse in (False, True):
            groups: dict = {}
            for m, c in diff.terms:
                sums = [a for a, e in m.factors if isinstance(a, SumA) and e == 1]
                if len(sums) == 1 and m not in gone:
                    rest = mono_of({a: e for a, e in m.factors if a is not sums[0]})
                    key = (None if coarse else rest, tuple(b.size for b in sums[0].binders))
                    groups.setdefault(key, []).append((m, c, sums[0], rest))
            for (_, sizes), members in groups.items():
                if len(members) < 2:
                    continue
                temps = [fresh_index(size) for size in sizes]
                # coarse: R_j S_j = sum_b R_j body_j(b); R_j has no temp in it (sum_pull)
                body = self.add(*(self.scale(self.mul(nf_mono(r) if coarse else ONE, self.subst_mono(
                    a.m, {b: Poly.sym(t) for b, t in zip(a.binders, temps)})), c) for _, c, a, r in members))
                if not self.clear_positive(body).terms:
                    self.use("sum_linear")
                    self.use("fubini")      # the binders renamed alike
                    if coarse:
                        self.use("sum_pull")
                    gone |= {m for m, _, _, _ in members}
        return nf_of({m: c for m, c in diff.terms if m not in gone}) if gone else diff

    def clear_positive(self, x: NF) -> NF:
        """``x`` multiplied by the positive sums it divides by (``cancel_positive``), so
        ``x == 0`` iff the result is (a common denominator, as for the sigmoid's identities)."""
        for _ in range(4):
            worst: dict = {}
            for m, _c in x.terms:
                for a, e in m.factors:
                    if isinstance(a, ParenA) and a.positive and e < 0:
                        worst[a] = min(worst.get(a, 0), e)
            if not worst:
                return x
            self.use("cancel_positive")
            for a, e in worst.items():
                x = self.mul(x, nf_atom(a, -math.floor(e)))
            # a whole power of a sum left beside a constant is multiplied out
            x = self.add(*(self.scale(self.finish(dict(m.factors)), c) for m, c in x.terms))
        return x

    # -- the argmax under a unique maximum ------------------------------------------------
    def top(self, a):
        """``(M, p)`` when the atom ``a`` is ``T_p = [u(p) - M >= 0]`` for ``M = max_b u(b)``
        (``[u(p) - M <= 0]`` for a min; either sign of the argument), ``p`` an index
        expression: the indicator that the maximum is attained at ``p``. Checked by
        substituting ``b := p`` in ``u``; else None."""
        if a in self._tops:
            return self._tops[a]
        found = None
        if isinstance(a, RIndA) and a.rel in (">=", "<="):
            for m, c in a.u.terms:
                if len(m.factors) == 1 and m.factors[0][1] == 1 and isinstance(mx := m.factors[0][0], MaxA) \
                        and (c < 0) == (a.rel == (">=" if mx.kind == "max" else "<=")):
                    v = self.scale(self.sub(a.u, nf_mono(m, c)), Fraction(-1) / c)     # a is [v - M rel 0]
                    found = next(((mx, p) for p in _points(mx, v) if mx.b not in p.index_vars()
                                  and self.subst_nf(mx.u, {mx.b: p}) is v), None)
                    break
        self._tops[a] = found
        return found

    def carrier(self, a):
        """``(M, T, b)`` when ``a`` is a sum ``sum_{b, ..} T_b g(b, ..)`` with ``T_b`` a factor of its body that says
        the maximum ``M`` is attained at the binder ``b`` (of the range of M's own binder);
        ``(M, a, None)`` when ``a`` is such a ``T_p`` itself; else None. ``M`` must not
        depend on the sum's binders: a maximum that does (a row's maximum, summed over
        rows) is another maximum for each value of them, with an argmax of its own, and
        two sums' atoms spelled alike (binders are named canonically) would be different
        maxima once the sums are opened."""
        if isinstance(a, RIndA):
            got = self.top(a)
            return (got[0], a, None) if got else None
        if not isinstance(a, SumA):
            return None
        if ("carrier", a) not in self._tops:
            found = None
            for f, _ in a.m.factors:
                got = self.top(f)
                b = lone_index(got[1]) if got else None
                if b is not None and b in a.binders and b.size is got[0].b.size \
                        and not (got[0].ivars & set(a.binders)):
                    found = (got[0], f, b)
                    break
            self._tops[("carrier", a)] = found
        return self._tops[("carrier", a)]

    def need_unique(self, mx: MaxA):
        """Record the condition that one index alone attains the maximum ``mx``:
        ``3/2 - #{c : u(c) = max} > 0`` (deriv_max's; ``argmax_unique``'s)."""
        c = fresh_index(mx.b.size)
        uc = self.subst_nf(mx.u, {mx.b: Poly.sym(c)})
        at = self.rind(self.sub(uc, nf_atom(mx)), ">=" if mx.kind == "max" else "<=", strict=False)
        self.need("positive", self.sub(nf_const(Fraction(3, 2)), self.sum([c], at)))

    def _open(self, a, t):
        """A carrier with fresh binders: ``(binders, body without T, T's NF, T's point)``."""
        if t is a:
            return [], ONE, nf_atom(a), self.top(a)[1]
        temps = [fresh_index(b.size) for b in a.binders]
        mp = {b: Poly.sym(x) for b, x in zip(a.binders, temps)}
        rest = self.subst_mono(mono_of({f: e for f, e in a.m.factors if f is not t}), mp)
        return temps, rest, self.subst_atom(t, mp), self.top(t)[1].subst(mp)

    def _merge_tops(self, d: dict):
        """``T_p T_q = T_p [p == q]`` (``argmax_unique``, the condition recorded; ``p`` and ``q``
        checked in range). Factors of a monomial that carry such indicators of one maximum
        (``T_p`` itself, or a sum ``sum_b T_b g(b)``) are multiplied into one sum
        (distributivity), where the rule applies; None when there are none."""
        seen = {}
        for a, e in d.items():
            got = self.carrier(a) if e == 1 else None
            if got is None:
                continue
            if got[0] not in seen:
                seen[got[0]] = (a, got[1])
                continue
            mx, (a1, t1), (a2, t2) = got[0], seen[got[0]], (a, got[1])
            bs1, rest1, top1, p1 = self._open(a1, t1)
            bs2, rest2, _, p2 = self._open(a2, t2)
            size = mx.b.size
            if not all(nonneg(p) and nonneg(size - 1 - p) for p in (p1, p2)):
                continue
            self.use("argmax_unique")
            self.need_unique(mx)
            body = self.prod([top1, rest1, rest2, self.delta(p1 - p2)])
            others = self.finish({f: k for f, k in d.items() if f is not a1 and f is not a2})
            return self.mul(others, self.sum(bs1 + bs2, body))
        return None

    def select(self, us, f):
        """``f(u..) = sum_t T_t f(u..[S := sum_{..} g(t, ..)])`` for a sum ``S = sum_{b, ..} T_b g(b, ..)``
        among the factors of the arguments, ``T_b`` the indicator that the maximum ``M`` is
        attained at ``b`` (``argmax_unique``). Preconditions, checked: ``b`` ranges over M's
        range, which is provably non-empty; the uniqueness is recorded as a condition. None
        when there is no such S."""
        for u in us:
            for m, _ in u.terms:
                for a, _ in m.factors:
                    got = self.carrier(a) if isinstance(a, SumA) else None
                    if got is None or not ppositive(got[0].b.size):
                        continue
                    mx, t, b = got
                    self.use("argmax_unique")
                    self.need_unique(mx)
                    temps = [fresh_index(x.size) for x in a.binders]
                    mp = {x: Poly.sym(y) for x, y in zip(a.binders, temps)}
                    tb = temps[a.binders.index(b)]
                    value = self.sum([y for y in temps if y is not tb],
                                     self.subst_mono(mono_of({g: e for g, e in a.m.factors if g is not t}), mp))
                    new = [self.add(*(self.scale(self.mul(self.pow(value, dict(mm.factors)[a]),
                                                          self.finish({g: e for g, e in mm.factors if g is not a})), c)
                                      if any(g is a for g, _ in mm.factors) else nf_mono(mm, c) for mm, c in v.terms))
                           for v in us]
                    return self.sum([tb], self.mul(self.subst_atom(t, mp), f(*new)))
        return None

    def split(self, us, f, bound: bool = False):
        """``f(u..) = (1 - [P]) f(u..|[P] := 0) + [P] f(u..|[P] := 1)`` (``indicator_split``),
        for ``[P]`` the indicator atom of least key that is a factor of a monomial of the
        arguments ``us``; None when there is none. Precondition, checked here: ``[P]`` is
        an idempotent atom (a delta or an indicator, whose only values are 0 and 1).
        With more than SPLIT_LIMIT such atoms (2^k terms) the atom is kept whole: sound,
        only less canonical. Each function the axiom lists splits its arguments so: none
        holds an indicator factor, and an indicator of a piecewise argument (a clip, a max)
        becomes indicators of its pieces.

        Unless ``bound``, only indicators of free indices are split on: under a sum's
        binder ``sum_b exp(u_b + [P_b] c)`` stays a sum of positive terms (split, it would be
        ``sum_b exp(u_b) - sum_b [P_b] exp(u_b) + ...``, whose sign the normal form no longer
        sees: a masked softmax's denominator). Either choice is sound; this one is made by
        the indices' tags (binders being built "t", canonical "b"), so a sum's body splits
        once a delta puts a free index in place of its binder."""
        found = {a for u in us for m, _ in u.terms for a, _ in m.factors
                 if a.idem and (bound or all(v.tag not in ("t", "b") for v in a.ivars))}
        if not found or len(found) > SPLIT_LIMIT:
            return None
        p = min(found, key=lambda a: a.skey)
        self.use("indicator_split")

        def at(u: NF, one: bool) -> NF:       # u with [P] := 1 (one) or 0
            parts = []
            for m, c in u.terms:
                if not any(a is p for a, _ in m.factors):
                    parts.append(nf_mono(m, c))
                elif one:
                    parts.append(self.scale(self.finish({a: e for a, e in m.factors if a is not p}), c))
            return self.add(*parts)
        ind = nf_atom(p)
        return self.add(self.mul(self.sub(ONE, ind), f(*(at(u, False) for u in us))),
                        self.mul(ind, f(*(at(u, True) for u in us))))

    def exp(self, u) -> NF:
        """``exp(sum c m) = prod exp(m)^c``; ``exp(c log v) = v^c`` for positive ``v`` (a
        ``v`` not positive by its form, such as a masked sum of exponentials, is recorded
        as the condition ``v > 0``, as ``pow_add_pos`` records its base)."""
        if isinstance(u, Mono):
            u = nf_mono(u)
        if (split := self.split((u,), self.exp)) is not None:
            return split
        out = ONE
        for m, c in u.terms:
            if len(m.factors) == 1 and m.factors[0][1] == 1 and isinstance(a := m.factors[0][0], LogA):
                self.use("exp_log")
                if not a.u.positive:
                    self.need("positive", a.u)
                out = self.mul(out, self.pow(a.u, c, True))
                continue
            if len(u.terms) > 1:
                self.use("exp_add")
            out = self.mul(out, nf_atom(ExpA(m), c))
        return out

    def log(self, u: NF) -> NF:
        """``log(c prod a^e) = log c + sum e log a`` for positive factors; ``log exp m = m``."""
        if (split := self.split((u,), self.log)) is not None:
            return split
        one = u.single()
        if one is None or one[1] <= 0 or not one[0].positive:
            return nf_atom(LogA(u))
        m, c = one
        parts = []
        if c != 1:
            self.use("log_mul")
            for n, sign in ((c.numerator, 1), (c.denominator, -1)):
                for p, k in _factor(n).items():
                    parts.append(self.scale(nf_atom(LogA(nf_const(p))), sign * k))
        for a, e in m.factors:
            if isinstance(a, ExpA):
                self.use("log_exp")
                parts.append(self.scale(nf_mono(a.m), e))
            elif isinstance(a, PrimeA):
                self.use("log_mul")
                parts.append(self.scale(nf_atom(LogA(nf_const(a.p))), e))
            else:
                if len(m.factors) > 1 or e != 1:
                    self.use("log_mul")
                parts.append(self.scale(nf_atom(LogA(self.finish({a: F1}))), e))
        return self.add(*parts)

    def fn(self, fn, args) -> NF:
        """``tanh``, ``erf``, ``sin`` (odd: the sign of the leading monomial comes out),
        ``cos`` (even: it is dropped) and opaque functions."""
        if fn not in ("exp", "log") and (split := self.split(args, lambda *us: self.fn(fn, us))) is not None:
            return split
        if fn in ("tanh", "erf", "sin", "cos"):
            (u,) = args
            if not u.terms:
                return ONE if fn == "cos" else ZERO
            if u.terms[0][1] < 0:            # the leading monomial's sign comes out
                self.use("even_function" if fn == "cos" else "odd_function")
                return self.scale(nf_atom(FnA(fn, (self.scale(u, -1),))), 1 if fn == "cos" else -1)
            return nf_atom(FnA(fn, (u,)))
        if fn == "exp":
            return self.exp(args[0])
        if fn == "log":
            return self.log(args[0])
        return nf_atom(FnA(fn, tuple(args)))

    # -- sums -----------------------------------------------------------------------------
    def sum(self, binders, x: NF) -> NF:
        """``sum_{binders} x`` for binders (distinct fresh indices) bound nowhere else."""
        if not binders:
            return x
        if len(x.terms) > 1:
            self.use("sum_linear")
        return self.add(*[self.scale(self._sum_mono(list(binders), m), c) for m, c in x.terms])

    def _sum_mono(self, bs, m: Mono, merge: bool = True) -> NF:
        one = {b: S.ZERO for b in bs if b.size is S.ONE}
        if one:   # a sum over a single index value: b = 0
            self.use("sum_const")
            return self.sum([b for b in bs if b not in one], self.subst_mono(m, one))
        unused = [b for b in bs if b not in m.ivars]
        bs = [b for b in bs if b in m.ivars]
        out = ONE
        if unused:
            self.use("sum_const")
            out = self.prod(self.int_value(b.size) for b in unused)
        if not bs:
            return self.mul(out, nf_mono(m))
        bset = set(bs)
        # 1. Merge inner sums that depend on these binders (Fubini): whole powers only.
        merge = [(a, e) for a, e in m.factors
                 if merge and isinstance(a, SumA) and a.ivars & bset and e > 0 and e.denominator == 1]
        if merge:
            self.use("fubini")
            body = nf_mono(mono_of({a: e for a, e in m.factors if not any(a is b for b, _ in merge)}))
            new_bs = list(bs)
            for a, e in merge:
                for _ in range(int(e)):
                    temps = [fresh_index(b.size) for b in a.binders]
                    new_bs += temps
                    # a's binders renamed to fresh temporaries (alpha-equivalence): its body is
                    # a normal form already, so it is renamed, not normalized again
                    opened = self.rename_mono(a.m, {b: Poly.sym(t) for b, t in zip(a.binders, temps)})
                    body = self.mul(body, nf_mono(opened))
            return self.mul(out, self.sum(new_bs, body))
        # 2. Re-index a binder of range q*m read through floor division by m: b = u*m + v.
        for fd in divisions(m.skey):
            for b in bs:
                q, r = divide_exact(b.size, fd.m) if b in fd.a.symbols() else (None, None)
                if r is PZERO and q is not PZERO and q is not S.ONE and nonneg(q):
                    self.use("sum_reindex")
                    u, v = fresh_index(q), fresh_index(fd.m)
                    body = self.subst_mono(m, {b: Poly.sym(u) * fd.m + Poly.sym(v)})
                    return self.mul(out, self.sum([c for c in bs if c is not b] + [u, v], body))
        # 3. Eliminate a binder against a Kronecker delta.
        for a, _ in m.factors:
            if isinstance(a, DeltaA) and a.ivars & bset:
                # A binder with a unit coefficient first: it needs no divisibility condition.
                for b in sorted(a.ivars & bset, key=lambda v: (_solve_unit(a.p, v) is None, v.skey)):
                    sol = _solve(a.p, b)
                    if sol is None:
                        continue
                    s, divisible = sol
                    if divisible is not None and any(v.tag == "t" and v not in bset and _solve_unit(a.p, v) is not None
                                                     for v in a.ivars):
                        continue   # an enclosing sum's binder can take it with a unit coefficient
                    self.use("delta_elim")
                    rest = mono_of({f: e for f, e in m.factors if f is not a})
                    body = self.subst_mono(rest, {b: s})
                    guard = self._in_range(s, b.size)
                    if divisible is not None:
                        guard = self.mul(guard, self.delta(divisible))
                    return self.mul(out, self.sum([c for c in bs if c is not b], self.mul(body, guard)))
        # 3b. A permutation's equality counted over its whole range (permutation.py).
        if self.sum_count is not None and "permeq:" in m.skey and (hit := self.sum_count(self, bs, m)) is not None:
            return self.mul(out, hit)
        # 4. A binder confined by indicators: re-index it over its window, or pin it.
        for b in bs:
            conf = _confine(m, b)
            if conf is not None:
                self.use("sum_window")
                rest = [c for c in bs if c is not b]
                if conf[0] == "pin":
                    _, point, used = conf
                    body = self.subst_mono(mono_of({a: e for a, e in m.factors if a not in used}), {b: point})
                    return self.mul(out, self.sum(rest, self.mul(body, self._in_range(point, b.size))))
                t = fresh_index(conf[2])
                at = Poly.sym(t) + conf[1]
                return self.mul(out, self.sum(rest + [t], self.mul(self.subst_mono(m, {b: at}),
                                                                   self._in_range(at, b.size))))
        # 5. Merge binders read only as i*w + j (j < w) into one of range h*w.
        for i in bs:
            for j in bs:
                if i is not j and (ij := self._merged(m, i, j)) is not None:
                    self.use("sum_reindex")
                    return self.mul(out, self.sum([c for c in bs if c is not i and c is not j] + [ij[0]], ij[1]))
        # 6. Pull out what does not depend on the binders; split independent blocks.
        inside = [(a, e) for a, e in m.factors if a.ivars & bset]
        outside = {a: e for a, e in m.factors if not a.ivars & bset}
        block = {b: frozenset([b]) for b in bs}     # each binder's connected block so far
        for a, _ in inside:
            joined = frozenset().union(*[block[b] for b in a.ivars & bset])
            block.update(dict.fromkeys(joined, joined))
        blocks: dict = {}
        for b in bs:
            blocks.setdefault(block[b], ([], []))[0].append(b)
        for a, e in inside:
            blocks[block[next(b for b in bs if b in a.ivars)]][1].append((a, e))
        if len(blocks) > 1:
            self.use("sum_split")
        if outside:
            self.use("sum_pull")
        res = self.finish(outside) if outside else ONE
        for bl_bs, bl_f in blocks.values():
            res = self.mul(res, self._nest(bl_bs, bl_f))
        return self.mul(out, res)

    def _in_range(self, p: Poly, size: Poly) -> NF:
        """``[0 <= p < size]``."""
        return self.mul(self.ind(p), self.ind(size - 1 - p))

    def _nest(self, bs, factors) -> NF:
        """``sum_{bs} prod factors`` miniscoped: a binder ``v`` whose factors are a proper
        subset of the block's is summed innermost (with the binders read only there):
        ``sum_j e_j`` inside a larger sum becomes the same atom as a softmax's
        denominator, and the two cancel. Which ``v`` is an untrusted choice
        (``nest_order``): any is sound, a canonical one makes equal sums nest alike."""
        scope = {b: frozenset([i for i, (a, _) in enumerate(factors) if b in a.ivars]) for b in bs}
        v = self.choices.nest(list(bs), list(factors), scope)
        if v is None or len(scope[v]) == len(factors):
            return nf_atom(self._canon_sum(bs, factors))
        self.use("sum_nest")
        inner_bs = [w for w in bs if scope[w] <= scope[v]]
        inner = self._nest(inner_bs, [factors[i] for i in sorted(scope[v])])
        outer = self.mul(nf_mono(mono_of({a: e for i, (a, e) in enumerate(factors) if i not in scope[v]})), inner)
        rest = [w for w in bs if w not in inner_bs]
        return self.add(*[self.scale(self._sum_mono(rest, mono, merge=False), c) for mono, c in outer.terms])

    def _merged(self, m: Mono, i: IndexVar, j: IndexVar):
        """``(t, body)`` when ``m`` reads ``i`` and ``j`` only as ``i*w + j`` with ``w`` the
        range of ``j``: ``t = i*w + j`` ranges over ``[0, h*w)``."""
        w = j.size
        if w.is_const() and w.const_value() < 2 or _spelled(i, j) not in m.skey or not nonneg(i.size * w):
            return None
        if _reads_apart(m, i, j, w, set()):
            return None     # a guide: i or j is read apart from i*w + j, so a division would stay
        t = fresh_index(i.size * w)
        body = self.subst_mono(m, {i: floordiv(Poly.sym(t), w), j: Poly.sym(t) % w})
        return (t, body) if "f:(" not in body.skey else None

    def _canon_sum(self, bs, factors) -> SumA:
        """Name the binders canonically: by height, then by position in the order that
        makes the sum's key smallest (ties between symmetric binders are tried out)."""
        h = 1 + max(a.height for a, _ in factors)
        # Any order of the binders is sound (a renaming); a good one makes alpha-equivalent
        # sums identical. The search is untrusted (the hook, or a replayed choice).
        order = bs if len(bs) == 1 else self.choices.order(list(bs), list(factors))
        names = [bound_index(h, p, b.size) for p, b in enumerate(order)]
        mp = {b: Poly.sym(n) for b, n in zip(order, names)}
        fs = self._gather((self.rename_atom(a, mp), e) for a, e in factors)
        if len(bs) > 1:
            self.use("fubini")
        return SumA(tuple(names), mono_of(fs))

    def max(self, b: IndexVar, u: NF, kind: str) -> NF:
        if b not in u.ivars:
            self.use("max_const")
            return u
        x = self.tensor([b], u)     # the binder named canonically
        return nf_atom(MaxA(x.binders[0], x.u, kind))

    def tensor(self, temps, u: NF) -> TensorNF:
        h = 1 + u.height
        names = [bound_index(h, p, t.size) for p, t in enumerate(temps)]
        # a renaming to names no atom of u binds or leaves free (its heights are below h),
        # as _canon_sum's: u stays a normal form
        return TensorNF(tuple(names), self.rename_nf(u, {t: Poly.sym(n) for t, n in zip(temps, names)}))

    # -- from terms -------------------------------------------------------------------------
    def norm(self, t: T.Term, idx=(), env=None) -> NF:
        """The normal form of the entry ``t[idx]`` (``idx`` covers every axis of ``t``);
        ``env`` maps the term's bound indices in scope to integer expressions."""
        env = env or {}
        if len(idx) != len(t.shape):
            raise KernelError(f"internal: {len(idx)} indices for a term of rank {len(t.shape)}")
        envkey = tuple((v, env[v]) for v in sorted(t.free_idx & env.keys(), key=lambda v: v.skey))
        key = (t, tuple(idx), envkey)
        hit = self._norm.get(key)
        if hit is None:
            hit = self._norm[key] = self._norm_term(t, tuple(idx), env)
        return hit

    def _norm_term(self, t, idx, env) -> NF:
        n = self.norm
        sub = lambda p: p.subst(env) if env else p  # noqa: E731
        at = lambda a: idx if a.shape else ()  # noqa: E731
        if isinstance(t, T.Var):
            return self.entry(t, idx)
        if isinstance(t, T.Num):
            return nf_const(t.value)
        if isinstance(t, T.Const):
            return nf_atom(ConstA(t.name))
        if isinstance(t, T.IntVal):
            return self.int_value(sub(t.poly))
        if isinstance(t, T.Index):
            e = tuple([sub(p) for p in t.idx])
            out = n(t.base, e + idx, env)
            if t.total:
                for p, s in zip(e, t.base.shape):
                    out = self.mul(out, self._in_range(p, s))
            return out
        if isinstance(t, T.Lamda):
            k = len(t.idxs)
            env2 = {**env, **dict(zip(t.idxs, idx[:k]))}
            return n(t.body, idx[k:], env2)
        if isinstance(t, T.Add):
            return self.add(*[n(a, at(a), env) for a in t.terms])
        if isinstance(t, T.Mul):
            return self.prod(n(a, at(a), env) for a in t.terms)
        if isinstance(t, T.Pow):
            return self.pow(n(t.base, idx, env), t.exponent, self.sign(t.base) == "pos")
        if isinstance(t, T.Func):
            return self.fn(t.fn, tuple([n(a, at(a), env) for a in t.operands]))
        if isinstance(t, (T.Sum, T.ReduceMax)):
            b = fresh_index(t.idx.size, t.idx.name)
            body = n(t.body, idx, {**env, t.idx: Poly.sym(b)})
            return self.sum([b], body) if isinstance(t, T.Sum) else self.max(b, body, t.kind)
        if isinstance(t, T.Delta):
            return self.delta(sub(t.a) - sub(t.b))
        if isinstance(t, T.IntCond):
            a, b = sub(t.a), sub(t.b)
            return self.ind({"<": b - a - 1, "<=": b - a, ">": a - b - 1, ">=": a - b}[t.rel])
        if isinstance(t, T.RealCond):
            return self.rind(n(t.t, idx, env), t.rel)
        if isinstance(t, T.Named):
            return n(t.body, idx, env)
        if isinstance(t, (T.Apply, T.Vjp)):
            args = tuple([self.tensor_of(a, env) for a in t.operands])
            if isinstance(t, T.Apply):
                return nf_atom(ApplyA(t.fn, None, args, idx))
            temps = [fresh_index(s) for s in t.cot.shape]
            out_idx = tuple([Poly.sym(v) for v in temps])
            return self.sum(temps, self.mul(n(t.cot, out_idx, env), nf_atom(ApplyA(t.fn, t.argno, args, out_idx + idx))))
        if isinstance(t, T.At):
            # Only a body that takes no derivative in its params normalizes (by substitution).
            return n(T.subst(t.body, dict(zip(t.params, t.values))), idx, env)
        if isinstance(t, T.Deriv):
            body, P = n(t.body, (), env), tuple([sub(p) for p in t.idx])
            self.continuous(t.var, P)
            return self.derive(body, t.var, P)
        if hasattr(t, "normal_form"):       # a term of an extension module (permutation.py)
            return t.normal_form(self, idx, env)
        raise KernelError(f"cannot normalize {type(t).__name__}")

    def tensor_of(self, t: T.Term, env) -> TensorNF:
        temps = [fresh_index(s) for s in t.shape]
        return self.tensor(temps, self.norm(t, tuple([Poly.sym(v) for v in temps]), env))

    def sign(self, t: T.Term):
        """'pos', 'nonneg' or None: what the term's structure shows about its entries."""
        if t not in self._sign:
            self._sign[t] = self._sign_of(t)
        return self._sign[t]

    def _sign_of(self, t):
        s = self.sign
        if isinstance(t, T.Var):
            return "pos" if "positive" in t.facts else "nonneg" if "nonneg" in t.facts else None
        if isinstance(t, T.Num):
            return "pos" if t.value > 0 else "nonneg" if t.value == 0 else None
        if isinstance(t, T.Const) or isinstance(t, T.Func) and t.fn == "exp":
            return "pos"
        if isinstance(t, T.IntVal):
            return "pos" if ppositive(t.poly) else "nonneg" if nonneg(t.poly) else None
        if isinstance(t, T.Index):
            b = s(t.base)
            return ("nonneg" if b else None) if t.total else b
        if isinstance(t, (T.Lamda, T.Named, T.ReduceMax)):
            return s(t.body)
        if isinstance(t, (T.Add, T.Mul)):
            signs = {s(a) for a in t.terms}
            if None in signs:
                return None
            return "pos" if ("pos" in signs if isinstance(t, T.Add) else signs == {"pos"}) else "nonneg"
        if isinstance(t, T.Pow):
            b, even = s(t.base), t.exponent.denominator == 1 and t.exponent.numerator % 2 == 0
            return "pos" if b == "pos" else "nonneg" if b == "nonneg" or even else None
        if isinstance(t, T.Sum):
            b = s(t.body)
            return ("pos" if ppositive(t.idx.size) else "nonneg") if b == "pos" else b
        if isinstance(t, (T.Delta, T.IntCond, T.RealCond)):
            return "nonneg"
        return None


# How ``subst_atom`` normalizes an atom again from its substituted arguments (the
# other atoms are rebuilt from them as they are).
_RENORMALIZE = {EntryA: Normalizer.entry, DeltaA: Normalizer.delta, IndA: Normalizer.ind, RIndA: Normalizer.rind,
                ExpA: Normalizer.exp, LogA: Normalizer.log, FnA: Normalizer.fn, ParenA: lambda nz, u, pos: u}


def _shape(a: Atom, items: tuple):
    """The substitution ``items`` (sorted ``(index, Poly)`` pairs) into ``a``, with each
    temporary its values bring in (one ``a`` does not mention) replaced by its place in
    the order of first occurrence, its range and its tag; and those temporaries in that
    order. Two substitutions into ``a`` have one shape exactly when one is the other with
    those temporaries renamed one-to-one, ranges and tags kept. ``(None, None)`` when one
    occurs in a floor division (not renamed there)."""
    temps: dict = {}
    out = []
    for k, v in items:
        terms = []
        for mono, c in v.terms.items():
            mm = []
            for s, e in mono:
                if isinstance(s, IndexVar) and s.tag in ("t", "k") and s not in a.ivars:
                    s = (temps.setdefault(s, len(temps)), s.size, s.tag)
                elif isinstance(s, FloorDiv) and any(isinstance(x, IndexVar) and x.tag in ("t", "k") and x not in a.ivars
                                                         for x in s.symbols()):
                    return None, None
                mm.append((s, e))
            terms.append((tuple(mm), c))
        out.append((k, tuple(terms)))
    return (a, tuple(out)), list(temps)


def _map_args(a: Atom, fs: dict) -> list:
    """The arguments of ``a`` with ``fs[type(x)]`` applied to each ``x`` among them (and
    in their tuples) whose type it lists."""
    one = lambda x: fs[type(x)](x) if type(x) in fs else x  # noqa: E731  (no reference cycle: not recursive)
    return [tuple(map(one, x)) if isinstance(x, tuple) else one(x) for x in a._args]


def divisions(skey: str) -> list:
    """The floor divisions a key mentions: where to try re-indexing ``c = u*m + v``.
    A guide only: re-indexing by a bijection is sound whatever it returns. Outermost
    first (no division inside, the largest divisor), in an order fixed by the divisions
    themselves so that a decision goes the same way in any process."""
    if "f:(" not in skey:
        return []
    found = [o for o in S.FLOORDIVS if o.skey in skey]
    return sorted(found, key=lambda o: (sum(isinstance(x, S.FloorDiv) for x in o.a.symbols()),
                                        -max(sum(k for _, k in mono) for mono in o.m.terms), o.skey))


# Untrusted heuristics installed by ``verigrad.certify.canon`` (any answer is sound):
# ``binder_order(binders, factors) -> binders in order`` names a sum's binders, and
# ``nest_order(binders, factors, scope) -> binder or None`` picks the binder to sum first.
binder_order = None
nest_order = None


class BudgetSpent(KernelError):
    """A decision stopped by its work budget (``prove_equal(budget=...)``)."""


class Choices:
    """The untrusted choices of one decision, as data: each binder order a permutation
    (positions), each nesting choice a position or -1. Made by the hooks and recorded
    (``made``), or read back from a ``script`` when a proof is replayed. The kernel
    checks only that each is well formed: any choice is sound."""

    def __init__(self, script=None, budget=None):
        self.made, self.script = [], None if script is None else iter(script)
        self.work, self.budget = 0, budget

    def spend(self, work: int):
        """Count products of monomials; past the budget the decision stops (a deterministic
        limit, unlike a clock: a replay of a proof within it takes the same path)."""
        self.work += work
        if self.budget is not None and self.work > self.budget:
            raise BudgetSpent(f"the work budget of {self.budget} monomial products is spent")

    def skip(self, n: int):
        """Pass over the next ``n`` recorded choices (a replay that starts a decision's
        last pass)."""
        if self.script is not None:
            self.made.extend(itertools.islice(self.script, n))

    def _next(self, make):
        if self.script is None:
            pick = make()
        else:
            pick = next(self.script, None)
            if pick is None:
                raise KernelError("replay: the recorded choices ran out")
        self.made.append(pick)
        return pick

    def order(self, bs, factors):
        perm = self._next(lambda: [bs.index(b) for b in binder_order(bs, factors)] if binder_order
                          else list(range(len(bs))))
        if not (type(perm) is list and all(type(k) is int for k in perm) and sorted(perm) == list(range(len(bs)))):
            raise KernelError("the binder order chosen is not a permutation")     # an exact list of ints: 1.0 and True index too
        return [bs[k] for k in perm]

    def nest(self, bs, factors, scope):
        def make():
            v = nest_order(bs, factors, scope) if nest_order else None
            return bs.index(v) if v in bs else -1
        k = self._next(make)
        if not (type(k) is int and -1 <= k < len(bs)):
            raise KernelError("the nesting choice is not one of the binders")
        return None if k < 0 else bs[k]


def _the_atom(u: NF) -> Atom:
    one = u.single()
    if one is None or one[1] != 1 or len(one[0].factors) != 1 or one[0].factors[0][1] != 1:
        raise KernelError(f"internal: a renaming gave the non-atom {u.skey}")
    return one[0].factors[0][0]


def _confine(m: Mono, b: IndexVar):
    """How indicators ``[c b + r >= 0]`` in ``m`` confine ``b``: ``("pin", point, the two
    indicators)`` for ``L <= c b <= L + c - 1`` (one value, ``ceil(L / c)``, for any
    coefficient c >= 1); ``("range", offset, width)`` for a window of constant width
    narrower than b's range, a constant lower bound, or an upper bound below b's; else
    None. Every width returned is provably >= 0."""
    lows, highs = {}, {}
    for a, _ in m.factors:
        split = a.p.linear_in(b) if isinstance(a, IndA) and b in a.ivars else None
        if split and b not in split[1].symbols() and not split[0].index_atoms():
            c, r = split
            if ppositive(c):
                lows.setdefault(c, []).append((r, a))
            elif ppositive(-c):
                highs.setdefault(-c, []).append((r, a))
    for c, found in lows.items():
        for r_lo, a_lo in found:
            for r_hi, a_hi in highs.get(c, ()):
                if r_hi + r_lo is c - 1:
                    return "pin", floordiv(c - 1 - r_lo, c), {a_lo, a_hi}
    lo, hi = [-r for r, _ in lows.get(S.ONE, ())], [r for r, _ in highs.get(S.ONE, ())]
    for low in lo:
        for high in hi:
            w = high - low
            if w.is_const() and 0 <= w.const_value() and (not b.size.is_const() or w.const_value() + 1 < b.size.const_value()):
                return "range", low, Poly.const(w.const_value() + 1)
    for low in lo:
        # [low, N) with a constant low: its length N - low must be provably >= 0 (at a
        # smaller N the window is empty and the sum is 0, not N - low)
        if low.is_const() and low.const_value() >= 1 and nonneg(b.size - low):
            return "range", low, b.size - low
    for high in hi:
        if not high.index_atoms() and nonneg(high) and ppositive(b.size - 1 - high):
            return "range", S.ZERO, high + 1
    return None


def _int_poly(x: NF, den: int = 1):
    """``den * x`` as a Poly when ``x`` is a polynomial of integer symbols (sizes, indices,
    floor divisions: IntA atoms to whole positive powers) and ``den * x`` has integer
    coefficients; else None."""
    if not all(isinstance(a, IntA) and e.denominator == 1 and e > 0 for m, _ in x.terms for a, e in m.factors) \
            or any((c * den).denominator != 1 for _, c in x.terms if isinstance(c, Fraction)):
        return None
    total = PZERO
    for m, c in x.terms:
        term = Poly.const(int(c * den))
        for a, e in m.factors:
            for _ in range(int(e)):
                term = term * Poly.sym(a.sym)
        total = total + term
    return total


def _int_positive(x: NF) -> bool:
    """``x > 0`` for every value of its symbols, when ``x`` is a polynomial of integer
    symbols with rational coefficients: ``L x``, for L the positive lcm of the
    denominators, is an integer polynomial, and the arithmetic oracle proves it >= 1 (so
    a size ``k - 1`` with ``k >= 2`` is a positive denominator, which ``cancel_positive``
    may clear)."""
    p = _int_poly(x, lcm(*(Fraction(c).denominator for _, c in x.terms)))
    return p is not None and ppositive(p)


def _points(mx: MaxA, v: NF):
    """Candidate points ``p`` with ``v = u(p)`` for ``mx = max_b u(b)``: where ``u`` reads an
    entry ``x[.., b, ..]``, the index at that place in an entry of ``x`` in ``v`` (a guide
    only: each candidate is checked by substitution)."""
    for m, _ in mx.u.terms:
        for e1, _ in m.factors:
            if isinstance(e1, EntryA):
                for pos, ix in enumerate(e1.idx):
                    if ix is Poly.sym(mx.b):
                        for m2, _ in v.terms:
                            for e2, _ in m2.factors:
                                if isinstance(e2, EntryA) and e2.var is e1.var:
                                    yield e2.idx[pos]


def _tighter(a: RIndA, b: RIndA) -> RIndA:
    """Of two bounds on one side of the same line (both lower or both upper), the one
    that implies the other: the larger lower bound (smaller upper bound), at equal
    thresholds the strict one (at equal strictness either: they are the same set)."""
    if a.t != b.t:
        return a if (a.t > b.t) == a.lo else b
    if a.strict != b.strict:
        return a if a.strict else b
    return min(a, b, key=lambda x: x.skey)


def _ind_order(d: dict) -> bool:
    """Indicators of one real line in a factor map (``indicator_order``): of two bounds on
    one side only the one that implies the other is kept; False when a lower and an upper
    bound exclude each other (the monomial is 0). Precondition, by construction: the atoms
    share ``w`` (``RIndA``). ``d`` is changed in place."""
    lines: dict = {}
    for a in d:
        if isinstance(a, RIndA) and a.w is not None:
            lines.setdefault(a.w, []).append(a)
    for atoms in lines.values():
        if len(atoms) < 2:
            continue
        keep = []
        for side in (True, False):
            bounds = [a for a in atoms if a.lo is side]
            if bounds:
                best = bounds[0]
                for a in bounds[1:]:
                    best = _tighter(best, a)
                keep.append(best)
        if len(keep) == 2:
            lo, hi = keep
            if lo.t > hi.t or lo.t == hi.t and (lo.strict or hi.strict):
                return False
        for a in atoms:
            if a not in keep:
                del d[a]
    return True


def _apart(p: Poly, i: IndexVar, j: IndexVar, w: Poly) -> bool:
    """``p`` reads ``i`` or ``j`` other than through ``c*(i*w + j)`` (not in a division):
    with ``i = t // w``, ``j = t % w`` a division of ``t`` stays in ``p``."""
    if not {i, j} & p.symbols() or any(isinstance(f, FloorDiv) and {i, j} & f.symbols() for f in p.top_atoms()):
        return False
    ai = p.linear_in(i)             # p = a*i + c*j + r
    cj = ai and ai[1].linear_in(j)
    return cj is not None and ai[0] is not cj[0] * w


def _reads_apart(x, i: IndexVar, j: IndexVar, w: Poly, seen: set) -> bool:
    """Whether an index expression anywhere in ``x`` (a monomial, an atom, a normal form,
    inner sums included) reads ``i`` or ``j`` apart (``_apart``), or reads ``i`` or ``j``
    as a number. A guide for ``_merged`` only: any answer is sound."""
    if isinstance(x, Poly):
        return _apart(x, i, j, w)
    if isinstance(x, IndexVar):
        return x is i or x is j
    if isinstance(x, tuple):
        return any(_reads_apart(y, i, j, w, seen) for y in x)
    if not isinstance(x, (Atom, Mono, NF, TensorNF)) or not ({i, j} & x.ivars) or x in seen:
        return False
    seen.add(x)
    return any(_reads_apart(y, i, j, w, seen) for y in x._args)


@functools.cache
def _spelled(i: IndexVar, j: IndexVar) -> str:
    """The key of ``i*w + j`` (``w`` the range of ``j``) that ``_merged`` looks for in a monomial's."""
    return Poly({**{((i, 1),) + m: c for m, c in j.size.terms.items()}, ((j, 1),): 1}).skey


_units: dict = {}


def _solve_unit(p: Poly, v: IndexVar):
    """``s`` with ``p == 0 <=> v == s`` when ``v``'s coefficient in ``p`` is +-1
    (memoized: a function of the interned ``p`` and ``v`` only)."""
    key = (p, v)
    if key not in _units:
        split, _units[key] = p.linear_in(v), None
        if split is not None:
            a, b = split
            if a.is_const() and a.const_value() in (1, -1) and v not in b.symbols():
                _units[key] = -b if a.const_value() == 1 else b
    return _units[key]


def _solve(p: Poly, v: IndexVar):
    """Solve ``p == 0`` for ``v``: ``(s, None)`` for a unit coefficient, or
    ``(s, r)`` with ``v == s`` exactly when ``r == 0`` for a positive coefficient ``c``
    (``s = (-b) // c``, ``r = -b - c*s``)."""
    s = _solve_unit(p, v)
    if s is not None:
        return s, None
    split = p.linear_in(v)
    if split is None:
        return None
    a, b = split
    if v in b.symbols() or a.index_atoms():
        return None
    if not ppositive(a):
        a, b = -a, -b
        if not ppositive(a):
            return None
    if not (a.is_const() or (len(a.terms) == 1 and next(iter(a.terms.values())) == 1)):
        return None
    q = floordiv(-b, a)
    return q, -b - a * q
