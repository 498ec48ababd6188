r"""A user's layers frozen to one traced program each (untrusted plumbing; red team RT4-B).

A layer's forward and backward are Python functions, and every stage traces them anew:
certification (alone, at the layer's sizes, in float64), the re-certification of a
``Custom`` piece at the rendered batch, the emission of the train step (inside the step,
in float32) and the render tie (inside the step again). The tie ties the emitted text to
its *own* trace of the step, so a user function that traces differently inside the step
than alone was certified as one program and tied and trained as another (RT4-B1: a
backward that looks at ``inspect.stack()``, or counts its calls; RT4-B3: one that reads
its dtype, certified in float64 with ``JAX_ENABLE_X64=1``, trained in float32; RT4-B4:
one that branches on an absent drop-path site, ``s is None``, a case no certification
traces). network_backward PROVED, the tie CHECKED, a gradient 3x the true one.

``freeze(layer)`` traces each leaf once, here, at its concrete sizes, in float32 (x64 off, as the step runs) and in float64 (x64 on, as
certification imports it), refuses the leaf unless the two are one program
(``jaxpr_x64.same_program``), and gives a layer whose functions only evaluate those
two programs: whatever traces it later (certification, emission, the tie) sees the
same equations, and an absent site (``None``) is the certified function at ``s = 1``
("absent: no scaling"). Combinator nodes above a frozen leaf are made again by their
combinator (so they are still certified by its rule).

Every leaf is frozen, the zoo's too: "a zoo leaf" was told by its functions'
``__module__``, which a user's function can carry (``functools.wraps(zoo_fn)``, or set
by hand), and a zoo constructor's functions can call a user's (an activation registered
in the zoo's table, an argument object's ``__radd__``): such a leaf was left unfrozen,
and RT4-B1's backward that looks at its caller was again certified as one function
and tied and trained as another (red team RT5-C1: network_backward PROVED, the tie
CHECKED, a gradient 3x the true one). Freezing a genuine zoo leaf changes nothing but
costs a trace (a third of a second for the ViT's).
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from verigrad.nn import combinators as C
from verigrad.nn.layers.core import Layer

def freeze(layer: Layer, memo: dict | None = None) -> Layer:
    """``layer`` with every leaf frozen (``freeze_leaf``) and the nodes above them made
    again; ``memo`` collects ``id(old) -> new`` for every node visited."""
    from verigrad.nn.compose import kind_of
    memo = {} if memo is None else memo
    if id(layer) in memo:
        return memo[id(layer)]
    kind = kind_of(layer)
    if kind == "leaf":
        out = freeze_leaf(layer)
    else:
        kids = [freeze(c, memo) for c in layer.children]
        out = layer if all(k is c for k, c in zip(kids, layer.children)) else _again(layer, kind, kids)
    memo[id(layer)] = out
    return out


def _again(node: Layer, kind: str, kids: list) -> Layer:
    """The combinator node ``node`` made again over ``kids``."""
    if kind == "named":
        out = C.named(node.name, kids[0])
    elif kind == "chain":
        out = C.chain(*kids)
    elif kind == "fan_in":
        out = C.fan_in(*kids)
    elif kind == "residual":
        out = C.residual(kids[0])
    elif kind == "site_residual":
        out = C.site_residual(kids[0], node.hyper["site"], batched=len(node.aux[0].shape) == 1)
    else:                                                  # (kind_of names no other node)
        raise ValueError(f"cannot make the {kind} node {node.name} again")
    if (out.param_names, out.aux_names, tuple(out.x), tuple(out.y)) != \
            (node.param_names, node.aux_names, tuple(node.x), tuple(node.y)):
        raise ValueError(f"the {kind} node {node.name} made again differs from the one built")
    return out


def freeze_leaf(layer: Layer) -> Layer:
    """``layer`` whose forward and backward evaluate the programs traced here, once."""
    import jax
    from jax.extend.core import jaxpr_as_fun
    from verigrad.frontends.jaxpr_x64 import same_program
    pn = layer.param_names
    k = 1 + len(pn)
    shapes = [tuple(layer.x)] + [tuple(p.shape) for p in layer.params] + [tuple(a.shape) for a in layer.aux]
    if not all(isinstance(d, int) for s in shapes + [tuple(layer.y)] for d in s):
        raise ValueError(f"layer {layer.name}: only a layer at concrete sizes is frozen")

    def fwd(*a):
        return layer.forward(dict(zip(pn, a[1:k])), a[0], *a[k:])

    def bwd(*a):
        return layer.backward(dict(zip(pn, a[1:k])), a[0], *a[k:-1], a[-1])

    programs = {}
    for dtype, wide in ((np.float32, False), (np.float64, True)):
        structs = [jax.ShapeDtypeStruct(s, dtype) for s in shapes]
        dy = jax.ShapeDtypeStruct(tuple(layer.y), dtype)
        try:
            with jax.enable_x64(wide), warnings.catch_warnings():
                warnings.simplefilter("ignore")      # "float64 is not available" with x64 off
                f, f_out = jax.make_jaxpr(fwd, return_shape=True)(*structs)
                b, b_out = jax.make_jaxpr(bwd, return_shape=True)(*structs, dy)
        except Exception as e:  # noqa: BLE001 - the user's code does not trace at these sizes
            raise ValueError(f"layer {layer.name} does not trace in {np.dtype(dtype).name} at its sizes "
                             f"({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None
        programs[np.dtype(dtype)] = ((_own_consts(f), jax.tree_util.tree_structure(f_out)),
                                     (_own_consts(b), jax.tree_util.tree_structure(b_out)))
    for i, what in ((0, "forward"), (1, "backward")):
        other = same_program(programs[np.dtype(np.float64)][i][0], programs[np.dtype(np.float32)][i][0])
        if other is not None:
            raise ValueError(f"layer {layer.name}: its {what} is another program in float32, where the step runs, "
                             f"than in float64, where it is certified ({other})")
    aux = layer.aux

    def run(which, args):
        x = args[0]
        dtype = np.dtype(getattr(x, "dtype", type(x)))
        if dtype not in programs:
            raise TypeError(f"layer {layer.name} was frozen for float32 and float64 inputs, not {dtype}")
        closed, tree = programs[dtype][which]
        flat = [a if a is not None else jax.numpy.ones(spec.shape, dtype)       # absent site: s = 1
                for a, spec in zip(args[k:k + len(aux)], aux)]
        flat = list(args[:k]) + flat + list(args[k + len(aux):])
        for a in flat:
            if np.dtype(getattr(a, "dtype", type(a))) != dtype:
                raise TypeError(f"layer {layer.name}: arguments of mixed dtypes ({dtype} and {a.dtype})")
        return jax.tree_util.tree_unflatten(tree, jaxpr_as_fun(closed)(*flat))

    def forward(params, x, *aux_values):
        return run(0, [x] + [params[p] for p in pn] + list(aux_values))

    def backward(params, x, *rest):
        return run(1, [x] + [params[p] for p in pn] + list(rest))

    # A plain ``Layer``, not a copy of the user's subclass (``dataclasses.replace`` keeps the
    # class): one whose ``__getattribute__`` hands out another ``backward`` than the frozen
    # one would undo the freezing.
    fields = {f.name: getattr(layer, f.name) for f in dataclasses.fields(Layer)}
    return Layer(**{**fields, "forward": forward, "backward": backward})


def _own_consts(closed):
    """``closed`` with copies of its constants: a jaxpr holds a closed-over numpy array by
    reference, so the frozen program would change with a user's array changed in place
    after it was certified."""
    from jax.extend.core import ClosedJaxpr
    return ClosedJaxpr(closed.jaxpr, [np.array(c, copy=True) if isinstance(c, np.ndarray) else c
                                      for c in closed.consts])


__all__ = ["freeze", "freeze_leaf"]
