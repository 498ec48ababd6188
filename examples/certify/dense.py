"""A dense layer y = x W + b with a hand-written backward.

    verigrad certify examples/certify/dense.py:dense --shape x=n,d --shape w=d,m --shape b=m
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def dense(x, w, b):
    return x @ w + b


def dense_fwd(x, w, b):
    return dense(x, w, b), (x, w)


def dense_bwd(res, dy):
    x, w = res
    return dy @ w.T, x.T @ dy, jnp.sum(dy, axis=0)


dense.defvjp(dense_fwd, dense_bwd)
