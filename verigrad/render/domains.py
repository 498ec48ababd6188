"""Partial operations of the text, and where the tie may say nothing.

The StableHLO importer reads a division, a negative power, a root and a log by the
kernel's total conventions (``1/0 = 0``, ``log x = log |x|``, ``x^(1/2) = 0`` for ``x < 0``),
which is XLA's value only where the operation is inside its real domain. Outside it XLA
computes inf or NaN, and an identity of the reading (``0 * u^-1 = 0``, ``[1/0 > 0] = 0``)
can hide a value that XLA lets through: gated by a ``select`` on a value only training
data meet (``y[0, 0] == 0.01``), an edited step was tied and trained (red team RT-42 and
RT-46-f1).

So each partial operation of the text must be inside its domain for every input that
meets the step's preconditions, shown from the structure of its argument
(``Signs``): sums of exponentials, ``v + eps`` of a nonnegative ``v``, squares, positive
inputs. The preconditions are the trainer's invariants, named per input in ``signs``:
bias corrections are positive, AdamW's second moments nonnegative. A constant argument is
checked by its value. Every result computed from an operation not shown inside its
domain is UNKNOWN (``Outside.reaches``), naming it.
"""
from __future__ import annotations

import numpy as np

from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import nonneg

from .programs import Program

POS, NONNEG = "positive", "nonnegative"


class Signs:
    """What the structure shows of the sign of a term over the program's values:
    ``POS``, ``NONNEG`` or ``None`` (nothing). ``inputs``: ``{input name: POS | NONNEG}``,
    the step's preconditions."""

    def __init__(self, program: Program, inputs: dict):
        self.defs = {v.var: v.definition for v in program.values}
        self.inputs, self.constants, self.memo = inputs, program.constants, {}

    def of(self, t: T.Term):
        hit = self.memo.get(t, False)
        if hit is False:
            hit = self.memo[t] = self._of(t)
        return hit

    def _of(self, t):
        if isinstance(t, T.Num):
            return POS if t.value > 0 else NONNEG if t.value == 0 else None
        if isinstance(t, T.Const):
            return POS
        if isinstance(t, T.Var):
            if t in self.defs:
                return self.of(self.defs[t])
            if t in self.constants:
                x = np.asarray(self.constants[t])
                return POS if np.all(x > 0) else NONNEG if np.all(x >= 0) else None
            return self.inputs.get(t.name)
        if isinstance(t, T.IntVal):
            return POS if nonneg(t.poly - 1) else NONNEG if nonneg(t.poly) else None
        if isinstance(t, (T.RealCond, T.IntCond, T.Delta)):
            return NONNEG
        if isinstance(t, T.Func):
            return POS if t.fn == "exp" else None
        if isinstance(t, T.Add):
            signs = [self.of(a) for a in t.terms]
            if None in signs:
                return None
            return POS if POS in signs or self._positive_branches(t) else NONNEG
        if isinstance(t, T.Mul):
            return self._product(t.terms)
        if isinstance(t, T.Pow):
            base, e = self.of(t.base), t.exponent
            if e.denominator == 1 and e.numerator % 2 == 0:
                return POS if base == POS else NONNEG       # an even power
            return base                                      # 0^r reads 0: a nonnegative base stays so
        if isinstance(t, (T.Lamda, T.Named)):
            return self.of(t.body)
        if isinstance(t, T.Index):
            base = self.of(t.base)
            return NONNEG if t.total and base == POS else base   # a total read off the shape is 0
        if isinstance(t, (T.Sum, T.ReduceMax)):
            body = self.of(t.body)
            if body == POS and not nonneg(t.idx.size - 1):
                return NONNEG                                # maybe empty: 0
            return body
        return None

    def _positive_branches(self, t: T.Add) -> bool:
        """``a [u > 0] + b [u <= 0]`` (``>=`` / ``<`` alike) where each branch is positive
        where its indicator holds: the importer's ``max(x, c)``, ``x [x - c > 0] + c [x - c
        <= 0]``, for a constant ``c > 0`` (gradient clipping divides by ``max(norm, 1)``)."""
        branches = [_branch(a) for a in t.terms]
        if len(branches) != 2 or None in branches:
            return False
        (r1, c1), (r2, c2) = branches
        if c1.t is not c2.t or {c1.rel, c2.rel} not in ({">", "<="}, {">=", "<"}):
            return False
        return all(self._positive_where(rest, c) for rest, c in branches)

    def _positive_where(self, rest: list, c: T.RealCond) -> bool:
        """The product of ``rest`` is positive where ``[c.t c.rel 0]`` holds: each factor
        positive, or the one factor ``x`` of ``[x - k > 0]`` (``>=``: ``k > 0``), ``k >= 0``."""
        if all(self.of(a) == POS for a in rest):
            return True
        if len(rest) != 1 or c.rel not in (">", ">=") or not isinstance(c.t, T.Add) or len(c.t.terms) != 2:
            return False
        x, k = rest[0], [a for a in c.t.terms if a is not rest[0]]
        if len(k) != 1 or x not in c.t.terms or k[0].atoms or k[0].shape or k[0].free_idx:
            return False
        value = float(Vectorized({}, {}).tensor(k[0]))          # -k, a constant (-1 is -1 * 1)
        return value <= 0 if c.rel == ">" else value < 0

    def _product(self, factors):
        """A product: of positive factors positive; of nonnegative ones, and of factors
        that pair up (``s * s``), nonnegative; ``f [f > 0]`` is nonnegative (a maximum,
        ``max(a, 1) = 1 + (a - 1) [a - 1 > 0]``, as the importer reads it)."""
        kept = {c.t for c in factors if isinstance(c, T.RealCond) and c.rel in (">", ">=")}
        unknown: dict = {}
        signs = []
        for a in factors:
            s = NONNEG if a in kept else self.of(a)
            if s is None:
                unknown[a] = unknown.get(a, 0) + 1
            else:
                signs.append(s)
        if any(k % 2 for k in unknown.values()):
            return None
        return POS if not unknown and all(s == POS for s in signs) else NONNEG


def _branch(t: T.Term):
    """``(other factors, the indicator)`` of a term with exactly one real indicator
    factor (the indicator alone: no other factor), or None."""
    factors = list(t.terms) if isinstance(t, T.Mul) else [t]
    conds = [a for a in factors if isinstance(a, T.RealCond)]
    if len(conds) != 1:
        return None
    return [a for a in factors if a is not conds[0]], conds[0]


class Outside:
    """The values of the text that apply a partial operation not shown inside its
    domain, and those computed from them (``reaches``)."""

    def __init__(self, program: Program, bad: dict):
        self.bad = bad                       # value var -> why, where
        self.tainted = set()
        for v in program.values:
            if v.var in bad or any(a in self.tainted for a in v.definition.atoms):
                self.tainted.add(v.var)
        first = next(iter(bad.values()), "")
        self.reason = (f"the text applies {first}, where XLA computes inf or NaN and the importer's reading "
                       "(1/0 = 0, log |x|) does not: nothing is claimed of the results computed from it")

    def reaches(self, result) -> bool:
        return bool(self.bad) and (result in self.bad or any(a in self.tainted for a in result.atoms))


def outside_domain(program: Program, env: dict, signs: dict) -> Outside:
    """Each value of ``program`` that applies a partial operation (a division, a negative
    power, a root, a log) whose argument is not shown inside the operation's domain: by
    its structure (``Signs`` over the preconditions ``signs``), or, for a constant, by its
    value (evaluated at the inputs of ``env``, which a constant does not read)."""
    from .pairing import subterms
    shown = Signs(program, signs)
    ev = Vectorized({}, env)
    bad, outside = {}, {}               # outside: partial operation -> why not shown inside (None: shown)
    items = [(v.var, v.definition, v.where) for v in program.values]
    items += [(r, r, "a result") for r in program.results if not r.atoms]     # a constant result
    for key, definition, where_ in items:
        # Each definition is walked on its own: a subterm seen in an earlier value must
        # still mark this one (RT-47-h1: a second, identical ``divide`` of a value not
        # shown positive was skipped, so what it reached was tied). Verdicts are shared.
        for t in subterms(definition, (T.Pow, T.Func)):
            if t not in outside:
                outside[t] = _not_shown(t, shown, ev)
            if outside[t] is not None:
                what, why = outside[t]
                bad.setdefault(key, f"{what} ({where_}) {why}")
    return Outside(program, bad)


def _not_shown(t, shown: Signs, ev: Vectorized):
    """``(what, why)`` where the operation ``t`` (a ``Pow`` or a ``Func``) is partial and
    not shown inside its domain; None where it is total or shown inside."""
    if isinstance(t, T.Pow):
        e = t.exponent
        if e.denominator == 1 and e >= 0:
            return None
        u, need = t.base, POS if e < 0 else NONNEG
        what = "a division" if e == -1 else f"a power {e}"
    elif t.fn == "log":
        u, need, what = t.operands[0], POS, "a log"
    else:
        return None
    if u.atoms:
        s = shown.of(u)
        return None if s == POS or s == need else (what, f"of a value not shown {need} for every input")
    if not _constant_inside(ev, u, e if isinstance(t, T.Pow) else None):
        return what, "of a constant outside its real domain"
    return None


def _constant_inside(ev: Vectorized, u: T.Term, e) -> bool:
    """Whether the constant ``u`` is inside the domain of ``u^e`` (``e`` None: of log): by
    its float64 value, away from 0 relative to its parts (``stablehlo_rules.constant_inside``:
    the reading's value is exact, XLA's float32, RT-47-h5)."""
    from verigrad.frontends.stablehlo_rules import constant_inside
    return constant_inside(ev.tensor, u, e)


def preconditions(cfg, ports: list) -> dict:
    """``{input name: POS | NONNEG}``: what the trainer keeps true of a step's inputs, and
    the tie may rest on. The learning rate and the bias corrections ``1 - beta^t`` (``t >=
    1``) are positive; an optimizer's slots named in its ``nonneg_slots`` are nonnegative
    (AdamW's second moments: zeros at step 0, then convex combinations of themselves and
    squares). A trainer that broke one would run a step the tie says nothing of."""
    from .optimizers import OPTIMIZERS
    slots = OPTIMIZERS[cfg.optimizer["name"]].nonneg_slots
    out = {}
    for p in ports:
        if p["role"] in ("lr", "bias_correction1", "bias_correction2"):
            out[p["name"]] = POS
        elif p["role"] == "opt_state" and p["name"].split("/")[1] in slots:
            out[p["name"]] = NONNEG
    return out
