"""The error of the proof language.

The bottom of ``verigrad.proof``: every layer raises ``ProofError`` (or a subclass:
``StepRejected`` where the kernel cannot justify a step, ``TacticError`` where a tactic
does not apply), and this module imports nothing of the package (the base class is the
kernel's, below every package).
"""
from verigrad.kernel.sizes import VerigradError


class ProofError(VerigradError):
    """A proof step or a statement is ill-formed or was rejected by the kernel."""
