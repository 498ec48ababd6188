"""Exact GELU: x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); its derivative is Phi(x) + x phi(x).

    verigrad certify examples/certify/gelu_erf.py:gelu --shape x=n,d
"""
import math

import jax
import jax.numpy as jnp
from jax.scipy.special import erf


@jax.custom_vjp
def gelu(x):
    return jax.nn.gelu(x, approximate=False)


def gelu_fwd(x):
    return gelu(x), x


def gelu_bwd(x, dy):
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    pdf = jnp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return (dy * (cdf + x * pdf),)


gelu.defvjp(gelu_fwd, gelu_bwd)
