"""Side conditions that hold almost everywhere (untrusted; this can only withhold a PROVED).

A kernel theorem may hold under side conditions: ``u != 0`` off an indicator's kink,
a base ``!= 0`` or ``> 0``. The theorem is true, but "the backward is exact" means exact
for almost every input only if each condition fails on a set of measure zero.

For ``u != 0`` (a kink, a base) that is *shown*, not sampled, by a sufficient
criterion: ``u`` is a real-analytic function of the real inputs (built from the
inputs, numbers, sums, products, powers and ``exp log tanh erf sin cos``; indicators and
deltas of index arithmetic are constants for each entry) and, for each entry, not
identically zero; the zero set of such a function has measure zero. Identically zero
is ruled out by a draw where the entry is clearly nonzero. A ``u`` that is only
piecewise analytic (an indicator of real data, a max, integer data, an opaque
function) can vanish on a whole region: ``sum_c relu(c - x^2)`` is 0 wherever
``|x| > sqrt(max c)``, far from any input a sample would draw, and a backward wrong just
there would pass every sample. Such a condition is not accepted, whatever the samples
say. (Integer data: ``i - n != 0`` excludes exactly the off-by-one cases.) One
piecewise form is accepted because it is positive outright: a masked softmax's
denominator, a sum of positive terms times a mask whose rows are assumed to have a true
entry (``--assume "any(mask, -1)"``).

A ``u > 0`` condition is off ties (``3/2 - #{b: x_b = max x} > 0``) or where the
forward is defined (the base of a log or a fractional power). What it compares or
bounds must be real-analytic too (maxima of analytic entries allowed: their ties are
then of measure zero unless two entries agree identically, which random inputs show);
it is sampled at inputs where JAX's forward is finite, and a theorem whose condition
fails at such an input is not reported PROVED.

``failing(theorem, sample, plans)`` returns the first condition not accepted, described,
or None.
"""
from __future__ import annotations

import numpy as np

from verigrad.kernel import Lamda
from verigrad.kernel.sizes import Poly
from verigrad.kernel import terms as T

from .evaluate import EvalError, evaluate

DRAWS = 3           # random draws per size assignment
ZERO_TOL = 1e-9     # relative: |u| below this (of the largest |entry| + 1) counts as 0


def _holds(kind: str, values: np.ndarray) -> bool:
    scale = 1.0 + float(np.max(np.abs(values), initial=0.0))
    if kind == "positive":
        return bool(np.all(values > ZERO_TOL * scale))
    if kind in ("nonzero", "offkink"):
        return bool(np.all(np.abs(values) > ZERO_TOL * scale))
    return True                 # 'smooth': a property of a function, not checked here


ANALYTIC_FUNCTIONS = frozenset({"exp", "log", "tanh", "erf", "sin", "cos"})
_ENTRYWISE_CONSTANT = (T.Num, T.Const, T.IntVal, T.Delta, T.IntCond)   # fixed for each entry


def piecewise_part(t: T.Term) -> T.Term | None:
    """A subterm that keeps ``t`` from being a real-analytic function of the real
    inputs (an indicator of real data, a max, integer data, an opaque or unknown
    function), or None when ``t`` is built only from analytic pieces."""
    if isinstance(t, T.Var):
        return t if "integer" in t.facts else None
    if isinstance(t, _ENTRYWISE_CONSTANT):
        return None
    if isinstance(t, T.Func):
        if not isinstance(t.fn, str) or t.fn not in ANALYTIC_FUNCTIONS:
            return t
        return _first_piecewise(t.operands)
    if isinstance(t, (T.Add, T.Mul)):
        return _first_piecewise(t.terms)
    if isinstance(t, T.Pow):
        return piecewise_part(t.base)
    if isinstance(t, T.Index):
        return piecewise_part(t.base)
    if isinstance(t, (T.Sum, T.Lamda)):
        return piecewise_part(t.body)
    if isinstance(t, T.At):     # a composition: analytic when the body and the values are
        return piecewise_part(t.body) or _first_piecewise(t.values)
    return t                    # RealCond, ReduceMax, Apply, Deriv, ...: not shown analytic


def _first_piecewise(terms, part=None):
    for a in terms:
        bad = (part or piecewise_part)(a)
        if bad is not None:
            return bad
    return None


def tie_piecewise_part(t: T.Term) -> T.Term | None:
    """For a ``> 0`` condition: the first subterm that keeps its failure set from being
    shown null. Such a condition counts ties (``3/2 - #{b: x_b = max x} > 0`` off a
    max's ties, pairs of equal entries off an argsort's) or bounds a base. Its
    comparisons are allowed, but what they compare must be real-analytic, maxima of
    real-analytic entries included: the ties of ``max(x, -100)`` fill the region where
    every entry is below -100, which no sample reaches."""
    if isinstance(t, T.RealCond):
        return _compared_part(t.t)
    if type(t).__name__ == "IntEq":          # verigrad.kernel.permutation's [t == p]
        return _compared_part(t.t)
    if isinstance(t, _ENTRYWISE_CONSTANT):
        return None
    if isinstance(t, (T.Add, T.Mul)):
        return _first_piecewise(t.terms, tie_piecewise_part)
    if isinstance(t, T.Pow):
        return tie_piecewise_part(t.base)
    if isinstance(t, (T.Sum, T.Lamda)):
        return tie_piecewise_part(t.body)
    return piecewise_part(t)


def _compared_part(t: T.Term) -> T.Term | None:
    if isinstance(t, T.ReduceMax):
        return piecewise_part(t.body)
    if isinstance(t, (T.Add, T.Mul)):
        return _first_piecewise(t.terms, _compared_part)
    if isinstance(t, T.Pow):
        return _compared_part(t.base)
    if isinstance(t, (T.Sum, T.Lamda)):
        return _compared_part(t.body)
    return piecewise_part(t)


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
    return (len(along) == 1 and m.t.idx[along[0]] == Poly.sym(b) and along[0] in alive[m.t.base]
            and not any(b in c.free_idx for c in factors if c is not m and isinstance(c, T.RealCond)))


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
    for c in conds:
        if c.kind in ("nonzero", "offkink"):
            bad = None if positive_by_assumption(c.term, alive or {}) else piecewise_part(c.term)
        else:
            bad = tie_piecewise_part(c.term)
        if bad is not None:
            return (f"the side condition {c} is not shown to fail only on a set of measure zero: {bad} "
                    "makes it piecewise, and a piecewise quantity can vanish on a whole region")
    seen = set()            # the nonzero conditions evaluated at least once: not identically 0
    for k, sizes in enumerate(plans):
        for d in range(draws):
            rng = np.random.default_rng(1000 * k + d + 17)
            values = sample(sizes, rng)
            for c in conds:
                idx = sorted(c.term.free_idx, key=lambda v: v.name)
                term = Lamda(idx, c.term) if idx else c.term
                try:
                    got = np.asarray(evaluate(term, sizes, values), dtype=np.float64)
                except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError, KeyError):
                    continue        # a condition this evaluator cannot read is not held against it
                if got.size and not _holds(c.kind, got):
                    where = ", ".join(f"{s.name}={v}" for s, v in sizes.items()) or "no sizes"
                    return (f"the side condition {c} fails at random inputs ({where}, draw {d}): it excludes "
                            "a set of positive measure, so the claim is not shown for almost every input")
                seen.add(c)
    for c in conds:
        if c.kind in ("nonzero", "offkink") and c not in seen:
            return (f"the side condition {c} could not be evaluated at any draw, so it is not shown to be "
                    "other than identically zero")
    return None
