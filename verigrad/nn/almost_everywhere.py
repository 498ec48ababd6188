r"""Where a composed network's certificate speaks (untrusted; it can only withhold one).

A layer's theorem holds under side conditions: relu's ``x != 0`` off its kink, a max
pool's ``a - b != 0`` off its ties. Certified alone, each condition is shown to fail
only on a set of measure zero of the layer's inputs (``certify.conditions``). Composition
carries the conditions through the substitution of each layer's input by what the layers
before it compute, as it must, and that can turn a null set into a set of positive
measure, or into everything (red team RT15): ``dup(x) = [x, x]`` then a pair maximum whose
ties send nothing gives the condition ``h - h != 0``, false at every input; a max pool over
relu outputs ties wherever a window's four inputs are negative. The theorem is still true,
but about too little: the backward may be wrong exactly where it is silent. So a
network is certified only when each condition of its composed theorems, as a function of
the network's input and parameters, is *shown* to fail only on a null set:

- the condition with every ``At`` expanded (``expanded``): a term in the network's input
  and parameters;
- a term positive at every input passes (``positive_at_every_input``);
- **regions**: an indicator ``[v > 0]`` of real data (a relu's mask, a max pool's
  comparison) is replaced by a fresh variable ``s_v`` (``[v <= 0]`` by ``1 - s_v``, the
  same off ``v = 0``), giving ``u_s``. Off the zero sets of the indicators' arguments,
  which are shown null first (recursively, by this same criterion), the inputs fall in
  open regions on which every indicator is constant, and there ``u = u_s`` for constant
  ``s``. So ``u`` vanishes only on a null set if ``u_s`` is not identically zero *for every*
  ``s``: its normal form, or its partial derivative in an input entry that one of its
  monomials has as a factor, is one term shown nonzero (``conditions._one_term_shown``)
  with the ``s`` variables opaque (never differentiated in, never a factor counted
  nonzero, since a pattern may make it 0). A
  relu after a dense layer, a convolution or a batch norm passes by the partial in the
  bias (1, whatever the pattern); the tie of a max pool over relu outputs does not (its
  partials carry the pattern), nor does ``h - h``;
- **per example**: an analytic condition (no indicator left) that reads the batch only at
  its own example ``i`` (every input entry it reads is at ``[i, ...]``, no sum over the
  batch, no other size) is, for each of its other (concrete) entries, the same function of
  that example and the parameters at every batch size and every ``i``; one draw at batch 1
  where every entry is clearly nonzero shows each not identically zero (an analytic
  function nonzero at a point vanishes only on a null set). A max pool's tie over a
  convolution's outputs passes so. The draw is float64: an entry must be clear of 0 by a
  margin relative to the largest (``MARGIN``) and stay put when the inputs move by a
  relative ``NUDGE`` (rounding noise of an identically zero term does not);
- **splits**: an indicator that is one value per entry (a max pool's comparisons) is
  split into its two cases, each piece checked as above (at most ``SPLIT_LIMIT`` of them);
- **shifts**: ``c * b[e] + rest`` with ``b`` nowhere in ``rest`` (a bias) vanishes at one value
  of ``b[e]`` for any values of the rest, so on a null set (Fubini), whatever ``rest`` is.

What this does not show is refused, with the condition named.
"""
from __future__ import annotations

import itertools

import numpy as np

from verigrad.certify import conditions as C
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, SizeSym, nonneg
from verigrad.kernel.theorem import Condition

MARGIN = 1e-6       # an entry within this of 0 (relative to the largest, plus 1) is not shown nonzero
DRAWS = 2
NUDGE = 1e-9        # relative move of the inputs at which a nonzero value must stay put
STEADY = 1e-4       # ... within this, relative


def expanded(t: T.Term, cache: dict) -> T.Term:
    """``t`` with every ``At(body, params, values)`` replaced by the body with the params
    substituted (only those it reads: a value may hold derivatives in other params). Right
    for a condition's term, whose bodies hold no derivative in their params (``subst``
    refuses to substitute a derivative's variable)."""
    hit = cache.get(t)
    if hit is not None:
        return hit
    if isinstance(t, T.At):
        body = expanded(t.body, cache)
        out = T.subst(body, {p: expanded(v, cache) for p, v in zip(t.params, t.values) if p in body.atoms})
    elif t.has_at:
        out = T.map_args(t, lambda k: expanded(k, cache))
    else:
        out = t
    cache[t] = out
    return out


def composed_conditions(theorems) -> list:
    """The side conditions of ``theorems`` (other than ``smooth``), expanded, each once."""
    cache, out = {}, {}
    for th in theorems:
        for c in th.conds:
            if c.kind != "smooth":
                u = expanded(c.term, cache)
                out.setdefault((c.kind, u), Condition(c.kind, u))
    return sorted(out.values(), key=lambda c: (c.kind, c.term.skey))


def unshown(theorems) -> str | None:
    """Why a composed side condition of ``theorems`` is not shown to fail only on a set of
    measure zero, or None when each is."""
    try:
        conds = composed_conditions(theorems)
    except Exception as e:  # noqa: BLE001 - not expanded: not shown
        return f"a side condition could not be read as a function of the network's inputs ({type(e).__name__}: {e})"
    memo: dict = {}
    for c in conds:
        if c.kind in ("nonzero", "offkink"):
            why = _null(c.term, memo)
        else:
            why = C.unshown([c])
        if why is not None:
            return (f"the side condition {_short(c)} of the composed network is not shown to fail only on a set "
                    f"of measure zero of its inputs ({_short(why, 600)})")
    return None


def _short(x, n: int = 300) -> str:
    s = str(x)
    return s if len(s) <= n else s[:n] + " ..."


def _null(u: T.Term, memo: dict) -> str | None:
    """None when the zero set of ``u`` (for every value of its free indices and every size)
    is shown null; else why not."""
    if u in memo:
        return memo[u]
    memo[u] = "it depends on itself"          # (no cycle is possible; a guard all the same)
    memo[u] = why = _null_uncached(u, memo)
    return why


def _null_uncached(u: T.Term, memo: dict) -> str | None:
    if _shifted(u) or C.positive_at_every_input(u):
        return None
    outer = _outer_arguments(u)
    if len(outer) > SPLIT_LIMIT:
        return f"it compares more than {SPLIT_LIMIT} quantities at each entry"
    for v in outer:
        if (why := _null(v, memo)) is not None:
            return f"the argument {_short(v)} of one of its indicators: {why}"
    for pattern in itertools.product((0, 1), repeat=len(outer)):
        piece = _with_pattern(u, dict(zip(outer, pattern)))
        split = _regions(piece)
        if split is None:
            return "its indicators could not be split into regions"
        us, inner, opaque = split
        for v in inner:
            if (why := _null(v, memo)) is not None:
                return f"the argument {_short(v)} of one of its indicators: {why}"
        if (bad := C.piecewise_part(us)) is not None:
            if opaque or outer:
                return f"{_short(bad)} makes it piecewise beyond its indicators"
            return C.unshown([Condition("nonzero", u)])     # maxima and masks, as certify takes them
        if not (_outer_partial_shown(us, opaque) or not opaque and _per_example_nonzero(us)):
            where = f" where its comparisons come out {list(pattern)}" if outer else ""
            return ("neither a partial derivative in an input entry it reads outside its other terms is shown "
                    "nonzero whatever the pattern of its indicators, nor is it per example and nonzero at random "
                    f"inputs{where}")
    return None


SPLIT_LIMIT = 4     # indicators constant across an entry, split into cases (2^4 pieces), at most


def _outer_arguments(u: T.Term) -> list:
    """The arguments ``v`` of the indicators ``[v rel 0]`` in ``u`` that are one value per
    entry of ``u`` (their free indices are free in ``u``), each once, in order."""
    free = u.free_idx
    seen, out = set(), []
    for w in C._subterms(u, lambda w: isinstance(w, T.RealCond) and w.free_idx <= free):
        if w.t not in seen:
            seen.add(w.t)
            out.append(w.t)
    return out


def _with_pattern(u: T.Term, pattern: dict) -> T.Term:
    """``u`` with ``[v > 0]`` and ``[v >= 0]`` replaced by ``pattern[v]`` and ``[v < 0]``,
    ``[v <= 0]`` by ``1 - pattern[v]``: its value wherever the indicators take that
    pattern, off the zero sets of their arguments."""
    memo: dict = {}

    def go(w):
        hit = memo.get(w)
        if hit is None:
            if isinstance(w, T.RealCond) and w.t in pattern:
                hit = T.Num(pattern[w.t] if w.rel in (">", ">=") else 1 - pattern[w.t])
            else:
                hit = T.map_args(w, go) if C._kids(w) else w
            memo[w] = hit
        return hit
    return go(u) if pattern else u


def _shifted(u: T.Term) -> bool:
    """Whether ``u`` is ``c * b[e] + rest`` for a number ``c != 0``, an entry ``b[e]`` of a real
    variable inside its shape for every value of ``u``'s free indices, and a ``rest`` in which
    ``b`` does not occur (a bias, a batch norm's shift). Then for any values of the other
    variables ``u`` vanishes at one value of ``b[e]`` only, so (Fubini) on a null set, whatever
    ``rest`` is: indicators, maxima and all. Read through sums and ``Lamda[...](...)[...]``."""
    terms = _addends(u)
    for k, a in enumerate(terms):
        c, e = (a.terms if isinstance(a, T.Mul) and len(a.terms) == 2 and isinstance(a.terms[0], T.Num)
                else (T.Num(1), a))
        if not (isinstance(c, T.Num) and c.value != 0):
            continue
        if isinstance(e, T.Index) and isinstance(e.base, T.Var):
            b, idx = e.base, e.idx
        elif isinstance(e, T.Var) and not e.shape:
            b, idx = e, ()
        else:
            continue
        if "integer" in b.facts or not all(nonneg(q) and nonneg(s - 1 - q) for q, s in zip(idx, b.shape)):
            continue
        if all(b not in o.atoms for j, o in enumerate(terms) if j != k):
            return True
    return False


def _addends(u: T.Term) -> list:
    """The terms of the sum ``u`` is, through nested sums and entries of a ``Lamda`` read
    inside its ranges (an entry read outside them is 0 when total: not unfolded)."""
    if isinstance(u, T.Index) and isinstance(u.base, T.Lamda):
        base, idx, total = u._args
        binders, body = base._args
        inside = all(nonneg(q) and nonneg(v.size - 1 - q) for q, v in zip(idx, binders))
        if len(idx) == len(binders) and (inside or not total):
            return _addends(T.subst(body, dict(zip(binders, idx))))
        return [u]
    if isinstance(u, T.Add):
        return [a for t in u.terms for a in _addends(t)]
    return [u]


def _outer_partial_shown(u: T.Term, opaque) -> bool:
    """Whether ``u``'s normal form, or its partial derivative in an input entry it reads as
    a factor of one of its monomials (not inside a sum or a function: a bias, a batch
    norm's shift), is shown not identically zero by ``conditions._one_term_shown``, whatever
    the ``opaque`` variables are. (``conditions.nonzero_null`` takes partials in every entry
    read, to second order: minutes on a composed network.)"""
    from verigrad.kernel.normal import EntryA, Normalizer
    nz = Normalizer()
    try:
        w = nz.norm(u, ())
    except Exception:  # noqa: BLE001 - no normal form: not shown
        return False
    if nz.conds:
        return False
    if C._one_term_shown(w, opaque=opaque):
        return True
    own = frozenset(u.free_idx) | C._free_of(w)
    reads = {(a.var, a.idx) for m, _ in w.terms for a, _ in m.factors
             if isinstance(a, EntryA) and isinstance(a.var, T.Var) and "integer" not in a.var.facts
             and a.var not in opaque}
    for x, e in sorted(reads, key=lambda xe: (xe[0].skey, [q.skey for q in xe[1]])):
        du = C._partial(nz, w, x, e, own)
        if du is not None and du.terms and C._one_term_shown(du, opaque=opaque):
            return True
        if nz.conds:
            return False
    return False


def _regions(u: T.Term):
    """``(u_s, arguments, s variables)``: ``u`` with each indicator ``[v rel 0]`` of real
    data replaced by an entry of a fresh variable ``s_v`` (``1 - s_v`` for ``<``, ``<=``), the
    arguments ``v``, and the fresh variables; None when an indicator's free indices range
    over sizes that mention other indices (no variable has such a shape)."""
    made: dict = {}                 # v -> its region variable
    args: list = []
    memo: dict = {}
    bad = []

    def go(w):
        hit = memo.get(w)
        if hit is not None:
            return hit
        if isinstance(w, T.RealCond):
            out = indicator(w)
        elif C._kids(w):
            out = T.map_args(w, go)
        else:
            out = w
        memo[w] = out
        return out

    def indicator(w):
        v = w.t
        free = sorted(v.free_idx, key=lambda i: i.name)
        if any(i.size.index_atoms() for i in free):
            bad.append(w)
            return w
        s = made.get(v)
        if s is None:
            s = made[v] = T.Var(f"region'{len(made)}", tuple(i.size for i in free))
            args.append(v)
        entry = T.Index(s, [Poly.sym(i) for i in free]) if free else s
        return entry if w.rel in (">", ">=") else T.Num(1) - entry

    out = go(u)
    if bad:
        return None
    return out, args, frozenset(made.values())


def _per_example_nonzero(u: T.Term) -> bool:
    """Whether ``u`` (real-analytic) reads the batch only at its own example and each of its
    entries is clearly nonzero at random inputs at batch 1 (see the module's docstring)."""
    sizes = set(u.sizes)
    if len(sizes) > 1 or any(not isinstance(s, SizeSym) for s in sizes):
        return False
    batch = next(iter(sizes), None)
    mine = [i for i in u.free_idx if batch is not None and batch in i.size.symbols()]
    if batch is not None and (len(mine) != 1 or mine[0].size != Poly.sym(batch)):
        return False
    if batch is not None and not _reads_only(u, batch, mine[0]):
        return False
    at = {batch: 1} if batch is not None else {}
    idx = sorted(u.free_idx, key=lambda i: i.name)
    for d in range(DRAWS):
        rng = np.random.default_rng(7919 + d)
        values = _random(u, at, rng)
        got = C._entries(u, idx, at, values)
        if got is None or not got.size or not np.all(np.isfinite(got)):
            return False
        if np.min(np.abs(got)) <= MARGIN * (1.0 + np.max(np.abs(got))):
            return False
        # Rounding noise is no value: an identically zero term whose float evaluation cancels
        # badly (``(sin(x)^2 + cos(x)^2 - 1) 10^20``) reads large, but not the same at inputs
        # moved by a relative 1e-9, where a true nonzero value barely moves.
        nudged = {v: a * (1 + NUDGE * rng.standard_normal(a.shape)) for v, a in values.items()}
        again = C._entries(u, idx, at, nudged)
        if again is None or not np.all(np.abs(again - got) <= STEADY * np.abs(got)):
            return False
    return True


def _random(u, sizes, rng):
    from verigrad.certify.evaluate import random_values
    return random_values(u, sizes, rng)


def _reads_only(u: T.Term, batch: SizeSym, i) -> bool:
    """Whether the normal form of ``u`` reads every variable with a batch axis only at
    ``[i, ...]``, binds no index over a range that mentions the batch, and uses the batch
    size nowhere else."""
    from verigrad.kernel.normal import EntryA, Normalizer
    nz = Normalizer()
    try:
        w = nz.norm(u, ())
    except Exception:  # noqa: BLE001 - no normal form: not shown
        return False
    if nz.conds:
        return False
    for a in C._nf_atoms(w):
        for x in C._atom_args(a):
            if isinstance(x, Poly) and batch in x.symbols():
                return False
            if hasattr(x, "size") and isinstance(getattr(x, "size"), Poly) and x is not i \
                    and batch in x.size.symbols():
                return False
        if isinstance(a, EntryA) and isinstance(a.var, T.Var):
            axes = [k for k, s in enumerate(a.var.shape) if batch in s.symbols()]
            if axes and (axes != [0] or a.var.shape[0] != Poly.sym(batch) or a.idx[0] != Poly.sym(i)):
                return False
    return True
