"""Integer expressions by cases (sizes, indices, their arithmetic, Min and Max).

An integer-valued node (a number, a size, an index, ``n - i``, ``Min(i, j)``) knows its
value as *cases* ``[(weight, poly)]``: the value is the polynomial ``poly`` where the
kernel 0/1 term ``weight`` is 1 (None means always), and the weights sum to 1. Without
Min and Max there is one case, a polynomial; with them an integer expression can still
index a tensor, the read becoming weighted cases (``expressions.indexing``).
"""
from __future__ import annotations

from verigrad.kernel.sizes import KernelError, Poly

from ..errors import ProofError
from .kernel_terms import int_term


class IntMixin:
    """Mixed into the integer-valued node kinds, before ``Expr``; each defines
    ``_int_cases``."""

    is_int = True

    @property
    def cases(self):
        """``[(weight, poly)]``: the value is ``poly`` where ``weight`` (a kernel term, or
        None for 1) is 1; the weights are 0/1 indicators summing to 1."""
        c = getattr(self, "_cases", None)
        if c is None:
            try:
                c = self._cases = self._int_cases()
            except KernelError as e:
                raise ProofError(f"{self}: {e}") from None
        return c

    @property
    def poly(self) -> Poly:
        c = self.cases
        if len(c) != 1 or c[0][0] is not None:
            raise ProofError(f"{self} is not a polynomial integer expression")
        return c[0][1]

    def _compile(self):
        return int_term(self.cases)
