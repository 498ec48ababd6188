"""Complex symbols: a proof over the complex numbers may use only ring laws.

A tensor symbol declared ``complex=True`` is accepted in a proof whose every step is a
ring law (or index bookkeeping) on terms built from ring operations only: a polynomial
identity that holds over the reals holds over the complex numbers. The runner checks
the theorems of such a proof with ``ring_only``.

The script runner layer.
"""
from __future__ import annotations

from verigrad.kernel import Theorem
from verigrad.kernel import terms as T

from .expressions import Relational, TensorSymbol
from .proof_log import ProofLog

RING_AXIOMS = frozenset({"ring", "pow_expand", "pow_mul", "pow_add_int", "indicator_idempotent", "delta_decide",
                         "delta_subst", "delta_elim", "sum_linear", "sum_const", "sum_pull", "sum_split", "fubini",
                         "definition", "extensionality", "congruence",
                         # index structure only (valid over any ring):
                         "entry_off_shape", "delta_radix", "sum_nest", "sum_window", "sum_reindex",
                         "index_split", "case_split"})


def has_complex(log: ProofLog) -> bool:
    """Whether a fact of the log mentions a complex symbol."""
    return mentions_complex(f.statement for f in log.entries)


def mentions_complex(statements) -> bool:
    """Whether one of ``statements`` mentions a complex symbol."""
    return any(_complex_in(st.side(side)) for st in statements for side in st.sides)


def _complex_in(expr) -> bool:
    """Whether ``expr`` mentions a complex symbol, conditions included: a ``Piecewise``
    keeps its conditions outside its arguments, so ``walk`` alone does not see them (red
    team RT-21: ``Piecewise((1, z*z < 0), (0, True)) = 0`` was proved for a complex z)."""
    for n in expr.walk():
        if isinstance(n, TensorSymbol) and n.complex:
            return True
        for c in getattr(n, "conds", ()):
            if isinstance(c, Relational) and (_complex_in(c.lhs) or _complex_in(c.rhs)):
                return True
    return False


_NOT_RING = tuple(getattr(T, n) for n in ("Func", "RealCond", "ReduceMax", "Deriv", "Apply", "Jacobian", "Vjp",
                                            "At", "Const") if hasattr(T, n))


def _ring_term(t: T.Term) -> str:
    """'' if ``t`` uses only ring operations (and index arithmetic), else what it uses."""
    stack, seen = [t], set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, T.Pow):
            e = x.exponent
            if e.denominator != 1 or e < 0:
                return f"the power {x!r}"
        elif isinstance(x, _NOT_RING):
            return f"{type(x).__name__} in {x!r}"
        for a in x._args:
            if isinstance(a, T.Term):
                stack.append(a)
            elif isinstance(a, tuple):
                stack.extend(b for b in a if isinstance(b, T.Term))
    return ""


def ring_only(th: Theorem) -> str:
    """Why the derivation of ``th`` is not valid over the complex numbers ('' if it is):
    every rule it rests on must be a ring law (or index bookkeeping), and every term in
    it must use only ring operations. A polynomial identity true over R is true over C."""
    seen, stack = set(), [th]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        bad = set(x.used) - RING_AXIOMS
        if bad:
            return f"the rule(s) {', '.join(sorted(bad))}"
        for t in (x.lhs, x.rhs):
            why = _ring_term(t)
            if why:
                return why
        stack.extend(x.parents)
    return ""
