"""Side conditions that hold almost everywhere (untrusted; this can only withhold a PROVED).

A kernel theorem may hold under side conditions: ``u != 0`` off an indicator's kink,
a base ``!= 0`` or ``> 0``. The theorem is true, but "the backward is exact" means exact
for almost every input only if each condition fails on a set of measure zero.

For ``u != 0`` (a kink, a base) that is *shown*, not sampled, by a sufficient
criterion: ``u`` is a real-analytic function of the real inputs (built from the
inputs, numbers, sums, products, powers and ``exp log tanh erf sin cos``; indicators and
deltas of index arithmetic are constants for each entry) and, for each entry, not
identically zero; the zero set of such a function has measure zero. Identically zero
is ruled out *symbolically, for every size and every entry* (``nonzero_null``), never by
draws, which see only the sampled sizes (``(b - 40)(b - 41) x[b]`` is identically 0 at
``b = 40, 41``, entries that exist only from ``n = 42``): ``u``'s normal form, or one of its
partial derivatives of order one or two in input entries it reads (the kernel's
derivative), is one integer polynomial in indices and sizes that the size oracle shows
nonzero over their ranges times input entries (to whole powers) and positive atoms
(``_one_term_shown``); what that does not show is refused. ``x[i]``, a dense layer's
``(x W)[i, k]`` (partial ``W[e, k]``), ``(b + 1) x[b]`` pass; ``(b - 40)(b - 41) x[b]`` is
refused. The draws still run (a condition failing at a random input excludes a region).
A ``u`` that is only
piecewise analytic (an indicator of real data, a max, integer data, an opaque
function) can vanish on a whole region: ``sum_c relu(c - x^2)`` is 0 wherever
``|x| > sqrt(max c)``, far from any input a sample would draw, and a backward wrong just
there would pass every sample. Such a condition is not accepted, whatever the samples
say. (Integer data: ``i - n != 0`` excludes exactly the off-by-one cases.) A ``u``
positive at every input is accepted whatever its pieces: by structure
(``positive_everywhere``: ``exp`` of anything, a causal softmax's denominator, whose
window keeps ``b = 0``) or by an assumption (a masked softmax's denominator, a sum of
positive terms times a mask whose rows are assumed to have a true entry,
``--assume "any(mask, -1)"``). A ``u`` with maxima (``sink - max_j s_j``, off the kink
of an attention sink's ``max(m, sink)``) or boolean masks is covered by real-analytic
pieces (``analytic_pieces``: a maximum is attained, so the zero set of ``a - max_j b_j``
lies in the union of those of ``a - b_j``; a mask is 0 or 1), each of which must be
analytic and not identically zero (``nonzero_null``, each piece).

A ``u > 0`` condition is off ties (``3/2 - #{b: x_b = max x} > 0``, ``tie_count``) or
bounds a base (of a log, a fractional power). Off ties, what it compares must be
real-analytic (maxima of analytic entries allowed). For a maximum ``M = max_b B(b)``
attained once, that is not enough: two entries that agree identically tie wherever they
attain ``M``, which may be a whole region no draw reaches, and only at sizes above those
sampled (``B(40) = B(41)`` exists from ``n = 21``). So the pairs ``B(b) - B(c)``, ``b != c``
(``tie_cover``: real-analytic pieces covering where the condition fails) are shown not
identically zero *symbolically, for every size and every b != c* (``ties_null``), never by
samples: each piece reads some real input ``x`` only at entries whose coordinate on one
axis is ``b + r`` or ``c + r`` (one ``r``, free of ``b``, ``c`` and bound indices: the two
sides read different entries), and its partial derivative in an entry read on ``b``'s
side, by the kernel's derivative, is one integer polynomial in indices and sizes that the
size oracle shows nonzero over their ranges times a product of input entries and
positive atoms (not identically zero: analytic functions form an integral domain). A max
of ``x[b]``, ``x[i, b]``, attention's ``q[i] . k[b] / sqrt(d)`` passes; ``repeat(x, 2)``
(``x[b // 2]``, read at two ``b``) and ``(b - 40)(b - 41) x[b]`` (a partial vanishing at
two ``b``) are refused, as is whatever the criterion cannot show. The condition that the
importer's row maximum of a -inf mask is attained once, which the kernel writes with the
mask's cases multiplied out, is recognized by normal form (``tie_cover``): with the
mask's rows assumed alive only unmasked entries attain it, and their pairs are shown apart
as above. A vector's pairwise distinct entries (an argsort's condition,
``n + 1/2 - #{(c, d): s_c = s_d} > 0``) fail at every input if two agree identically, which
draws show only at the sizes sampled (keys ``(b - 40)(b - 41) x[b]`` tie from ``n = 42``): its
pairs ``s_c - s_d`` (``pair_cover``) are shown apart by ``ties_null`` too, else refused.
A base's bound is accepted only where it is shown positive for every input
(``positive_base``: by the kernel's sign rules, case by case over its indicators; or a
masked sum of positive terms whose rows are assumed alive): nothing shows that it fails only
where the forward is undefined (a backward can use ``sqrt(u)^2 = u`` where the forward
clips ``u`` at 0 and stays finite), and samples cannot reach every region where it
fails. Else the user states it as a precondition (``--assume "x > 0"``), which makes it
a fact of the inputs.

``failing(theorem, sample, plans)`` returns the first condition not accepted, described,
or None.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from math import gcd

import numpy as np

from verigrad.kernel import Lamda
from verigrad.kernel.sizes import FloorDiv, IndexVar, Poly, SizeSym, fresh_index, nonneg, positive
from verigrad.kernel import terms as T
from verigrad.kernel.normal import BudgetSpent, Choices, Normalizer

from .evaluate import EvalError, evaluate

DRAWS = 3           # random draws per size assignment
ZERO_TOL = 1e-9     # relative: |u| below this (of the largest |entry| + 1) counts as 0


class Allowance(Choices):
    """What a static check may spend on its normal forms: ``work`` products of monomials
    in all (the kernel's count, deterministic) and ``seconds`` of the clock, checked at
    each product and each binder choice. Past either, the normal form in progress stops
    (``BudgetSpent``) and ``spent`` says why: the check then withholds its verdict. (Red
    team: the tie of a max pool over a batch-normed residual block grew normal forms for
    minutes, to 20 GB.) Untrusted: stopping a check can only withhold."""

    def __init__(self, seconds: float, work: int):
        super().__init__(budget=work)
        self.seconds, self.deadline, self.spent = seconds, time.perf_counter() + seconds, None

    def spend(self, work: int):
        try:
            super().spend(work)
        except BudgetSpent as e:
            self.spent = str(e)
            raise
        self._clock()

    def _next(self, make):
        self._clock()
        return super()._next(make)

    def _clock(self):
        if self.spent is None and time.perf_counter() > self.deadline:
            self.spent = f"its {self.seconds:g} s are spent"
        if self.spent is not None:
            raise BudgetSpent(self.spent)


_ALLOWANCE: ContextVar = ContextVar("allowance", default=None)


@contextmanager
def allowance(seconds: float, work: int):
    """Run a check with every normal form it makes (``normalizer``) under one ``Allowance``."""
    a = Allowance(seconds, work)
    token = _ALLOWANCE.set(a)
    try:
        yield a
    finally:
        _ALLOWANCE.reset(token)


def normalizer() -> Normalizer:
    """A fresh ``Normalizer`` for one decision of a check, under the running ``allowance``."""
    a = _ALLOWANCE.get()
    if a is not None:
        a._clock()
    return Normalizer(choices=a)


def _entries(t: T.Term, idx, sizes, values):
    """The entries of ``t`` over the indices ``idx`` (sorted by name), in float64, at these
    values; None where this evaluator cannot read it."""
    try:
        return np.asarray(evaluate(Lamda(idx, t) if idx else t, sizes, values), dtype=np.float64)
    except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError, KeyError):
        return None


def _by_name(indices) -> list:
    return sorted(indices, key=lambda v: v.name)


def _pieces_nonzero(pieces, sizes, values) -> bool:
    """Every piece is clearly nonzero at every entry at these values (so none is
    identically zero); a piece this evaluator cannot read is not shown nonzero."""
    for p in pieces:
        got = _entries(p, _by_name(p.free_idx), sizes, values)
        if got is None:
            return False
        if got.size and not _holds("nonzero", got):
            return False
    return True


def _holds(kind: str, values: np.ndarray) -> bool:
    scale = 1.0 + float(np.max(np.abs(values), initial=0.0))
    if kind == "positive":
        return bool(np.all(values > ZERO_TOL * scale))
    if kind in ("nonzero", "offkink"):
        return bool(np.all(np.abs(values) > ZERO_TOL * scale))
    return True                 # 'smooth': a property of a function, not checked here


ANALYTIC_FUNCTIONS = frozenset({"exp", "log", "tanh", "erf", "sin", "cos"})
_ENTRYWISE_CONSTANT = (T.Num, T.Const, T.IntVal, T.Delta, T.IntCond)   # fixed for each entry


def piecewise_part(t: T.Term, memo: dict | None = None) -> T.Term | None:
    """A subterm that keeps ``t`` from being a real-analytic function of the real
    inputs (an indicator of real data, a max, integer data, an opaque or unknown
    function), or None when ``t`` is built only from analytic pieces. (Each shared subterm
    is looked at once: a composed network's terms share deeply.)"""
    memo = {} if memo is None else memo
    if t in memo:
        return memo[t]
    part = lambda u: piecewise_part(u, memo)  # noqa: E731
    if isinstance(t, T.Var):
        out = t if "integer" in t.facts else None
    elif isinstance(t, _ENTRYWISE_CONSTANT):
        out = None
    elif isinstance(t, T.Func):
        out = t if not isinstance(t.fn, str) or t.fn not in ANALYTIC_FUNCTIONS else _first_piecewise(t.operands, part)
    elif isinstance(t, _ARITHMETIC):
        out = _first_piecewise(_operands(t), part)
    elif isinstance(t, T.Index):
        out = part(t.base)
    elif isinstance(t, T.At):     # a composition: analytic when the body and the values are
        out = _first_piecewise((t.body, *t.values), part)
    else:
        out = t                   # RealCond, ReduceMax, Apply, Deriv, ...: not shown analytic
    memo[t] = out
    return out


_ARITHMETIC = (T.Add, T.Mul, T.Pow, T.Sum, T.Lamda)


def _operands(t: T.Term) -> tuple:
    """What a search for a piecewise part looks through in a sum, product, power, ``Sum`` or
    ``Lamda`` (an ``_ARITHMETIC`` term): its terms, its base, its body."""
    if isinstance(t, (T.Add, T.Mul)):
        return t.terms
    if isinstance(t, T.Pow):
        return (t.base,)
    return (t.body,)


PIECE_LIMIT = 16        # pieces a nonzero condition with maxima is covered by, at most


def analytic_pieces(t: T.Term) -> list | None:
    """Terms whose zero sets together cover the zero set of ``t``, built by eliminating
    from ``t`` (the condition of a ``!= 0``, as a function of the real inputs for each
    entry) what makes it only piecewise analytic, or None when that is not possible:

    - a maximum (or minimum) ``M = max_b B(b)`` over a non-empty range: at every input it
      is attained, ``M = B(j)`` for some ``j``, so wherever ``t = 0`` some
      ``t[M := B(j)]`` is 0: the zero set of ``t`` lies in the union over ``j`` of those
      (``j`` a fresh free index over the range: one piece per entry);
    - an indicator ``[v[...] > 0]`` of a variable ``v`` that ``t`` reads only through such
      indicators (a boolean mask argument): at every input it is 0 or 1, so the zero set
      lies in the union of those of ``t[[...] := 0]`` and ``t[[...] := 1]``.

    Only a piece whose free indices are free in ``t`` (so not a different value per
    entry of an enclosing sum) is eliminated, and ``t`` may bind no index that is also
    free in it. What is left must then be real-analytic (``piecewise_part``), and each
    piece not identically zero (``failing`` evaluates it): the union of finitely many
    null sets is null. An indicator of a real quantity (a relu inside a max), integer
    data or an opaque function stays, and the condition is refused."""
    if piecewise_part(t) is None:
        return [t]
    names, binders = _index_names(t)
    if binders & t.free_idx:
        return None
    masks = _mask_vars(t)
    work, done = [t], []
    while work:
        u = work.pop()
        target = _eliminable(u, u.free_idx, masks)
        if target is None:
            done.append(u)
        elif isinstance(target, T.ReduceMax):
            size = target.idx.size
            if not nonneg(size - 1):
                return None
            j = _fresh_index("j", size, names)
            work.append(_put(u, target, T.subst(target.body, {target.idx: Poly.sym(j)})))
        else:
            work += [_put(u, target, T.Num(0)), _put(u, target, T.Num(1))]
        if len(work) + len(done) > PIECE_LIMIT:
            return None
    return done


def tie_cover(t: T.Term, alive: dict | None = None) -> list | None:
    """For a ``> 0`` condition that is, in the kernel's normal form, the condition that a
    maximum ``M = max_b B(b)`` of it is attained once, ``3/2 - sum_b [B(b) - M >= 0]``
    (``[M - B(b) >= 0]`` for a minimum), however the kernel wrote it (a masked row maximum
    comes out with its mask's cases multiplied out): ``(p, b, c)`` triples whose zero sets,
    at the entries ``b != c``, cover where it fails; None when ``t`` is no such condition
    or its entries do not split into real-analytic pieces.

    It fails where two entries ``b != c`` both attain ``M``, so ``B(b) = B(c)``: the zero
    set of ``B(b) - B(c)``, covered by its ``analytic_pieces``. For the importer's maximum
    of a -inf mask, ``B(b) = [mask_b] V(b) + (1 - [mask_b]) (min_q V(q) - 1)``, where
    ``any(mask, axis)`` is assumed along ``b``'s axis: some ``b`` has ``B(b) = V(b)``,
    above ``min V - 1``, so only unmasked entries attain ``M`` and the pieces are those of
    ``V(b) - V(c)`` (without the assumption the masked entries tie with each other
    identically: a row masked throughout fails, and the condition is refused)."""
    for M in _extrema(t, t.free_idx):
        b = M.idx
        cmp = T.RealCond(M.body - M if M.kind == "max" else M - M.body, ">=")
        if not _same(t, T.Num(Fraction(3, 2)) - T.Sum(b, cmp)):
            continue
        c = _fresh_index("c", b.size, _index_names(t)[0])
        V = _alive_branch(M, alive or {}) or M.body
        cover = analytic_pieces(V - T.subst(V, {b: Poly.sym(c)}))
        if cover is None or any(piecewise_part(p) is not None for p in cover):
            return None
        return [(p, b, c) for p in cover]
    return None


def pair_cover(t: T.Term) -> list | None:
    """For a count condition ``n + 1/2 - sum_{c, d} [s_c - s_d >= 0] [s_d - s_c >= 0] > 0``
    (a vector's entries pairwise distinct: only the ``n`` diagonal pairs tie; the kernel's
    condition for an argsort's derivative): ``(p, c, d)`` triples whose zero sets, at the
    entries ``c != d``, cover where it fails (the ``analytic_pieces`` of ``s_c - s_d``);
    None when ``t`` is no such condition or the pieces are not real-analytic."""
    count = tie_count(t)
    if count is None or not isinstance(count.body, T.Sum):
        return None
    c, d, body = count.idx, count.body.idx, count.body.body
    factors = body.terms if isinstance(body, T.Mul) else (body,)
    if len(factors) != 2 or c.size != d.size or not all(isinstance(f, T.RealCond) and f.rel in (">=", "<=")
                                                       for f in factors):
        return None
    diff, other = (f.t if f.rel == ">=" else T.Num(-1) * f.t for f in factors)     # [diff >= 0] [other >= 0]
    if not (_same(other, T.Num(-1) * diff) and _same(t, T.IntVal(c.size) + T.Num(Fraction(1, 2)) - count)):
        return None
    if not (diff.free_idx - t.free_idx <= {c, d}) or {c, d} & t.free_idx:
        return None
    cover = analytic_pieces(diff)
    if cover is None or any(piecewise_part(p) is not None for p in cover):
        return None
    return [(p, c, d) for p in cover]


def _subterms(u: T.Term, keep, seen=None):
    """The subterms of ``u`` (``u`` included) that ``keep`` accepts, each once, parents
    before their children and children in order."""
    seen = set() if seen is None else seen
    if u in seen:
        return
    seen.add(u)
    if keep(u):
        yield u
    for x in _kids(u):
        yield from _subterms(x, keep, seen)


def _extrema(u: T.Term, free):
    """The maxima and minima in ``u`` whose free indices are free in the condition."""
    return _subterms(u, lambda w: isinstance(w, T.ReduceMax) and w.free_idx <= free)


def _same(a: T.Term, b: T.Term) -> bool:
    """``a = b`` for every input, by the kernel's normal form (an untrusted use of a sound
    procedure), with no side condition."""
    try:
        nz = normalizer()
        return nz.norm(a, ()) is nz.norm(b, ()) and not nz.conds
    except Exception:  # noqa: BLE001 - undecided
        return False


def _alive_branch(M: T.Term, alive: dict):
    """``V`` when ``M`` is the importer's maximum of a -inf mask whose rows are assumed
    alive along ``M``'s index: its body is ``[mask_b] V(b) + (1 - [mask_b]) (min_q V(q) - 1)``
    (checked by normal form) for a mask ``[mask[..., b, ...] > 0]`` with ``any(mask, axis)``
    assumed along the axis ``b`` indexes; else None."""
    if M.kind != "max" or not alive:
        return None
    b = M.idx
    for m in _subterms(M.body, lambda u: _is_mask(u) and u.t.base in alive):
        along = [d for d, e in enumerate(m.t.idx) if b in e.symbols()]
        if len(along) != 1 or not _alive_axis(m, b, along[0], alive):
            continue
        V, F = _put(M.body, m, T.Num(1)), _put(M.body, m, T.Num(0))
        q = _fresh_index("q", b.size, _index_names(M)[0])
        if _same(F, T.ReduceMax(q, T.subst(V, {b: Poly.sym(q)}), "min") - T.Num(1)):     # F = low, whatever b
            return V
    return None


def _index_names(t: T.Term) -> tuple[set, set]:
    """The names of every index of ``t``, free or bound, and the bound indices."""
    names, binders = set(), set()
    for u in _subterms(t, lambda _: True):
        names.update(v.name for v in u.free_idx)
        for x in _flat_args(u):
            if isinstance(x, IndexVar):
                names.add(x.name)
                binders.add(x)
            elif isinstance(x, Poly):
                names.update(v.name for v in x.index_vars())
    return names, binders


def _fresh_index(prefix: str, size, names: set) -> IndexVar:
    """An index over ``size`` named ``prefix`` and the first number that makes a name not
    in ``names``; ``names`` takes it."""
    k = 0
    while f"{prefix}{k}" in names:
        k += 1
    names.add(f"{prefix}{k}")
    return IndexVar(f"{prefix}{k}", size)


def _mask_vars(t: T.Term) -> set:
    """The real variables (not integer data) that ``t`` reads only as ``[v[...] > 0]``."""
    inside, outside, seen = set(), set(), set()

    def go(u):
        if u in seen:
            return
        seen.add(u)
        if _is_mask(u):
            inside.add(u.t.base)
            return
        if isinstance(u, T.Var):
            outside.add(u)
            return
        for x in _kids(u):
            go(x)
    go(t)
    return inside - outside


def _flat_args(u: T.Term):
    return [x for a in u._args for x in (a if isinstance(a, tuple) else (a,))]


def _kids(u: T.Term):
    return [x for x in _flat_args(u) if isinstance(x, T.Term)]


def _is_mask(u: T.Term) -> bool:
    return (isinstance(u, T.RealCond) and u.rel == ">" and isinstance(u.t, T.Index) and isinstance(u.t.base, T.Var)
            and "integer" not in u.t.base.facts)


def _eliminable(u: T.Term, free, masks):
    """The first maximum, minimum or mask indicator in ``u`` whose free indices are all
    free in the whole condition, or None."""
    return next(_subterms(u, lambda w: (isinstance(w, T.ReduceMax) or _is_mask(w) and w.t.base in masks)
                          and w.free_idx <= free), None)


def _put(u: T.Term, target: T.Term, value: T.Term) -> T.Term:
    """``u`` with every occurrence of ``target`` replaced by ``value``."""
    memo: dict = {}

    def go(w):
        if w is target:
            return value
        if w in memo:
            return memo[w]
        out = T.map_args(w, go) if _kids(w) else w
        memo[w] = out
        return out
    return go(u)


def _first_piecewise(terms, part=None):
    for a in terms:
        bad = (part or piecewise_part)(a)
        if bad is not None:
            return bad
    return None


def _about_extremum(t: T.Term) -> bool:
    """Whether ``t`` holds a maximum or minimum whose free indices are free in ``t`` (a
    count of that maximum's maximizers, not an argsort's pairs of equal entries: an
    identical pair of those is counted at every input, so any draw shows it)."""
    return next(_extrema(t, t.free_idx), None) is not None


def tie_count(t: T.Term) -> T.Term | None:
    """The count ``C`` when ``t`` is ``c - C`` for a constant ``c`` (a number, a size) and
    ``C`` a sum (over one index or more) of comparisons or products of them: the
    kernel's condition that a maximum is attained once (``3/2 - #{b: x_b = max x}``) or
    that a vector's entries are pairwise distinct (``n + 1/2 - #{(c, d): s_c = s_d}``).
    None for any other ``> 0`` condition."""
    if not isinstance(t, T.Add):
        return None
    counts = [a for a in t.terms if not isinstance(a, (T.Num, T.IntVal))]
    if len(counts) != 1 or not isinstance(m := counts[0], T.Mul) or len(m.terms) != 2:
        return None
    sign, count = m.terms if isinstance(m.terms[0], T.Num) else m.terms[::-1]
    if not (isinstance(sign, T.Num) and sign.value == -1 and isinstance(count, T.Sum)):
        return None
    body = count
    while isinstance(body, T.Sum):
        body = body.body
    factors = body.terms if isinstance(body, T.Mul) else (body,)
    comparisons = all(isinstance(f, T.RealCond) and f.rel in (">=", "<=") or type(f).__name__ == "IntEq"
                      for f in factors)
    return count if comparisons else None


BRANCH_LIMIT = 4        # indicators of a base's bound case-split at most (2^4 branches)


def positive_base(t: T.Term) -> bool:
    """Whether the base ``t`` of a ``t > 0`` condition is positive for every input. Its
    indicators of real quantities (at most BRANCH_LIMIT) are split into cases; in each
    case the base must be positive by the kernel's sign rules (``exp``, squares plus a
    positive number, positive variables: a stated ``--assume "x > 0"`` makes ``x`` one),
    or be exactly what the case's own indicators say is positive. So the guarded square
    root ``sqrt(where(x > 0, x, 1))`` passes ([x > 0] x + 1 - [x > 0] is x where x > 0
    and 1 elsewhere), and ``[x^2 < 10^8] (10^8 - x^2)``, 0 for |x| >= 10^4, does not. An
    indicator under a sum's binder takes a value per entry, so the cases would not cover
    the mixed ones: such a base is not shown positive. A condition at a reparametrized
    point (``At``) is read at that point."""
    if positive_everywhere(t):
        return True
    if isinstance(t, T.At):
        try:
            t = T.subst(t.body, dict(zip(t.params, t.values)))
        except Exception:  # noqa: BLE001 - not a plain substitution: not shown
            return False
    conds = sorted(set(_real_indicators(t)), key=lambda c: c.skey)
    if len(conds) > BRANCH_LIMIT or any(not c.free_idx <= t.free_idx for c in conds):
        return False        # too many cases, or an indicator under a binder: one value per entry, not one in all
    nz = normalizer()
    for bits in range(2 ** len(conds)):
        case = {c: (bits >> k) & 1 for k, c in enumerate(conds)}
        base = _replaced(t, {c: T.Num(v) for c, v in case.items()})
        got = nz.norm(base, ())
        if nz.sign(base) == "pos" or got.positive:
            continue
        premises = [_positive_side(c, v) for c, v in case.items()]
        if not any(q is not None and nz.norm(q, ()) is got for q in premises):
            return False
    return not nz.conds


def _real_indicators(t: T.Term):
    return _subterms(t, lambda u: isinstance(u, T.RealCond))


def _replaced(t: T.Term, table: dict) -> T.Term:
    if t in table:
        return table[t]
    if not any(c in table for c in _real_indicators(t)):
        return t
    return T.map_args(t, lambda a: _replaced(a, table))


def _positive_side(c: T.RealCond, value: int):
    """A term the case ``[c] = value`` says is positive, or None (a non-strict bound)."""
    strict = {(">", 1): 1, ("<", 1): -1, ("<=", 0): 1, (">=", 0): -1}.get((c.rel, value))
    return None if strict is None else (c.t if strict == 1 else T.Num(-1) * c.t)


def tie_piecewise_part(t: T.Term) -> T.Term | None:
    """For a ``> 0`` condition: the first subterm that keeps its failure set from being
    shown null. Such a condition counts ties (``3/2 - #{b: x_b = max x} > 0`` off a
    max's ties, pairs of equal entries off an argsort's) or bounds a base. Its
    comparisons are allowed, but what they compare must be real-analytic, maxima of
    real-analytic entries included: the ties of ``max(x, -100)`` fill the region where
    every entry is below -100, which no sample reaches."""
    if isinstance(t, T.RealCond) or type(t).__name__ == "IntEq":     # IntEq: verigrad.kernel.permutation's [t == p]
        return _compared_part(t.t)
    if isinstance(t, _ENTRYWISE_CONSTANT):
        return None
    if isinstance(t, _ARITHMETIC):
        return _first_piecewise(_operands(t), tie_piecewise_part)
    return piecewise_part(t)


def _compared_part(t: T.Term) -> T.Term | None:
    """What keeps a compared quantity from being real-analytic, maxima of real-analytic
    entries allowed (``tie_piecewise_part``), or None."""
    if isinstance(t, T.ReduceMax):
        return piecewise_part(t.body)
    if isinstance(t, _ARITHMETIC):
        return _first_piecewise(_operands(t), _compared_part)
    return piecewise_part(t)


def positive_everywhere(t: T.Term) -> bool:
    """Whether ``t`` is positive at every input, by its structure: ``exp`` of anything,
    positive numbers and variables, products and powers of positive terms, sums of
    non-negative terms one of which is positive, and a sum over ``b`` of a positive body
    times indicators of index arithmetic that some ``b`` of the range satisfies for every
    value of the free indices (a causal mask's ``[i - b >= 0]`` at ``b = 0``). A ``!= 0``
    condition on such a term never fails."""
    if isinstance(t, T.Func):
        return t.fn == "exp"
    if isinstance(t, T.Num):
        return t.value > 0
    if isinstance(t, T.Const):
        return True
    if isinstance(t, T.Var):
        return "positive" in t.facts
    if isinstance(t, T.Index):
        return not t.total and positive_everywhere(t.base)
    if isinstance(t, T.Lamda):
        return positive_everywhere(t.body)
    if isinstance(t, T.Mul):
        return all(positive_everywhere(a) for a in t.terms)
    if isinstance(t, T.Pow):
        return positive_everywhere(t.base)
    if isinstance(t, T.Add):
        return all(_nonneg_everywhere(a) for a in t.terms) and any(positive_everywhere(a) for a in t.terms)
    if isinstance(t, T.Sum):
        factors = t.body.terms if isinstance(t.body, T.Mul) else (t.body,)
        windows = [f for f in factors if isinstance(f, T.IntCond)]
        if not all(f in windows or positive_everywhere(f) for f in factors):
            return False
        size = t.idx.size
        candidates = [Poly.const(0), size - 1] + [Poly.sym(v) for v in t.free_idx if v.size is size]
        return any(nonneg(b) and nonneg(size - 1 - b) and all(_holds_at(w, t.idx, b) for w in windows)
                   for b in candidates)
    return False


def _holds_at(w: T.IntCond, b, value: Poly) -> bool:
    """The index comparison ``w`` provably holds with ``b := value``."""
    a, c = w.a.subst({b: value}), w.b.subst({b: value})
    return nonneg({"<": c - a - 1, "<=": c - a, ">": a - c - 1, ">=": a - c}[w.rel])


def _nonneg_everywhere(t: T.Term) -> bool:
    if positive_everywhere(t) or isinstance(t, (T.RealCond, T.IntCond, T.Delta)):
        return True
    if isinstance(t, T.Num):
        return t.value >= 0
    if isinstance(t, T.Var):
        return "nonneg" in t.facts
    if isinstance(t, T.Pow):
        e = t.exponent
        return _nonneg_everywhere(t.base) or (e.denominator == 1 and e.numerator % 2 == 0)
    if isinstance(t, (T.Mul, T.Add)):
        return all(_nonneg_everywhere(a) for a in t.terms)
    if isinstance(t, (T.Sum, T.Lamda)):
        return _nonneg_everywhere(t.body)
    if isinstance(t, T.Index):
        return _nonneg_everywhere(t.base)
    return False


def positive_at_every_input(t: T.Term, alive: dict | None = None) -> bool:
    """Positive at every input that meets the assumptions: a product of factors each
    positive by structure or by an ``any(mask, axis)`` assumption."""
    if isinstance(t, T.Mul):
        return all(positive_at_every_input(a, alive) for a in t.terms)
    return positive_everywhere(t) or positive_by_assumption(t, alive)


def positive_by_assumption(t: T.Term, alive: dict) -> bool:
    """Whether ``t`` is positive for every input that meets the assumptions: a sum over
    ``b`` of a product of positive factors (``exp``, positive numbers and variables) and
    one mask entry ``[mask[..., b, ...] > 0]``, where ``any(mask, axis)`` is assumed along
    ``b``'s axis (a masked softmax's denominator): some term of the sum is positive."""
    if not isinstance(t, T.Sum) or not alive:
        return False
    b, factors = t.idx, (t.body.terms if isinstance(t.body, T.Mul) else (t.body,))
    masks = [f for f in factors if isinstance(f, T.RealCond)]
    if len(masks) != 1 or not all(f is masks[0] or _positive_factor(f) for f in factors):
        return False
    m = masks[0]
    if m.rel != ">" or not isinstance(m.t, T.Index) or m.t.base not in alive:
        return False
    along = [d for d, e in enumerate(m.t.idx) if b in e.symbols()]
    return (len(along) == 1 and _alive_axis(m, b, along[0], alive)
            and not any(b in c.free_idx for c in factors if c is not m and isinstance(c, T.RealCond)))


def _alive_axis(m: T.RealCond, b, axis: int, alive: dict) -> bool:
    """Whether the mask entry ``m`` is read at ``b`` along an axis assumed alive, with
    ``b`` ranging over that whole axis: ``any(mask, axis)`` says nothing of a part of a
    row (red team RT-18: the max over ``mask[:, :k]`` of a wider mask, a slice that may be
    all false while the whole row is not)."""
    return (m.t.idx[axis] == Poly.sym(b) and axis in alive[m.t.base]
            and b.size == m.t.base.shape[axis])


def _positive_factor(f: T.Term) -> bool:
    if isinstance(f, T.Func):
        return f.fn == "exp"
    if isinstance(f, T.Num):
        return f.value > 0
    if isinstance(f, T.Const):
        return True                 # pi
    if isinstance(f, T.Var):
        return "positive" in f.facts
    return False


def failing(theorem, sample, plans, draws: int = DRAWS, alive: dict | None = None) -> str | None:
    """The first side condition of ``theorem`` that fails at a random input, in words;
    None when each holds at every draw. ``sample(sizes, rng)`` gives values for the
    variables (respecting their kinds); ``plans`` are size assignments."""
    conds = [c for c in sorted(theorem.conds, key=lambda c: (c.kind, c.term.skey)) if c.kind != "smooth"]
    if not conds:
        return None
    pieces: dict = {}           # condition -> the analytic terms whose zero sets cover its own
    if (why := unshown(conds, alive, pieces)) is not None:
        return why
    return _sampled(conds, pieces, sample, plans, draws)


def unshown(conds, alive: dict | None = None, pieces: dict | None = None) -> str | None:
    """The first of ``conds`` (none ``smooth``) not *shown* to fail only on a set of
    measure zero by the symbolic criteria above, in words; None when each is.
    ``pieces`` (optional) receives, for a ``!= 0`` condition covered by analytic pieces,
    those pieces (which ``failing`` also evaluates at its draws)."""
    pieces = {} if pieces is None else pieces
    for c in conds:
        if c.kind in ("nonzero", "offkink"):
            shown = positive_at_every_input(c.term, alive or {})
            bad = None if shown else piecewise_part(c.term)
            if bad is not None and (cover := analytic_pieces(c.term)) is not None \
                    and all(piecewise_part(p) is None for p in cover):
                bad, pieces[c] = None, cover
            if bad is None and not shown:
                # not identically zero, for every size and every entry: shown symbolically
                # (nonzero_null), never by draws, which see only the sampled sizes
                for p in pieces.get(c, [c.term]):
                    if (why := nonzero_null(p)) is not None:
                        what = ("one of the analytic pieces covering its zero set (a maximum replaced by one of "
                                "its entries, a mask by 0 or 1)" if c in pieces else "it")
                        return (f"the side condition {c} is not shown to fail only on a set of measure zero: "
                                f"{what} may be identically zero at some entry, at some size ({why})")
        elif tie_count(c.term) is not None:
            bad = tie_piecewise_part(c.term)
            if bad is None and not _about_extremum(c.term):
                # a vector's pairwise distinct entries (an argsort's condition): an identical
                # pair fails it at every input, but draws see only the sampled sizes; so each
                # pair is shown apart symbolically, for every size (ties_null)
                if (cover := pair_cover(c.term)) is None:
                    return (f"the side condition {c} (pairwise distinct entries) is not shown to fail only on a "
                            "set of measure zero: its pairs do not split into real-analytic differences that "
                            "could be shown apart")
                if (why := ties_null(cover)) is not None:
                    return (f"the side condition {c} (pairwise distinct entries) is not shown to fail only on a "
                            f"set of measure zero: two of its entries may agree identically, at some size ({why})")
            elif bad is None:
                # the count of a maximum's maximizers: an identical pair of entries makes
                # it fail only where the pair attains the maximum, which may be a region no
                # draw reaches, and only at sizes no plan samples; so every pair is shown
                # apart symbolically, for every size (ties_null)
                if (cover := tie_cover(c.term, alive)) is None:
                    return (f"the side condition {c} (a maximum attained once) is not shown to fail only on a "
                            "set of measure zero: its entries do not split into real-analytic pairs whose "
                            "differences could be shown apart")
                if (why := ties_null(cover)) is not None:
                    return _agree(c, why)
        elif positive_base(c.term) or positive_at_every_input(c.term, alive or {}):
            bad = None
        elif (cover := tie_cover(c.term, alive)) is not None:
            if (why := ties_null(cover)) is not None:
                return _agree(c, why)
            bad = None
        else:               # a base that must be positive, and is not shown to be
            return (f"the side condition {c} (a base that must be positive) is not shown to hold almost "
                    "everywhere; if the inputs satisfy it, state it as a precondition (--assume)")
        if bad is not None:
            return (f"the side condition {c} is not shown to fail only on a set of measure zero: {bad} "
                    "makes it piecewise, and a piecewise quantity can vanish on a whole region")
    return None


def _sampled(conds, pieces, sample, plans, draws) -> str | None:
    """The first of ``conds`` that fails at a random input (or whose analytic pieces
    vanish at one), or that no draw could evaluate; None when each holds at every draw."""
    seen = set()            # the nonzero conditions evaluated at least once: not identically 0
    for k, sizes in enumerate(plans):
        where = ", ".join(f"{s.name}={v}" for s, v in sizes.items()) or "no sizes"
        for d in range(draws):
            rng = np.random.default_rng(1000 * k + d + 17)
            values = sample(sizes, rng)
            for c in conds:
                got = _entries(c.term, _by_name(c.term.free_idx), sizes, values)
                if got is None:
                    continue        # a condition this evaluator cannot read is not held against it
                if got.size and not _holds(c.kind, got):
                    return (f"the side condition {c} fails at random inputs ({where}, draw {d}): it excludes "
                            "a set of positive measure, so the claim is not shown for almost every input")
                if c in pieces and not _pieces_nonzero(pieces[c], sizes, values):
                    return (f"the side condition {c} is not shown to fail only on a set of measure zero: one of "
                            f"the analytic pieces covering its zero set (a maximum replaced by one of its entries, "
                            f"a mask by 0 or 1) vanishes at a random input ({where}, draw {d}), so it may be 0 "
                            "on a whole region")
                seen.add(c)
    for c in conds:
        if c.kind in ("nonzero", "offkink") and c not in seen:
            return (f"the side condition {c} could not be evaluated at any draw, so it is not shown to be "
                    "other than identically zero")
    return None


def _agree(c, why: str) -> str:
    return (f"the side condition {c} (a maximum attained once) is not shown to fail only on a set of measure "
            f"zero: two of its entries may agree identically, at some size, and then tie on a whole region ({why})")


# -- ties apart at every size -----------------------------------------------------------------

def ties_null(cover) -> str | None:
    """None when every ``(p, b, c)`` triple of a tie cover is shown not identically zero at
    the entries ``b != c``, for every value of its free indices and every size (so, being
    real-analytic, ``p`` vanishes only on a null set there); else why one is not shown.

    A sufficient criterion, shown symbolically (sampled sizes could never show "every
    size": a pair ``B(40) = B(41)`` exists only from ``n = 21``). ``p``'s normal form reads
    some real input ``x`` only at entries whose coordinate on one axis is ``b + r`` or
    ``c + r`` (``r`` one integer expression, free of ``b``, ``c`` and of bound indices), so
    the entries read on ``b``'s side and on ``c``'s are different entries for ``b != c``;
    and ``p``'s partial derivative in one entry ``E`` read on ``b``'s side (the kernel's
    derivative, an untrusted use of a sound procedure; the terms through ``c``'s reads carry
    ``delta(b - c)``, 0 there) is ``P * m``: one integer polynomial ``P`` in indices and
    sizes that the size oracle shows nonzero over their whole ranges (``sizes.positive``
    of ``P`` or ``-P``) times one product ``m`` of real-analytic factors none identically
    zero (input entries inside their shapes, ``exp`` and other atoms the kernel shows
    positive). A bound index in ``E`` becomes a fresh free one over its range, shown
    non-empty, so ``E`` is an entry ``p`` truly reads. Then ``p``'s partial in ``E`` is not
    identically zero, so neither is ``p``. What this does not show is refused."""
    for p, b, c in cover:
        why = _apart(p, b, c)
        if why is not None:
            return why
    return None


def _apart(p: T.Term, b: IndexVar, c: IndexVar) -> str | None:
    from verigrad.kernel.normal import EntryA
    nz = normalizer()
    try:
        u = nz.norm(p, ())
    except Exception as e:  # noqa: BLE001 - not normalized: not shown
        return f"{p} has no normal form here ({type(e).__name__})"
    if nz.conds:
        return f"{p} is defined only under conditions of its own"
    own = p.free_idx - {b, c}
    reads: dict = {}
    opaque: set = set()
    for a in _nf_atoms(u):
        if isinstance(a, EntryA):
            reads.setdefault(a.var, set()).add(a.idx)
        else:           # variables an atom reads other than through the atoms walked into
            opaque |= a.tvars.difference(*(x.tvars for x in _atom_args(a) if hasattr(x, "tvars")))
    for x in sorted(reads, key=lambda v: v.skey):
        if not isinstance(x, T.Var) or "integer" in x.facts or x in opaque:
            continue
        for d in range(len(x.shape)):
            offsets = {_offset(e[d], b, c, own) for e in reads[x]}
            if len(offsets) != 1 or None in offsets:
                continue        # some read of x on this axis is not at b + r or c + r, one r
            for e in sorted(reads[x], key=lambda e: [q.skey for q in e]):
                if e[d] - Poly.sym(b) in offsets and _partial_shown(nz, u, x, e, b, c, own):
                    return None
    return (f"{p} is not shown other than identically zero at every size: no input entry is read on b's side "
            "alone (an axis at b + r, r free of b) with a partial derivative shown nonzero")


def _offset(e: Poly, b, c, own):
    """``r`` when ``e`` is ``b + r`` or ``c + r`` with ``r`` built of sizes and the indices
    ``own`` only, else None."""
    for v in (b, c):
        r = e - Poly.sym(v)
        if all(isinstance(s, SizeSym) or s in own or isinstance(s, FloorDiv) for s in r.symbols()):
            return r
    return None


def _partial_shown(nz, u, x, e, b, c, own) -> bool:
    """Whether ``d u / d x[E]`` is shown not identically zero at ``b != c``, ``E`` being the
    read ``e`` with its bound indices made fresh free ones (over non-empty ranges)."""
    du = _partial(nz, u, x, e, own | {b, c})
    apart = {Poly.sym(b) - Poly.sym(c), Poly.sym(c) - Poly.sym(b)}
    return du is not None and _one_term_shown(du, apart)


def _partial(nz, u, x, e, own):
    """``d u / d x[E]`` in normal form, ``E`` the read ``e`` with its indices other than
    ``own`` made fresh free ones over non-empty ranges and inside ``x``'s shape; None when
    that is not so, or the derivative needs conditions of its own."""
    from verigrad.kernel.derivative import derivative
    fresh = {}
    for v in sorted(set().union(*(q.index_vars() for q in e)) - set(own), key=lambda v: v.skey):
        if not nonneg(v.size - 1):
            return None
        fresh[v] = Poly.sym(fresh_index(v.size, "e"))
    E = tuple(q.subst(fresh) for q in e)
    if not all(nonneg(q) and nonneg(s - 1 - q) for q, s in zip(E, x.shape)):
        return None
    try:
        du = derivative(nz, u, x, E)
    except Exception:  # noqa: BLE001 - no derivative: not shown
        return None
    return None if nz.conds else du


def _one_term_shown(du, apart=frozenset(), opaque=frozenset()) -> bool:
    """Whether the normal form ``du`` is shown not identically zero, for every value of its
    indices and every size: dropping the terms with a delta of ``apart`` (0 there), it is
    ``P * m``, one integer polynomial ``P`` in indices and sizes that the size oracle shows
    nonzero over their ranges (``P`` or ``-P`` at least 1) times one product ``m`` of
    factors none identically zero: real input entries inside their shapes, to whole powers,
    and atoms the kernel shows positive. An entry of an ``opaque`` variable is no such factor
    (it may be 0: a region's pattern of indicators)."""
    from verigrad.kernel.normal import DeltaA, EntryA, IntA
    groups: dict = {}           # the product of non-polynomial factors -> its polynomial coefficient
    for m, k in du.terms:
        if any(isinstance(a, DeltaA) and a.p in apart for a, _ in m.factors):
            continue            # through a read on c's side: 0 at b != c
        poly, rest = Poly.const(1), {}
        for a, n in m.factors:
            if isinstance(a, IntA) and n.denominator == 1 and n > 0:
                for _ in range(int(n)):
                    poly = poly * Poly.sym(a.sym)
            else:
                rest[a] = n
        key = tuple(sorted(rest.items(), key=lambda an: an[0].skey))
        groups.setdefault(key, []).append((Fraction(k), poly))
    live = {}
    for key, parts in groups.items():
        scale = 1
        for k, _ in parts:
            scale = scale * k.denominator // gcd(scale, k.denominator)
        P = Poly.const(0)
        for k, q in parts:
            P = P + Poly.const(int(k * scale)) * q
        if P.terms:
            live[key] = P
    if len(live) != 1:
        return False            # none, or several: their sum is not shown nonzero
    (key, P), = live.items()
    if not (positive(P) or positive(-P)):
        return False
    for a, n in key:
        if isinstance(a, EntryA):
            if not (isinstance(a.var, T.Var) and "integer" not in a.var.facts and a.var not in opaque
                    and Fraction(n).denominator == 1
                    and all(nonneg(q) and nonneg(s - 1 - q) for q, s in zip(a.idx, a.var.shape))):
                return False
        elif not a.positive:
            return False
    return True


# -- a nonzero condition not identically zero at every size ------------------------------------

PARTIAL_LIMIT = 32      # derivatives taken, at most, to show one piece of a nonzero condition not identically zero


def nonzero_null(p: T.Term, opaque=frozenset()) -> str | None:
    """None when the real-analytic ``p`` (a ``!= 0`` condition, or one of its
    ``analytic_pieces``) is shown not identically zero as a function of the real inputs,
    for every value of its free indices and every size (so it vanishes only on a null
    set); else why not. Sampled sizes could never show this: ``(b - 40)(b - 41) x[b]`` is
    identically 0 at ``b = 40, 41``, entries that exist only from ``n = 42``.

    A sufficient criterion, shown symbolically: ``p``'s normal form (the kernel's, an
    untrusted use of a sound procedure, with no condition of its own), or one of its
    partial derivatives of order one or two in input entries it reads (the kernel's
    derivative; a bound index of the entry made a fresh free one over a range shown
    non-empty, so the entry is one ``p`` truly reads), is ``P * m`` as ``_one_term_shown``
    says: one integer polynomial in indices and sizes that the size oracle shows nonzero
    over their whole ranges times input entries and positive atoms. A partial derivative
    not identically zero makes ``p`` not identically zero on any open set. ``opaque``:
    variables that stand for constants of unknown value (never differentiated in, never a
    factor counted nonzero)."""
    from verigrad.kernel.normal import EntryA

    def start():
        nz = normalizer()
        try:
            u = nz.norm(p, ())
        except Exception:  # noqa: BLE001 - not normalized: not shown
            return nz, None
        return nz, (None if nz.conds else u)

    nz, u = start()
    if u is None:
        return f"{p} has no normal form here without conditions of its own"
    if _one_term_shown(u, opaque=opaque):
        return None
    own = frozenset(p.free_idx)
    budget = [PARTIAL_LIMIT]

    def reads(w):
        out, hidden = [], set()
        for a in _nf_atoms(w):
            if isinstance(a, EntryA):
                out.append((a.var, a.idx))
            else:
                hidden |= a.tvars.difference(*(x.tvars for x in _atom_args(a) if hasattr(x, "tvars")))
        return sorted({(x, e) for x, e in out if isinstance(x, T.Var) and "integer" not in x.facts
                       and x not in opaque and x not in hidden}, key=lambda xe: (xe[0].skey, [q.skey for q in xe[1]]))

    def shown(w, depth):
        nonlocal nz, u
        for x, e in reads(w):
            if budget[0] <= 0:
                return False
            budget[0] -= 1
            du = _partial(nz, w, x, e, own | _free_of(w))
            if du is None:
                if nz.conds:        # a derivative needing conditions: start afresh for the others
                    nz, u = start()
                    if u is None or depth:
                        return False
                    w = u
                continue
            if not du.terms:
                continue
            if _one_term_shown(du, opaque=opaque) or depth == 0 and shown(du, 1):
                return True
        return False

    if shown(u, 0):
        return None
    return (f"{p} is not shown other than identically zero at every size: neither it nor a partial derivative "
            "in an input entry it reads is one integer polynomial in indices and sizes shown nonzero times input "
            "entries and positive atoms")


def _free_of(w) -> frozenset:
    """The index variables free in the normal form ``w``."""
    return frozenset(getattr(w, "ivars", ()) or ())


def _atom_args(a):
    return [x for y in a._args for x in (y if isinstance(y, tuple) else (y,))]


def _nf_atoms(u):
    """Every atom in the normal form ``u``, at any depth (in sums, functions, maxima)."""
    from verigrad.kernel.normal import NF, Mono, TensorNF
    from verigrad.kernel.normal import Atom
    seen, stack = set(), [u]
    while stack:
        w = stack.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        if isinstance(w, NF):
            stack += [m for m, _ in w.terms]
        elif isinstance(w, Mono):
            stack += [a for a, _ in w.factors]
        elif isinstance(w, TensorNF):
            stack.append(w.u)
        elif isinstance(w, Atom):
            yield w
            stack += [x for x in _atom_args(w) if isinstance(x, (NF, Mono, TensorNF, Atom))]
