"""A numeric label for an unproved theorem: FALSE where its goal's two sides differ.

Numbers only label; they never make anything proved. Runs where theorem files run (a
verify worker, ``library._check_job``), since it states the goal with the file's code.
"""
from __future__ import annotations

from .script import statement_of


class _Goals:
    """A theorem file's goals as a statement the witness check evaluates (not a theorem)."""
    rule = "goal"

    def __init__(self, lhs, rhs, givens):
        self.lhs, self.rhs, self.hyps, self.conds = lhs, rhs, frozenset(givens), frozenset()


def false_label(module: str) -> str:
    """Where a goal of theorem ``module`` is false (float64, random sizes and values,
    ``verigrad.certify.witness``): the sizes and values where its two sides differ, or ''
    when none was found (or the file states nothing the evaluator can evaluate)."""
    try:
        stated = statement_of(module)
    except Exception:  # noqa: BLE001 - a file that does not state anything: nothing to evaluate
        stated = None
    if not stated:
        return ""
    from verigrad.certify.witness import Witness
    goals, givens = stated
    for lhs, rhs in goals:
        try:
            verdict, message = Witness(raise_errors=False, budget_s=0.5).check(_Goals(lhs, rhs, givens))
        except Exception:  # noqa: BLE001 - the evaluator's limits: no label
            continue
        if verdict == "failed":
            # the checker's message without its first two lines (which speak of a rule and repeat the statement)
            return "; ".join(line.strip() for line in message.splitlines()[2:])
    return ""
