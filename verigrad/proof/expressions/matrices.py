"""Special matrices: the identity, swap matrices and block matrices.

Each compiles to a comprehension of Kronecker deltas (and, for a block matrix, guarded
reads of its blocks); ``Swap`` and ``BlockMatrix`` also give an entry as an expression
(``entry``), which the ``as_KroneckerDelta`` tactic writes out.
"""
from __future__ import annotations

from verigrad.kernel import terms as T
from verigrad.kernel.sizes import Poly, poly_str

from ..errors import ProofError
from .arithmetic import Add
from .atoms import Number, SizeExpr, as_expr
from .constant_tensors import ZeroMatrix
from .indexing import Indexed
from .indicators import Bool, KroneckerDelta
from .kernel_terms import index_names, lam, pick_indices
from .node import Expr
from .symbols import IntSymbol, as_size


class Identity(Expr):
    rank = 1

    def __init__(self, n):
        n = as_expr(n)
        super().__init__(n)
        s = as_size(n)
        self._shape = (s, s)

    def _compile(self):
        return lam(self._shape, lambda i, j: T.Delta(i, j))

    def _text(self):
        return f"Identity({self.args[0]})", 100


class Swap(Expr):
    """The n x n matrix that swaps rows i and j (the identity when i == j):
    ``S[h, k] = delta(h, k) + (delta(h, i) - delta(h, j)) (delta(k, j) - delta(k, i))``."""
    rank = 1

    def __init__(self, n, i, j):
        n, i, j = as_expr(n), as_expr(i), as_expr(j)
        super().__init__(n, i, j)
        s = as_size(n)
        for e in (i, j):
            if isinstance(e, IntSymbol) and e.kind is None:
                e.resolve_index(s)
        self._shape = (s, s)

    def entry(self, h, k) -> Expr:
        """The entry as Kronecker deltas (front end)."""
        _, i, j = self.args
        d = KroneckerDelta
        return d(h, k) + (d(h, i) - d(h, j)) * (d(k, j) - d(k, i))

    def _compile(self):
        used = set().union(*[a.symbol_names() for a in self.args])
        h, k = pick_indices(self._shape, used, "hkab")
        return T.Lamda([h, k], self.entry(IntSymbol.wrap(h), IntSymbol.wrap(k)).term)

    def _text(self):
        return f"Swap({', '.join(str(a) for a in self.args)})", 100


class BlockMatrix(Expr):
    """``BlockMatrix([[A, B], [C, D]])`` or the block vector ``BlockMatrix([u, v])``.
    A scalar block counts as 1 x 1 (or as one entry of a block vector)."""
    rank = 8

    def __init__(self, rows):
        rows = list(rows)
        two_d = all(isinstance(r, (list, tuple)) for r in rows)
        if two_d:
            grid = [[as_expr(b) for b in r] for r in rows]
        else:
            grid = [[as_expr(b) for b in rows]]
        flat = [b for r in grid for b in r]
        super().__init__(*flat)
        self.layout = tuple(len(r) for r in grid)
        self.two_d = two_d
        self._blocks = grid
        self._offsets()

    def _data(self):
        return (self.layout, self.two_d)

    def rebuild(self, args):
        it = iter(args)
        grid = [[next(it) for _ in range(k)] for k in self.layout]
        return BlockMatrix(grid if self.two_d else grid[0])

    @property
    def blocks(self):
        return self._blocks

    def _offsets(self):
        one = Poly.const(1)
        if not self.two_d:
            offs, pos = [], Poly.const(0)
            for b in self._blocks[0]:
                if len(b.shape) > 1:
                    raise ProofError(f"block vector with the non-vector block {b}")
                offs.append(pos)
                pos = pos + (b.shape[0] if b.shape else one)
            self.offsets = [offs]
            self._shape = (pos,)
            return
        heights, widths = [], None
        for r in self._blocks:
            hs = {b.shape[0] for b in r if len(b.shape) == 2}
            heights.append(hs.pop() if len(hs) == 1 else one)
            if len(hs) > 0:
                raise ProofError("blocks of one block row have different heights")
            ws = [b.shape[1] if len(b.shape) == 2 else one for b in r]
            if widths is None:
                widths = ws
            elif len(ws) != len(widths):
                raise ProofError("block rows have different numbers of blocks")
        for r in self._blocks:
            for b, w in zip(r, widths):
                if len(b.shape) == 2 and b.shape[1] is not w:
                    raise ProofError(f"block {b} has width {poly_str(b.shape[1])}, its column {poly_str(w)}")
                if len(b.shape) not in (0, 2):
                    raise ProofError(f"block {b} of a block matrix must be a matrix or a scalar")
        self.offsets, r0 = [], Poly.const(0)
        for r, hgt in zip(self._blocks, heights):
            row, c0 = [], Poly.const(0)
            for w in widths:
                row.append((r0, c0))
                c0 = c0 + w
            self.offsets.append(row)
            r0 = r0 + hgt
        self._shape = (r0, c0)

    def entry(self, idx) -> Expr:
        """The entry at ``idx`` (integer expressions) as a sum over the blocks of guarded
        reads and Kronecker deltas (front end; used by ``as_KroneckerDelta``)."""
        parts = []
        for r, offs in zip(self._blocks, self.offsets):
            for b, off in zip(r, offs):
                if isinstance(b, ZeroMatrix) or (isinstance(b, Number) and b.value == 0):
                    continue
                if not self.two_d:
                    off = (off,)
                if b.shape == ():
                    part = b
                    for e, o in zip(idx, off):
                        part = KroneckerDelta(e, SizeExpr(o)) * part
                    parts.append(part)
                else:
                    shifted = [e - SizeExpr(o) if o is not Poly.const(0) else e for e, o in zip(idx, off)]
                    guards = Number(1)
                    for e, o, s in zip(idx, off, b.shape):
                        if o is not Poly.const(0):
                            guards = guards * Bool(e >= SizeExpr(o))
                        guards = guards * Bool(e < SizeExpr(o + s))
                    parts.append(guards * Indexed(b, *shifted, total=True))
        return Add(*parts) if parts else Number(0)

    def _compile(self):
        used = set().union(*[b.symbol_names() | index_names(b.term) for b in self.args])
        vs = pick_indices(self._shape, used, "hkab")
        return T.Lamda(vs, self.entry([IntSymbol.wrap(v) for v in vs]).term)

    def _text(self):
        if not self.two_d:
            return "BlockMatrix([" + ", ".join(str(b) for b in self._blocks[0]) + "])", 100
        return "BlockMatrix([" + ", ".join("[" + ", ".join(str(b) for b in r) + "]" for r in self._blocks) + "])", 100
