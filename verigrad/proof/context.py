"""The proof being run: its context, and the stack of contexts.

A proof may cite a theorem whose proof then runs inside it, so contexts form a stack;
the one on top is the proof running now. A theorem's ``apply(...)`` reads it to tell
its own proof (where it states the goals) from a citation, and a citation records
itself there (``cites``, and ``capped`` when what it cites is not proved).

The bottom of the script runner layer.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from .proof_log import ProofLog


@dataclass
class Context:
    module: str
    log: ProofLog
    generic_args: tuple | None = None
    goal_statements: list | None = None
    cites: list = field(default_factory=list)
    capped: list = field(default_factory=list)
    statement_only: bool = False      # stop at ``apply(...)``: what the file states


class Stated(Exception):
    """Raised at ``Eq << apply(...)`` when only the statement is wanted."""

    def __init__(self, statements, givens):
        super().__init__("statement only")
        self.statements, self.givens = statements, givens


_stack: list = []


def current() -> Context | None:
    """The context of the proof running now (None outside any proof)."""
    return _stack[-1] if _stack else None


@contextmanager
def running(ctx: Context):
    """Run a proof body in ``ctx`` (the top of the stack until it returns or raises)."""
    _stack.append(ctx)
    try:
        yield ctx
    finally:
        _stack.pop()
