"""Causal single-head attention with the future masked by -inf, softmax(mask(q k^T / sqrt d)) v,
and a backward that recomputes the probabilities from q and k (as a flash-attention
reference does) instead of saving them.

    verigrad certify examples/certify/causal_attention.py:causal_attention --shape q=n,d --shape k=n,d --shape v=n,d

exp(-inf) = 0 is modelled exactly: a masked score is -inf exactly where the mask says,
the row maximum is the maximum over the unmasked keys (query i always sees key i, so
no row is fully masked), and the masked probabilities are exactly zero.
"""
import jax
import jax.numpy as jnp


def _scores(q, k):
    return q @ k.T / jnp.sqrt(q.shape[-1])


def _probs(q, k):
    n = q.shape[0]
    visible = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    s = jnp.where(visible, _scores(q, k), -jnp.inf)
    return jax.nn.softmax(s, axis=-1)


@jax.custom_vjp
def causal_attention(q, k, v):
    return _probs(q, k) @ v


def causal_attention_fwd(q, k, v):
    return causal_attention(q, k, v), (q, k, v)


def causal_attention_bwd(res, do):
    q, k, v = res
    n = q.shape[0]
    keep = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    s = jnp.where(keep, _scores(q, k), -jnp.inf)
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    dp = do @ v.T
    ds = p * (dp - jnp.sum(dp * p, axis=-1, keepdims=True)) / jnp.sqrt(q.shape[-1])
    return ds @ k, ds.T @ q, p.T @ do


causal_attention.defvjp(causal_attention_fwd, causal_attention_bwd)
