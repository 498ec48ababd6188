"""Sort activation (GroupSort, as in Lipschitz networks): the units of each group are put
in ascending order. The backward puts the cotangent back where each value came from,
through the inverse permutation of the sort (its ranks, the argsort of the argsort).
Sorting is differentiable off ties, a condition the certificate states.

    verigrad certify examples/certify/sort_activation.py:group_sort --shape x=n,g,k
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def group_sort(x):
    return jnp.sort(x, axis=-1)


def group_sort_fwd(x):
    order = jnp.argsort(x, axis=-1)
    return jnp.take_along_axis(x, order, axis=-1), order


def group_sort_bwd(order, dy):
    rank = jnp.argsort(order, axis=-1)   # where each input went: the inverse permutation
    return (jnp.take_along_axis(dy, rank, axis=-1),)


group_sort.defvjp(group_sort_fwd, group_sort_bwd)
