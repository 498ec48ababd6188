"""Dropout and drop path (stochastic depth): multiplication by a mask given as an input.

The mask is an auxiliary input (it has no cotangent) and already carries the
``1/keep`` scaling: its entries are ``0`` or ``1/keep``. The layer is linear in ``x``
and diagonal, so its VJP is the layer itself at the same mask. A mask of ``None``
means no dropping (evaluation, or a site that is absent).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .core import AuxSpec, Layer, scale_examples


def dropout(x, name: str = "mask") -> Layer:
    """``y = x * mask`` element-wise; ``dx = dy * mask``."""
    def forward(params, x, mask):
        return x if mask is None else x * mask

    def backward(params, x, mask, dy):
        return forward(params, dy, mask), {}

    return Layer("dropout", tuple(x), tuple(x), forward, backward,
                 aux=(AuxSpec(name, tuple(x), optional=True),), doc="dx = dy * mask")


def drop_path(x, site: str = "s") -> Layer:
    """``y[b] = s[b] * x[b]``: one scalar per example (``s: (B,)``), the whole example
    kept (scaled by ``1/keep``) or dropped. ``dx = s * dy``: the drop path's VJP is
    the drop path at the same mask."""
    def forward(params, x, s):
        return scale_examples(s, x)

    def backward(params, x, s, dy):
        return forward(params, dy, s), {}

    return Layer("drop_path", tuple(x), tuple(x), forward, backward,
                 aux=(AuxSpec(site, (x[0],), optional=True),), doc="dx = s * dy (the drop path itself)")


def keep_mask(key, shape, keep: float, dtype=jnp.float32):
    """A mask for ``dropout`` / ``drop_path``: ``1/keep`` with probability ``keep``, else 0."""
    if not 0 < keep <= 1:
        raise ValueError(f"keep probability should be in (0, 1], got {keep}")
    return jax.random.bernoulli(key, keep, shape).astype(dtype) / keep
