"""Side conditions that hold almost everywhere, checked by sampling (untrusted; it can
only withhold a PROVED).

A kernel theorem may hold under side conditions: ``u != 0`` off an indicator's kink,
a base ``!= 0`` or ``> 0``. The theorem is true, but "the backward is exact" means exact
for almost every input only if each condition fails on a set of measure zero. That is
so for a kink of a real-analytic quantity of the real inputs (relu's ``x != 0``); it is
not for a quantity built from integer data (``i - n != 0`` excludes exactly the
off-by-one cases) or one that vanishes on a whole region (``x_j - max_k x_k != 0``
fails at every argmax). A condition that fails at random inputs fails on a set of
positive measure; such a theorem is not reported PROVED.

``failing(theorem, sample, plans)`` evaluates every condition (for every value of its
free indices) at a few random draws per size assignment and returns the first failure,
described, or None.
"""
from __future__ import annotations

import numpy as np

from verigrad.kernel import Lamda

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


def failing(theorem, sample, plans, draws: int = DRAWS) -> str | None:
    """The first side condition of ``theorem`` that fails at a random input, in words;
    None when each holds at every draw. ``sample(sizes, rng)`` gives values for the
    variables (respecting their kinds); ``plans`` are size assignments."""
    conds = [c for c in sorted(theorem.conds, key=lambda c: (c.kind, c.term.skey)) if c.kind != "smooth"]
    if not conds:
        return None
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
    return None
