"""Zero padding folded into the convolutions that read it (untrusted: the render tie
checks the emitted text against the certified math, whatever this does).

The zoo's convolution backward (``verigrad.nn.layers.conv``) spells dilation and edge
padding as ``lax.pad`` of an operand, in the forms its certificate follows:

- ``dW = conv(pad(x, lo, hi), pad_interior(dy, s - 1))``: the kernel gradient;
- ``dx = conv(pad(dy, k-1-lo, k-1-hi, interior s - 1), flip(W))``: the input gradient.

XLA:CPU materializes a padded operand it cannot fold itself (for the kernel gradient:
a padded copy of every activation, and for stride 2 a ``dy`` with zeros between its
entries, which turns a 4x4 window into a 7x7 one: three times the multiplications).
``jax.jit(jax.grad)`` of the same convolution emits the convolution's own padding,
``lhs_dilation`` and ``rhs_dilation`` instead. ``fold_pads(fn)`` is ``fn`` with every
convolution that reads a zero ``pad`` rewritten that way, read off ``fn``'s jaxpr:

- an operand ``pad(a, (lo, hi, 0))`` on the spatial axes of the left-hand side (zero
  on its batch and feature axes), of a convolution without its own padding or
  ``lhs_dilation``: ``a`` with padding ``(lo, hi)``;
- an operand ``pad(b, (0, 0, i))`` on the spatial axes of the kernel, of a convolution
  without ``rhs_dilation``: ``b`` with ``rhs_dilation`` ``i + 1``.

Both are the definitions of those attributes (``conv`` pads its left-hand side, and
dilates its kernel with zeros), so the function is unchanged; a ``pad`` left without
other readers is not emitted. Everything else is bound as traced. The input gradient's
interior-padded ``dy`` is left as it is: XLA folds it into ``lhs_dilation`` itself,
and the tie's kernel proves the text's pad against the math's, where an
``lhs_dilation`` (a floor division and a remainder per axis) has a normal form that
differs from the pad's.
"""
from __future__ import annotations

import jax
import numpy as np

_CONV = "conv_general_dilated"


def _zero_literal(v) -> bool:
    from jax.extend.core import Literal
    if not isinstance(v, Literal):
        return False
    try:
        return bool(np.all(np.asarray(v.val) == 0))
    except (TypeError, ValueError):
        return False


def _zero_pad(eqn) -> bool:
    return eqn.primitive.name == "pad" and _zero_literal(eqn.invars[1])


def _lhs_fold(conv, pad):
    """The conv's new (padding, lhs_dilation) reading ``pad``'s operand, or None."""
    p = conv.params
    dn = p["dimension_numbers"]
    cfg = pad.params["padding_config"]
    batch, feature, spatial = dn.lhs_spec[0], dn.lhs_spec[1], dn.lhs_spec[2:]
    if any(cfg[d] != (0, 0, 0) for d in (batch, feature)) or any(cfg[d][2] for d in spatial):
        return None
    if any(tuple(q) != (0, 0) for q in p["padding"]) or any(d != 1 for d in p["lhs_dilation"]):
        return None
    return tuple((cfg[d][0], cfg[d][1]) for d in spatial), p["lhs_dilation"]


def _rhs_fold(conv, pad):
    """The conv's new rhs_dilation reading ``pad``'s operand, or None."""
    p = conv.params
    dn = p["dimension_numbers"]
    cfg = pad.params["padding_config"]
    out_f, in_f, spatial = dn.rhs_spec[0], dn.rhs_spec[1], dn.rhs_spec[2:]
    if any(cfg[d] != (0, 0, 0) for d in (out_f, in_f)):
        return None
    if any(cfg[d][:2] != (0, 0) for d in spatial) or any(d != 1 for d in p["rhs_dilation"]):
        return None
    return tuple(cfg[d][2] + 1 for d in spatial)


def _plan(jaxpr):
    """``{id(conv eqn): new params and operands}`` and the pads nothing else reads."""
    made = {}
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            made[v] = eqn
    folds = {}
    for eqn in jaxpr.eqns:
        if eqn.primitive.name != _CONV or eqn.params.get("batch_group_count", 1) != 1:
            continue
        lhs, rhs = eqn.invars
        params, operands = dict(eqn.params), [lhs, rhs]
        src = made.get(lhs) if not hasattr(lhs, "val") else None
        if src is not None and _zero_pad(src):
            got = _lhs_fold(eqn, src)
            if got is not None:
                params["padding"], params["lhs_dilation"] = got
                operands[0] = src.invars[0]
        src = made.get(rhs) if not hasattr(rhs, "val") else None
        if src is not None and _zero_pad(src):
            got = _rhs_fold(eqn, src)
            if got is not None:
                params["rhs_dilation"] = got
                operands[1] = src.invars[0]
        if operands != [lhs, rhs]:
            folds[id(eqn)] = (params, operands)
    read = set()
    for eqn in jaxpr.eqns:
        ins = folds[id(eqn)][1] if id(eqn) in folds else eqn.invars
        read.update(v for v in ins if not hasattr(v, "val"))
    read.update(v for v in jaxpr.outvars if not hasattr(v, "val"))
    dead = {id(e) for e in jaxpr.eqns if _zero_pad(e) and not any(v in read for v in e.outvars)}
    return folds, dead


def fold_pads(fn):
    """``fn`` (a function of arrays returning a pytree of arrays) with zero pads folded
    into the convolutions that read them; the same function."""
    def folded(*args):
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        outs = _run(closed.jaxpr, closed.consts, jax.tree_util.tree_leaves(args))
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), outs)
    folded.__name__ = getattr(fn, "__name__", "step")
    folded.__wrapped__ = fn
    return folded


def _where(eqn):
    """The equation's source location and name stack, as ``jax.core.eval_jaxpr`` keeps
    them (the emitted text's locations name the zoo's code); none where this jax lacks
    the hook."""
    try:
        from jax._src import source_info_util as si
        return si.user_context(eqn.source_info.traceback,
                               name_stack=si.current_name_stack() + eqn.source_info.name_stack)
    except (ImportError, AttributeError, TypeError):
        from contextlib import nullcontext
        return nullcontext()


def _run(jaxpr, consts, args):
    folds, dead = _plan(jaxpr)
    env = {}

    def read(v):
        return v.val if hasattr(v, "val") else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        if id(eqn) in dead:
            continue
        params, operands = folds.get(id(eqn), (eqn.params, eqn.invars))
        bind_params = eqn.primitive.get_bind_params(params)
        with _where(eqn), eqn.ctx.manager:
            outs = eqn.primitive.bind(*[read(v) for v in operands], **bind_params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(v) for v in jaxpr.outvars]


__all__ = ["fold_pads"]
