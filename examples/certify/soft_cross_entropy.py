"""Cross-entropy of logits against soft targets, -sum(t * log_softmax(z)), with the fused
backward (softmax(z) - t) g that holds only when every row of t sums to one.

    verigrad certify examples/certify/soft_cross_entropy.py:soft_cross_entropy --shape logits=n,k --shape targets=n,k --assume "sum(targets, -1) == 1"

The precondition is a hypothesis of the certificate: the targets are reparametrized
exactly (the last entry of a row is one minus the others), so what the kernel proves
for every value of the free entries holds for every input satisfying it. Without
--assume the same backward is REFUTED, with targets that do not sum to one.
"""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def soft_cross_entropy(logits, targets):
    return -jnp.sum(targets * jax.nn.log_softmax(logits, axis=-1))


def soft_cross_entropy_fwd(logits, targets):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.sum(targets * logp), (logp, targets)


def soft_cross_entropy_bwd(res, g):
    logp, targets = res
    return g * (jnp.exp(logp) - targets), -g * logp


soft_cross_entropy.defvjp(soft_cross_entropy_fwd, soft_cross_entropy_bwd)
