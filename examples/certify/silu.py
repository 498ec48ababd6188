"""SiLU (swish): x sigmoid(x), with the backward s (1 + x (1 - s)).

    verigrad certify examples/certify/silu.py:silu --shape x=n,d
"""
import jax


@jax.custom_vjp
def silu(x):
    return x * jax.nn.sigmoid(x)


def silu_fwd(x):
    s = jax.nn.sigmoid(x)
    return x * s, (x, s)


def silu_bwd(res, dy):
    x, s = res
    return (dy * s * (1 + x * (1 - s)),)


silu.defvjp(silu_fwd, silu_bwd)
