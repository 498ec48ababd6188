"""The independent oracle: jax.vjp of a layer's forward, against its hand-written
backward (float64, random inputs). Also the symbolic-shape trace and the primitive
check a certifier's importer relies on."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from verigrad.nn.layers.numerics import random_inputs

PASS = 1e-9       # a correct backward agrees to rounding
FAIL = 1e-6       # a control must miss by more than this


def random_case(layer, seed=0, aux_none=()):
    """Random float64 (params, x, aux, dy); aux named in ``aux_none`` are None."""
    return random_inputs(layer, seed, jnp.float64, absent=aux_none)


def reference_vjp(forward, params, x, aux, dy):
    """``(dx, dparams)`` by jax.vjp."""
    y, vjp = jax.vjp(lambda p, x: forward(p, x, *aux), params, x)
    assert y.shape == dy.shape, (y.shape, dy.shape)
    dparams, dx = vjp(dy)
    return dx, dparams


# Compile for a single run: LLVM's expensive passes cost more than they save here.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def compiled(fn, *args):
    """``fn`` jitted and compiled for ``args`` with ``FAST_COMPILE``."""
    return jax.jit(fn).lower(*args).compile(compiler_options=FAST_COMPILE)


def mismatch(layer, case, backward=None, forward=None):
    """max |hand - jax.vjp| over dx and every parameter, relative to the largest
    reference entry (at least 1); inf if the backward misses or adds a gradient or
    gets a shape wrong. Both sides run in one jitted function (one compile)."""
    params, x, aux, dy = case
    backward = backward or layer.backward
    forward = forward or layer.forward
    both = compiled(lambda p, x, a, dy: (backward(p, x, *a, dy), reference_vjp(forward, p, x, a, dy)),
                    params, x, aux, dy)
    (dx, dp), (rx, rp) = jax.tree.map(np.asarray, both(params, x, aux, dy))
    if set(dp) != set(rp) or any(dp[k].shape != rp[k].shape for k in rp) or dx.shape != rx.shape:
        return float("inf")
    pairs = [(dx, rx)] + [(dp[k], rp[k]) for k in rp if rp[k].size]
    scale = max([1.0] + [float(np.max(np.abs(r))) for _, r in pairs])
    return max(float(np.max(np.abs(h - r))) for h, r in pairs) / scale


# -- symbolic shapes ---------------------------------------------------------------

# The primitives a layer may use (the certifier's importer reads these).
ALLOWED = {
    "add", "sub", "mul", "div", "neg", "exp", "log", "tanh", "erf", "sqrt", "rsqrt", "logistic",
    "integer_pow", "select_n", "gt", "ge", "lt", "le", "eq", "ne", "max", "min", "reduce_sum",
    "reduce_max", "broadcast_in_dim", "reshape", "transpose", "dot_general", "slice", "concatenate",
    "pad", "conv_general_dilated", "cumsum", "stop_gradient", "convert_element_type", "dim_as_value",
    "squeeze", "expand_dims", "rev", "copy", "jit", "pjit",
}


def primitives(jaxpr, out=None):
    """Every primitive in a (closed) jaxpr, nested calls included."""
    out = set() if out is None else out
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        out.add(eqn.primitive.name)
        if eqn.primitive.name == "conv_general_dilated":
            assert set(eqn.params["lhs_dilation"]) == {1} and set(eqn.params["rhs_dilation"]) == {1}, \
                "a convolution with dilation"
        for v in eqn.params.values():
            for sub in (v if isinstance(v, (list, tuple)) else [v]):
                if hasattr(sub, "eqns") or hasattr(getattr(sub, "jaxpr", None), "eqns"):
                    primitives(sub, out)
    return out


def structs(layer, aux_none=()):
    """ShapeDtypeStructs for (params, x, aux, dy) at the layer's declared shapes."""
    s = lambda shape: jax.ShapeDtypeStruct(tuple(shape), jnp.float32)
    params = {p.name: s(p.shape) for p in layer.params}
    aux = [None if a.name in aux_none else s(a.shape) for a in layer.aux]
    return params, s(layer.x), aux, s(layer.y)


def trace(layer, aux_none=()):
    """(forward jaxpr, backward jaxpr) at the declared (possibly symbolic) shapes,
    after checking the traced output shapes against the declared ones."""
    params, x, aux, dy = structs(layer, aux_none)
    fwd = jax.make_jaxpr(lambda p, x, a: layer.forward(p, x, *a))(params, x, aux)
    bwd = jax.make_jaxpr(lambda p, x, a, dy: layer.backward(p, x, *a, dy))(params, x, aux, dy)
    same = lambda a, b: len(a) == len(b) and all(bool(u == v) for u, v in zip(a, b))
    (y,) = fwd.out_avals
    assert same(y.shape, layer.y), f"forward gives {y.shape}, declared {layer.y}"
    out = jax.eval_shape(lambda p, x, a, dy: layer.backward(p, x, *a, dy), params, x, aux, dy)
    dx, dp = out
    assert same(dx.shape, layer.x), f"dx has shape {dx.shape}, the input {layer.x}"
    assert set(dp) == set(layer.param_names)
    for p in layer.params:
        assert same(dp[p.name].shape, p.shape), f"d{p.name} has shape {dp[p.name].shape}, not {p.shape}"
    return fwd, bwd


def disallowed(layer, aux_none=()):
    fwd, bwd = trace(layer, aux_none)
    return (primitives(fwd) | primitives(bwd)) - ALLOWED
