"""The primitive rules of the jaxpr importer (untrusted): one function per primitive.

A rule takes the importer, the equation and its input ``Tensor``s and returns the output
``Tensor``(s). Entries are index maps over the inputs, written as the mathematics:

    transpose:      out[I] = x[I o perm^-1]
    broadcast:      out[I] = x[I restricted to the operand's dims]     (size-1 dims read 0)
    reduce_sum:     out[I] = sum_j x[I with j at the reduced axis]
    dot_general:    out[B, L, R] = sum_C lhs[B, L, C] rhs[B, R, C]
    reshape:        out[I] = x[J], J the digits of the row-major position of I
    pad / concat:   reads off the operand's shape are 0 (the kernel's total index)

The table ``RULES`` maps a primitive's name to its rule; a name missing from it is a
clear error, never a silent skip.
"""
from __future__ import annotations

from fractions import Fraction

from verigrad.kernel import Delta, Index, IntCond, Num, ReduceMax, RealCond, Sum, Var
from verigrad.kernel.sizes import ONE, ZERO, Poly, as_poly, floordiv, nonneg

from . import jaxpr_scalar as S
from .jaxpr import JaxprImportError, Tensor, bound_index, dim_poly, kind_of, scalar_const

RULES: dict = {}


def rule(*names):
    def deco(f):
        for n in names:
            RULES[n] = f
        return f
    return deco


def _out(ctx, eqn, k=0):
    aval = eqn.outvars[k].aval
    return ctx.shape(aval), kind_of(aval.dtype)


def _bidx(t: Tensor, shape, idx):
    """The operand's index for output index ``idx`` (rank-0 operands and size-1 dims
    broadcast, as jaxpr's element-wise operations allow)."""
    if not t.shape:
        return ()
    if len(t.shape) != len(shape):
        raise JaxprImportError(f"operand of rank {len(t.shape)} for a result of rank {len(shape)}")
    return tuple(ZERO if (s is ONE and o is not ONE) else i for s, o, i in zip(t.shape, shape, idx))


def _fresh(size, hint="j"):
    v = bound_index(as_poly(size), hint)
    return v, Poly.sym(v)


def _read(t: Tensor, idx) -> object:
    """``t[idx]`` where an index may fall off the shape (it then reads 0): decided per
    axis when the oracle can, else the kernel's total index of the materialized term."""
    inside = True
    for e, s in zip(idx, t.shape):
        if nonneg(e) and nonneg(s - 1 - e):
            continue
        if nonneg(-e - 1) or nonneg(e - s):
            return Num(0)
        inside = False
    if inside:
        return t.at(tuple(idx))
    return Index(t.term(), tuple(idx), total=True)


# -- element-wise ---------------------------------------------------------------------

def elementwise(f, kind=None):
    def apply(ctx, eqn, *ins):
        shape, k = _out(ctx, eqn)
        return Tensor(shape, lambda idx: f(*[t.at(_bidx(t, shape, idx)) for t in ins]), kind or k)
    return apply


RULES.update({
    "add": elementwise(S.add), "add_any": elementwise(S.add), "sub": elementwise(S.sub),
    "mul": elementwise(S.mul), "neg": elementwise(S.neg),
    "exp": elementwise(lambda a: S.fn("exp", a)), "log": elementwise(lambda a: S.fn("log", a)),
    "tanh": elementwise(lambda a: S.fn("tanh", a)), "erf": elementwise(lambda a: S.fn("erf", a)),
    "erfc": elementwise(lambda a: S.sub(Num(1), S.fn("erf", a))),
    "log1p": elementwise(lambda a: S.fn("log", S.add(Num(1), a))),
    "expm1": elementwise(lambda a: S.sub(S.fn("exp", a), Num(1))),
    "exp2": elementwise(lambda a: S.fn("exp", S.mul(a, S.fn("log", Num(2))))),
    "sqrt": elementwise(lambda a: S.power(a, Fraction(1, 2))),
    "rsqrt": elementwise(lambda a: S.power(a, Fraction(-1, 2))),
    "square": elementwise(lambda a: S.power(a, 2)),
    "logistic": elementwise(S.logistic), "abs": elementwise(S.absolute), "sign": elementwise(S.sign),
    "and": elementwise(S.logical_and), "or": elementwise(S.logical_or), "not": elementwise(S.logical_not),
    "is_finite": elementwise(lambda a: Num(1), "bool"),  # kernel terms are total and finite
})


@rule("stop_gradient", "copy", "copy_p", "reduce_precision", "sharding_constraint", "optimization_barrier")
def _identity(ctx, eqn, *ins):
    """The value passes unchanged. ``stop_gradient`` too: the claim is about the function
    the primal computes, whatever JAX's autodiff would make of it."""
    return list(ins)


@rule("integer_pow")
def _integer_pow(ctx, eqn, x):
    y = eqn.params["y"]
    return elementwise(lambda a: S.power(a, y))(ctx, eqn, x)


@rule("div")
def _div(ctx, eqn, a, b):
    shape, kind = _out(ctx, eqn)
    if kind != "int":
        return elementwise(S.div)(ctx, eqn, a, b)

    def entry(idx):
        pa, pb = S.int_poly(a.at(_bidx(a, shape, idx))), S.int_poly(b.at(_bidx(b, shape, idx)))
        if pa is None or pb is None or not pb.is_const() or pb.const_value() < 1 or not nonneg(pa):
            raise JaxprImportError("integer division is supported only of a non-negative integer "
                                   "expression by a positive constant")
        return S.int_value(floordiv(pa, pb))
    return Tensor(shape, entry, kind)


@rule("pow")
def _pow(ctx, eqn, x, y):
    shape, kind = _out(ctx, eqn)

    def entry(idx):
        base, e = x.at(_bidx(x, shape, idx)), y.at(_bidx(y, shape, idx))
        q = S.exponent_of(e)
        if q is not None:
            return S.power(base, q)
        vb = S.num_value(base)
        if vb is not None and vb > 0:  # c ** y = exp(y log c)
            return S.fn("exp", S.mul(e, S.fn("log", base)))
        raise JaxprImportError("pow with a non-constant exponent (only x ** c and c ** y are supported)")
    return Tensor(shape, entry, kind)


def _extremum(pick):
    def apply(ctx, eqn, a, b):
        # max(x, -inf) = x and min(x, inf) = x: JAX writes these (softmax's row max).
        neutral = float("-inf") if pick is S.maximum else float("inf")
        if b.const == neutral:
            return a
        if a.const == neutral:
            return b
        return elementwise(pick)(ctx, eqn, a, b)
    return apply


RULES["max"] = _extremum(S.maximum)
RULES["min"] = _extremum(S.minimum)


@rule("clamp")
def _clamp(ctx, eqn, lo, x, hi):
    return elementwise(lambda a, v, b: S.minimum(S.maximum(v, a), b))(ctx, eqn, lo, x, hi)


def _comparison(rel):
    def apply(ctx, eqn, a, b):
        shape, _ = _out(ctx, eqn)

        def entry(idx):
            ta, tb = a.at(_bidx(a, shape, idx)), b.at(_bidx(b, shape, idx))
            if rel == "==":
                hit = _onehot(ctx, ta, tb) or _onehot(ctx, tb, ta)
                if hit is not None:
                    return hit
            return S.compare(ta, tb, rel)
        return Tensor(shape, entry, "bool")
    return apply


def _onehot(ctx, t, other):
    """``[labels[I] == j]`` for an integer argument against an index: the one-hot model."""
    var = t.base if isinstance(t, Index) and not t.total else t
    if not (isinstance(var, Var) and var in ctx.int_vars):
        return None
    p = S.int_poly(other)
    if p is None or len(p.terms) != 1:
        return None
    ((mono, coeff),) = p.terms.items()
    if coeff != 1 or len(mono) != 1 or mono[0][1] != 1:
        return None
    j = mono[0][0]
    from verigrad.kernel import IndexVar
    if not isinstance(j, IndexVar):
        return None
    idx = t.idx if isinstance(t, Index) else ()
    return ctx.onehot(var, idx, j)


for _name, _rel in S.RELATIONS.items():
    RULES[_name] = _comparison(_rel)


@rule("select_n")
def _select_n(ctx, eqn, pred, *cases):
    shape, kind = _out(ctx, eqn)

    def entry(idx):
        p = pred.at(_bidx(pred, shape, idx))
        v = S.num_value(p)
        if v is not None:  # decided: never touch the other branch (it may be a NaN fill)
            c = cases[int(v)]
            return c.at(_bidx(c, shape, idx))
        vals = [c.at(_bidx(c, shape, idx)) for c in cases]
        if len(cases) == 2:
            return S.select(p, vals[0], vals[1])
        out = Num(0)
        for k, val in enumerate(vals):
            out = S.add(out, S.mul(S.compare(p, Num(k), "=="), val))
        return out
    return Tensor(shape, entry, kind)


@rule("convert_element_type")
def _convert(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    if kind == "float0":
        return scalar_const(0, shape, "real")
    if kind == "int" and x.kind == "real":
        def entry(idx):
            t = x.at(idx)
            if S.int_poly(t) is None:
                raise JaxprImportError("conversion of a real value to an integer (rounding) is not supported")
            return t
        return Tensor(shape, entry, kind)
    if kind == "bool" and x.kind != "bool":
        return Tensor(shape, lambda idx: S.compare(x.at(idx), Num(0), "!="), kind)
    out = Tensor(shape, x.at, kind, const=x.const)
    return out


@rule("dim_as_value")
def _dim_as_value(ctx, eqn):
    shape, kind = _out(ctx, eqn)
    t = S.int_value(dim_poly(eqn.params["dim"]))
    return Tensor(shape, lambda idx: t, kind)


@rule("iota")
def _iota(ctx, eqn):
    shape, kind = _out(ctx, eqn)
    dim = eqn.params["dimension"]
    return Tensor(shape, lambda idx: S.int_value(idx[dim]), kind)


# -- reductions -------------------------------------------------------------------------

def _reduced(x: Tensor, axes, idx):
    """The operand index with fresh indices at ``axes`` (and those indices)."""
    it, full, bound = iter(idx), [], []
    for d, s in enumerate(x.shape):
        if d in axes:
            v, p = _fresh(s)
            bound.append(v)
            full.append(p)
        else:
            full.append(next(it))
    return tuple(full), bound


@rule("reduce_sum")
def _reduce_sum(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    axes = set(eqn.params["axes"])

    def entry(idx):
        full, bound = _reduced(x, axes, idx)
        body = x.at(full)
        for v in reversed(bound):
            body = Sum(v, body)
        return body
    return Tensor(shape, entry, kind)


def _reduce_extremum(kind_name):
    def apply(ctx, eqn, x):
        shape, kind = _out(ctx, eqn)
        axes = set(eqn.params["axes"])

        def entry(idx):
            full, bound = _reduced(x, axes, idx)
            body = x.at(full)
            for v in reversed(bound):
                body = ReduceMax(v, body, kind_name)
            return body
        return Tensor(shape, entry, kind)
    return apply


RULES["reduce_max"] = _reduce_extremum("max")
RULES["reduce_min"] = _reduce_extremum("min")


def _arg_extremum(kind_name):
    def apply(ctx, eqn, x):
        """The first index where the extremum is attained:
        ``sum_j j [x_j = m] [no q < j has x_q = m]`` with ``m`` the max (or min)."""
        shape, kind = _out(ctx, eqn)
        (axis,) = eqn.params["axes"]
        rel = ">=" if kind_name == "max" else "<="

        def entry(idx):
            (full, (j,)) = _reduced(x, {axis}, idx)
            (full_q, (q,)) = _reduced(x, {axis}, idx)
            m = ReduceMax(j, x.at(full), kind_name)
            attained = lambda pos: RealCond(S.sub(x.at(pos), m), rel)  # noqa: E731
            earlier = Sum(q, S.mul(IntCond(Poly.sym(q), "<", Poly.sym(j)), attained(full_q)))
            first = RealCond(earlier, "<=")
            return Sum(j, S.mul(S.int_value(Poly.sym(j)), S.mul(attained(full), first)))
        return Tensor(shape, entry, kind)
    return apply


RULES["argmax"] = _arg_extremum("max")
RULES["argmin"] = _arg_extremum("min")


@rule("cumsum")
def _cumsum(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    axis, reverse = eqn.params["axis"], eqn.params.get("reverse", False)

    def entry(idx):
        j, pj = _fresh(shape[axis])
        full = idx[:axis] + (pj,) + idx[axis + 1:]
        keep = IntCond(pj, ">=" if reverse else "<=", idx[axis])
        return Sum(j, S.mul(keep, x.at(full)))
    return Tensor(shape, entry, kind)


# -- structure ------------------------------------------------------------------------------

@rule("broadcast_in_dim")
def _broadcast_in_dim(ctx, eqn, x, *dyn):
    if dyn:
        raise JaxprImportError("broadcast_in_dim with dynamic shapes is not supported")
    shape, kind = _out(ctx, eqn)
    bd = eqn.params["broadcast_dimensions"]

    def entry(idx):
        return x.at(tuple(ZERO if (s is ONE and shape[d] is not ONE) else idx[d] for s, d in zip(x.shape, bd)))
    return Tensor(shape, entry, kind, const=x.const)


def _groups(src, dst):
    """Split two shapes of equal size into consecutive groups of equal size (as Polys):
    ``(n, h*dh) -> (n, h, dh)`` gives ``[([n], [n]), ([h*dh], [h, dh])]``."""
    out, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        gi, gj = [i], [j]
        if i >= len(src) or j >= len(dst):  # trailing size-1 dims
            return [(list(range(len(src))), list(range(len(dst))))]
        pi, pj = src[i], dst[j]
        i, j = i + 1, j + 1
        while pi is not pj:
            if i < len(src) and (j >= len(dst) or _le(pi, pj)):
                pi = pi * src[i]
                gi.append(i)
                i += 1
            elif j < len(dst):
                pj = pj * dst[j]
                gj.append(j)
                j += 1
            else:
                return [(list(range(len(src))), list(range(len(dst))))]
        out.append((gi, gj))
    return out


def _le(a: Poly, b: Poly) -> bool:
    return nonneg(b - a)


@rule("reshape")
def _reshape(ctx, eqn, x, *dyn):
    """Row-major reshape, group by group: a split reads ``x[a*m + b]``, a merge reads
    ``x[c // m, c % m]`` (digits of the position within the group)."""
    if dyn or eqn.params.get("dimensions") is not None:
        raise JaxprImportError("reshape with dynamic shapes or a dimension order is not supported")
    shape, kind = _out(ctx, eqn)
    if shape == x.shape:
        return x
    groups = _groups(x.shape, shape)

    def entry(idx):
        src = [None] * len(x.shape)
        for gi, gj in groups:
            pos = ZERO
            for j in gj:
                pos = pos * shape[j] + idx[j]
            stride = ONE
            for i in reversed(gi):
                digit = floordiv(pos, stride) if stride is not ONE else pos
                src[i] = digit % x.shape[i] if i != gi[0] else digit
                stride = stride * x.shape[i]
        return x.at(tuple(src))
    return Tensor(shape, entry, kind, const=x.const)


@rule("transpose")
def _transpose(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    perm = eqn.params["permutation"]

    def entry(idx):
        full = [None] * len(perm)
        for k, p in enumerate(perm):
            full[p] = idx[k]
        return x.at(tuple(full))
    return Tensor(shape, entry, kind, const=x.const)


@rule("squeeze")
def _squeeze(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    dims = {d % len(x.shape) for d in eqn.params["dimensions"]}

    def entry(idx):
        it = iter(idx)
        return x.at(tuple(ZERO if d in dims else next(it) for d in range(len(x.shape))))
    return Tensor(shape, entry, kind, const=x.const)


@rule("expand_dims")
def _expand_dims(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    dims = {d % len(shape) for d in eqn.params["dimensions"]}
    return Tensor(shape, lambda idx: x.at(tuple(e for d, e in enumerate(idx) if d not in dims)), kind)


@rule("rev")
def _rev(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    dims = set(eqn.params["dimensions"])
    return Tensor(shape, lambda idx: x.at(tuple(s - 1 - e if d in dims else e
                                                for d, (e, s) in enumerate(zip(idx, shape)))), kind)


@rule("dot_general")
def _dot_general(ctx, eqn, lhs, rhs):
    """``out[B, L, R] = sum_C lhs[B, L, C] rhs[B, R, C]`` (batch, free, contracting dims)."""
    shape, kind = _out(ctx, eqn)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lfree = [d for d in range(len(lhs.shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rhs.shape)) if d not in rc and d not in rb]

    def entry(idx):
        nb, nl = len(lb), len(lfree)
        li, ri = [None] * len(lhs.shape), [None] * len(rhs.shape)
        for k, (a, b) in enumerate(zip(lb, rb)):
            li[a] = ri[b] = idx[k]
        for k, a in enumerate(lfree):
            li[a] = idx[nb + k]
        for k, b in enumerate(rfree):
            ri[b] = idx[nb + nl + k]
        bound = []
        for a, b in zip(lc, rc):
            v, p = _fresh(lhs.shape[a], "c")
            li[a] = ri[b] = p
            bound.append(v)
        body = S.mul(lhs.at(tuple(li)), rhs.at(tuple(ri)))
        for v in reversed(bound):
            body = Sum(v, body)
        return body
    return Tensor(shape, entry, kind)


@rule("slice")
def _slice(ctx, eqn, x):
    shape, kind = _out(ctx, eqn)
    starts = [dim_poly(s) for s in eqn.params["start_indices"]]
    strides = eqn.params.get("strides") or [1] * len(starts)
    return Tensor(shape, lambda idx: x.at(tuple(s + e * st for s, e, st in zip(starts, idx, strides))), kind,
                  const=x.const)


@rule("dynamic_slice")
def _dynamic_slice(ctx, eqn, x, *starts):
    shape, kind = _out(ctx, eqn)
    polys = []
    for s in starts:
        p = S.int_poly(s.at(()))
        if p is None:
            raise JaxprImportError("dynamic_slice at a start that is not an integer expression of the sizes")
        polys.append(p)
    return Tensor(shape, lambda idx: x.at(tuple(s + e for s, e in zip(polys, idx))), kind)


@rule("concatenate")
def _concatenate(ctx, eqn, *xs):
    shape, kind = _out(ctx, eqn)
    axis = eqn.params["dimension"]
    offsets, off = [], ZERO
    for x in xs:
        offsets.append(off)
        off = off + x.shape[axis]

    def entry(idx):
        out = Num(0)
        for x, o in zip(xs, offsets):
            out = S.add(out, _read(x, idx[:axis] + (idx[axis] - o,) + idx[axis + 1:]))
        return out
    return Tensor(shape, entry, kind)


@rule("stack")
def _stack(ctx, eqn, *xs):
    """``out[..., k, ...] = xs[k][...]``: a sum over the k of ``[idx == k] xs[k]``."""
    shape, kind = _out(ctx, eqn)
    axis = eqn.params["axis"]

    def entry(idx):
        rest = idx[:axis] + idx[axis + 1:]
        out = Num(0)
        for k, x in enumerate(xs):
            out = S.add(out, S.mul(S.int_compare(idx[axis], Poly.const(k), "=="), x.at(rest)))
        return out
    return Tensor(shape, entry, kind)


@rule("tile")
def _tile(ctx, eqn, x):
    """``out[I] = x[I mod shape]``."""
    shape, kind = _out(ctx, eqn)
    reps = eqn.params["reps"]
    lead = len(shape) - len(x.shape)

    def entry(idx):
        return x.at(tuple(e % s if r != 1 else e for e, s, r in zip(idx[lead:], x.shape, reps[lead:])))
    return Tensor(shape, entry, kind)


@rule("split")
def _split(ctx, eqn, x):
    axis = eqn.params["axis"]
    outs, off = [], ZERO
    for k, _ in enumerate(eqn.outvars):
        shape, kind = _out(ctx, eqn, k)
        o = off
        outs.append(Tensor(shape, lambda idx, o=o: x.at(idx[:axis] + (idx[axis] + o,) + idx[axis + 1:]), kind))
        off = off + shape[axis]
    return outs


@rule("pad")
def _pad(ctx, eqn, x, value):
    """``out[i] = x[(i - lo) / (interior + 1)]`` where that is an index of x, else the value.

    With interior padding and a zero value (a strided layer's cotangent) the entry is
    written as a scatter, ``sum_o [i - lo == (interior + 1) o] x[o]``: a consumer's
    window sum then eliminates its own index against the delta with a unit coefficient,
    which is the normal form the forward's derivative has (a gather through floor
    division is not)."""
    shape, kind = _out(ctx, eqn)
    config = [(dim_poly(lo), dim_poly(hi), int(it)) for lo, hi, it in eqn.params["padding_config"]]
    if any(it for _, _, it in config) and S.num_value(value.at(())) == 0:
        def scatter(idx):
            src, binders, guard = [], [], Num(1)
            for e, (lo, _hi, it), n in zip(idx, config, x.shape):
                if it:
                    o, po = _fresh(n, "o")
                    binders.append(o)
                    guard = S.mul(guard, Delta(e - lo, po * (it + 1)))
                    src.append(po)
                else:
                    src.append(e - lo)
            out = S.mul(guard, _read(x, src))
            for o in reversed(binders):
                out = Sum(o, out)
            return out
        return Tensor(shape, scatter, kind)

    def entry(idx):
        src, guard = [], Num(1)
        for e, (lo, _hi, it) in zip(idx, config):
            p = e - lo
            if it:  # only every (it+1)-th position holds an entry of x
                guard = S.mul(guard, S.int_compare(p % (it + 1), ZERO, "=="))
                p = floordiv(p, Poly.const(it + 1))
            src.append(p)
        inner = S.mul(guard, _read(x, src))
        pv = value.at(())
        if S.num_value(pv) == 0:
            return inner
        inside = guard
        for p, s in zip(src, x.shape):
            inside = S.mul(inside, S.mul(S.int_compare(p, ZERO, ">="), S.int_compare(p, s, "<")))
        return S.add(inner, S.mul(pv, S.logical_not(inside)))
    return Tensor(shape, entry, kind)


@rule("gather")
def _gather(ctx, eqn, x, indices):
    """XLA gather with start indices that are integer expressions of the sizes (what
    ``x[:, 0]``, ``x[..., ::2]`` and friends trace to)."""
    shape, kind = _out(ctx, eqn)
    dn = eqn.params["dimension_numbers"]
    if dn.operand_batching_dims or dn.start_indices_batching_dims:
        raise JaxprImportError("gather with batching dimensions is not supported")
    offset_dims, collapsed, start_map = dn.offset_dims, set(dn.collapsed_slice_dims), dn.start_index_map
    batch_dims = [d for d in range(len(shape)) if d not in offset_dims]
    window_operand_dims = [d for d in range(len(x.shape)) if d not in collapsed]

    def entry(idx):
        g = tuple(idx[d] for d in batch_dims)
        start = [ZERO] * len(x.shape)
        for k, od in enumerate(start_map):
            p = S.int_poly(indices.at(g + (Poly.const(k),)))
            if p is None:
                raise JaxprImportError("gather at indices that are not integer expressions of the sizes "
                                       "(indexing by data is not supported)")
            start[od] = p
        pos = list(start)
        for od, d in zip(window_operand_dims, offset_dims):
            pos[od] = pos[od] + idx[d]
        return x.at(tuple(pos))
    return Tensor(shape, entry, kind)


# -- convolution and pooling -------------------------------------------------------------------

@rule("conv_general_dilated")
def _conv(ctx, eqn, lhs, rhs):
    """``out[b, o, Y] = sum_{c, K} lhs[b, g(o) C' + c, Y s + K r - lo] rhs[o, c, K]`` with
    ``C'`` the input features per group and ``g(o) = o // (O / groups)``."""
    shape, kind = _out(ctx, eqn)
    p = eqn.params
    if p.get("batch_group_count", 1) != 1:
        raise JaxprImportError("conv_general_dilated with batch_group_count > 1 is not supported")
    lspec, rspec, ospec = p["dimension_numbers"]
    nsp = len(lspec) - 2
    strides = p["window_strides"]
    pads = [(dim_poly(a), dim_poly(b)) for a, b in p["padding"]]
    ldil = p.get("lhs_dilation") or (1,) * nsp
    rdil = p.get("rhs_dilation") or (1,) * nsp
    groups = dim_poly(p["feature_group_count"])          # symbolic for a depthwise convolution
    cin_g = rhs.shape[rspec[1]]
    cout = rhs.shape[rspec[0]]
    per_group = cout if groups is ONE else floordiv(cout, groups)

    def entry(idx):
        b, o = idx[ospec[0]], idx[ospec[1]]
        c, pc = _fresh(cin_g, "c")
        g = ZERO if groups is ONE else floordiv(o, per_group)
        li, ri = [None] * len(lhs.shape), [None] * len(rhs.shape)
        li[lspec[0]], li[lspec[1]] = b, g * cin_g + pc
        ri[rspec[0]], ri[rspec[1]] = o, pc
        bound, guard = [c], Num(1)
        for k in range(nsp):
            kv, pk = _fresh(rhs.shape[rspec[2 + k]], "w")
            bound.append(kv)
            ri[rspec[2 + k]] = pk
            pos = idx[ospec[2 + k]] * strides[k] + pk * rdil[k] - pads[k][0]
            if ldil[k] != 1:  # input dilation: only every ldil-th position holds an entry
                guard = S.mul(guard, S.int_compare(pos % ldil[k], ZERO, "=="))
                pos = floordiv(pos, Poly.const(ldil[k])) if nonneg(pos) else None
                if pos is None:
                    raise JaxprImportError("input dilation with padding is not supported")
            li[lspec[2 + k]] = pos
        body = S.mul(guard, S.mul(_read(lhs, li), rhs.at(tuple(ri))))
        for v in reversed(bound):
            body = Sum(v, body)
        return body
    return Tensor(shape, entry, kind)


def _window(eqn, x, idx, ks):
    """Operand positions of window offset ``ks`` for output index ``idx``."""
    p = eqn.params
    strides, pads = p["window_strides"], [(dim_poly(a), dim_poly(b)) for a, b in p["padding"]]
    wdil = p.get("window_dilation") or (1,) * len(idx)
    if any(d != 1 for d in (p.get("base_dilation") or ())):
        raise JaxprImportError("pooling with base dilation is not supported")
    return [e * st + k * wd - lo for e, st, k, wd, (lo, _) in zip(idx, strides, ks, wdil, pads)]


@rule("reduce_window_sum")
def _window_sum(ctx, eqn, x):
    """Sum pooling (average pooling is this, divided): ``out[I] = sum_K x[I s + K - lo]``."""
    shape, kind = _out(ctx, eqn)
    dims = eqn.params["window_dimensions"]

    def entry(idx):
        bound, ks = [], []
        for w in dims:
            v, pv = _fresh(dim_poly(w), "w")
            bound.append(v)
            ks.append(pv)
        body = _read(x, _window(eqn, x, idx, ks))
        for v in reversed(bound):
            body = Sum(v, body)
        return body
    return Tensor(shape, entry, kind)


def _window_extremum(pick):
    def apply(ctx, eqn, x):
        """Max (min) pooling over a window of concrete size K, as the first extremal entry:
        ``sum_k v_k prod_{q<k} [v_k > v_q] prod_{q>k} [v_k >= v_q]``: exact, and
        differentiable off ties (the kink set)."""
        import itertools
        shape, kind = _out(ctx, eqn)
        dims = eqn.params["window_dimensions"]
        if any(not isinstance(w, int) for w in dims):
            raise JaxprImportError("max/min pooling needs a window of concrete size")
        if any(not (dim_poly(a).is_const() and dim_poly(a).const_value() == 0 and dim_poly(b).is_const()
                    and dim_poly(b).const_value() == 0) for a, b in eqn.params["padding"]):
            raise JaxprImportError("max/min pooling with padding is not supported (pad reads -inf)")
        offsets = list(itertools.product(*[range(w) for w in dims]))
        strict, loose = (">", ">=") if pick == "max" else ("<", "<=")

        def entry(idx):
            vals = [x.at(tuple(_window(eqn, x, idx, [Poly.const(k) for k in ks]))) for ks in offsets]
            out = Num(0)
            for k, v in enumerate(vals):
                w = Num(1)
                for q, u in enumerate(vals):
                    if q != k:
                        w = S.mul(w, S.real_compare(v, u, strict if q < k else loose))
                out = S.add(out, S.mul(v, w))
            return out
        return Tensor(shape, entry, kind)
    return apply


RULES["reduce_window_max"] = _window_extremum("max")
RULES["reduce_window_min"] = _window_extremum("min")


# -- calls: bodies are inlined --------------------------------------------------------------------

@rule("jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
      "remat", "checkpoint", "custom_lin")
def _call(ctx, eqn, *ins):
    """A call's body is inlined: ``jax.nn.relu``, ``gelu``, ``softmax`` arrive wrapped in
    these. For custom_jvp/custom_vjp calls the primal body is the function's meaning."""
    p = eqn.params
    body = p.get("jaxpr") or p.get("call_jaxpr") or p.get("fun_jaxpr")
    if body is None:
        raise JaxprImportError(f"call primitive {eqn.primitive.name} without a body")
    outs = ctx.run(body, list(ins))
    return outs

