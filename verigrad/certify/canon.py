"""The search for canonical binder orders (untrusted; plugged into the kernel).

A sum over several binders gets canonical names ``_h_0, _h_1, ...`` in some order.
Every order is sound (it is a renaming), but alpha-equivalent sums become identical
only if the order depends on the sum's structure, not on the names it arrived with.
This heuristic ranks binders by the role they play in the factors (read off the
factors' keys with the binder renamed "self" and the others "other"), and among
binders with the same role tries every permutation for the smallest key (the binders
renamed by position). A key is that of the factors rebuilt with the new names, not
the old key with the names replaced: a polynomial's monomials (a product's factors, a
sum's terms) are sorted by keys that spell the names, so a replaced key kept the order
of the names the binders arrived with, and two alpha-equivalent sums could get two
orders. The kernel applies whatever permutation it is given, so a bug here can only
miss a proof.
"""
from __future__ import annotations

import itertools

from verigrad.kernel import normal
from verigrad.kernel.sizes import IndexVar, Poly

MAX_CANDIDATES = 120


_PLACES: dict = {}


def _relabel(factors, names: dict) -> tuple:
    """The factors' keys with each binder ``b`` renamed ``names[b]`` (a label), rebuilt as
    the kernel builds them: a polynomial's monomials, a product's factors and a sum's
    terms are sorted by keys that spell the indices' names, so a key with the names
    merely replaced would still depend on the names the binders arrived with."""
    mp = {}
    for b, label in names.items():
        if (label, b.size) not in _PLACES:
            _PLACES[label, b.size] = Poly.sym(IndexVar(f"@binder:{label}", b.size))
        mp[b] = _PLACES[label, b.size]
    memo: dict = {}
    return tuple(sorted((_renamed(a, mp, memo).skey, e) for a, e in factors))


def _renamed(x, mp: dict, memo: dict):
    """``x`` (an atom, product, sum or polynomial) with the indices renamed by ``mp``, each
    part rebuilt by its constructor (a key only: never given to the kernel). A floor
    division read as a number keeps its old names (rare; only a key less canonical)."""
    if isinstance(x, Poly):
        return x.subst(mp)
    if isinstance(x, tuple):
        return tuple(_renamed(y, mp, memo) for y in x)
    if isinstance(x, IndexVar):
        return next(iter(mp[x].index_vars())) if x in mp else x
    if not isinstance(x, (normal.Atom, normal.Mono, normal.NF, normal.TensorNF)) or not x.ivars & mp.keys():
        return x
    if x not in memo:
        if isinstance(x, (normal.Mono, normal.NF)):
            parts: dict = {}    # exponents (coefficients) added: two factors may become one
            for y, e in (x.factors if isinstance(x, normal.Mono) else x.terms):
                y = _renamed(y, mp, memo)
                parts[y] = parts.get(y, 0) + e
            memo[x] = (normal.mono_of if isinstance(x, normal.Mono) else normal.nf_of)(parts)
        elif isinstance(x, normal.TensorNF):
            memo[x] = normal.TensorNF(x.binders, _renamed(x.u, mp, memo))
        else:
            memo[x] = type(x)(*(_renamed(y, mp, memo) for y in x._args))
    return memo[x]


def binder_order(bs, factors):
    sig = {}
    for b in bs:
        own = [(a, e) for a, e in factors if b in a.ivars]
        sig[b] = (b.size.skey, _relabel(own, {o: "self" if o is b else "other" for o in bs}))
    order = sorted(bs, key=lambda b: sig[b])
    groups = [list(g) for _, g in itertools.groupby(order, key=lambda b: sig[b])]
    n_cands = 1
    for g in groups:
        for k in range(2, len(g) + 1):
            n_cands *= k
    if n_cands == 1 or n_cands > MAX_CANDIDATES:
        return order
    best, best_key = order, None
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        cand = [b for g in combo for b in g]
        key = _relabel(factors, {b: str(p) for p, b in enumerate(cand)})
        if best_key is None or key < best_key:
            best, best_key = cand, key
    return best


def nest_order(bs, factors, scope):
    """The binder read by the fewest factors (a proper subset of the block's) is summed
    first. The choice depends only on which factors read which binders, ties broken by
    the factors' keys with the binders blanked, so alpha-equivalent sums nest alike."""
    cands = [b for b in bs if len(scope[b]) < len(factors)]
    if not cands:
        return None
    least = min(len(scope[b]) for b in cands)
    cands = [b for b in cands if len(scope[b]) == least]
    if len(cands) > 1:
        keys = [(a.skey, e) for a, e in factors]

        def blank(b):
            out = []
            for i in sorted(scope[b]):
                k = keys[i][0]
                for w in bs:
                    k = k.replace(w.skey, "@" if w is b else "#")
                out.append((k, keys[i][1]))
            return tuple(sorted(out))
        cands.sort(key=blank)
    return cands[0]


def install():
    normal.binder_order = binder_order
    normal.nest_order = nest_order
