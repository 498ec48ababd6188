"""Matrix products and transposes: ``A @ B`` and ``A.T``.

``A @ B`` is the matrix (or vector) product; a matrix ``(m, a)`` times a batch of m
matrices ``(m, a, b)`` multiplies row by row (``(A @ B)[i] = A[i] @ B[i]``), which is
how ``Q (K + a^K)^T`` is read in the relative-position attention of Shaw et al.
``.T`` transposes a matrix, and swaps the last two axes of a rank-3 tensor.
"""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import poly_str

from ..errors import ProofError
from .atoms import as_expr
from .kernel_terms import at, lam, shape_str, sum_over
from .node import Expr


def _matmul_shape(a, b):
    ra, rb = len(a), len(b)
    if ra == 0 or rb == 0:
        raise ProofError("@ of a scalar: use * instead")
    if ra == 2 and rb == 3:              # row-batched: (m, a) @ (m, a, b) -> (m, b)
        if a[0] is not b[0] or a[1] is not b[1]:
            raise ProofError(f"@ of shapes {shape_str(a)} and {shape_str(b)}")
        return (a[0], b[2])
    if ra == 3 and rb == 2:              # batch of matrices times a matrix
        if a[2] is not b[0]:
            raise ProofError(f"@ of shapes {shape_str(a)} and {shape_str(b)}")
        return (a[0], a[1], b[1])
    if ra > 2 or rb > 2:
        raise ProofError(f"@ of shapes {shape_str(a)} and {shape_str(b)} is not supported")
    if a[-1] is not b[0]:
        raise ProofError(f"@ of shapes {shape_str(a)} and {shape_str(b)}: {poly_str(a[-1])} != {poly_str(b[0])}")
    return a[:-1] + b[1:]


def matmul_terms(A: T.Term, B: T.Term) -> T.Term:
    """The kernel term of ``A @ B`` (see ``_matmul_shape`` for the shapes allowed)."""
    ra, rb = len(A.shape), len(B.shape)
    if ra == 2 and rb == 3:
        return lam([A.shape[0]], lambda i: matmul_terms(at(A, i), at(B, i)), A, B)
    if ra == 3 and rb == 2:
        return lam([A.shape[0]], lambda i: matmul_terms(at(A, i), B), A, B)
    n = A.shape[-1]

    def dot(a_idx, b_idx):
        return sum_over(n, lambda j: at(A, *a_idx, j) * at(B, j, *b_idx), A, B, *a_idx, *b_idx)
    if ra == 1 and rb == 1:
        return dot((), ())
    if ra == 1:
        return lam([B.shape[1]], lambda k: dot((), (k,)), A, B)
    if rb == 1:
        return lam([A.shape[0]], lambda i: dot((i,), ()), A, B)
    return lam([A.shape[0], B.shape[1]], lambda i, k: dot((i,), (k,)), A, B)


class MatMul(Expr):
    """``A @ B @ ...``, flattened (associativity is a theorem, ``flat=False`` keeps the
    grouping as written)."""
    rank = 7

    def __new__(cls, *args, flat=True):
        flat_args = []
        for a in args:
            a = as_expr(a)
            flat_args.extend(a.args if isinstance(a, MatMul) and flat else [a])
        flat = flat_args
        if len(flat) == 1:
            return flat[0]
        self = object.__new__(cls)
        Expr.__init__(self, *flat)
        shape = flat[0].shape
        for b in flat[1:]:
            shape = _matmul_shape(shape, b.shape)
        self._shape = shape
        return self

    def __init__(self, *args, flat=True):
        pass

    def rebuild(self, args):
        return MatMul(*args, flat=False)

    def replace(self, old, new):
        """A product pattern also matches a run of consecutive factors."""
        if isinstance(old, MatMul) and self != old:
            n = len(old.args)
            args = list(self.args)
            for s in range(len(args) - n + 1):
                if all(a == b for a, b in zip(args[s:s + n], old.args)):
                    return MatMul(*args[:s], new, *args[s + n:]).replace(old, new)
        return super().replace(old, new)

    def _compile(self):
        t = self.args[0].term
        for b in self.args[1:]:
            t = matmul_terms(t, b.term)
        return t

    def _text(self):
        # below * and / : Python reads ``a * b @ c`` as ``(a * b) @ c``, so a product inside
        # a product of another kind is parenthesized
        return " @ ".join(a._paren(21) for a in self.args), 19


class Transpose(Expr):
    rank = 2

    def __init__(self, x):
        x = as_expr(x)
        super().__init__(x)
        s = x.shape
        if len(s) == 2:
            self._shape = (s[1], s[0])
        elif len(s) == 3:
            self._shape = (s[0], s[2], s[1])
        elif len(s) <= 1:
            self._shape = s
        else:
            raise ProofError(f".T of a rank-{len(s)} tensor")

    @property
    def arg(self):
        return self.args[0]

    def _compile(self):
        x = self.arg.term
        if len(x.shape) <= 1:
            return x
        if len(x.shape) == 2:
            return lam(self._shape, lambda i, j: at(x, j, i), x)
        return lam(self._shape, lambda b, i, j: at(x, b, j, i), x)

    def _text(self):
        return f"{self.arg._paren(100)}.T", 100
