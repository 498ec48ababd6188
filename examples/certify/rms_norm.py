"""RMS norm (as in LLaMA): y = x / sqrt(mean(x^2) + eps) * gamma.

    verigrad certify examples/certify/rms_norm.py:rms_norm --shape x=n,d --shape gamma=d
"""
import jax
import jax.numpy as jnp

EPS = 1e-6


@jax.custom_vjp
def rms_norm(x, gamma):
    r = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)
    return x * r * gamma


def rms_norm_fwd(x, gamma):
    r = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)
    return x * r * gamma, (x, r, gamma)


def rms_norm_bwd(res, dy):
    x, r, gamma = res
    g = dy * gamma
    dx = r * g - x * r ** 3 * jnp.mean(g * x, axis=-1, keepdims=True)
    dgamma = jnp.sum(dy * x * r, axis=0)
    return dx, dgamma


rms_norm.defvjp(rms_norm_fwd, rms_norm_bwd)
