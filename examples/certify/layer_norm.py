"""Layer norm over the last axis with a learned scale and shift (eps = 1e-5).

    verigrad certify examples/certify/layer_norm.py:layer_norm --shape x=n,d --shape gamma=d --shape beta=d
"""
import jax
import jax.numpy as jnp

EPS = 1e-5


def _normalize(x):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    xc = x - mu
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(xc), axis=-1, keepdims=True) + EPS)
    return xc * rstd, rstd


@jax.custom_vjp
def layer_norm(x, gamma, beta):
    xhat, _ = _normalize(x)
    return xhat * gamma + beta


def layer_norm_fwd(x, gamma, beta):
    xhat, rstd = _normalize(x)
    return xhat * gamma + beta, (xhat, rstd, gamma)


def layer_norm_bwd(res, dy):
    xhat, rstd, gamma = res
    g = dy * gamma
    dx = rstd * (g - jnp.mean(g, axis=-1, keepdims=True)
                 - xhat * jnp.mean(g * xhat, axis=-1, keepdims=True))
    return dx, jnp.sum(dy * xhat, axis=0), jnp.sum(dy, axis=0)


layer_norm.defvjp(layer_norm_fwd, layer_norm_bwd)
