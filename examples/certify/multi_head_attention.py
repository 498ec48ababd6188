"""Multi-head self-attention over column slabs: head h uses columns [h dh, (h+1) dh) of
q, k and v (HEADS heads of width dh), outputs concatenated the same way.

    verigrad certify examples/certify/multi_head_attention.py:mha --shape q=n,2*dh --shape k=n,2*dh --shape v=n,2*dh
"""
import jax
import jax.numpy as jnp

HEADS = 2


def _heads(x):   # (n, H*dh) -> (H, n, dh)
    return x.reshape(x.shape[0], HEADS, -1).transpose(1, 0, 2)


def _merge(x):   # (H, n, dh) -> (n, H*dh)
    return x.transpose(1, 0, 2).reshape(x.shape[1], -1)


def _probs(qh, kh):
    s = jnp.einsum("hid,hjd->hij", qh, kh) / jnp.sqrt(qh.shape[-1])
    return jax.nn.softmax(s, axis=-1)


@jax.custom_vjp
def mha(q, k, v):
    qh, kh, vh = _heads(q), _heads(k), _heads(v)
    return _merge(_probs(qh, kh) @ vh)


def mha_fwd(q, k, v):
    qh, kh, vh = _heads(q), _heads(k), _heads(v)
    p = _probs(qh, kh)
    return _merge(p @ vh), (qh, kh, vh, p)


def mha_bwd(res, do):
    qh, kh, vh, p = res
    scale = 1 / jnp.sqrt(qh.shape[-1])
    doh = _heads(do)
    dp = doh @ jnp.swapaxes(vh, 1, 2)
    ds = p * (dp - jnp.sum(dp * p, axis=-1, keepdims=True))
    dq = ds @ kh * scale
    dk = jnp.swapaxes(ds, 1, 2) @ qh * scale
    dv = jnp.swapaxes(p, 1, 2) @ doh
    return _merge(dq), _merge(dk), _merge(dv)


mha.defvjp(mha_fwd, mha_bwd)
