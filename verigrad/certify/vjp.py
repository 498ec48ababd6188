"""Certify a backward pass against its forward, given as kernel terms (untrusted
driver; the kernel decides).

``certify_vjp_terms(forward, backward, var, cotangent)`` states
``backward = Lamda[K]( sum_I cotangent[I] * d forward[I] / d var[K] )`` and returns a
``Certificate``: PROVED with the kernel's theorem, REFUTED with a counterexample, or
UNKNOWN with the numeric evidence gathered.
"""
from __future__ import annotations

import time

from verigrad.kernel import Failure, KernelError, Term, Theorem, Var, prove_equal, vjp_statement
from verigrad.report.printing import equation

from . import counterexample
from .certificate import Certificate


def certify_equal(name: str, lhs: Term, rhs: Term, argument: str = "lhs", using=()) -> Certificate:
    """Prove ``lhs = rhs`` or look for a counterexample."""
    t0 = time.perf_counter()
    try:
        res = prove_equal(lhs, rhs, using)
    except KernelError as e:
        res = Failure(f"ill-formed claim: {e}")
    seconds = time.perf_counter() - t0
    if isinstance(res, Theorem):
        return Certificate(name, "PROVED", res.statement(), res, axioms=res.axioms(),
                           side_conditions=[str(c) for c in sorted(res.conds, key=str)], seconds=seconds)
    found = counterexample.search(lhs, rhs, argument)
    seconds = time.perf_counter() - t0
    if isinstance(found, counterexample.Evidence):
        return Certificate(name, "UNKNOWN", equation(lhs, rhs), evidence=str(found), seconds=seconds,
                           detail=str(res))
    return Certificate(name, "REFUTED", equation(lhs, rhs), counterexample=found, seconds=seconds,
                       detail=str(res))


def certify_vjp_terms(name: str, forward: Term, backward: Term, var: Var, cotangent: Var) -> Certificate:
    """Certify ``backward`` as the cotangent of ``var`` for ``forward`` at ``cotangent``."""
    return certify_equal(name, backward, vjp_statement(forward, var, cotangent), argument=var.name)
