"""Red team RT-48 (fixed): under JAX's reading of derivatives an inner ``custom_jvp`` /
``custom_vjp`` call was read by its primal body once a numerical comparison of its rule
with its body's derivative agreed at the samples (RT-35). A rule that differs only where
no draw looks, such as a gradient clip that binds beyond 1e5, passed, and the claim was
reported PROVED although JAX's derivative of the forward is not what the kernel proved:

    @jax.custom_vjp
    def clip_big(x): return x
    clip_big.defvjp(lambda x: (x, None), lambda r, g: (jnp.clip(g, -1e5, 1e5),))
    f = custom_vjp(lambda x: 3 * clip_big(x)) with bwd 3 g     -> PROVED (jax.vjp gives 1e5 at g = 1e6)

Now each inner custom call JAX differentiates through is a claim of its own, proved by
the kernel at the outer function's symbolic sizes (``verigrad/certify/inner_rules.py``):
its body is the forward, the primal and the VJP JAX computes through its rule are the fwd
and the backward. A claim that rests on an inner rule the kernel did not prove is TESTED
at best, naming the call. ``jax.nn.relu`` and ``softplus``'s ``logaddexp`` are proved.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad
from _pairs import custom_vjp as _vjp


@jax.custom_vjp
def clip_big(x):
    return x


clip_big.defvjp(lambda x: (x, None), lambda r, g: (jnp.clip(g, -1e5, 1e5),))


@jax.custom_jvp
def damp_far(x):
    return x


damp_far.defjvp(lambda p, t: (p[0], jnp.where(jnp.abs(p[0]) > 1e5, 0.0, t[0])))


@jax.custom_vjp
def far_primal(x):
    return x


far_primal.defvjp(lambda x: (jnp.where(jnp.abs(x) > 1e5, 0.0, x), None), lambda r, g: (g,))


def test_rt48_jax_clips_where_the_samples_do_not_look():
    f = _vjp(lambda x: 3.0 * clip_big(x), lambda x, g: (3.0 * g,))
    got = jax.vjp(f.fun, jnp.ones(2))[1](jnp.full(2, 1e6))[0]
    assert np.allclose(got, 1e5)           # JAX's derivative; the backward says 3e6


@pytest.mark.parametrize("inner", [clip_big, damp_far, far_primal], ids=["bwd clips", "jvp damps", "fwd differs"])
def test_rt48_a_rule_differing_out_of_sample_is_not_proved(inner):
    f = _vjp(lambda x: 3.0 * inner(x), lambda x, g: (3.0 * g,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status not in ("PROVED", "CHECKED"), cert.status
    assert cert.status == "TESTED"
    assert "only tested numerically" in cert.detail and inner.__name__ in cert.detail, cert.detail
    assert cert.wrt["x"].status == "TESTED"          # no row reads PROVED either


def test_rt48_relu_and_softplus_rules_are_proved_in_the_kernel():
    relu = _vjp(lambda x: 2.0 * jax.nn.relu(x), lambda x, g: (2.0 * g * (x > 0),))
    softplus = _vjp(jax.nn.softplus, lambda x, g: (g * jax.nn.sigmoid(x),))
    for f, name in ((relu, "relu"), (softplus, "logaddexp")):
        cert = verigrad.certify(f, shapes={"x": "n, d"})
        assert cert.status == "PROVED", (name, cert.status, cert.detail)
        assert "proved for every size and value: " + name in cert.settings["custom_rules"]
        assert any(c.startswith(f"at each call of {name}") for c in cert.side_conditions), cert.side_conditions


def test_rt48_a_wrong_backward_through_a_proved_rule_is_still_refuted():
    wrong = _vjp(lambda x: 2.0 * jax.nn.relu(x), lambda x, g: (g * (x > 0),))
    assert verigrad.certify(wrong, shapes={"x": "n"}).status == "REFUTED"


def test_rt48_a_call_jax_does_not_differentiate_needs_no_proof():
    """Under stop_gradient JAX never runs the rule: nothing rests on it."""
    f = _vjp(lambda x: x * jax.lax.stop_gradient(clip_big(x)), lambda x, g: (g * x,))
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "PROVED", (cert.status, cert.detail)


def test_rt48_the_primal_reading_needs_no_proof():
    """--stop-gradient identity reads every rule by its body (the certificate says so)."""
    f = _vjp(lambda x: 3.0 * clip_big(x), lambda x, g: (3.0 * g,))
    cert = verigrad.certify(f, shapes={"x": "n"}, stop_gradient="identity")
    assert cert.status == "PROVED", (cert.status, cert.detail)
    assert "not by the rules JAX differentiates with" in cert.settings["custom_rules"]
