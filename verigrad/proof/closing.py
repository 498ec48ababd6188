"""Closing goals: connecting a theorem's goals to the facts its proof established.

A goal is proved when a chain of registered derivations (kernel recipes) reaches it
from proved facts. After the proof body runs, three kernel-checked links are tried: a
pending fact equivalent to a goal and a proved fact that share a side (the other sides
decided equal); the last entry decided outright (a proof may end at a statement the
decision procedure settles, as SymPy's evaluation settled the seed's last steps); and
a goal from the last entry by difference (``a - b`` and ``p - q`` with one normal form,
for ``U - V = 0``). Nothing here makes a theorem but kernel rules.

The top of the facts layer: the script runner calls it when a proof body has run.
"""
from __future__ import annotations

from verigrad.kernel import KernelError, Theorem, symm

from . import justification as K
from .errors import ProofError
from .facts import Fact, settle
from .proof_log import ProofLog
from .statements import Equality


def _sources(goal: Fact) -> list:
    """Every fact from which ``goal`` can be derived (through registered derivations)."""
    seen, out, stack = {id(goal)}, [goal], [goal]
    while stack:
        f = stack.pop()
        for sources, _ in f.derivations:
            for s in sources:
                if id(s) not in seen:
                    seen.add(id(s))
                    out.append(s)
                    stack.append(s)
    return out


def _link(c: Fact, p: Fact) -> Theorem | None:
    """``c``'s theorem from proved ``p`` when they share a side (kernel-identical)."""
    Lc, Rc = c.pair
    Lp, Rp = p.pair
    try:
        if Lc is Lp or Rc is Rp:
            return K.chain(K.decide(Lc, Lp, "closing"), p.theorem, K.decide(Rp, Rc, "closing"))
        if Lc is Rp or Rc is Lp:
            return K.chain(K.decide(Lc, Rp, "closing"), symm(p.theorem), K.decide(Lp, Rc, "closing"))
    except (ProofError, KernelError):
        return None
    return None


def close_goals(log: ProofLog, limit: int = 40):
    """Connect the goals to proved facts: a pending fact equivalent to a goal is proved
    when a proved fact shares a side with it and the kernel decides the other sides
    equal; the last entry is decided outright; or a goal follows from the last entry
    by difference (``a - b`` and ``p - q`` with one normal form). All kernel rules."""
    entries = log.entries
    last = entries[-1] if entries else None
    if last is not None and not last.proved and len(log) and log[-1] is last:
        try:
            L, R = last.pair
            settle(last, K.decide(L, R, "the last step"))
        except (ProofError, KernelError):
            pass
    proved = [f for f in reversed(entries) if f.proved][:limit]
    for g in log.goals:
        if g.proved:
            continue
        cands = [c for c in _sources(g) if not c.proved]
        cands.sort(key=lambda f: -(f.index if f.index is not None else -1))
        for c in cands:
            for p in proved:
                th = _link(c, p)
                if th is not None:
                    settle(c, th)
                    break
            if g.proved:
                break
        if g.proved or last is None or not last.proved or not isinstance(g.statement, Equality):
            continue
        for c in cands:
            if c.proved or not isinstance(c.statement, Equality):
                continue
            try:
                settle(c, K.by_difference(*c.pair, last.theorem, "closing"))
            except (ProofError, KernelError):
                continue
            if g.proved:
                break
