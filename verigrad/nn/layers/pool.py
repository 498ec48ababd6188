"""Pooling over NHWC images: max pool 2x2, average pool kxk (stride = window), global
average pool.

A window pool reads its ``k*k`` window entries as strided slices
``x[:, a::k, b::k, :]`` (entry ``(a, b)`` of every window at once), and its backward
puts cotangents back with interior padding: ``pad(d_ab, low a, interior k-1, high
k-1-a)`` lands ``d_ab[i]`` at row ``k i + a``. Both are plain index arithmetic for a
prover, with no floor division.
"""
from __future__ import annotations

import functools
import operator

import jax.numpy as jnp
from jax import lax

from .core import Layer, as_real, expect_rank, shape_str, strided, where


def windows(x, k: int):
    """``w[a][b] = x[:, a::k, b::k, :]``: entry ``(a, b)`` of every ``k x k`` window."""
    return [[strided(x, (0, a, b, 0), (1, k, k, 1)) for b in range(k)] for a in range(k)]


def place(pieces, k: int):
    """The transpose of ``windows``: ``dx[:, k i + a, k j + b] = pieces[a][b][:, i, j]``."""
    zero = jnp.zeros((), pieces[0][0].dtype)
    out = None
    for a in range(k):
        for b in range(k):
            t = lax.pad(pieces[a][b], zero, ((0, 0, 0), (a, k - 1 - a, k - 1), (b, k - 1 - b, k - 1), (0, 0, 0)))
            out = t if out is None else out + t
    return out


def _pooled_shape(name, x, k):
    expect_rank(name, x, 4, "NHWC")
    for size in x[1:3]:
        r = size % k
        if not (isinstance(r, int) and r == 0):
            raise ValueError(f"{name}: spatial size {size} of input {shape_str(x)} must be a "
                             f"multiple of {k} (declare it as {k}*h)")
    return (x[0], x[1] // k, x[2] // k, x[3])


def max_pool(x) -> Layer:
    """Max pool, 2x2 windows, stride 2: ``max(max(x00, x01), max(x10, x11))``.

    Backward: ``dy`` is routed through the same three comparisons the forward's
    maxima make, ``a >= b`` choosing ``a``; so ties go to the first argument (the
    earlier entry of the window in row-major order), and ``x00 = x01 = x10 = x11``
    sends all of ``dy`` to ``x00``. Off ties this is the exact VJP.
    """
    y = _pooled_shape("max_pool", x, 2)

    def forward(params, x):
        (x00, x01), (x10, x11) = windows(x, 2)
        return jnp.maximum(jnp.maximum(x00, x01), jnp.maximum(x10, x11))

    def backward(params, x, dy):
        (x00, x01), (x10, x11) = windows(x, 2)
        top, bottom = x00 >= x01, x10 >= x11
        first = jnp.maximum(x00, x01) >= jnp.maximum(x10, x11)
        d_top, d_bottom = where(first, dy, 0.0), where(first, 0.0, dy)
        pieces = [[where(top, d_top, 0.0), where(top, 0.0, d_top)],
                  [where(bottom, d_bottom, 0.0), where(bottom, 0.0, d_bottom)]]
        return place(pieces, 2), {}

    return Layer("max_pool", tuple(x), y, forward, backward, hyper={"window": 2, "ties": "first"},
                 doc="dy routed through the forward's comparisons (a >= b picks a)")


def avg_pool(x, k: int = 2) -> Layer:
    """Average pool over ``k x k`` windows, stride ``k``. Backward: ``dy / k^2`` to every
    entry of its window."""
    y = _pooled_shape("avg_pool", x, k)

    def forward(params, x):
        return functools.reduce(operator.add, [t for row in windows(x, k) for t in row]) / (k * k)

    def backward(params, x, dy):
        share = dy / (k * k)
        return place([[share] * k for _ in range(k)], k), {}

    return Layer("avg_pool", tuple(x), y, forward, backward, hyper={"window": k},
                 doc="dx[k i + a, k j + b] = dy[i, j] / k^2")


def global_avg_pool(x) -> Layer:
    """Mean over height and width: ``(B, H, W, C) -> (B, C)``. Backward: ``dy / (H W)``
    broadcast over the image."""
    expect_rank("global_avg_pool", x, 4, "NHWC")

    def forward(params, x):
        return jnp.sum(x, axis=(1, 2)) / as_real(x.shape[1] * x.shape[2], x.dtype)

    def backward(params, x, dy):
        share = dy / as_real(x.shape[1] * x.shape[2], x.dtype)
        return lax.broadcast_in_dim(share, x.shape, (0, 3)), {}

    return Layer("global_avg_pool", tuple(x), (x[0], x[3]), forward, backward,
                 doc="dx[n, i, j, c] = dy[n, c] / (H W)")
