"""Random inputs for a layer, and how far its backward drifts in float32.

A proof says the backward is exact over the reals; float32 rounds. ``float32_error``
measures by how much, against the same backward in float64, so a report can show
where float32 is fragile (a norm's variance, a softmax's cancellation).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .core import Layer, concrete


def random_inputs(layer: Layer, seed: int = 0, dtype=jnp.float32, absent=()):
    """``(params, x, aux, dy)`` drawn from N(0, 1) (parameters scaled by 1/2) at the
    layer's concrete shapes. Auxiliary inputs are real-valued, not 0/1 masks: a site
    equal to 1 would hide a bug that squares it. Those named in ``absent`` are None."""
    rng = np.random.default_rng(seed)
    draw = lambda shape, what, scale=1.0: jnp.asarray(scale * rng.standard_normal(concrete(shape, what)), dtype)
    params = {p.name: draw(p.shape, f"parameter {p.name!r}", 0.5) for p in layer.params}
    x = draw(layer.x, "the input")
    aux = [None if a.name in absent else draw(a.shape, f"input {a.name!r}") for a in layer.aux]
    return params, x, aux, draw(layer.y, "the output")


def float32_error(layer: Layer, trials: int = 3, seed: int = 0) -> float:
    """Max over ``trials`` random inputs of ``max |b32 - b64| / max |b64|``, taken over
    ``dx`` and every parameter gradient, where ``b32`` and ``b64`` are the layer's
    backward run in float32 and float64 on the same (float32-representable) inputs."""
    backward = jax.jit(lambda p, x, a, dy: layer.backward(p, x, *a, dy))
    worst = 0.0
    with jax.enable_x64(True):
        for t in range(trials):
            case32 = random_inputs(layer, seed + t, jnp.float32)
            case64 = jax.tree.map(lambda v: v.astype(jnp.float64), case32)
            lo = [np.asarray(v, np.float64) for v in jax.tree.leaves(backward(*case32))]
            hi = [np.asarray(v) for v in jax.tree.leaves(backward(*case64))]
            scale = max([1e-30] + [float(np.max(np.abs(h))) for h in hi if h.size])
            err = max([0.0] + [float(np.max(np.abs(a - b))) for a, b in zip(lo, hi) if b.size])
            worst = max(worst, err / scale)
    return worst
