"""A straight-through estimator: the forward is a soft quantizer q(z) = tanh(z), but the
gradient passes as if it were the identity, written as JAX programs do:
z + stop_gradient(q(z) - z).

    verigrad certify examples/certify/straight_through.py:straight_through --shape z=n,d

stop_gradient means what JAX means: its derivative is zero, so the exact VJP of this
forward is dy itself (the term in stop_gradient is held fixed while differentiating,
then evaluated). With --stop-gradient identity the claim is about the function's
mathematical derivative instead, dy (1 - tanh(z)^2), and this backward is refuted.
"""
import jax
import jax.numpy as jnp


def _quantize(z):
    return jnp.tanh(z)


@jax.custom_vjp
def straight_through(z):
    return z + jax.lax.stop_gradient(_quantize(z) - z)


def straight_through_fwd(z):
    return straight_through(z), z


def straight_through_bwd(z, dy):
    return (dy,)


straight_through.defvjp(straight_through_fwd, straight_through_bwd)
