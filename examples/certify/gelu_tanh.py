"""GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    verigrad certify examples/certify/gelu_tanh.py:gelu --shape x=n,d
"""
import math

import jax
import jax.numpy as jnp

C = math.sqrt(2 / math.pi)


@jax.custom_vjp
def gelu(x):
    return 0.5 * x * (1 + jnp.tanh(C * (x + 0.044715 * x ** 3)))


def gelu_fwd(x):
    return gelu(x), x


def gelu_bwd(x, dy):
    t = jnp.tanh(C * (x + 0.044715 * x ** 3))
    dt = (1 - t * t) * C * (1 + 3 * 0.044715 * x * x)
    return (dy * (0.5 * (1 + t) + 0.5 * x * dt),)


gelu.defvjp(gelu_fwd, gelu_bwd)
