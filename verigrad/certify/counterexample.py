"""Counterexample search (untrusted): concrete sizes, random float64 inputs.

A claim ``lhs = rhs`` that the kernel did not prove is evaluated at concrete sizes
(each size symbol from its lower bound to three above it, fewest elements first) and
random inputs. The side with derivatives is evaluated from the kernel's normal form
(the exact symbolic derivative) and cross-checked by finite differences, so a correct
backward is never refuted by a numerical artefact: when the two evaluations of the
expected side disagree, the search reports nothing rather than a doubtful refutation.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from verigrad.kernel import NotDifferentiable, Term
from verigrad.certify.normal_form import normal_form
from .certificate import Counterexample
from .evaluate import EvalError, concrete_shape, evaluate, random_values

REL_TOL = 1e-6


@dataclass
class Evidence:
    points: int
    max_rel_diff: float

    def __str__(self):
        return f"{self.points} random points agree (largest relative difference {self.max_rel_diff:.2g})"


def size_assignments(terms, span: int = 4, limit: int = 40):
    """Concrete size assignments, fewest elements first."""
    syms = set()
    for t in terms:
        syms |= set(t.sizes)
    syms = sorted(syms, key=lambda s: s.name)
    combos = [dict(zip(syms, vals)) for vals in itertools.product(*[range(s.lower, s.lower + span) for s in syms])]

    def elements(sz):
        total = 0
        for t in terms:
            for v in t.atoms:
                if hasattr(v, "shape"):
                    total += int(np.prod(concrete_shape(v.shape, sz))) if v.shape else 1
        return total

    combos.sort(key=lambda sz: (elements(sz), sorted((s.name, v) for s, v in sz.items())))
    return combos[:limit]


def _rel(a: np.ndarray, b: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    """Entry-wise relative difference; entries far below the arrays' scale (or below
    1e-8, rounding noise of an all-zero result) are measured against that floor."""
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    return np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), max(floor * scale, 1e-8))


def search(got: Term, expected: Term, argument: str, seeds=(0, 1), fixed: dict | None = None,
           functions: dict | None = None, prepare=None, accept=None):
    """A Counterexample to ``got = expected``, or Evidence that none was found.

    ``prepare(values, sizes, rng)``, if given, adjusts each draw of inputs in place (integer
    arguments take integer values, one-hot variables agree with their labels).
    ``accept(counterexample, values, sizes)``, if given, confirms a candidate independently
    and returns the counterexample to report, or None to keep searching."""
    try:
        exact = normal_form(expected)
    except NotDifferentiable:
        exact = None
    points, worst = 0, 0.0
    for sizes in size_assignments([got, expected]):
        for seed in seeds:
            rng = np.random.default_rng(seed)
            values = random_values(set(got.atoms) | set(expected.atoms), sizes, rng)
            values.update(fixed or {})
            if prepare is not None:
                prepare(values, sizes, rng)
            try:
                g = np.asarray(evaluate(got, sizes, values, functions))
                if exact is not None:
                    e, e_fd = np.asarray(evaluate(exact, sizes, values, functions)), None
                else:
                    e = e_fd = np.asarray(evaluate(expected, sizes, values, functions))
            except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError):
                continue
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
            else:
                # The expected side must agree with its finite-difference evaluation
                # (computed only now: finite differences of a forward are the slow part).
                if e_fd is None:
                    try:
                        e_fd = np.asarray(evaluate(expected, sizes, values, functions))
                    except (EvalError, FloatingPointError, OverflowError, ZeroDivisionError):
                        continue
                if float(np.max(_rel(e, e_fd))) > 1e-4:
                    continue
                found = Counterexample({s.name: v for s, v in sizes.items()}, argument,
                                       tuple(int(i) for i in pos), float(e[pos]), float(g[pos]), seed)
                if accept is not None:
                    found = accept(found, values, sizes)
                    if found is None:
                        continue
                return found
    return Evidence(points, worst)
