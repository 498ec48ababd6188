"""Theorem files: ``@apply`` states, ``@prove`` derives.

A theorem file is a module::

    from verigrad.proof import *

    @apply
    def apply(n):                       # the statement, for given sizes / symbols
        x = Symbol.x(shape=(n,), real=True)
        return Equality(Sum[j:n](softmax(x)[j]), 1)

    @prove
    def prove(Eq):                      # its proof: every step is checked by the kernel
        n = Symbol.n(domain=[1, oo], integer=True)
        Eq << apply(n)
        ...

Inside its own proof, ``apply(...)`` pushes the definitions its statement uses and the
goals; anywhere else ``module.apply(...)`` *cites* the theorem: the kernel theorem of the
cited proof is instantiated at the given arguments (``citation``), and
``Eq[-1].this.rhs.apply(module)`` rewrites with it (the ``apply`` tactic).

The top of the script runner layer: running a proof is ``script``, citing ``citation``.
"""
from __future__ import annotations

from .citation import cite, cite_at
from .context import Stated, current
from .errors import ProofError
from .proof_log import ApplyResult
from .statements import Statement


class TheoremStatement:
    """A theorem's ``apply``: in its own proof it states the goals; elsewhere it cites."""

    __verigrad_statement__ = True      # what ``script.is_theorem_file`` looks for

    def __init__(self, fn):
        self.fn = fn
        self.module = fn.__module__
        self.__doc__ = fn.__doc__

    def statements(self, *args, **kw) -> list:
        out = self.fn(*args, **kw)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        for s in out:
            if not isinstance(s, Statement):
                raise ProofError(f"apply of {self.module} returned {s!r}, not a statement "
                                 f"(Equality(...) or Contains(...))")
        return out

    def __call__(self, *args, **kw):
        ctx = current()
        if ctx is not None and ctx.module == self.module:
            if ctx.generic_args is not None:
                raise ProofError("apply(...) is called twice in its own proof")
            sts = self.statements(*args, **kw)
            ctx.generic_args, ctx.goal_statements = args, sts
            givens = [a for a in args if isinstance(a, Statement)]
            if ctx.statement_only:
                raise Stated(sts, givens)
            return ApplyResult(sts, givens)
        return cite(self, args, kw)

    def rewrite_at(self, node, args):
        """``(rhs, theorem of node = rhs)``: ``node`` rewritten with this theorem's equation
        (what the ``apply`` tactic proposes)."""
        return cite_at(self, node, args)

    def __repr__(self):
        return f"<theorem {self.module}>"


def apply(fn):
    """Decorator: the theorem's statement."""
    return TheoremStatement(fn)


def prove(fn):
    """Decorator: the theorem's proof, ``prove(Eq)``."""
    fn.__verigrad_proof__ = True
    return fn
