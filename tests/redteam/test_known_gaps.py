"""Known gaps, kept as strict xfails so that whoever closes one sees it (and removes the
mark). Each is a false PROVED that a red team found and that is not fixed yet.

G1 (RT-3 class, far region): a backward term that the kernel's total conventions read as
0 (``0 * log(u)``, ``0 * (1/u)``) but XLA computes as NaN where ``u`` leaves its domain,
in a region no sampled input reaches. RT-3's check samples JAX's backward where the
forward is finite; a region like |x| > 1e4 is never drawn. The sound fix is a claim of
its own, ``[the backward is finite] = 1`` wherever the forward is, built from the
importer's finiteness facts (``Facts.make_fin``) and proved by the kernel; a first
version (a claim per cotangent whose importer risk is not FINITE where the forward's is;
not landed) made the
causal attention example UNKNOWN, whose denominator the kernel cannot yet show nonzero.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad


def _far_nan():
    f = jax.custom_vjp(lambda x: 2.0 * x)
    f.defvjp(lambda x: (2.0 * x, x), lambda x, g: (2.0 * g + 0.0 * jnp.log(1e8 - x * x),))
    return f


def test_g1_the_backward_is_nan_far_out():
    got = np.asarray(jax.vjp(_far_nan(), jnp.array([1.0, 2e4]))[1](jnp.ones(2))[0])
    assert got[0] == 2.0 and np.isnan(got[1])


@pytest.mark.xfail(strict=True, reason="G1: NaN of the backward in a region no sample reaches is not seen")
def test_g1_not_proved():
    assert verigrad.certify(_far_nan(), shapes={"x": "n"}).status != "PROVED"
