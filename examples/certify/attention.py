"""Single-head scaled dot-product attention softmax(q k^T / sqrt d) v, FlashAttention-style
backward from the saved probabilities.

    verigrad certify examples/certify/attention.py:attention --shape q=n,d --shape k=n,d --shape v=n,d
"""
import jax
import jax.numpy as jnp


def _probs(q, k):
    s = q @ k.T / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(s, axis=-1)


@jax.custom_vjp
def attention(q, k, v):
    return _probs(q, k) @ v


def attention_fwd(q, k, v):
    p = _probs(q, k)
    return p @ v, (q, k, v, p)


def attention_bwd(res, do):
    q, k, v, p = res
    scale = 1 / jnp.sqrt(q.shape[-1])
    dp = do @ v.T
    ds = p * (dp - jnp.sum(dp * p, axis=-1, keepdims=True))
    return ds @ k * scale, ds.T @ q * scale, p.T @ do


attention.defvjp(attention_fwd, attention_bwd)
