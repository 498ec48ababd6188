"""Affine layers over the last axis: dense, bias, layer scale.

Each acts on the last (feature) axis and broadcasts over any leading axes (batch,
tokens, pixels); a parameter's gradient sums over those leading axes.
"""
from __future__ import annotations

from .core import (Layer, ParamSpec, constant, contract_leading, glorot_uniform, matmul_last,
                   matmul_last_t, sum_leading, zeros)


def dense(x, d_out, *, init=None) -> Layer:
    r"""``y = x W + b`` with ``W: (d_in, d_out)``.

    Backward: :math:`dx = dy\,W^\top`, :math:`dW = \sum_{\text{lead}} x^\top dy`,
    :math:`db = \sum_{\text{lead}} dy`.
    """
    d_in = x[-1]

    def forward(params, x):
        return matmul_last(x, params["W"]) + params["b"]

    def backward(params, x, dy):
        return matmul_last_t(dy, params["W"]), {"W": contract_leading(x, dy), "b": sum_leading(dy, 1)}

    return Layer("dense", tuple(x), tuple(x[:-1]) + (d_out,), forward, backward,
                 params=(ParamSpec("W", (d_in, d_out), init or glorot_uniform(), decay=True),
                         ParamSpec("b", (d_out,), zeros())),
                 doc=r"dx = dy W^T, dW = x^T dy, db = sum dy")


def bias(x) -> Layer:
    r"""``y = x + b`` with ``b`` over the last axis. Backward: ``dx = dy``,
    :math:`db = \sum_{\text{lead}} dy`."""
    def forward(params, x):
        return x + params["b"]

    def backward(params, x, dy):
        return dy, {"b": sum_leading(dy, 1)}

    return Layer("bias", tuple(x), tuple(x), forward, backward,
                 params=(ParamSpec("b", (x[-1],), zeros()),), doc="dx = dy, db = sum dy")


def layer_scale(x, init: float = 0.1) -> Layer:
    r"""``y = x * gamma`` with a per-channel ``gamma`` (CaiT's layer scale).
    Backward: ``dx = dy * gamma``, :math:`d\gamma = \sum_{\text{lead}} dy\, x`."""
    def forward(params, x):
        return x * params["gamma"]

    def backward(params, x, dy):
        return dy * params["gamma"], {"gamma": sum_leading(dy * x, 1)}

    return Layer("layer_scale", tuple(x), tuple(x), forward, backward,
                 params=(ParamSpec("gamma", (x[-1],), constant(init)),),
                 hyper={"init": init}, doc="dx = dy gamma, dgamma = sum dy x")
