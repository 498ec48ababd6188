r"""Normalizations: layer norm (affine), RMS norm, batch norm in training mode.

Layer norm and batch norm are the same standardization over different axes (the
feature axis; every axis but the features). Its VJP, with
:math:`\hat x = (x - \mu)\,r`, :math:`r = (\sigma^2 + \epsilon)^{-1/2}` and
:math:`g = \partial L / \partial \hat x`, is

.. math:: dx = r\,\bigl(g - \overline{g} - \hat x\,\overline{g\,\hat x}\bigr)

with the means over the normalized axes.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
from jax import lax

from .core import Layer, ParamSpec, as_real, ones, sum_leading, zeros


def _count(x, axes):
    return as_real(math.prod(x.shape[a] for a in axes), x.dtype)


def _mean(t, axes, n):
    return jnp.sum(t, axis=axes, keepdims=True) / n


def standardize(x, axes, eps):
    """``(xhat, r)``: ``x`` centred and scaled over ``axes``, and ``r = rsqrt(var + eps)``."""
    n = _count(x, axes)
    xc = x - _mean(x, axes, n)
    r = lax.rsqrt(_mean(xc * xc, axes, n) + eps)
    return xc * r, r


def standardize_vjp(xhat, r, g, axes):
    """The input cotangent of ``standardize`` for ``g = dL/dxhat``."""
    n = _count(xhat, axes)
    return r * (g - _mean(g, axes, n) - xhat * _mean(g * xhat, axes, n))


def _affine_norm(name, x, axes, eps, doc) -> Layer:
    """``y = standardize(x) * g + b``, with ``g, b`` over the last axis."""
    def forward(params, x):
        xhat, _ = standardize(x, axes, eps)
        return xhat * params["g"] + params["b"]

    def backward(params, x, dy):
        xhat, r = standardize(x, axes, eps)
        dx = standardize_vjp(xhat, r, dy * params["g"], axes)
        return dx, {"g": sum_leading(dy * xhat, 1), "b": sum_leading(dy, 1)}

    return Layer(name, tuple(x), tuple(x), forward, backward,
                 params=(ParamSpec("g", (x[-1],), ones()), ParamSpec("b", (x[-1],), zeros())),
                 hyper={"eps": eps}, doc=doc)


def layer_norm(x, eps: float = 1e-5) -> Layer:
    """Layer norm over the last axis, with gain ``g`` and shift ``b``."""
    return _affine_norm("layer_norm", x, (len(x) - 1,), eps,
                        "dx = r (g - mean g - xhat mean(g xhat)), g = dy gain; dg = sum dy xhat; db = sum dy")


def batch_norm(x, eps: float = 1e-5) -> Layer:
    """Batch norm in training mode: statistics of the batch (over every axis but the
    channels, e.g. batch, height and width for NHWC), gain ``g`` and shift ``b``.
    Running averages for inference are the training loop's business."""
    return _affine_norm("batch_norm", x, tuple(range(len(x) - 1)), eps,
                        "dx = r (g - mean g - xhat mean(g xhat)) over the batch axes")


def rms_norm(x, eps: float = 1e-5) -> Layer:
    r"""``y = x r g`` with :math:`r = (\overline{x^2} + \epsilon)^{-1/2}` over the last
    axis. Backward, with :math:`h = dy\,g`:
    :math:`dx = r\,(h - x\,r^2\,\overline{h x})`, :math:`dg = \sum dy\,x\,r`."""
    axes = (len(x) - 1,)

    def scale(x):
        return lax.rsqrt(_mean(x * x, axes, _count(x, axes)) + eps)

    def forward(params, x):
        return x * scale(x) * params["g"]

    def backward(params, x, dy):
        r = scale(x)
        h = dy * params["g"]
        dx = r * (h - x * (r * r) * _mean(h * x, axes, _count(x, axes)))
        return dx, {"g": sum_leading(dy * x * r, 1)}

    return Layer("rms_norm", tuple(x), tuple(x), forward, backward,
                 params=(ParamSpec("g", (x[-1],), ones()),), hyper={"eps": eps},
                 doc="dx = r (h - x r^2 mean(h x)), h = dy g; dg = sum dy x r")
