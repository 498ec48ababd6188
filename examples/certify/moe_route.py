"""Mixture-of-experts routing: tokens grouped by the expert they chose (a stable argsort of
the expert ids, ties kept in token order), and the backward sends the cotangent back with
the inverse permutation, argsort(order): the VJP of a gather by a permutation is the
gather by its inverse (a gather by indices with repeats would need a scatter-add).

    verigrad certify examples/certify/moe_route.py:route --shape x=n,d --shape expert=n:int32
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def route(x, expert):
    return x[jnp.argsort(expert)]


def route_fwd(x, expert):
    order = jnp.argsort(expert)          # a permutation of the tokens
    return x[order], order


def route_bwd(order, dy):
    inverse = jnp.argsort(order)         # the argsort of a permutation is its inverse
    return dy[inverse], None


route.defvjp(route_fwd, route_bwd)
