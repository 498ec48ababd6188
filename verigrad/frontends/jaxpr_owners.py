"""Which arguments each size symbol of a trace belongs to, for messages (untrusted):
"the size of x (n)", "give a concrete size for n in --shape (e.g. --shape x=4,d)"."""
from __future__ import annotations

SYMBOL_OWNERS: dict = {}     # id(scope) -> (scope, {symbol: [argument name, ...]}, {argument name: dims})


def symbols_of(e) -> list:
    """The names of the size symbols in a JAX dimension expression (none for a number)."""
    try:
        return sorted(e._get_vars())
    except Exception:  # noqa: BLE001 - a plain integer, or not a symbolic dimension
        return []


def register_owners(scope, specs, structs):
    """Remember which arguments each size symbol of ``scope`` belongs to, and their dims."""
    owners: dict = {}
    for s, st in zip(specs, structs):
        for d in st.shape:
            for sym in symbols_of(d):
                owners.setdefault(sym, [])
                if s.name not in owners[sym]:
                    owners[sym].append(s.name)
    if len(SYMBOL_OWNERS) > 64:
        SYMBOL_OWNERS.pop(next(iter(SYMBOL_OWNERS)))
    SYMBOL_OWNERS[id(scope)] = (scope, owners, {s.name: tuple(s.dims) for s in specs})
