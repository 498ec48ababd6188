"""Mean cross-entropy of logits against integer labels, with label smoothing.

The targets are (1 - eps) one_hot(label) + eps / k; the backward is the classic
(softmax(logits) - targets) / n, which needs every label inside [0, k): for a label
outside (an ignore or padding label, such as -100) the one-hot row is 0, and that row's
true gradient is (eps softmax(logits) - eps / k) g / n, not (softmax(logits) - eps / k) g / n.
So the claim is made with that precondition:

    verigrad certify examples/certify/cross_entropy.py:cross_entropy --shape logits=n,k --shape labels=n:int32 --assume "0 <= labels < k"

Without it the certificate is REFUTED, with a counterexample at a label out of range.
"""
import jax
import jax.numpy as jnp

SMOOTHING = 0.1


def _targets(labels, k):
    return (1 - SMOOTHING) * jax.nn.one_hot(labels, k) + SMOOTHING / k


@jax.custom_vjp
def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    t = _targets(labels, logits.shape[-1])
    return -jnp.sum(t * logp) / logits.shape[0]


def cross_entropy_fwd(logits, labels):
    return cross_entropy(logits, labels), (jax.nn.softmax(logits, axis=-1), labels)


def cross_entropy_bwd(res, g):
    p, labels = res
    t = _targets(labels, p.shape[-1])
    return g * (p - t) / p.shape[0], None


cross_entropy.defvjp(cross_entropy_fwd, cross_entropy_bwd)
