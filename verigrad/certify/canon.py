"""The search for canonical binder orders (untrusted; plugged into the kernel).

A sum over several binders gets canonical names ``_h_0, _h_1, ...`` in some order.
Every order is sound (it is a renaming), but alpha-equivalent sums become identical
only if the order depends on the sum's structure, not on the names it arrived with.
This heuristic ranks binders by the role they play in the factors (read off the
factors' keys with the binder's own key replaced), and among binders with the same
role tries every permutation for the smallest key. The kernel applies whatever
permutation it is given, so a bug here can only miss a proof.
"""
from __future__ import annotations

import itertools

from verigrad.kernel import normal

MAX_CANDIDATES = 120


def _relabel(keys, names: dict) -> tuple:
    out = []
    for k, e in keys:
        for b, new in names.items():
            k = k.replace(b.skey, new)
        out.append((k, e))
    return tuple(sorted(out))


def binder_order(bs, factors):
    keys = [(a.skey, e) for a, e in factors]
    sig = {}
    for b in bs:
        own = [(k, e) for (k, e), (a, _) in zip(keys, factors) if b in a.ivars]
        sig[b] = (b.size.skey, _relabel(own, {o: "@self" if o is b else "@other" for o in bs}))
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
        key = _relabel(keys, {b: f"@{p}" for p, b in enumerate(cand)})
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
