"""Mixture of experts with one weight matrix per expert: each token goes through the
weight of the expert it chose, w[expert]; the weight gradient collects, for each expert,
the tokens that chose it (a scatter-add over the expert ids). Right for ids in [0, k):
past the end the gather clamps while the scatter-add drops, so the claim states the
assumption.

    verigrad certify examples/certify/moe_experts.py:expert_layer --shape x=n,d --shape expert=n:int32 --shape w=k,d,m --assume "0 <= expert < k"
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def expert_layer(x, expert, w):
    return jnp.einsum("nd,ndm->nm", x, w[expert])


def expert_layer_fwd(x, expert, w):
    return expert_layer(x, expert, w), (x, expert, w)


def expert_layer_bwd(res, dy):
    x, expert, w = res
    dx = jnp.einsum("nm,ndm->nd", dy, w[expert])
    dw = jnp.zeros_like(w).at[expert].add(jnp.einsum("nd,nm->ndm", x, dy))    # summed per expert
    return dx, None, dw


expert_layer.defvjp(expert_layer_fwd, expert_layer_bwd)
