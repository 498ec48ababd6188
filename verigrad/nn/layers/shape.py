"""Layers that only move entries: flatten, and reading one token (the class token).

Their backward is the transpose of the move: reshape back; put ``dy`` at the token
read and zeros elsewhere.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from .core import Layer, expect_rank


def flatten(x) -> Layer:
    """``(B, d1, d2, ...) -> (B, d1 d2 ...)`` in row-major order; ``dx = reshape(dy)``."""
    def forward(params, x):
        return x.reshape(x.shape[0], math.prod(x.shape[1:]))

    def backward(params, x, dy):
        return dy.reshape(x.shape), {}

    return Layer("flatten", tuple(x), (x[0], math.prod(x[1:])), forward, backward,
                 doc="dx = reshape(dy, shape(x))")


def take_token(x, index: int = 0) -> Layer:
    """Token ``index`` of each sequence, ``(B, n, D) -> (B, D)`` (the class token for
    ``index = 0``). Backward: ``dy`` at that token, zeros at the others."""
    expect_rank("take_token", x, 3, "batch, tokens, features")

    def forward(params, x):
        return lax.index_in_dim(x, index, axis=1, keepdims=False)

    def backward(params, x, dy):
        b, n, d = x.shape
        parts = [jnp.zeros((b, index, d), dy.dtype)] if index else []
        parts += [dy.reshape(b, 1, d), jnp.zeros((b, n - 1 - index, d), dy.dtype)]
        return jnp.concatenate(parts, axis=1), {}

    return Layer("take_token", tuple(x), (x[0], x[2]), forward, backward, hyper={"index": index},
                 doc="dx[:, index] = dy, zeros elsewhere")
