"""Importer rules for sorting and for indexing by data (untrusted): ``sort`` (values, and
``argsort``: a sort with an iota operand), ``gather`` at data start indices (and with
batching dimensions, what ``take_along_axis`` traces to), ``scatter-add``.

Each rule models XLA's semantics for every input of its dtype, or refuses with one line
naming the primitive (``docs/primitives.md``):

    sort:        P = argsort(key line) (stable; ties by index, and JAX compares -0.0 and
                 0.0 as equal), out_m[.., i, ..] = sum_j [P[i] == j] op_m[.., j, ..];
                 an iota operand gives P[i] itself (sum_j [P[i] == j] j = P[i])
    gather:      out[B, W] = sum_c [clamp(t) == c] x[c + W]    (CLIP, PROMISE_IN_BOUNDS: XLA clamps
                 a start into [0, n - slice]; [clamp(t) == c] = [t == c] + [c == 0][t < 0]
                 + [c == hi][t > hi]); FILL_OR_DROP: sum_c [t == c] x[c + W] (0 where t is
                 out of range) + [t not in range] fill
    scatter-add: out[J] = z[J] + sum_G prod_k [t_k(G) == J_k] u[G, J_window]   (FILL_OR_DROP drops
                 an update whose index is off the operand; CLIP clamps as above)
    top_k:       the first k of the stable argsort of -x (ties: the lower index first)
    floor_divide, remainder (jit calls) of integer data by a size k >= 1: the kernel's IntDiv,
                 floor(t / k), and t - k floor(t / k)

``[t == c]`` is the kernel's ``IntEq``, and ``argsort`` its ``Argsort``: the kernel knows an
argsort is a permutation and proves what follows from that, while a gather by arbitrary
integer data stays a sum with multiplicities.
"""
from __future__ import annotations

from verigrad.kernel import Argsort, Index, IntDiv, IntEq, Lamda, Num, Sum
from verigrad.kernel.sizes import ZERO, Poly, nonneg

from . import jaxpr_scalar as S
from .jaxpr_core import JaxprImportError, Tensor, dim_poly
from .jaxpr_rules import (FINITE, NAN, RULES, Facts, _accept, _assume, _dtype, _fresh, _note, _out, _where, facts,
                          finite, rule)

_poly_gather = RULES["gather"]


def _provably_one(term) -> bool:
    """Whether the scalar 0/1 ``term`` normalizes to 1 with no condition (the kernel's
    normal form as an oracle: a wrong answer can only make the model refuse or differ
    from XLA, which the validation catches)."""
    try:
        from verigrad.kernel.normal import Normalizer
        nz = Normalizer()
        d = nz.sub(nz.norm(Num(1), ()), nz.norm(term, ()))
        return not d.terms and not nz.conds
    except Exception:  # noqa: BLE001 - undecided
        return False


def _input_free(term) -> bool:
    """Whether ``term``'s normal form has no variable (it is the same at every input)."""
    try:
        from verigrad.kernel.normal import Normalizer
        return not Normalizer().norm(term, ()).tvars
    except Exception:  # noqa: BLE001 - undecided: taken as varying (the assumption is stated)
        return False


def _generic(shape, hint="g"):
    return tuple(_fresh(s, hint)[1] for s in shape)


def _mode(eqn) -> str:
    return getattr(eqn.params.get("mode"), "name", str(eqn.params.get("mode")))


def _within(t, hi: Poly):
    """``[0 <= t <= hi]`` for an integer-valued term ``t``."""
    return S.mul(S.integer_compare(t, Num(0), ">="), S.integer_compare(t, S.int_value(hi), "<="))


def _clamped_eq(t, c: Poly, hi: Poly):
    """``[clamp(t, 0, hi) == c]`` for ``c`` in ``[0, hi]``: exact for every integer ``t``."""
    out = IntEq(t, c)
    low = S.int_compare(c, ZERO, "==")
    if S.num_value(low) != 0:
        out = S.add(out, S.mul(low, S.integer_compare(t, Num(0), "<")))
    high = S.int_compare(c, hi, "==")
    if S.num_value(high) != 0:
        out = S.add(out, S.mul(high, S.integer_compare(t, S.int_value(hi), ">")))
    return out


# -- sort ------------------------------------------------------------------------------------

def _is_iota(op: Tensor, dim: int, idx) -> bool:
    """Whether ``op`` is ``j`` at every ``[.., j, ..]`` along ``dim`` (an iota operand)."""
    j = _fresh(op.shape[dim], "q")[1]
    return S.int_poly(op.at(idx[:dim] + (j,) + idx[dim + 1:])) is j


def _sorted(ctx, eqn, ops):
    """Every operand permuted by the argsort of the key's line (``ops[0]``)."""
    dim = eqn.params["dimension"]
    key = ops[0]
    n = key.shape[dim]
    lines: dict = {}

    def perm(idx):
        other = idx[:dim] + idx[dim + 1:]
        if other not in lines:
            j, pj = _fresh(n, "j")
            lines[other] = Argsort(Lamda([j], key.at(idx[:dim] + (pj,) + idx[dim + 1:])))
        return lines[other]

    outs = []
    for k, op in enumerate(ops):
        shape, kind = _out(ctx, eqn, k)

        def entry(idx, op=op):
            p_i = Index(perm(idx), (idx[dim],))
            if _is_iota(op, dim, idx):
                return p_i
            j, pj = _fresh(n, "j")
            return Sum(j, S.mul(IntEq(p_i, pj), op.at(idx[:dim] + (pj,) + idx[dim + 1:])))
        outs.append(Tensor(shape, entry, kind))
    return outs


@rule("sort")
def _sort(ctx, eqn, *ops):
    """Stable sort by one key: every operand permuted by the key's argsort. Each output
    keeps its operand's facts; its finiteness is the operand's, permuted by the key."""
    stable, keys = eqn.params["is_stable"], eqn.params["num_keys"]
    if keys != 1:
        raise JaxprImportError(f"a sort by {keys} keys is not supported (one key only)")
    if len(ops) > 1 and not stable:
        raise JaxprImportError("an unstable sort of several operands (XLA orders ties as it likes) is not supported")
    _accept(ctx, ops[:1], FINITE, "sort orders NaN and infinities")
    outs = _sorted(ctx, eqn, ops)
    rerun: dict = {}

    def fin(k):
        if "outs" not in rerun:      # the key itself stays: it orders the finiteness indicators
            rerun["outs"] = _sorted(ctx, eqn, [ops[0]] + [finite(ctx, t) for t in ops[1:]])
        return rerun["outs"][k]
    for k, (o, op) in enumerate(zip(outs, ops)):
        f = facts(ctx, op)
        _note(ctx, o, Facts(f.risk, f.sign, f.integral, f.origin, (lambda k=k: fin(k)) if f.risk else None), ops)
    return outs


@rule("top_k")
def _top_k(ctx, eqn, x):
    """The k largest entries along ``axis`` and their indices: the first k of the stable
    argsort of ``-x`` (ties: the lower index first, as XLA). Signed zeros are one real:
    XLA ranks 0.0 above -0.0, the model ties them (by index)."""
    _accept(ctx, [x], FINITE, "top_k orders NaN and infinities")
    axis = eqn.params.get("axis", len(x.shape) - 1)
    axis = axis % len(x.shape)
    n = x.shape[axis]
    lines: dict = {}

    def perm(idx):
        other = idx[:axis] + idx[axis + 1:]
        if other not in lines:
            j, pj = _fresh(n, "j")
            lines[other] = Argsort(Lamda([j], S.neg(x.at(idx[:axis] + (pj,) + idx[axis + 1:]))))
        return lines[other]

    vshape, vkind = _out(ctx, eqn, 0)
    ishape, ikind = _out(ctx, eqn, 1)

    def value(idx):
        j, pj = _fresh(n, "j")
        return Sum(j, S.mul(IntEq(Index(perm(idx), (idx[axis],)), pj), x.at(idx[:axis] + (pj,) + idx[axis + 1:])))
    values = Tensor(vshape, value, vkind)
    fx = facts(ctx, x)
    signed_zeros = x.kind == "real" and fx.sign != "pos"

    def index(idx):
        # The values are exact (-0.0 and 0.0 are one real), the indices are not: XLA ranks
        # 0.0 above -0.0 where the model ties them by index, so two tied zeros of opposite
        # signs swap (red team RT2-a1). A key that does not vary with the inputs is ordered
        # so at every input (a constant -0.0 before 0.0 decides the index): refused; else
        # the indices hold where no two tied entries are zeros of opposite signs: stated.
        if signed_zeros:
            if _input_free(x.at(_generic(x.shape))):
                raise JaxprImportError("top_k indices of a key that does not vary with the inputs: "
                                   "XLA ranks 0.0 above -0.0, which the model (exact reals) ties by index")
            _assume(ctx, f"no two entries top_k ties are zeros of opposite signs ({_where(eqn)}: XLA ranks "
                         "0.0 above -0.0, the model ties them by index)")
        return Index(perm(idx), (idx[axis],))
    indices = Tensor(ishape, index, ikind)
    _note(ctx, values, Facts(FINITE, fx.sign, fx.integral, fx.origin), (x,))
    _note(ctx, indices, Facts(FINITE, "nonneg", True, ""), (x,))
    return [values, indices]


# -- gather ----------------------------------------------------------------------------------

def _gather_parts(eqn, x, indices):
    shape = tuple(dim_poly(s) for s in eqn.outvars[0].aval.shape)
    dn, p = eqn.params["dimension_numbers"], eqn.params
    obatch, ibatch = tuple(dn.operand_batching_dims), tuple(dn.start_indices_batching_dims)
    collapsed, start_map, offset_dims = set(dn.collapsed_slice_dims), tuple(dn.start_index_map), dn.offset_dims
    sizes = [dim_poly(s) for s in p["slice_sizes"]]
    batch_dims = [d for d in range(len(shape)) if d not in offset_dims]
    window = [d for d in range(len(x.shape)) if d not in collapsed and d not in obatch]
    return shape, obatch, ibatch, start_map, offset_dims, sizes, batch_dims, window


def _data_gather(ctx, eqn, x, indices, fill, mode):
    """The gather at start indices that are integer data (or with batching dimensions)."""
    shape, obatch, ibatch, start_map, offset_dims, sizes, batch_dims, window = _gather_parts(eqn, x, indices)
    his = [x.shape[od] - sizes[od] for od in start_map]

    def entry(idx):
        g = tuple(idx[d] for d in batch_dims)
        base = [ZERO] * len(x.shape)
        for od, d in zip(window, offset_dims):
            base[od] = idx[d]
        for ob, ib in zip(obatch, ibatch):
            base[ob] = g[ib]
        starts = [indices.at(g + (Poly.const(k),)) for k in range(len(start_map))]
        weight, binders, pos = Num(1), [], list(base)
        for t, od, hi in zip(starts, start_map, his):
            c, pc = _fresh(hi + 1, "c")
            binders.append(c)
            weight = S.mul(weight, IntEq(t, pc) if mode == "FILL_OR_DROP" else _clamped_eq(t, pc, hi))
            pos[od] = pos[od] + pc
        body = S.mul(weight, x.at(tuple(pos)))
        for c in reversed(binders):
            body = Sum(c, body)
        if mode != "FILL_OR_DROP":
            return body
        inside = Num(1)
        for t, hi in zip(starts, his):
            inside = S.mul(inside, _within(t, hi))
        if _provably_one(inside):
            return body
        if fill is None:
            raise JaxprImportError("gather (mode fill) at data indices that may be out of bounds fills a value "
                                   "the kernel cannot represent")
        # the sum is already 0 where a start is out of range (no c matches): only the fill is guarded
        return S.add(body, S.mul(S.logical_not(inside), fill))
    return Tensor(shape, entry, _out(ctx, eqn)[1])


@rule("gather")
def _gather(ctx, eqn, x, indices):
    """A gather at integer expressions of the sizes goes to the clamping rule of
    ``jaxpr_rules``; at data indices, or with batching dimensions, to ``_data_gather``."""
    dn = eqn.params["dimension_numbers"]
    mode = _mode(eqn)
    if mode not in ("CLIP", "PROMISE_IN_BOUNDS", "FILL_OR_DROP"):
        raise JaxprImportError(f"gather in mode {mode} is not supported")
    batch = tuple(indices.shape[:-1])
    probe = _generic(batch)
    data = any(S.int_poly(indices.at(probe + (Poly.const(k),))) is None for k in range(len(dn.start_index_map)))
    if not data and not dn.operand_batching_dims:
        return _poly_gather(ctx, eqn, x, indices)
    shape, kind = _out(ctx, eqn)
    fill_value = eqn.params.get("fill_value")
    if kind == "real":
        fill = None if fill_value is None or fill_value != fill_value or abs(fill_value) == float("inf") \
            else S.number(fill_value)
    else:
        if fill_value is None:
            dt = _dtype(eqn)
            import numpy as np
            fill_value = 1 if kind == "bool" else np.iinfo(dt).min if dt.kind == "i" else np.iinfo(dt).max
        fill = Num(int(fill_value))
    out = _data_gather(ctx, eqn, x, indices, fill, mode)
    fills = False
    if mode == "FILL_OR_DROP":       # does the fill ever show? decided at a generic entry
        out.at(_generic(shape))      # raises for a non-representable fill that may show
        _, _, _, start_map, _, sizes, batch_dims, _ = _gather_parts(eqn, x, indices)
        g = _generic(batch)
        inside = Num(1)
        for k, od in enumerate(start_map):
            inside = S.mul(inside, _within(indices.at(g + (Poly.const(k),)), x.shape[od] - sizes[od]))
        fills = not _provably_one(inside)
    fx = facts(ctx, x)
    fill_risk = FINITE if not fills or fill is not None else NAN
    risk = max(fx.risk, fill_risk)
    sign = fx.sign if not fills else None
    return _note(ctx, out, Facts(risk, sign, fx.integral and not fills, fx.origin or f"the fill value of {_where(eqn)}",
                                 # where the (finite) fill shows, the entry is finite
                                 (lambda: _data_gather(ctx, eqn, finite(ctx, x), indices, Num(1), mode))
                                 if risk else None), (x, indices))


# -- floor division of integer data by a size -------------------------------------------------------

_call = RULES["jit"]


def _is_jnps(eqn, name: str) -> bool:
    """Whether the jitted call's body is ``jnp.<name>``'s, traced afresh at the same
    argument types: a user's function may carry the same name and compute something else
    (red team RT-12: a ``remainder`` that clips first was read as ``jnp.remainder``)."""
    import jax
    import jax.numpy as jnp
    args = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=v.aval.weak_type) for v in eqn.invars]
    wide = any(v.aval.dtype.itemsize == 8 for v in eqn.invars)     # traced under x64: keep its types
    try:
        with jax.enable_x64(wide):
            ref = jax.make_jaxpr(getattr(jnp, name))(*args).jaxpr.eqns
    except Exception:  # noqa: BLE001 - not traceable alike: not jnp's function
        return False
    return len(ref) == 1 and ref[0].primitive is eqn.primitive and \
        str(ref[0].params["jaxpr"]) == str(eqn.params["jaxpr"])


@rule("jit")
def _jit(ctx, eqn, *ins):
    """``jnp.floor_divide`` of integer data by a positive integer expression (``argsort(e) //
    k`` in top-k routing) is the kernel's ``IntDiv``, and ``jnp.remainder`` ``t - k IntDiv(t, k)``,
    exact for every integer (JAX's bodies, ``div`` and ``rem`` with a sign correction,
    would need division of data); every other call, and one of that name whose body is
    not jnp's, is inlined by ``jaxpr_rules``."""
    name = eqn.params.get("name")
    if name in ("floor_divide", "remainder") and len(ins) == 2 and all(t.kind == "int" for t in ins) \
            and not ins[1].shape and _is_jnps(eqn, name):
        k = S.int_poly(ins[1].at(()))
        probe = ins[0].at(_generic(ins[0].shape))
        if k is not None and not k.index_atoms() and nonneg(k - 1) and S.int_poly(probe) is None:
            a = ins[0]
            shape, kind = _out(ctx, eqn)
            if name == "floor_divide":
                out = Tensor(shape, lambda idx: IntDiv(a.at(idx), k), kind)
            else:       # Python's remainder, the sign of the divisor: t - k floor(t / k)
                out = Tensor(shape, lambda idx: S.sub(a.at(idx), S.mul(S.int_value(k), IntDiv(a.at(idx), k))), kind)
            return [_note(ctx, out, Facts(FINITE, None, True, ""), ins)]
    return _call(ctx, eqn, *ins)


# -- scatter-add ---------------------------------------------------------------------------------

@rule("scatter-add")
def _scatter_add(ctx, eqn, z, indices, upd):
    """``z`` plus every update at its index; updates whose index is off the operand are
    dropped (FILL_OR_DROP) or clamped (CLIP); full windows only."""
    shape, kind = _out(ctx, eqn)
    if kind != "real":
        raise JaxprImportError("scatter-add of integers or booleans is not supported")
    if eqn.params.get("unique_indices"):
        raise JaxprImportError("scatter-add with unique_indices=True (XLA's result on repeated indices is "
                               "undefined) is not supported")
    mode = _mode(eqn)
    if mode not in ("CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS"):
        raise JaxprImportError(f"scatter-add in mode {mode} is not supported")
    _accept(ctx, [z, upd], FINITE, "scatter-add sums them")
    dn = eqn.params["dimension_numbers"]
    uwin, inserted, sdo = tuple(dn.update_window_dims), set(dn.inserted_window_dims), tuple(dn.scatter_dims_to_operand_dims)
    obatch, ibatch = tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims)
    window = [d for d in range(len(z.shape)) if d not in inserted and d not in obatch]
    for od, ud in zip(window, uwin):
        if upd.shape[ud] is not z.shape[od]:
            raise JaxprImportError("scatter-add of a window narrower than the operand is not supported")
    if any(od not in inserted for od in sdo):
        raise JaxprImportError("scatter-add with a window along an indexed dimension is not supported")
    scatter_dims = [d for d in range(len(upd.shape)) if d not in uwin]

    def updates(J, check_bounds=False):
        gs = [_fresh(upd.shape[d], "g") for d in scatter_dims]
        G = tuple(pg for _, pg in gs)
        U = [None] * len(upd.shape)
        for d, pg in zip(scatter_dims, G):
            U[d] = pg
        for od, ud in zip(window, uwin):
            U[ud] = J[od]
        w = Num(1)
        inside = Num(1)
        for k, od in enumerate(sdo):
            t, hi = indices.at(G + (Poly.const(k),)), z.shape[od] - 1
            w = S.mul(w, _clamped_eq(t, J[od], hi) if mode == "CLIP" else IntEq(t, J[od]))
            inside = S.mul(inside, _within(t, hi))
        if check_bounds and not _provably_one(inside):
            raise JaxprImportError("scatter-add (mode promise_in_bounds) at indices that may be out of bounds "
                                   "(XLA's result is then undefined) is not supported")
        for ob, ib in zip(obatch, ibatch):
            w = S.mul(w, S.int_compare(J[ob], G[ib], "=="))
        body = S.mul(w, upd.at(tuple(U)))
        for g, _ in reversed(gs):
            body = Sum(g, body)
        return body

    if mode == "PROMISE_IN_BOUNDS":
        updates(_generic(shape), check_bounds=True)
    out = Tensor(shape, lambda J: S.add(z.at(J), updates(J)), kind)
    return _note(ctx, out, Facts(FINITE, None, False, ""), (z, indices, upd))

