"""Mixture-of-experts routing, route then unroute: tokens are grouped by the expert they
chose (a stable argsort of the expert ids, ties kept in token order), go through the
layer in that order, and are sent back with the inverse permutation argsort(order). The
backward routes the cotangent the other way: the VJP of a gather by a permutation is the
gather by its inverse (a gather by indices with repeats would need a scatter-add).

    verigrad certify examples/certify/moe_route.py:moe_layer --shape x=n,d --shape expert=n:int32 --shape w=d,m
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def moe_layer(x, expert, w):
    order = jnp.argsort(expert)           # a permutation of the tokens
    h = x[order] @ w                      # route: tokens in expert order
    return h[jnp.argsort(order)]          # unroute: the argsort of a permutation is its inverse


def moe_layer_fwd(x, expert, w):
    order = jnp.argsort(expert)
    inverse = jnp.argsort(order)
    return (x[order] @ w)[inverse], (x, w, order, inverse)


def moe_layer_bwd(res, dy):
    x, w, order, inverse = res
    dh = dy[order]                        # the transpose of unrouting is routing
    dx = (dh @ w.T)[inverse]
    dw = x[order].T @ dh
    return dx, None, dw


moe_layer.defvjp(moe_layer_fwd, moe_layer_bwd)
