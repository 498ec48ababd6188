"""Red-team gap G1 (RT-3 class, far region), fixed.

A backward term that the kernel's total conventions read as 0 (``0 * log(u)``,
``0 * (1/u)``) but XLA computes as NaN where ``u`` leaves its domain, in a region no
sampled input reaches (|x| > 1e4): RT-3's check samples JAX's backward where the forward
is finite and never drew such an input. Now certify also claims "the backward's
cotangent is finite wherever the forward is" for every cotangent the importer cannot
show finite (``obligations._risky_cotangents``, from the importer's finiteness facts),
and the kernel must prove it; the division of a softmax is finite because its
denominator is positive at every input (``conditions.positive_everywhere``).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad


def _far_nan():
    f = jax.custom_vjp(lambda x: 2.0 * x)
    f.defvjp(lambda x: (2.0 * x, x), lambda x, g: (2.0 * g + 0.0 * jnp.log(1e8 - x * x),))
    return f


def test_g1_the_backward_is_nan_far_out():
    got = np.asarray(jax.vjp(_far_nan(), jnp.array([1.0, 2e4]))[1](jnp.ones(2))[0])
    assert got[0] == 2.0 and np.isnan(got[1])


def test_g1_not_proved():
    cert = verigrad.certify(_far_nan(), shapes={"x": "n"})
    assert cert.status != "PROVED" and "is finite" in cert.detail, cert.detail


def test_g1_a_finite_backward_keeps_its_proof():
    """A division whose denominator is positive at every input (a causal softmax's, the
    mask keeping b = 0) is finite: the finiteness claim is proved, the cotangent PROVED."""
    def probs(s):
        n = s.shape[0]
        s = jnp.where(jnp.arange(n)[:, None] >= jnp.arange(n)[None, :], s, -jnp.inf)
        p = jnp.exp(s - jnp.max(s, -1, keepdims=True))
        return p / jnp.sum(p, -1, keepdims=True)
    f = jax.custom_vjp(probs)
    f.defvjp(lambda s: (probs(s), probs(s)), lambda p, g: (p * (g - jnp.sum(g * p, -1, keepdims=True)),))
    assert verigrad.certify(f, shapes={"s": "n,n"}).status == "PROVED"
