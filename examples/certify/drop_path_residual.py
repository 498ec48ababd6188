"""A residual block with a drop-path scalar: y = x + keep * tanh(x W), where keep is
the per-step drop-path factor (0 or 1 / keep_prob), itself differentiable here.

    verigrad certify examples/certify/drop_path_residual.py:residual --shape x=n,d --shape w=d,d --shape keep=
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def residual(x, w, keep):
    return x + keep * jnp.tanh(x @ w)


def residual_fwd(x, w, keep):
    h = jnp.tanh(x @ w)
    return x + keep * h, (x, w, keep, h)


def residual_bwd(res, dy):
    x, w, keep, h = res
    dz = keep * dy * (1 - h * h)
    return dy + dz @ w.T, x.T @ dz, jnp.sum(dy * h)


residual.defvjp(residual_fwd, residual_bwd)
