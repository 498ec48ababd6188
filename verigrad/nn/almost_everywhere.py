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
from fractions import Fraction

import numpy as np

from verigrad.certify import conditions as C
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import IndexVar, KernelError, Poly, SizeSym, nonneg
from verigrad.kernel.theorem import Condition

DRAWS = 4           # integer draws per-example evaluation tries, at most
SECONDS = 30.0      # of the clock, and
WORK = 300_000      # monomial products, the check spends on its normal forms at most (zoo nets: 1 s, 3,000)


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


def unshown(theorems, discrete=(), seconds: float | None = None) -> str | None:
    """Why a composed side condition of ``theorems`` is not shown to fail only on a set of
    measure zero, or None when each is. ``discrete``: variables that take only the value 0
    or one fixed nonzero value per entry (drop-path sites: 0 or ``1/keep``), not a density
    (red team RT16-F2: a condition ``s[i] != 0`` read as a shift fails at every dropped
    example): each condition is shown for ``s := 0`` and for ``s`` a nonzero constant, a
    positive variable held out of the shifts, the partials and the evaluations. The check
    spends at most ``WORK`` monomial products and ``seconds`` (``SECONDS``) on its normal
    forms; past either, it is not shown."""
    seconds = SECONDS if seconds is None else seconds
    with C.allowance(seconds, WORK) as allowed:
        try:
            why = _unshown(theorems, discrete)
        except KernelError as e:        # (a normal form stopped by the allowance, or refused)
            why = f"a side condition could not be decided ({e})"
    if allowed.spent is not None:
        return (f"the check that the composed network's side conditions fail only on a set of measure zero "
                f"stopped: {allowed.spent} (a condition whose normal form grows this large is not shown)")
    return why


def _unshown(theorems, discrete) -> str | None:
    try:
        conds = composed_conditions(theorems)
    except Exception as e:  # noqa: BLE001 - not expanded: not shown
        return f"a side condition could not be read as a function of the network's inputs ({type(e).__name__}: {e})"
    memo: dict = {}
    held = {d: T.Var(f"{d.name}'held", d.shape, ("positive",)) for d in discrete}
    for c in conds:
        if c.kind in ("nonzero", "offkink") and _shifted(c.term, frozenset(held)):
            continue                # (whatever values the sites take, one per example or not)
        if (why := _mixes_sites(c.term, held)) is not None:
            return (f"the side condition {_short(c)} of the composed network is not shown to fail only on a set of "
                    f"measure zero of its inputs ({why})")
        for u, case in _discrete_cases(c.term, held):
            if c.kind in ("nonzero", "offkink"):
                why = _null(u, memo, frozenset(held.values()))
            else:
                why = _as_certify_takes_it(Condition(c.kind, u), frozenset(held.values()))
            if why is not None:
                return (f"the side condition {_short(c)} of the composed network is not shown to fail only on a "
                        f"set of measure zero of its inputs{case} ({_short(why, 600)})")
    return None


def _as_certify_takes_it(c: Condition, held) -> str | None:
    """``conditions.unshown`` on ``c``, as certify checks a layer's conditions. It reads
    every variable as a density, free to move: its partials and its pairs shown apart may
    rest on one in a held stand-in, but a kept drop-path site is one fixed constant (red
    team RT21-F1: ``(s[i] - 2) max_k x[i, k]`` was accepted, 0 at every kept example when
    ``1/keep = 2``). So where a stand-in is read, only what holds at every positive value
    of it passes: a term positive at every input (or a positive base)."""
    if c.term.atoms & held:
        if C.positive_at_every_input(c.term) or c.kind == "positive" and C.positive_base(c.term):
            return None
        return ("it reads a drop-path site where a maximum or a tie is to be shown apart, which is shown only "
                "for inputs that vary, and a kept site is one constant")
    return C.unshown([c])


SITE_LIMIT = 6      # drop-path sites one condition may read, at most (2^6 cases)


def _mixes_sites(u: T.Term, held: dict) -> str | None:
    """Why the cases of ``_discrete_cases`` would not cover ``u``: it reads too many sites,
    or a site at an entry other than one fixed by ``u``'s own entry (another example's
    mask, as in a batch statistic: the sites of a batch are 0 at some examples and not at
    others, which the cases, the whole site 0 or the whole site nonzero, do not cover), or
    one site at two entries (``s[i] x[j] + y[i] (2 - s[j])``, red team RT18-F1: ``s[i] = 0``
    with ``s[j] = 2`` is in neither case) or at a constant one (``s[0]``: example 0's)."""
    from verigrad.kernel.normal import EntryA
    mine = [d for d in held if d in u.atoms]
    if not mine:
        return None
    if len(mine) > SITE_LIMIT:
        return f"it reads {len(mine)} drop-path sites, more than the {SITE_LIMIT} whose cases are split"
    nz = C.normalizer()
    try:
        w = nz.norm(u, ())
    except Exception:  # noqa: BLE001 - no normal form: not shown
        return "its reads of a drop-path site could not be listed"
    own = {Poly.sym(i) for i in u.free_idx}
    entries: dict = {}
    for a in C._nf_atoms(w):
        if isinstance(a, EntryA) and a.var in held:
            if not all(e in own for e in a.idx):
                return f"it reads the drop-path site {a.var.name} of other examples than its own"
            entries.setdefault(a.var, set()).add(tuple(a.idx))
    for d, at in entries.items():
        if len(at) > 1:
            return f"it reads the drop-path site {d.name} at more than one entry"
    return None


def _discrete_cases(u: T.Term, held: dict):
    """``(u with each discrete variable it reads set to 0 or to its held stand-in, words)``."""
    mine = sorted((d for d in held if d in u.atoms), key=lambda d: d.name)
    for pattern in itertools.product((0, 1), repeat=len(mine)):
        table = {d: (held[d] if k else _zeros(d)) for d, k in zip(mine, pattern)}
        words = ", ".join(f"{d.name} {'nonzero' if k else '= 0'}" for d, k in zip(mine, pattern))
        yield (T.subst(u, table) if table else u), (f" where {words}" if words else "")


def _zeros(d: T.Var) -> T.Term:
    if not d.shape:
        return T.Num(0)
    return T.Lamda([IndexVar(f"z{k}", s) for k, s in enumerate(d.shape)], T.Num(0))


def _short(x, n: int = 300) -> str:
    s = str(x)
    return s if len(s) <= n else s[:n] + " ..."


def _null(u: T.Term, memo: dict, held=frozenset()) -> str | None:
    """None when the zero set of ``u`` (for every value of its free indices and every size)
    is shown null; else why not."""
    if u in memo:
        return memo[u]
    memo[u] = "it depends on itself"          # (no cycle is possible; a guard all the same)
    memo[u] = why = _null_uncached(u, memo, held)
    return why


def _null_uncached(u: T.Term, memo: dict, held) -> str | None:
    if _shifted(u, held) or C.positive_at_every_input(u):
        return None
    outer = _outer_arguments(u)
    if len(outer) > SPLIT_LIMIT:
        return f"it compares more than {SPLIT_LIMIT} quantities at each entry"
    for v in outer:
        if (why := _null(v, memo, held)) is not None:
            return f"the argument {_short(v)} of one of its indicators: {why}"
    for pattern in itertools.product((0, 1), repeat=len(outer)):
        piece = _with_pattern(u, dict(zip(outer, pattern)))
        split = _regions(piece)
        if split is None:
            return "its indicators could not be split into regions"
        us, inner, opaque = split
        for v in inner:
            if (why := _null(v, memo, held)) is not None:
                return f"the argument {_short(v)} of one of its indicators: {why}"
        if (bad := C.piecewise_part(us)) is not None:
            if opaque or outer:
                return f"{_short(bad)} makes it piecewise beyond its indicators"
            return _as_certify_takes_it(Condition("nonzero", u), held)     # maxima and masks
        if not (_outer_partial_shown(us, opaque, held) or not opaque and _per_example_nonzero(us, held)):
            where = f" where its comparisons come out {list(pattern)}" if outer else ""
            return ("neither a partial derivative in an input entry it reads outside its other terms is shown "
                    "nonzero whatever the pattern of its indicators, nor is it per example and nonzero at random "
                    f"inputs{where}")
    return None


SPLIT_LIMIT = 4     # indicators constant across an entry, split into cases (2^4 pieces), at most


def _outer_arguments(u: T.Term) -> list:
    """The arguments ``v`` of the indicators ``[v rel 0]`` in ``u`` that are one value per
    entry of ``u`` (their free indices are free in ``u`` and bound by no binder around the
    indicator: index variables are named, so ``Sum[i]([x[i] > 0])`` inside a term free in
    ``i`` reads every entry of ``x``, red team RT18-F2), each once, in order."""
    free = u.free_idx
    seen, out = set(), []
    for w in _unbound_subterms(u, lambda w: isinstance(w, T.RealCond) and w.free_idx <= free):
        if w.t not in seen:
            seen.add(w.t)
            out.append(w.t)
    return out


def _binds(w: T.Term) -> frozenset:
    """The index variables ``w`` binds in its body (a sum's, a maximum's, a ``Lamda``'s)."""
    return frozenset(x for x in C._flat_args(w) if isinstance(x, IndexVar))


def _unbound_subterms(u: T.Term, keep):
    """The subterms of ``u`` that ``keep`` accepts at an occurrence where no enclosing
    binder binds one of their free indices, each once, parents before children."""
    seen, found = set(), set()

    def go(w, bound):
        key = (w, bound & w.free_idx)       # (only the binders of its own indices matter)
        if key in seen:
            return
        seen.add(key)
        if keep(w) and not key[1] and w not in found:
            found.add(w)
            yield w
        inner = bound | _binds(w)
        for x in C._kids(w):
            yield from go(x, inner)
    yield from go(u, frozenset())


def _with_pattern(u: T.Term, pattern: dict) -> T.Term:
    """``u`` with ``[v > 0]`` and ``[v >= 0]`` replaced by ``pattern[v]`` and ``[v < 0]``,
    ``[v <= 0]`` by ``1 - pattern[v]``, where no enclosing binder binds a free index of
    ``v`` (elsewhere the same name is another entry): its value wherever the indicators
    take that pattern, off the zero sets of their arguments."""
    memo: dict = {}

    def go(w, bound):
        key = (w, bound & w.free_idx)
        hit = memo.get(key)
        if hit is None:
            if isinstance(w, T.RealCond) and w.t in pattern and not key[1]:
                hit = T.Num(pattern[w.t] if w.rel in (">", ">=") else 1 - pattern[w.t])
            elif C._kids(w):
                inner = bound | _binds(w)
                hit = T.map_args(w, lambda x: go(x, inner))
            else:
                hit = w
            memo[key] = hit
        return hit
    return go(u, frozenset()) if pattern else u


def _shifted(u: T.Term, held=frozenset()) -> bool:
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
        if "integer" in b.facts or b in held or not all(nonneg(q) and nonneg(s - 1 - q) for q, s in zip(idx, b.shape)):
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


def _outer_partial_shown(u: T.Term, opaque, held=frozenset()) -> bool:
    """Whether ``u``'s normal form, or its partial derivative in an input entry it reads as
    a factor of one of its monomials (not inside a sum or a function: a bias, a batch
    norm's shift), is shown not identically zero by ``conditions._one_term_shown``, whatever
    the ``opaque`` variables are. (``conditions.nonzero_null`` takes partials in every entry
    read, to second order: minutes on a composed network.)"""
    from verigrad.kernel.normal import EntryA
    nz = C.normalizer()
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
             and a.var not in opaque and a.var not in held}
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


def _per_example_nonzero(u: T.Term, held=frozenset()) -> bool:
    """Whether ``u`` is a polynomial with integer coefficients that reads the batch only at
    its own example, and each of its entries is nonzero at some draw of small integer
    inputs at batch 1, evaluated exactly (see the module's docstring). ``held``: variables
    that stand for a constant of unknown value (a drop-path site's nonzero case): a term
    that reads one is not evaluated."""
    if u.atoms & held or not _integer_polynomial(u):
        return False
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
    bound = _majorant(u)
    shown = None
    for d in range(DRAWS):
        rng = np.random.default_rng(7919 + d)
        values = {v: np.round(a * 3) for v, a in _random(u, at, rng).items()}      # integers in about [-9, 9]
        got = C._entries(u, idx, at, values)
        top = C._entries(bound, idx, at, {v: np.abs(a) for v, a in values.items()})
        if got is None or top is None or not got.size or not np.all(top < EXACT):
            return False            # (every partial sum is an integer below 2^50 in magnitude: exact)
        shown = (got != 0) if shown is None else shown | (got != 0)
        if shown.all():
            return True
    return False


EXACT = 2.0 ** 50   # integers below this are added and multiplied exactly in float64


def _integer_polynomial(u: T.Term) -> bool:
    """Whether ``u`` is built from real variables, integer numbers, indicators and deltas of
    index arithmetic (0 or 1), sums, products, entries and whole positive powers only: a
    polynomial with integer coefficients at each entry, which integer inputs evaluate
    exactly while the magnitudes stay below ``EXACT``."""
    ok = True
    for w in C._subterms(u, lambda _: True):
        if isinstance(w, T.Num):
            ok = Fraction(w.value).denominator == 1
        elif isinstance(w, T.Pow):
            e = w._args[1]                  # a Fraction
            ok = e.denominator == 1 and e >= 1
        elif isinstance(w, T.Var):
            ok = "integer" not in w.facts
        else:
            ok = isinstance(w, (T.Index, T.Add, T.Mul, T.Sum, T.Lamda, T.Delta, T.IntCond))
        if not ok:
            return False
    return True


def _majorant(u: T.Term) -> T.Term:
    """``u`` with every number replaced by its absolute value: at the absolute values of
    the inputs, it bounds the magnitude of every partial result of evaluating ``u``."""
    memo: dict = {}

    def go(w):
        hit = memo.get(w)
        if hit is None:
            if isinstance(w, T.Num):
                hit = T.Num(abs(w.value))
            else:
                hit = T.map_args(w, go) if C._kids(w) else w
            memo[w] = hit
        return hit
    return go(u)


def _random(u, sizes, rng):
    from verigrad.certify.evaluate import random_values
    return random_values(u, sizes, rng)


def _reads_only(u: T.Term, batch: SizeSym, i) -> bool:
    """Whether the normal form of ``u`` uses its example index ``i`` only as the first index
    of the variables with a batch axis (read at ``[i, ...]``; nowhere else: not in a delta,
    an indicator or as a number, red team RT16-F1, where ``[i = 0]`` made example 0 differ
    from the rest), binds no index over a range that mentions the batch, and uses the batch
    size nowhere else."""
    from verigrad.kernel.normal import EntryA
    nz = C.normalizer()
    try:
        w = nz.norm(u, ())
    except Exception:  # noqa: BLE001 - no normal form: not shown
        return False
    if nz.conds:
        return False

    def clean(x) -> bool:
        """An argument of an atom that mentions neither ``i`` nor the batch size."""
        if isinstance(x, Poly):
            syms = x.symbols()
        elif isinstance(x, (SizeSym, IndexVar)):
            syms = {x}
        else:
            return True
        return not any(y is i or y == batch or isinstance(y, IndexVar) and batch in y.size.symbols() for y in syms)

    for a in C._nf_atoms(w):
        args = C._atom_args(a)
        if isinstance(a, EntryA) and isinstance(a.var, T.Var):
            axes = [k for k, s in enumerate(a.var.shape) if batch in s.symbols()]
            if axes and (axes != [0] or a.var.shape[0] != Poly.sym(batch) or a.idx[0] != Poly.sym(i)):
                return False
            args = list(a.idx[1:] if axes else a.idx)
        if not all(clean(x) for x in args):
            return False
    return True
