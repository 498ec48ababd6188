"""A two-layer ReLU MLP; relu'(0) = 0 by convention, so the claim holds off the kink.

    verigrad certify examples/certify/relu_mlp.py:mlp --shape x=n,d --shape w1=d,h --shape w2=h,m
"""
import jax


@jax.custom_vjp
def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


def mlp_fwd(x, w1, w2):
    z = x @ w1
    h = jax.nn.relu(z)
    return h @ w2, (x, w1, w2, z, h)


def mlp_bwd(res, dy):
    x, w1, w2, z, h = res
    dh = dy @ w2.T
    dz = dh * (z > 0)
    return dz @ w1.T, x.T @ dz, h.T @ dy


mlp.defvjp(mlp_fwd, mlp_bwd)
