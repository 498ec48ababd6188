"""Log-softmax over the last axis, with the backward dx = dy - softmax(x) * sum(dy).

    verigrad certify examples/certify/log_softmax.py:log_softmax --shape x=n,d
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def log_softmax(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    z = x - m
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


def log_softmax_fwd(x):
    y = log_softmax(x)
    return y, y


def log_softmax_bwd(y, dy):
    return (dy - jnp.exp(y) * jnp.sum(dy, axis=-1, keepdims=True),)


log_softmax.defvjp(log_softmax_fwd, log_softmax_bwd)
