"""Softmax, log-softmax and softmax cross-entropy, over the last axis.

Each subtracts the row max behind ``stop_gradient`` for float stability; softmax is
invariant under shifting a row, so the max cancels in the proof and needs no derivative.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .core import AuxSpec, Layer, as_real, expect_rank


def _shifted(x):
    """``x - max(x)`` along the last axis, the max a constant for differentiation."""
    return x - lax.stop_gradient(jnp.max(x, axis=-1, keepdims=True))


def softmax_rows(x):
    e = jnp.exp(_shifted(x))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def log_softmax_rows(x):
    z = _shifted(x)
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


def softmax_vjp(p, dy):
    r""":math:`dx = p \odot (dy - \langle dy, p\rangle)`, with ``p`` the softmax output."""
    return p * (dy - jnp.sum(dy * p, axis=-1, keepdims=True))


def softmax(x) -> Layer:
    r"""``p = exp(x) / sum exp(x)`` over the last axis;
    :math:`dx = p \odot (dy - \langle dy, p\rangle)`."""
    def forward(params, x):
        return softmax_rows(x)

    def backward(params, x, dy):
        return softmax_vjp(softmax_rows(x), dy), {}

    return Layer("softmax", tuple(x), tuple(x), forward, backward, doc="dx = p (dy - <dy, p>)")


def log_softmax(x) -> Layer:
    r"""``y = x - log sum exp(x)`` over the last axis;
    :math:`dx = dy - \mathrm{softmax}(x) \sum_j dy_j`."""
    def forward(params, x):
        return log_softmax_rows(x)

    def backward(params, x, dy):
        return dy - softmax_rows(x) * jnp.sum(dy, axis=-1, keepdims=True), {}

    return Layer("log_softmax", tuple(x), tuple(x), forward, backward,
                 doc="dx = dy - softmax(x) sum(dy)")


def softmax_xent(x) -> Layer:
    r"""Softmax cross-entropy, mean over the batch: logits ``x: (B, C)`` and targets
    ``t: (B, C)`` (an auxiliary input, already label-smoothed:
    ``t = (1 - a) onehot + a / C``), loss :math:`L = -\frac1B \sum_{b,c} t_{bc}
    \log\mathrm{softmax}(x_b)_c`.

    Backward, for a scalar cotangent ``dy``: :math:`dx_{bc} = \frac{dy}{B}
    (p_{bc} \sum_j t_{bj} - t_{bc})`. This is exact for any ``t``; smoothed targets
    sum to 1 per row, where it is the familiar ``(p - t) / B``. It is computed as
    :math:`e_{bc} (\sum_j t_{bj} / \sum_j e_{bj}) - t_{bc}` with ``e`` the shifted
    exponentials: one number per row first, so that XLA fuses the row sum of ``t`` into
    it (as it does for ``jax.grad`` of the forward) instead of running it on its own.
    """
    expect_rank("softmax_xent", x, 2, "batch, classes")

    def forward(params, x, t):
        return -jnp.sum(t * log_softmax_rows(x)) / as_real(x.shape[0], x.dtype)

    def backward(params, x, t, dy):
        e = jnp.exp(_shifted(x))
        w = jnp.sum(t, axis=-1, keepdims=True) / jnp.sum(e, axis=-1, keepdims=True)
        dx = (e * w - t) * (dy / as_real(x.shape[0], x.dtype))
        return dx, {}

    return Layer("softmax_xent", tuple(x), (), forward, backward,
                 aux=(AuxSpec("targets", tuple(x)),),
                 doc="dx = dy (p sum(t) - t) / B")


def smooth_labels(labels, classes: int, smoothing: float, dtype=jnp.float32):
    """Targets for ``softmax_xent``: ``(1 - a) onehot(labels) + a / C``."""
    onehot = (labels[:, None] == jnp.arange(classes)[None, :]).astype(dtype)
    return (1 - smoothing) * onehot + smoothing / classes
