"""Indexing: ``X[i, j]``, ``X[:, j]``, ``X[a:b]``.

``Indexed`` is strict indexing (each index provably inside its axis: the kernel checks
it); ``total=True`` is total indexing (zero outside the tensor), which a block of a
``BlockMatrix`` is read with. An index with Min or Max in it reads the tensor in
weighted cases, and is strict too: the kernel must prove that each case's index lies
inside its axis wherever that case's weight is 1 (``_in_range``), or the read is
refused. An integer symbol without a domain used as an index becomes an index over that
axis.
"""
from __future__ import annotations

from verigrad.kernel import Failure, prove_equal
from verigrad.kernel import terms as T
from verigrad.kernel.sizes import KernelError, Poly, as_poly

from verigrad.report.printing import TOTAL_MARK

from ..errors import ProofError
from .atoms import Number, SizeExpr, as_expr
from .kernel_terms import at, lam, shape_str, weight_product
from .node import Expr
from .symbols import IntSymbol


class Slice(Expr):
    """``start:stop`` inside an index (``X[:, j]``, ``X[a:b]``)."""

    def __init__(self, start, stop):
        super().__init__(as_expr(start), as_expr(stop))
        self._shape = ()

    def _text(self):
        a, b = self.args
        return ("" if a == Number(0) else str(a)) + ":" + str(b), 100


def _resolve_indices(base_shape, idx):
    out = []
    for k, e in enumerate(idx):
        if isinstance(e, slice):
            if e.step is not None:
                raise ProofError("slices with a step are not supported")
            start = as_expr(0 if e.start is None else e.start)
            stop = SizeExpr(base_shape[k]) if e.stop is None else as_expr(e.stop)
            out.append(Slice(start, stop))
            continue
        e = as_expr(e)
        if not e.is_int:
            raise ProofError(f"index {e} is not an integer expression")
        if isinstance(e, IntSymbol) and e.kind is None:
            e.resolve_index(base_shape[k])
        out.append(e)
    return tuple(out)


class Indexed(Expr):
    """``base[i, j]``: strict indexing (each index provably inside its axis)."""
    rank = 2

    def __init__(self, base, *idx, total=False):
        base = as_expr(base)
        if len(idx) > len(base.shape):
            raise ProofError(f"{len(idx)} indices for {base} of shape {shape_str(base.shape)}")
        idx = _resolve_indices(base.shape, idx)
        super().__init__(base, *idx)
        self.total = total
        shape = []
        for k, e in enumerate(idx):
            if isinstance(e, Slice):
                shape.append(e.args[1].poly - e.args[0].poly)
        self._shape = tuple(shape) + base.shape[len(idx):]

    @property
    def base(self):
        return self.args[0]

    @property
    def indices(self):
        return self.args[1:]

    def _data(self):
        return (self.total,)

    def rebuild(self, args):
        return Indexed(args[0], *args[1:], total=self.total)

    def __getitem__(self, more):
        if not isinstance(more, tuple):
            more = (more,)
        if any(isinstance(e, Slice) for e in self.indices):
            return Indexed(self, *more)
        return Indexed(self.base, *self.indices, *more, total=self.total)

    def _compile(self):
        base = self.base.term
        slices = [(k, e) for k, e in enumerate(self.indices) if isinstance(e, Slice)]
        if slices:
            sizes = [e.args[1].poly - e.args[0].poly for _, e in slices]

            def body(*vs):
                idx, it = [], iter(vs)
                for e in self.indices:
                    idx.append(e.args[0].poly + Poly.sym(next(it)) if isinstance(e, Slice) else e)
                return index_term(base, idx, self.total)
            return lam(sizes, body, base, *[e.term for e in self.indices if not isinstance(e, Slice)])
        return index_term(base, list(self.indices), self.total)

    def _text(self):
        s = f"{self.base._paren(100)}[{', '.join(str(e) for e in self.indices)}]"
        if self.total and not self._reads_inside():
            return s + TOTAL_MARK, 30      # "entry, or 0 off the shape": never shown as a strict read
        return s, 100

    def _reads_inside(self) -> bool:
        """Whether the strict read of the same indices compiles (each index shown inside its
        axis by the kernel), so that the total read and the strict one agree."""
        try:
            Indexed(self.base, *self.indices).term
        except (ProofError, KernelError):
            return False
        return True


def _in_range(base: T.Term, idx, combos):
    """Refuse a strict read by cases unless the kernel proves every case's index inside
    its axis where the case's weight is 1: ``sum_c w_c prod_k [0 <= p_k][p_k <= s_k - 1]
    = 1`` (the weights sum to 1). The read itself is total in each case (a case's
    index need not be in range where its weight is 0, as in a clip's unused branch);
    without this check an index such as ``Min(i + 1, n)`` on an axis of size n would
    read 0 at ``i = n - 1``, where strict indexing has no entry."""
    parts = []
    for w, ps in combos:
        conds = [T.IntCond(0, "<=", p) for p in ps]
        conds += [T.IntCond(p, "<=", s - 1) for p, s in zip(ps, base.shape)]
        c = conds[0] if len(conds) == 1 else T.Mul(tuple(conds))
        parts.append(c if w is None else T.Mul((w, c)))
    claim = parts[0] if len(parts) == 1 else T.Add(tuple(parts))
    try:
        res = prove_equal(claim, T.Num(1))
    except KernelError as e:
        res = Failure(str(e))
    if not isinstance(res, Failure) and res.conds:      # shown only under a side condition: not shown
        res = Failure("only under " + "; ".join(str(c) for c in sorted(res.conds, key=str)))
    if isinstance(res, Failure):
        shown = ", ".join(str(e) for e in idx)
        raise ProofError(f"{base!r}[{shown}]: the index may fall outside the shape "
                         f"{shape_str(base.shape)} (the kernel cannot show it inside: {res})")


def index_term(base: T.Term, idx, total=False) -> T.Term:
    """``base[idx]`` as a kernel term; indices with Min/Max become weighted cases, each
    index proved inside its axis where its case holds (unless ``total``)."""
    combos = [(None, [])]
    for e in idx:
        cs = e.cases if isinstance(e, Expr) else [(None, as_poly(e))]
        combos = [(weight_product(w1, w2), ps + [p]) for w1, ps in combos for w2, p in cs]
    if len(combos) == 1 and combos[0][0] is None and not total:
        ps = combos[0][1]
        try:
            return at(base, *ps)
        except KernelError as e:
            raise ProofError(f"{e}") from None
    if not total:
        _in_range(base, idx, combos)
    parts = []
    for w, ps in combos:
        t = T.Index(base, tuple(ps), total=True)
        parts.append(t if w is None else T.Mul((w, t)))
    return parts[0] if len(parts) == 1 else T.Add(tuple(parts))
