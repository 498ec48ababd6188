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
say. (Integer data: ``i - n != 0`` excludes exactly the off-by-one cases.) A ``u``
positive at every input is accepted whatever its pieces: by structure
(``positive_everywhere``: ``exp`` of anything, a causal softmax's denominator, whose
window keeps ``b = 0``) or by an assumption (a masked softmax's denominator, a sum of
positive terms times a mask whose rows are assumed to have a true entry,
``--assume "any(mask, -1)"``).

A ``u > 0`` condition is off ties (``3/2 - #{b: x_b = max x} > 0``, ``tie_count``) or
bounds a base (of a log, a fractional power). Off ties, what it compares must be
real-analytic (maxima of analytic entries allowed: their ties are then of measure zero
unless two entries agree identically, which random inputs show). A base's bound is
accepted only where it is shown positive for every input (``positive_base``: by the
kernel's sign rules, case by case over its indicators): nothing shows that it fails only
where the forward is undefined (a backward can use ``sqrt(u)^2 = u`` where the forward
clips ``u`` at 0 and stays finite), and samples cannot reach every region where it
fails. Else the user states it as a precondition (``--assume "x > 0"``), which makes it
a fact of the inputs.

``failing(theorem, sample, plans)`` returns the first condition not accepted, described,
or None.
"""
from __future__ import annotations

import numpy as np

from verigrad.kernel import Lamda
from verigrad.kernel.sizes import Poly, nonneg
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
    from verigrad.kernel.normal import Normalizer
    if positive_everywhere(t):
        return True
    if isinstance(t, T.At):
        try:
            t = T.subst(t.body, dict(zip(t.params, t.values)))
        except Exception:  # noqa: BLE001 - not a plain substitution: not shown
            return False
    conds = sorted(_real_indicators(t), key=lambda c: c.skey)
    if len(conds) > BRANCH_LIMIT or any(not c.free_idx <= t.free_idx for c in conds):
        return False        # too many cases, or an indicator under a binder: one value per entry, not one in all
    nz = Normalizer()
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


def _real_indicators(t: T.Term) -> set:
    if isinstance(t, T.RealCond):
        return {t} | _real_indicators(t.t)
    out = set()
    for a in t._args:
        for x in (a if isinstance(a, tuple) else (a,)):
            if isinstance(x, T.Term):
                out |= _real_indicators(x)
    return out


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


def _positive(t: T.Term, alive: dict) -> bool:
    """Positive at every input that meets the assumptions: a product of factors each
    positive by structure or by an ``any(mask, axis)`` assumption."""
    if isinstance(t, T.Mul):
        return all(_positive(a, alive) for a in t.terms)
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
            shown = _positive(c.term, alive or {})
            bad = None if shown else piecewise_part(c.term)
        elif tie_count(c.term) is not None:
            bad = tie_piecewise_part(c.term)
        elif positive_base(c.term):
            bad = None
        else:               # a base that must be positive, and is not shown to be
            return (f"the side condition {c} (a base that must be positive) is not shown to hold almost "
                    "everywhere; if the inputs satisfy it, state it as a precondition (--assume)")
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
