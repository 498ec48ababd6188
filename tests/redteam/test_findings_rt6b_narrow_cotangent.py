"""Red team rt6b (fixed: validation traces the fwd and bwd rules at the dtypes they were
imported at): a right backward that recomputes its forward with ``jax.vjp`` (the
remat-style custom_vjp), of a forward that computes in float16 or bfloat16 and casts
its result, was UNKNOWN ("the import failed validation"): where the code narrows,
validation traced the rules afresh with every argument in float64, cotangents
included, and the user's ``jax.vjp`` refused a float64 cotangent for its float32
output (``ValueError: unexpected JAX type ... for argument to VJP function``). Now the
rules are traced at their own dtypes and the jaxpr is evaluated widened, as before.
"""
import jax
import jax.numpy as jnp

import verigrad


def _f16_square(x):
    return (x.astype(jnp.float16) ** 2).astype(jnp.float32)


def _bf16_tanh(x):
    return jnp.tanh(x.astype(jnp.bfloat16)) * 3


def _recompute(f, scale=1.0):
    c = jax.custom_vjp(f)
    c.defvjp(lambda x: (f(x), x), lambda x, g: (jax.vjp(f, x)[1](g)[0] * scale,))
    return c


def test_recomputed_backward_float16_proved():
    cert = verigrad.certify(_recompute(_f16_square), shapes={"x": "n"})
    assert cert.status == "PROVED", (cert.validation, cert.detail)


def test_recomputed_backward_bfloat16_output_proved():
    cert = verigrad.certify(_recompute(_bf16_tanh), shapes={"x": "n"})
    assert cert.status == "PROVED", (cert.validation, cert.detail)


def test_recomputed_backward_scaled_refuted():
    cert = verigrad.certify(_recompute(_bf16_tanh, 1.01), shapes={"x": "n"})
    assert cert.status == "REFUTED", (cert.validation, cert.detail)
