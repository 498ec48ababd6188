"""Batched matrix product C[b] = A[b] B[b] with a hand-written backward.

    verigrad certify examples/certify/batched_matmul.py:bmm --shape a=batch,n,k --shape b=batch,k,m
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def bmm(a, b):
    return jnp.einsum("bnk,bkm->bnm", a, b)


def bmm_fwd(a, b):
    return bmm(a, b), (a, b)


def bmm_bwd(res, dc):
    a, b = res
    da = dc @ jnp.swapaxes(b, 1, 2)
    db = jnp.swapaxes(a, 1, 2) @ dc
    return da, db


bmm.defvjp(bmm_fwd, bmm_bwd)
