"""Element-wise activations: a table of ``(f, f')``; the backward is ``dx = dy * f'(x)``.

ReLU follows the convention ``relu'(0) = 0``: forward ``x * [x > 0]``, backward
``dy * [x > 0]`` on the pre-activation, so both import to the same indicator.
"""
from __future__ import annotations

import math
from types import MappingProxyType

import jax.numpy as jnp
from jax import lax

from .core import Layer, where

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
GELU_CUBIC = 0.044715


def _gelu_tanh(x):
    return 0.5 * x * (1 + jnp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x ** 3)))


def _gelu_tanh_grad(x):
    r""":math:`\tfrac12(1+t) + \tfrac12 x (1-t^2)\, c\,(1 + 3a x^2)`, with
    :math:`t = \tanh(c(x + a x^3))`, :math:`c = \sqrt{2/\pi}`, :math:`a = 0.044715`."""
    t = jnp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * GELU_CUBIC * x ** 2)


def _gelu_erf(x):
    return 0.5 * x * (1 + lax.erf(x * INV_SQRT_2))


def _gelu_erf_grad(x):
    r""":math:`\Phi(x) + x\,\varphi(x)`: the normal CDF plus x times its density."""
    return 0.5 * (1 + lax.erf(x * INV_SQRT_2)) + x * jnp.exp(-0.5 * x * x) * INV_SQRT_2PI


def _sigmoid_grad(x):
    s = lax.logistic(x)
    return s * (1 - s)


def _tanh_grad(x):
    t = jnp.tanh(x)
    return 1 - t * t


def _silu(x):
    return x * lax.logistic(x)


def _silu_grad(x):
    r""":math:`\sigma(x)\,(1 + x(1 - \sigma(x)))`."""
    s = lax.logistic(x)
    return s * (1 + x * (1 - s))


def _relu(x):
    return where(x > 0, x, 0.0)


# name -> (forward, vjp(x, dy), the derivative in words). Read-only, as ``GELU``: a
# builder's own ``Relu()`` is not certified again at the rendered batch, so an entry
# replaced from a network file (a vjp 3x at a concrete batch) was rendered with
# network_backward PROVED and the tie CHECKED (red team RT5-C3); a layer of your own is
# a ``Custom`` piece.
ACTIVATIONS = MappingProxyType({
    "relu": (_relu, lambda x, dy: where(x > 0, dy, 0.0), "dx = dy [x > 0]  (relu'(0) = 0)"),
    "gelu_tanh": (_gelu_tanh, lambda x, dy: dy * _gelu_tanh_grad(x),
                  "dx = dy (1/2 (1+t) + 1/2 x (1-t^2) c (1 + 3a x^2))"),
    "gelu_erf": (_gelu_erf, lambda x, dy: dy * _gelu_erf_grad(x), "dx = dy (Phi(x) + x phi(x))"),
    "sigmoid": (lax.logistic, lambda x, dy: dy * _sigmoid_grad(x), "dx = dy s (1 - s)"),
    "tanh": (jnp.tanh, lambda x, dy: dy * _tanh_grad(x), "dx = dy (1 - tanh(x)^2)"),
    "silu": (_silu, lambda x, dy: dy * _silu_grad(x), "dx = dy s (1 + x (1 - s))"),
})

# The two GELU forms, as (forward, derivative), for layers that inline them.
GELU = MappingProxyType({"tanh": (_gelu_tanh, _gelu_tanh_grad), "erf": (_gelu_erf, _gelu_erf_grad)})


def activation(name: str, x) -> Layer:
    """The element-wise activation ``name`` (a key of ``ACTIVATIONS``) at shape ``x``."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of {', '.join(ACTIVATIONS)}")
    f, vjp, doc = ACTIVATIONS[name]

    def forward(params, x):
        return f(x)

    def backward(params, x, dy):
        return vjp(x, dy), {}

    return Layer(name, tuple(x), tuple(x), forward, backward, doc=doc)


def relu(x) -> Layer:
    return activation("relu", x)


def gelu(x, form: str = "tanh") -> Layer:
    """GELU in its ``"tanh"`` approximation or its exact ``"erf"`` form."""
    if form not in GELU:
        raise ValueError(f"unknown GELU form {form!r}; expected 'tanh' or 'erf'")
    return activation(f"gelu_{form}", x)


def sigmoid(x) -> Layer:
    return activation("sigmoid", x)


def tanh(x) -> Layer:
    return activation("tanh", x)


def silu(x) -> Layer:
    return activation("silu", x)
