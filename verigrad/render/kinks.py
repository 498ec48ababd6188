r"""The render tie's side conditions: accepted only where the certified math has a kink.

The kernel proves a tied result off its side conditions (``u != 0`` off a kink, a
divisor nonzero, a maximum attained once), and says nothing on their exception sets. An
exception set is acceptable only where the certified math itself is a convention there:
at its own kinks, the arguments ``u`` of its indicators ``[u rel 0]`` (ReLU's ``x > 0``,
a pairwise maximum's ``a - b > 0``, a clip's ``norm - 1 > 0``, a mask), at its own
singular points (a base of a negative or fractional power, a logarithm's argument) and
at the ties of its own maxima. There the text may choose another convention. A
condition that arises from an indicator only the text has (an edit's ``compare EQ`` of a
target with 0.91, read ``[d >= 0] - [d > 0]`` and equal to 0 off ``d != 0``) is refused:
its exception set is wherever the text says so, and training's discrete data meet it.

The rule, for a condition ``c`` that a CHECKED result rests on (``MathKinks.justify``):
``c``'s term (written over the tie's cuts and inputs, with free indices ``I``) must be,
by a kernel theorem without conditions of its own, ``lam * k[sigma]`` for a nonzero
rational ``lam`` and one of the math's kink (or singular) arguments ``k`` of the values
the math's side of that result is computed from (written over cuts like the rest of the
tie; its free indices ``A`` are those its indicator ranges over), under a substitution
``sigma`` of ``A`` by index expressions in ``I`` that stay inside ``A``'s ranges (the
same indices, or a constant entry of them). A tie condition of a maximum ``M``
(``3/2 - #{c : u(c) = M} > 0``, the kernel's ``need_unique``) is accepted when ``M`` is,
by a kernel theorem, one of the math's own maxima under such a ``sigma`` and the
condition is, by a kernel theorem, the kernel's tie condition of ``M``. The cuts ``k``
is written over have their obligations proved, like those of the result's own cone, so
``k`` over cuts denotes the math's argument as a function of the inputs.

``lam`` and ``sigma`` are guessed numerically (the random point of the tie: the
condition's values against the argument's, entry by entry); the guess needs no trust,
a wrong one is a theorem the kernel does not give.

Being a kink of the math is not enough: the exception set must also be null as a
function of the inputs, or the kernel's theorem says nothing on a region that data and
random draws may well reach (RT-29: a max pool of relu outputs compares
``u = relu(h1) - relu(h2)``, which is 0 wherever both pre-activations are negative, an
open set; an edit that fires where every pool pair ties was tied CHECKED). So an accepted
condition is then written over the tie's inputs (each cut unfolded to its definition,
down to the inputs; at most ``UNFOLD_LIMIT`` subterms) and checked as ``certify`` checks a
certificate's conditions (``verigrad.certify.conditions.failing``, with no draws of its
own: the tie's random point): a ``u != 0`` must be real-analytic, or covered by
real-analytic pieces (a maximum replaced by its entries, a mask by 0 or 1), each shown not
identically zero symbolically (``nonzero_null``); a maximum attained once must have its
pairs shown apart (``ties_null``); a base shown positive. An indicator of real data in
``u`` (a relu inside a pool's comparison) makes it piecewise: refused (``MathKinks.null``),
and the result is UNKNOWN. The unedited nets tie with no side condition at all: the
StableHLO importer reads ``maximum`` as the jaxpr importer reads ``max``, term for term.

Not covered: an indicator of the math multiplied by a factor that is 0 at some of its
indices still counts as a kink there.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from verigrad.certify.conditions import failing
from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import Condition, Failure, Lamda, RealCond, Theorem, Var
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, nonneg

from .pairing import subterms
from .programs import dag_size, over

SIGMAS = 512        # index substitutions tried per argument
UNFOLD_LIMIT = 2000     # subterms of a condition written over the inputs, at most (the null check)
KINDS = ("nonzero", "offkink", "positive")


class MathKinks:
    """The kinks of the math's side of a tie (``_Induction``), and the check of a side
    condition against them."""

    def __init__(self, induction, math):
        self.ind, self.math = induction, math
        self.defs = {v.var: v for v in math.values}
        self._args: dict = {}       # math value -> [(what, argument over cuts)]
        self._maxima: dict = {}     # math value -> [(what, ReduceMax over cuts)]
        self._seen: dict = {}       # math value -> the math values it is computed from
        self._memo: dict = {}       # (condition, argument) -> whether the condition is that argument
        self._cones: dict = {}      # a math result -> its cone
        self._null: dict = {}       # (kind, condition) -> why its exception set is not shown null, or None
        self._unfolded: dict = {}   # cut -> its definition written over the inputs

    # -- the math's side ------------------------------------------------------------------
    def cone(self, term) -> frozenset:
        """The math's values ``term`` is computed from (itself included)."""
        out, stack = set(), [a for a in term.atoms if a in self.defs]
        while stack:
            v = stack.pop()
            if v in out:
                continue
            out.add(v)
            stack.extend(a for a in self.defs[v].definition.atoms if a in self.defs and a not in out)
        return frozenset(out)

    def arguments(self, var) -> list:
        """``[(what, k)]``: the kink and singular arguments of the math value ``var``, over cuts."""
        if var not in self._args:
            v, out, maxima = self.defs[var], [], []
            d = v.definition
            for rc in subterms(d, RealCond):
                out.append((f"the indicator [u {rc.rel} 0] of {v.where}", rc.t))
            for p in subterms(d, T.Pow):
                if p.exponent < 0 or p.exponent.denominator != 1:
                    out.append((f"the base of a power {p.exponent} of {v.where}", p.base))
            for f in subterms(d, T.Func):
                if f.fn == "log":
                    out.append((f"the argument of a logarithm of {v.where}", f.operands[0]))
            for m in subterms(d, T.ReduceMax):
                maxima.append((f"the {m.kind} of {v.where}", self._over(m)))
            self._args[var] = [(what, self._over(_entry(t))) for what, t in out]
            self._maxima[var] = maxima
        return self._args[var]

    def _over(self, t):
        return over(t, self.ind.term_m)

    # -- a condition ----------------------------------------------------------------------
    def justify(self, c, rm) -> str | None:
        """Which kink of the math (of the values the math's result ``rm`` is computed from)
        the side condition ``c`` is, in words; None when it is none of them. Conditions
        of other kinds than ``u != 0`` / ``u > 0`` are not about an exception set: ''."""
        if c.kind not in KINDS:
            return ""
        if rm not in self._cones:
            self._cones[rm] = self.cone(rm)
        return self._justify(c, self._cones[rm])

    def null(self, c) -> str | None:
        """None when the exception set of the side condition ``c`` (``u = 0`` of a
        ``u != 0``; ``u <= 0`` of a ``u > 0``) is shown null as a function of the tie's
        inputs, as ``certify`` shows a certificate's (``conditions.failing``, at the tie's
        random point); else why not, in words. A kink of the math may vanish on an open
        set (relu outputs compared by a max pool: both 0 wherever both pre-activations are
        negative), where the kernel's tie says nothing."""
        if c.kind not in KINDS:
            return None
        key = (c.kind, c.term)
        if key not in self._null:
            self._null[key] = self._shown_null(c)
        return self._null[key]

    def _shown_null(self, c) -> str | None:
        t = self._over_inputs(c.term)
        if t is None:
            return (f"written over the inputs it has more than {UNFOLD_LIMIT} subterms, so its zero set was "
                    "not examined")
        env = self.ind.env
        values = {a: np.asarray(env[a], dtype=np.float64) for a in t.atoms if isinstance(a, Var) and a in env}
        try:
            why = failing(_Conds(Condition(c.kind, t)), lambda sizes, rng: values, [{}], draws=1)
        except Exception as e:  # noqa: BLE001 - a condition the checks cannot read: not shown
            return f"it could not be examined as a function of the inputs ({type(e).__name__})"
        return why

    def _over_inputs(self, term):
        """``term`` (over cuts) with every cut replaced by its definition, down to the
        inputs; None past ``UNFOLD_LIMIT`` subterms."""
        ind, memo = self.ind, self._unfolded
        need, stack = set(), list(ind.cuts(term))
        while stack:
            a = stack.pop()
            if a not in need and a not in memo:
                need.add(a)
                stack.extend(ind.cuts(ind.defn[a]))
        for a in sorted(need, key=ind.pos.get):     # a definition reads earlier cuts only
            d = ind.defn[a]
            inner = {b: memo[b] for b in ind.cuts(d)}
            if any(v is None for v in inner.values()):
                memo[a] = None
                continue
            u = T.subst(d, inner) if inner else d
            memo[a] = u if dag_size(u, UNFOLD_LIMIT) <= UNFOLD_LIMIT else None
        inner = {b: memo[b] for b in ind.cuts(term)}
        if any(v is None for v in inner.values()):
            return None
        u = T.subst(term, inner) if inner else term
        return u if dag_size(u, UNFOLD_LIMIT) <= UNFOLD_LIMIT else None

    def _justify(self, c, cone) -> str | None:
        I = sorted(c.term.free_idx, key=lambda v: v.name)
        if c not in self._memo:
            try:
                C = _values(self.ind.env, c.term, I)
            except Exception:   # noqa: BLE001 - a condition the evaluator cannot read: no guess
                C = None
            self._memo[c] = C if C is not None and np.all(np.isfinite(C)) and np.any(C) else None
        C = self._memo[c]
        if C is None:
            return None
        seen = set()
        for var in (v.var for v in reversed(self.math.values) if v.var in cone):
            for what, k in self.arguments(var):
                if k in seen:
                    continue
                seen.add(k)
                if (c, k) not in self._memo:
                    self._memo[(c, k)] = self._is(c.term, I, C, k)
                if self._memo[(c, k)]:
                    return what
        if c.kind == "positive":
            for var in (v.var for v in self.math.values if v.var in cone):
                self.arguments(var)
                for what, m in self._maxima[var]:
                    if (c, m) not in self._memo:
                        self._memo[(c, m)] = self._ties(c.term, I, m)
                    if self._memo[(c, m)]:
                        return f"the ties of {what}"
        return None

    def _is(self, term, I, C, k, scaled=True) -> bool:
        """Whether ``term = lam * k[sigma]`` by the kernel, for some guessed ``lam`` and ``sigma``."""
        A = sorted(k.free_idx, key=lambda v: v.name)
        env = self.ind.env
        for sigma in _sigmas(term, I, k, A):
            try:
                G = _values(env, T.subst(k, sigma) if sigma else k, I)
            except Exception:   # noqa: BLE001 - not evaluable: not this one
                continue
            if G.shape != C.shape or not np.all(np.isfinite(G)):
                continue
            gg = float(np.sum(G * G))
            if gg == 0:
                continue
            lam = float(np.sum(C * G)) / gg
            if not lam or not np.allclose(C, lam * G, rtol=1e-9, atol=1e-12 * float(np.max(np.abs(C)))):
                continue
            q = Fraction(lam).limit_denominator(10 ** 6)
            if q == 0 or (not scaled and q != 1):
                continue
            rhs = T.subst(k, sigma) if sigma else k
            rhs = rhs if q == 1 else T.Mul((T.Num(q), rhs))
            if self._proved(term, rhs, I) and self._cone_proved(k):
                return True
        return False

    def _ties(self, term, I, m) -> bool:
        """Whether ``term`` is the kernel's tie condition ``3/2 - #{c : u(c) = M}`` of a
        maximum ``M`` in it that is the math's maximum ``m`` (under a ``sigma``)."""
        for M in subterms(term, T.ReduceMax):
            if M.kind != m.kind or M.idx.size != m.idx.size:
                continue
            try:
                MM = _values(self.ind.env, M, I)
            except Exception:   # noqa: BLE001
                continue
            if not np.all(np.isfinite(MM)) or not self._is(M, I, MM, m, scaled=False):
                continue
            b = T.fresh_name("c", M.idx.size, set(term.free_idx) | {M.idx})
            at = T.subst(M.body, {M.idx: Poly.sym(b)})
            want = T.Add((T.Num(Fraction(3, 2)), T.Mul((T.Num(-1), T.Sum(b, T.RealCond(
                T.Add((at, T.Mul((T.Num(-1), M)))), ">=" if M.kind == "max" else "<="))))))
            if self._proved(term, want, I):
                return True
        return False

    def _proved(self, lhs, rhs, I) -> bool:
        if I:
            lhs, rhs = Lamda(I, lhs), Lamda(I, rhs)
        try:
            th = self.ind._prove(lhs, rhs)
        except Exception:       # noqa: BLE001 - a term the kernel refuses: not shown
            return False
        return isinstance(th, Theorem) and not th.conds

    def _cone_proved(self, k) -> bool:
        """The obligations of every cut ``k`` is written over, and of those they rest on."""
        ind = self.ind
        cone, stack = set(), list(ind.cuts(k))
        while stack:
            c = stack.pop()
            if c not in cone:
                cone.add(c)
                stack.extend(ind.deps[c])
        for c in cone:
            for ob in ind.obligations.get(c, ()):
                th = ind.prove(ob)
                if isinstance(th, Failure) or any((x.kind, x.term) not in ind.exceptions for x in th.conds):
                    return False        # a condition not accepted for a result of its own
        return True


class _Conds:
    """What ``conditions.failing`` reads of a theorem: its side conditions."""

    def __init__(self, *conds):
        self.conds = conds


def _entry(t):
    """A tensor-valued argument's entry at fresh indices (an indicator is element-wise)."""
    if not t.shape:
        return t
    taken = set(t.free_idx)
    idx = [T.fresh_name("a", s, taken) for s in t.shape]
    return T.Index(t, tuple(Poly.sym(v) for v in idx))


def _values(env, term, I) -> np.ndarray:
    return np.asarray(Vectorized({}, env).tensor(Lamda(I, term) if I else term), dtype=np.float64)


def _size(v) -> int | None:
    s = v.size
    return int(s.const_value()) if s.is_const() else None


def _sigmas(term, I, k, A):
    """Substitutions of ``k``'s free indices ``A`` by index expressions in ``term``'s ``I``,
    inside ``A``'s ranges: first those that make an entry of ``k`` one of ``term``'s (same
    variable, its indices solved for), then each ``a`` sent to an index of ``I`` of its
    range, at most ``SIGMAS`` in all."""
    if not A:
        yield {}
        return
    tried = 0
    seen = set()

    def ok(sigma):
        return all(nonneg(p) and nonneg(a.size - 1 - p) for a, p in sigma.items())

    mine = [ix for ix in subterms(term, T.Index)]
    for ix in subterms(k, T.Index):
        base, at = ix._args[0], ix._args[1]
        for jx in mine:
            if jx._args[0] is not base or len(jx._args[1]) != len(at):
                continue
            sigma, good = {}, True
            for e, f in zip(at, jx._args[1]):
                a = next((v for v in e.index_vars() if v in A), None)
                if a is None:
                    continue
                rest = e - Poly.sym(a)          # e = a + rest, rest free of A (else no solution here)
                if rest.index_vars() & set(A):
                    good = False
                    break
                p = f - rest
                if sigma.get(a, p) != p:
                    good = False
                    break
                sigma[a] = p
            if good and len(sigma) == len(A) and ok(sigma):
                key = tuple(sigma[a] for a in A)
                if key not in seen:
                    seen.add(key)
                    tried += 1
                    yield {a: sigma[a] for a in A}
    choices = [[i for i in I if i.size == a.size] for a in A]
    for pick in itertools.product(*choices):
        if tried >= SIGMAS:
            return
        key = tuple(Poly.sym(i) for i in pick)
        if key in seen:
            continue
        seen.add(key)
        tried += 1
        yield dict(zip(A, key))
