"""The proof log ``Eq``: the numbered list of facts a ``prove(Eq)`` body writes.

``Eq << fact`` appends (a tuple appends each), ``Eq[k]`` reads, ``Eq.name = fact`` names
a fact without numbering it. Besides facts the log takes a statement written out by
hand (chained to the previous entry where they share a side, else decided by the
kernel) and what the theorem's own ``apply(...)`` gives (``ApplyResult``: the
definitions its statement uses, its givens, its goals).

The facts layer, above ``facts``.
"""
from __future__ import annotations

import sys

from . import justification as K
from .errors import ProofError
from .expressions import Expr, TensorSymbol
from .facts import Fact, definition_fact, given_fact, goal_fact, settle
from .statements import Statement


class ApplyResult:
    """What ``Eq << apply(...)`` pushes: the definitions the statement uses (each after
    those it depends on), the givens, then the goals."""

    def __init__(self, statements, givens):
        self.statements, self.givens = statements, givens

    def facts(self):
        out, seen = [], set()

        def visit(e: Expr):
            for n in e.walk():
                if isinstance(n, TensorSymbol) and n.definition is not None and id(n) not in seen:
                    seen.add(id(n))
                    visit(n.definition)
                    out.append(definition_fact(n, elementwise=True))
        for st in self.givens + self.statements:
            for side in st.sides:
                visit(st.side(side))
        out += [given_fact(g) for g in self.givens]
        out += [goal_fact(s) for s in self.statements]
        return out


class ProofLog:
    """``Eq``: the numbered list of facts a proof writes (``Eq << fact``)."""

    def __init__(self, owner=None):
        object.__setattr__(self, "_facts", [])
        object.__setattr__(self, "_named", {})
        object.__setattr__(self, "_order", [])
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "goals", [])
        object.__setattr__(self, "givens", [])

    def _line(self, depth=2):
        return sys._getframe(depth).f_lineno

    def __lshift__(self, item):
        line = self._line()
        for fact in self._facts_of(item):
            self._append(fact, line)
        return self

    def _facts_of(self, item):
        if isinstance(item, (list, tuple)):
            out = []
            for x in item:
                out.extend(self._facts_of(x))
            return out
        if isinstance(item, ApplyResult):
            return item.facts()
        if isinstance(item, Fact):
            return [item]
        if isinstance(item, Statement):
            return [self._hand_written(item)]
        raise ProofError(f"Eq << {item!r}: expected a fact, a statement or apply(...)")

    def _hand_written(self, st: Statement) -> Fact:
        """A statement written out by hand: chained to the previous fact when they share a
        side (``a = b`` then ``a = c`` needs ``b = c``), else decided by the kernel."""
        new = Fact(st, "hand-written")
        L, R = new.pair
        prev = self._facts[-1] if self._facts else None
        if prev is not None:
            Lp, Rp = prev.pair
            if Lp is L or Rp is R:
                eq_l = K.decide(Lp, L, f"hand-written step {st}")
                eq_r = K.decide(Rp, R, f"hand-written step {st}")
                new.inputs = (prev,)
                new.derive_from([prev], lambda th: K.forward(th, eq_l, eq_r))
                prev.derive_from([new], lambda th: K.backward(th, eq_l, eq_r))
                return new
        settle(new, K.decide(L, R, f"hand-written step {st}"))
        return new

    def _append(self, fact: Fact, line: int, name: str | None = None):
        if fact.index is not None or fact.name is not None:
            fact = _alias(fact)
        fact.line = line
        if name is None:
            fact.index = len(self._facts)
            self._facts.append(fact)
        else:
            fact.name = name
            self._named[name] = fact
        self._order.append(fact)
        if fact.kind == "goal":
            self.goals.append(fact)
        elif fact.kind == "given":
            self.givens.append(fact)

    def __getitem__(self, k):
        try:
            return self._facts[k]
        except IndexError:
            raise ProofError(f"Eq[{k}]: the log has {len(self._facts)} entries") from None

    def __len__(self):
        return len(self._facts)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            raise AttributeError(name)
        facts = self._facts_of(value)
        if len(facts) != 1:
            raise ProofError(f"Eq.{name} = ...: one fact expected")
        self._append(facts[0], self._line(), name)

    def __getattr__(self, name):
        named = object.__getattribute__(self, "_named")
        if name in named:
            return named[name]
        raise ProofError(f"Eq.{name}: no fact of that name")

    @property
    def entries(self):
        """Every fact written to the log, numbered and named, in order."""
        return list(self._order)


def _alias(fact: Fact) -> Fact:
    """The same fact again under a new number (``Eq << Eq[3]``)."""
    new = Fact(fact.statement, "repeat", (fact,), kind=fact.kind if fact.kind != "goal" else "step")
    new.derive_from([fact], lambda th: th)
    fact.derive_from([new], lambda th: th)
    return new
