"""Permutations: argsort and integer equalities against its entries (trusted).

Two terms, and the normal-form atoms they become:

- ``Argsort(s)`` for a vector ``s`` of length ``n >= 1``: the stable ascending order of
  ``s`` (``s[P[0]] <= s[P[1]] <= ...``, ties by index). For *every* real ``s`` it is a
  permutation of ``[0, n)``: that is the only property the rules below use, and it holds
  by construction (no data can make it fail).
- ``IntEq(t, p)``: the indicator ``[t == p]`` of a scalar term ``t`` and an integer
  expression ``p`` (a gather by data indices is ``sum_j [t == j] x[j]``).

Atoms (``PermA``, ``PermEqA``) take the vector as a ``TensorNF`` ``lam[b < n]{u}``:

- ``PermA(s, a, inv)``: ``P[a]`` for ``P = argsort(s)``, or with ``inv`` ``argsort(P)[a]``
  (the inverse permutation: the stable rank of ``s[a]``); 0 when ``a`` is off
  ``[0, n)`` (the kernel's total reading of an entry). Integer-valued, in ``[0, n)``.
- ``PermEqA(s, a, b, inv)``: ``[PermA(s, a, inv) == b]``, literally.

Rules: the axioms registered at the end of this module (each states its precondition,
and each is applied only where that precondition is checked here). ``perm_bijection``
is the bijection rule ``sum_i [P[i] == j] f(i) = sum_i [P^-1[j] == i] f(i)`` in pointwise
form; it and the other bijection rules (``perm_injective``, ``perm_count``) exist only
for atoms built by ``Argsort``, so a gather by arbitrary integer data (with duplicates:
``sum_i [idx[i] == j]`` is a multiplicity) never gets them.
"""
from __future__ import annotations

from fractions import Fraction

from . import normal as N
from . import reify as R
from . import terms as T
from .axioms import _r
from .derivative import derivative
from .sizes import KernelError, Poly, as_poly, floordiv, fresh_index, nonneg, outside, poly_str


# -- terms --------------------------------------------------------------------------------

class Argsort(T.Term):
    """``argsort(s)``: the stable ascending order of the vector ``s`` (ties by index), a
    permutation of ``[0, n)``; integer-valued, of ``s``'s shape."""

    @classmethod
    def _canon(cls, s):
        s = T.as_term(s)
        if len(s.shape) != 1:
            raise KernelError(f"argsort of a term of rank {len(s.shape)} (a vector is needed): {s!r}")
        if not nonneg(s.shape[0] - 1):
            raise KernelError(f"argsort of a vector of length {poly_str(s.shape[0])}, not provably >= 1")
        return (s,)

    def _build(self, s):
        self._set(s.shape, lambda: f"Ag({s.skey})")

    def normal_form(self, nz: N.Normalizer, idx, env) -> N.NF:
        (a,) = idx
        return argsort_entry(nz, nz.tensor_of(self.s, env), a)


class IntEq(T.Term):
    """``[t == p]`` for a scalar term ``t`` and an integer expression ``p``."""

    @classmethod
    def _canon(cls, t, p):
        t = T.as_term(t)
        if t.shape != ():
            raise KernelError(f"IntEq of the non-scalar {t!r}")
        return t, as_poly(p)

    def _build(self, t, p):
        self._set((), lambda: f"Ie({t.skey}={p.skey})")

    def normal_form(self, nz: N.Normalizer, idx, env) -> N.NF:
        p = self.p.subst(env) if env else self.p
        return int_eq(nz, nz.sub(nz.norm(self.t, (), env), nz.int_value(p)))


class IntDiv(T.Term):
    """``floor(t / k)`` for a scalar term ``t`` and a size expression ``k >= 1`` (what
    ``jnp.floor_divide`` computes for integers: top-k routing's ``argsort(e) // k``)."""

    @classmethod
    def _canon(cls, t, k):
        t, k = T.as_term(t), as_poly(k)
        if t.shape != ():
            raise KernelError(f"IntDiv of the non-scalar {t!r}")
        if k.index_atoms() or not nonneg(k - 1):
            raise KernelError(f"IntDiv by {poly_str(k)}, not a size expression provably >= 1")
        return t, k

    def _build(self, t, k):
        self._set((), lambda: f"Fd({t.skey}/{k.skey})")

    def normal_form(self, nz: N.Normalizer, idx, env) -> N.NF:
        return floor_div(nz, nz.norm(self.t, (), env), self.k)


# -- atoms --------------------------------------------------------------------------------

def _size(s: N.TensorNF) -> Poly:
    return s.binders[0].size


class PermA(N.Atom):
    """``argsort(s)[a]`` (``inv``: ``argsort(argsort(s))[a]``); 0 off ``[0, n)``."""

    def _build(self, s, a, inv):
        self._set(f"perm{'~' if inv else ''}:{s.skey}[{a.skey}]", nonneg=True, integer=True)

    def derive(self, nz, var, P):
        return _derive(nz, self.s, var, P)


class PermEqA(N.Atom):
    """``[PermA(s, a, inv) == b]``."""

    def _build(self, s, a, b, inv):
        self._set(f"permeq{'~' if inv else ''}:{s.skey}[{a.skey}]={b.skey}", nonneg=True, idem=True)

    derive = PermA.derive


class DivA(N.Atom):
    """``floor(u / k)``, ``k >= 1`` a size expression; integer-valued."""

    def _build(self, u, k):
        self._set(f"fdiv:{u.skey}/{k.skey}", integer=True)

    def derive(self, nz, var, P):
        raise N.NotDifferentiable("floor division of a term that depends on the variable")


def floor_div(nz: N.Normalizer, u: N.NF, k: Poly) -> N.NF:
    """``floor(u / k)``: an integer expression's floor division, else the atom."""
    whole = [_as_poly(m) for m, c in u.terms if Fraction(c).denominator == 1]
    if len(whole) == len(u.terms) and None not in whole:
        return nz.int_value(floordiv(sum((p * int(c) for p, (m, c) in zip(whole, u.terms)), Poly.const(0)), k))
    return N.nf_atom(DivA(u, k))


def _decide_div(nz: N.Normalizer, atom: DivA, c: int, r: Poly):
    """``[c floor(v / d) + r >= 0]`` (``c = +-1``) from the range ``[lo, hi]`` of ``v = +-P[a] + s``
    (``floor_div_range``): ``floor(v/d) >= m`` iff ``v >= m d``, ``floor(v/d) <= m`` iff ``v < (m + 1) d``."""
    split = _split(atom.u) if "perm" in atom.u.skey else None
    if split is None:
        return None
    perm, k, s = split
    top = _size(perm.s) - 1
    lo, hi = (s, s + top) if k == 1 else (s - top, s)
    d = atom.k
    if c == 1:           # floor(v/d) >= -r ?
        yes, no = nonneg(lo + r * d), nonneg(-(hi + r * d) - 1)
    else:                # floor(v/d) <= r ?
        yes, no = nonneg((r + 1) * d - 1 - hi), nonneg(lo - (r + 1) * d)
    if yes or no:
        nz.use("floor_div_range")
        return N.ONE if yes else N.ZERO
    return None


def _inside(p: Poly, n: Poly) -> bool:
    return nonneg(p) and nonneg(n - 1 - p)


def perm(nz: N.Normalizer, s: N.TensorNF, a: Poly, inv: bool) -> N.NF:
    """``PermA(s, a, inv)``; 0 for ``a`` provably off the range."""
    if outside(a, _size(s)):
        nz.use("entry_off_shape")
        return N.ZERO
    return N.nf_atom(PermA(s, a, bool(inv)))


def argsort_entry(nz: N.Normalizer, x: N.TensorNF, a: Poly) -> N.NF:
    """``argsort(x)[a]``: the inverse of a permutation atom when ``x`` is one (the whole
    vector ``lam[b]{PermA(s, b, inv)}`` of the same length), else a new ``PermA``."""
    one = x.u.single()
    if one is not None and one[1] == 1 and len(one[0].factors) == 1:
        atom, e = one[0].factors[0]
        if isinstance(atom, PermA) and e == 1 and atom.a is Poly.sym(x.binders[0]) \
                and _size(atom.s) is _size(x) and x.binders[0] not in atom.s.ivars:
            nz.use("argsort_inverse")
            return perm(nz, atom.s, a, not atom.inv)
    return perm(nz, x, a, False)


def _as_poly(m: N.Mono) -> Poly | None:
    """The integer expression a monomial of integer symbols is, or None."""
    out = Poly.const(1)
    for a, e in m.factors:
        if not isinstance(a, N.IntA) or e.denominator != 1 or e < 0:
            return None
        for _ in range(int(e)):
            out = out * Poly.sym(a.sym)
    return out


def _split(u: N.NF, cls=None):
    """``(atom, k, r)`` when ``u = k * atom + r`` for one permutation atom (or one atom of
    ``cls``), ``k = +-1`` and ``r`` an integer expression; else None."""
    atom, k, r = None, 0, Poly.const(0)
    for m, c in u.terms:
        if len(m.factors) == 1 and isinstance(m.factors[0][0], cls or PermA) and m.factors[0][1] == 1:
            if atom is not None or c not in (1, -1):
                return None
            atom, k = m.factors[0][0], int(c)
            continue
        p = _as_poly(m)
        if p is None or Fraction(c).denominator != 1:
            return None
        r = r + p * int(c)
    return (atom, k, r) if atom is not None else None


def decide_ge(nz: N.Normalizer, u: N.NF):
    """``[u >= 0]`` for an integer-valued ``u = +-P[a] + r``, decided by the range of
    ``P[a]`` when ``r`` puts it on one side; else None."""
    if "fdiv:" in u.skey and (split := _split(u, DivA)) is not None:
        return _decide_div(nz, *split)
    split = _split(u) if "perm" in u.skey else None
    if split is None:
        return None
    atom, k, r = split
    top = _size(atom.s) - 1
    lo, hi = (r, r + top) if k == 1 else (r - top, r)
    if nonneg(lo):
        nz.use("perm_range")
        return N.ONE
    if nonneg(-hi - 1):
        nz.use("perm_range")
        return N.ZERO
    return None


def int_eq(nz: N.Normalizer, u: N.NF) -> N.NF:
    """``[u == 0]``: decided for a constant; for ``u = +-P[a] + r`` the equality atom
    ``[P[a] == -+r]``; otherwise the exact product ``[u >= 0][-u >= 0]``."""
    c = u.const()
    if c is not None:
        return N.ONE if c == 0 else N.ZERO
    div = _split(u, DivA) if "fdiv:" in u.skey else None
    if div is not None and div[0].u.integer:
        atom, k, r = div           # [floor(v / d) == b] = sum_{q < d} [v == b d + q] for an integer v
        nz.use("floor_div_eq")
        b = -r * k * atom.k
        if atom.k.is_const() and atom.k.const_value() <= 16:     # a few terms: written out
            return nz.add(*(int_eq(nz, nz.sub(atom.u, nz.int_value(b + q))) for q in range(atom.k.const_value())))
        q = fresh_index(atom.k)
        return nz.sum([q], int_eq(nz, nz.sub(atom.u, nz.int_value(b + Poly.sym(q)))))
    split = _split(u)
    if split is None:
        whole = [_as_poly(m) for m, c in u.terms if Fraction(c).denominator == 1]
        if len(whole) == len(u.terms) and None not in whole:      # an integer expression
            return nz.delta(sum((p * int(c) for p, (m, c) in zip(whole, u.terms)), Poly.const(0)))
        return nz.mul(nz.rind(u, ">=", strict=False), nz.rind(nz.scale(u, -1), ">=", strict=False))
    atom, k, r = split
    return perm_eq(nz, atom.s, atom.a, -r * k, atom.inv)


def perm_eq(nz: N.Normalizer, s: N.TensorNF, a: Poly, b: Poly, inv: bool) -> N.NF:
    """``[PermA(s, a, inv) == b]``, written with the forward permutation where the
    bijection rule allows."""
    n = _size(s)
    if outside(a, n):                   # the entry reads 0
        nz.use("entry_off_shape")
        return nz.delta(b)
    if outside(b, n):
        nz.use("perm_range")
        return N.ZERO
    if inv and _inside(a, n):
        nz.use("perm_bijection")
        return nz.mul(nz._in_range(b, n), perm_eq(nz, s, b, a, False))
    return N.nf_atom(PermEqA(s, a, b, bool(inv)))


def sum_count(nz: N.Normalizer, bs, m: N.Mono):
    """``sum_{i < n} [P[i] == b] = [0 <= b < n]`` for a binder ``i`` of ``bs`` read only in
    that factor (``perm_count``); the sum over the other binders of the rest, or None."""
    for atom, e in m.factors:
        if not isinstance(atom, PermEqA):
            continue
        n = _size(atom.s)
        for i in bs:
            if i.size is not n or i in atom.s.ivars or any(i in f.ivars for f, _ in m.factors if f is not atom):
                continue
            rest = N.nf_mono(N.mono_of({f: k for f, k in m.factors if f is not atom}))
            if not atom.inv and atom.a is Poly.sym(i) and i not in atom.b.symbols():
                nz.use("perm_count")        # one preimage of each b in range
                return nz.sum([v for v in bs if v is not i], nz.mul(rest, nz._in_range(atom.b, n)))
            if atom.b is Poly.sym(i) and i not in atom.a.symbols():
                nz.use("perm_count")        # one value, in [0, n), of each entry
                return nz.sum([v for v in bs if v is not i], rest)
    return None


def merge_eqs(nz: N.Normalizer, d: dict):
    """``[P[a] == b][P[a] == c] = [P[a] == b][b == c]`` (``perm_functional``) for the
    equality atoms of one entry among the factors ``d``; the monomial, or None."""
    groups: dict = {}
    for a in d:
        if type(a) is PermEqA:
            groups.setdefault((a.s, "a", a.a, a.inv), []).append(a)
            # injective: one b, several a (all provably in range, where no entry reads 0)
            if not a.inv and _inside(a.a, _size(a.s)):
                groups.setdefault((a.s, "b", a.b), []).append(a)
    key = next((k for k, v in groups.items() if len(v) > 1), None)
    if key is None:
        return None
    nz.use("perm_functional" if key[1] == "a" else "perm_injective")
    keep, *others = sorted(groups[key], key=lambda a: a.skey)
    rest, out = dict(d), N.ONE
    for a in others:
        del rest[a]
        out = nz.mul(out, nz.delta(keep.b - a.b if key[1] == "a" else keep.a - a.a))
    return nz.mul(nz.finish(rest), out)


def _derive(nz: N.Normalizer, s: N.TensorNF, var, P) -> N.NF:
    """0 where the entries of ``s`` are pairwise distinct (recorded), ``s`` continuous
    there (its own conditions recorded by differentiating it)."""
    if var not in s.tvars:
        return N.ZERO
    nz.use("deriv_argsort")
    n = _size(s)
    c, d = fresh_index(n), fresh_index(n)
    sc = nz.subst_nf(s.u, {s.binders[0]: Poly.sym(c)})
    sd = nz.subst_nf(s.u, {s.binders[0]: Poly.sym(d)})
    diff = nz.sub(sc, sd)
    ties = nz.sum([c, d], nz.mul(nz.rind(diff, ">=", strict=False), nz.rind(nz.scale(diff, -1), ">=", strict=False)))
    nz.need("positive", nz.sub(nz.add(nz.int_value(n), N.nf_const(Fraction(1, 2))), ties), (var, P))  # open: s is continuous (below)
    derivative(nz, sc, var, P)
    return N.ZERO


# -- axioms, and the hooks into the normal form and the reifier ------------------------------

_r("argsort_inverse", "argsort(Q)[a] = Q^-1[a] for Q = argsort(s) or argsort(argsort(s)) of the same length",
   "argsort(s) is a permutation of [0, n) for every real s (a stable sort orders every vector); the argsort "
   "of a permutation Q sends j to the position where Q holds j, which is Q^-1(j); and (P^-1)^-1 = P. "
   "Precondition, enforced by argsort_entry: the operand normalizes to exactly the entries of such an atom.")
_r("perm_range", "0 <= P[a] <= n - 1 for P = argsort(s) (or its inverse) of length n",
   "A permutation of [0, n) takes values in [0, n); an entry off the range reads 0, also in [0, n).")
_r("perm_bijection", "a in [0, n)  ->  [P^-1[a] == b] = [0 <= b < n] [P[b] == a]",
   "P is a bijection of [0, n) with inverse P^-1 (both from argsort, never from other integer data). "
   "Precondition, enforced by perm_eq: a provably in [0, n).")
_r("perm_count", "sum_{i<n} [P[i] == b] = [0 <= b < n];  sum_{b<n} [Q[a] == b] = 1",
   "A bijection of [0, n) sends exactly one i to each b in [0, n), none to a b outside; and every entry "
   "of a permutation (or its inverse; 0 off the range) is one number in [0, n). Precondition, enforced by "
   "sum_count: P from argsort (forward) in the first form, the binder ranges over all of [0, n) and "
   "occurs in nothing else.")
_r("perm_functional", "[t == b][t == c] = [t == b][b == c] for one entry t = P[a] of a permutation atom",
   "An entry has one value: where it equals b, it equals c exactly when b equals c.")
_r("perm_injective", "a, c in [0, n)  ->  [P[a] == b][P[c] == b] = [P[a] == b][a == c] for P = argsort(s)",
   "A permutation is injective on [0, n). Precondition, enforced by merge_eqs: the forward permutation, "
   "both positions provably in range.")
_r("floor_div_eq", "[floor(v / d) == b] = sum_{q < d} [v == b d + q] for an integer-valued v and d >= 1",
   "floor(v / d) = b exactly when b d <= v <= b d + d - 1, that is v = b d + q for one q in [0, d). "
   "Precondition, enforced by int_eq: v's normal form is integer-valued.")
_r("floor_div_range", "floor(v / d) >= m iff v >= m d;  floor(v / d) <= m iff v < (m + 1) d  (d >= 1, m integer)",
   "Monotonicity of the floor; applied with the range of a permutation entry v (perm_range).")
_r("deriv_argsort", "d argsort(s)[a] = 0 where the entries of s are pairwise distinct (and s is differentiable)",
   "Off ties every s_c - s_d (c != d) keeps its sign near the point (s is continuous there: its own "
   "conditions are recorded), so the order is locally constant. Precondition, recorded as the condition "
   "n + 1/2 - #{(c, d) : s_c = s_d} > 0 (only the n diagonal pairs tie), like the max's unique argmax.")

N._RENORMALIZE[PermA] = perm
N._RENORMALIZE[DivA] = floor_div
N._RENORMALIZE[PermEqA] = perm_eq
N.Normalizer.decide_ge = staticmethod(decide_ge)
N.Normalizer.sum_count = staticmethod(sum_count)
N.Normalizer.merge_eqs = staticmethod(merge_eqs)


def _reify_vec(s: N.TensorNF) -> T.Term:
    return T.Lamda(s.binders, R.reify(s.u))


def _reify_perm(a: PermA) -> T.Term:
    q = Argsort(_reify_vec(a.s))
    return T.Index(Argsort(q) if a.inv else q, (a.a,), total=True)


R._ATOMS[PermA] = _reify_perm
R._ATOMS[DivA] = lambda a: IntDiv(R.reify(a.u), a.k)
R._ATOMS[PermEqA] = lambda a: IntEq(_reify_perm(PermA(a.s, a.a, a.inv)), a.b)

__all__ = ["Argsort", "IntEq", "IntDiv"]
