"""Counterexample search (untrusted): adversarial sizes and inputs, float64.

A claim ``lhs = rhs`` that the kernel did not prove is evaluated at concrete sizes (the
adversarial assignments of ``verigrad.certify.inputs.size_plan`` together with every
symbol from its lower bound to three above it, fewest elements first) and, at each, the
input distributions of ``inputs.DRAWS`` (N(0, 1), N(0, 10), all positive, all negative,
values straddling the constants the claim compares against, a mix), seeded from the
sizes and the distribution's name: the same claim gives the same counterexample in every
process. All distributions of one assignment are evaluated together (a batch axis).

The side with derivatives is evaluated from the kernel's normal form (the exact symbolic
derivative) and cross-checked by finite differences, so a correct backward is never
refuted by a numerical artefact: when the two evaluations of the expected side
disagree, the search reports nothing rather than a doubtful refutation.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from verigrad.kernel import NotDifferentiable, Term
from verigrad.kernel import terms as T
from verigrad.certify.normal_form import normal_form
from .certificate import Counterexample
from .evaluate import BATCH_CAP, PEAK_CAP, EvalError, concrete_shape, evaluate, evaluate_many, peak_cost
from .inputs import DRAWS, generic_values, seed_for, size_plan

REL_TOL = 1e-6


@dataclass
class Evidence:
    points: int
    max_rel_diff: float

    def __str__(self):
        return f"{self.points} random points agree (largest relative difference {self.max_rel_diff:.2g})"


def _elements(terms):
    def elements(sz):
        total = 0
        for t in terms:
            for v in t.atoms:
                if hasattr(v, "shape"):
                    total += int(np.prod(concrete_shape(v.shape, sz))) if v.shape else 1
        return total
    return elements


def size_assignments(terms, span: int = 4, limit: int = 40, adversarial: bool = True):
    """Concrete size assignments, fewest elements first: every symbol from its lower bound
    to ``span - 1`` above it (at most ``limit`` of those), and the adversarial plan."""
    syms = set()
    for t in terms:
        syms |= set(t.sizes)
    syms = sorted(syms, key=lambda s: s.name)
    elements = _elements(terms)
    combos = [dict(zip(syms, vals)) for vals in itertools.product(*[range(s.lower, s.lower + span) for s in syms])]
    key = lambda sz: (elements(sz), sorted((s.name, v) for s, v in sz.items()))  # noqa: E731
    combos.sort(key=key)
    combos = combos[:limit]
    if adversarial:
        peak = peak_cost(terms)
        for sz in size_plan(syms, lambda a: max(peak(a), elements(a))):
            if sz not in combos and peak(sz) <= PEAK_CAP:
                combos.append(sz)
        combos.sort(key=key)
    return combos


def term_thresholds(terms) -> tuple:
    """Where the comparisons of ``terms`` flip for an input entry: ``c`` of each
    ``[a * x[..] + b > 0]`` with ``x`` a variable (``c = -b / a``), and 0."""
    found, seen = {0.0}, set()
    stack = list(terms)
    while stack:
        t = stack.pop()
        if id(t) in seen or not isinstance(t, T.Term):
            continue
        seen.add(id(t))
        if isinstance(t, T.RealCond):
            f = _affine(t.t)
            if f is not None and f[0] != 0:
                found.add(-f[1] / f[0])
        for a in t._args:
            if isinstance(a, T.Term):
                stack.append(a)
            elif isinstance(a, tuple):
                stack.extend(b for b in a if isinstance(b, T.Term))
    return tuple(sorted(x for x in found if np.isfinite(x) and abs(x) < 1e8))


def _affine(t):
    """``(a, b)`` when ``t`` is ``a * (one variable entry) + b`` with numbers a, b."""
    if isinstance(t, T.Num):
        return (0.0, float(t.value))
    if isinstance(t, (T.Var, T.Index)) and (isinstance(t, T.Var) or isinstance(t.base, T.Var)):
        return (1.0, 0.0)
    if isinstance(t, T.Named):
        return _affine(t.body)
    if isinstance(t, T.Add):
        a = b = 0.0
        for u in t.terms:
            f = _affine(u)
            if f is None:
                return None
            a, b = a + f[0], b + f[1]
        return (a, b)
    if isinstance(t, T.Mul):
        c, var = 1.0, None
        for u in t.terms:
            f = _affine(u)
            if f is None or (f[0] != 0 and var is not None):
                return None
            if f[0] != 0:
                var = f
            else:
                c *= f[1]
        return (var[0] * c, var[1] * c) if var is not None else (0.0, c)
    return None


def _rel(a: np.ndarray, b: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Entry-wise relative difference; entries far below the arrays' scale (or below
    1e-8, rounding noise of an all-zero result) are measured against that floor."""
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    return np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), max(floor * scale, 1e-8))


_UNSET = object()
CURRENT: dict = {"kind": "N(0,1)"}     # the distribution being drawn (read by ``prepare`` hooks)


def search(got: Term, expected: Term, argument: str, seeds=(0, 1), fixed: dict | None = None,
           functions: dict | None = None, prepare=None, accept=None, sizes=None, sampler=None,
           kinds=DRAWS, exact=_UNSET):
    """A Counterexample to ``got = expected``, or Evidence that none was found.

    ``sizes`` (optional) are the size assignments to try (default ``size_assignments``);
    ``sampler(variables, sizes, kind, rng)`` (optional) draws the inputs of one
    distribution (default: by the variables' facts, straddling the claim's own
    comparisons). ``prepare(values, sizes, rng)``, if given, adjusts each draw in place.
    ``accept(counterexample, values, sizes)``, if given, confirms a candidate independently
    and returns the counterexample to report, or None to keep searching. (``seeds`` is
    kept for callers of the former search; the distributions replace it.) ``exact``
    (optional): ``expected`` without derivatives, computed by the caller (None: evaluate
    ``expected`` by finite differences alone)."""
    if exact is _UNSET:
        try:
            exact = normal_form(expected)
        except NotDifferentiable:
            exact = None
    variables = set(got.atoms) | set(expected.atoms)
    if sampler is None:
        ts = term_thresholds([got, expected])

        def sampler(vs, sz, kind, rng):
            return generic_values(vs, sz, kind, rng, ts)
    points, worst = 0, 0.0
    peak = peak_cost([got, exact if exact is not None else expected])
    for sz in (sizes if sizes is not None else size_assignments([got, expected])):
        if peak(sz) > PEAK_CAP:
            continue
        draws = []
        for kind in kinds:
            rng = np.random.default_rng(seed_for(kind, sz))
            CURRENT["kind"] = kind             # a prepare hook that redraws keeps the distribution
            values = sampler(variables, sz, kind, rng)
            values.update(fixed or {})
            if prepare is not None:
                prepare(values, sz, rng)
            draws.append(values)
        B = len(draws)
        shared = [v for v in draws[0] if all(v in d for d in draws)]
        chunk = B if peak(sz) * B <= BATCH_CAP else 1
        g_all, e_all = [], []
        try:
            for lo in range(0, B, chunk):
                part = draws[lo:lo + chunk]
                batched = {v: np.stack([np.broadcast_to(np.asarray(d[v], dtype=np.float64),
                                                        np.shape(draws[0][v])) for d in part]) for v in shared}
                with np.errstate(all="ignore"):
                    g, e = evaluate_many([got, exact if exact is not None else expected], sz, batched, functions,
                                         batch=len(part))
                g_all.extend(g)
                e_all.extend(e)
        except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError, KeyError):
            continue
        for j in range(B):
            g, e = np.asarray(g_all[j]), np.asarray(e_all[j])
            e_fd = None if exact is not None else e
            if not (np.all(np.isfinite(g)) and np.all(np.isfinite(e))):
                continue
            # With finite differences alone (no exact derivative), an entry that is 0 reads
            # as rounding noise of about 1e-11 of the scale: compare against 1e-4 of it.
            rel = _rel(g, e) if exact is not None else _rel(g, e, 1e-4)
            if rel.size == 0:
                points += 1
                continue
            pos = np.unravel_index(int(np.argmax(rel)), rel.shape) if rel.shape else ()
            if float(rel[pos] if rel.shape else rel) <= REL_TOL:
                points += 1
                worst = max(worst, float(rel[pos]) if rel.shape else float(rel))
                continue
            # The expected side must agree with its finite-difference evaluation
            # (computed only now: finite differences of a forward are the slow part).
            if e_fd is None:
                try:
                    with np.errstate(all="ignore"):
                        e_fd = np.asarray(evaluate(expected, sz, draws[j], functions))
                except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError):
                    continue
            with np.errstate(all="ignore"):
                ok = np.isfinite(e_fd)     # finite differences mark unreliable entries NaN
                if not (ok[pos] if np.ndim(ok) else ok) or float(np.max(_rel(e[ok], e_fd[ok]), initial=0.0)) > 1e-4:
                    continue
            found = Counterexample({s.name: v for s, v in sz.items()}, argument,
                                   tuple(int(i) for i in pos), float(e[pos]), float(g[pos]), j,
                                   distribution=kinds[j] if j < len(kinds) else "")
            if accept is not None:
                found = accept(found, draws[j], sz)
                if found is None:
                    continue
            return found
    return Evidence(points, worst)
