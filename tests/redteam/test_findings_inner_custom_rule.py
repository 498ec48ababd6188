"""Red team RT-35 (finding F5; fixed): the jaxpr importer read an inner ``custom_jvp`` /
``custom_vjp`` by its primal body, while certify's default reading is JAX's
(``--stop-gradient jax``: "as when JAX differentiates the forward"), and JAX
differentiates such a call by its rule. So a gradient-scaling layer gave a false PROVED
(/work/scratch/redteam/g_inner_jvp.py):

    @jax.custom_jvp
    def scale_grad(x): return x
    scale_grad.defjvp(lambda p, t: (p[0], 0.5 * t[0]))
    def _fwd(x): return 2.0 * scale_grad(x)
    f = jax.custom_vjp(_fwd);  f.defvjp(lambda x: (f(x), None), lambda r, g: (2.0 * g,))
    g2 = jax.custom_vjp(_fwd); g2.defvjp(lambda x: (g2(x), None), lambda r, g: (1.0 * g,))

    $ verigrad certify g_inner_jvp.py:f --shape x=n     -> PROVED  (jax.vjp(f.fun) gives 1.0, not 2.0)
    $ verigrad certify g_inner_jvp.py:g2 --shape x=n    -> REFUTED (g2 is what jax.vjp gives)

Now, under JAX's reading, every inner custom rule JAX differentiates through is traced at
symbolic sizes (a size branch in it is refused) and its VJP is compared in float64 with
the VJP of its primal body at sampled sizes and inputs (``verigrad/certify/custom_rules.py``):
a rule that agrees (``jax.nn.relu``, ``softplus``'s ``logaddexp``, ``xlogy``) is read by its
body as before; one that differs refuses the import (UNKNOWN, naming the function and
``--stop-gradient identity``, the primal reading, which the certificate then states). The
probe that still runs on refused code compares against JAX's derivative with the rules
kept (its widened reference had stripped them, so g2 would have been refuted).
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import verigrad
from _pairs import custom_vjp as _vjp


@jax.custom_jvp
def scale_grad(x):
    return x


scale_grad.defjvp(lambda p, t: (p[0], 0.5 * t[0]))


def _fwd(x):
    return 2.0 * scale_grad(x)


f = jax.custom_vjp(_fwd)
f.defvjp(lambda x: (f(x), None), lambda r, g: (2.0 * g,))      # the primal body's derivative
g2 = jax.custom_vjp(_fwd)
g2.defvjp(lambda x: (g2(x), None), lambda r, g: (1.0 * g,))    # what jax.vjp of the forward gives


def test_rt35_jax_differentiates_by_the_inner_rule():
    with jax.enable_x64(True):
        x = jnp.array([0.3, -1.2])
        assert np.allclose(jax.vjp(f.fun, x)[1](jnp.ones(2))[0], 1.0)
        assert np.allclose(jax.vjp(f, x)[1](jnp.ones(2))[0], 2.0)
        assert np.allclose(jax.vjp(g2, x)[1](jnp.ones(2))[0], 1.0)


def test_rt35_f_is_not_proved():
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status == "UNKNOWN", cert.status
    assert "scale_grad" in cert.detail and "not the derivative of its primal body" in cert.detail, cert.detail
    assert "--stop-gradient identity" in cert.detail


def test_rt35_g2_is_never_refuted():
    """The import is refused as for f; the probe's reference is JAX's derivative (rules kept),
    which g2's backward matches."""
    cert = verigrad.certify(g2, shapes={"x": "n"})
    assert cert.status in ("PROVED", "UNKNOWN"), cert.counterexample


def test_rt35_the_primal_reading_is_stated():
    cert = verigrad.certify(f, shapes={"x": "n"}, stop_gradient="identity")
    assert cert.status == "PROVED"
    assert "primal bodies" in cert.settings["custom_rules"] and "scale_grad" in cert.settings["custom_rules"]
    assert verigrad.certify(g2, shapes={"x": "n"}, stop_gradient="identity").status == "REFUTED"


# -- an inner custom_vjp, nested rules, calls inside jit and scan -----------------------------

@jax.custom_vjp
def sin3(x):                       # its bwd triples the derivative of its body
    return jnp.sin(x)


sin3.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (3.0 * jnp.cos(x) * g,))


@jax.custom_vjp
def sin_ok(x):
    return jnp.sin(x)


sin_ok.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (c * g,))


@jax.custom_jvp
def outer(x):                      # its rule differentiates its body the way JAX does: by scale_grad's rule
    return 3.0 * scale_grad(x)


outer.defjvp(lambda p, t: jax.jvp(lambda x: 3.0 * scale_grad(x), p, t))


def _scanned(x):
    def body(c, xi):
        return c + scale_grad(xi), c * xi
    c, ys = lax.scan(body, jnp.zeros(x.shape[1:]), x)
    return c + ys.sum(0)


def test_rt35_an_inner_custom_vjp():
    body_reading = _vjp(lambda x: 2.0 * sin3(x), lambda x, g: (2.0 * jnp.cos(x) * g,))
    jax_reading = _vjp(lambda x: 2.0 * sin3(x), lambda x, g: (6.0 * jnp.cos(x) * g,))
    for h in (body_reading, jax_reading):
        cert = verigrad.certify(h, shapes={"x": "n"})
        assert cert.status == "UNKNOWN" and "sin3" in cert.detail, cert.detail
    ok = _vjp(lambda x: 2.0 * sin_ok(x), lambda x, g: (2.0 * jnp.cos(x) * g,))
    cert = verigrad.certify(ok, shapes={"x": "n"})
    assert cert.status == "PROVED" and "sin_ok" in cert.settings["custom_rules"]


def test_rt35_nested_jit_and_scan():
    nested = _vjp(lambda x: outer(x), lambda x, g: (3.0 * g,))
    in_jit = _vjp(lambda x: 2.0 * jax.jit(scale_grad)(x), lambda x, g: (2.0 * g,))
    in_scan = _vjp(_scanned, lambda x, g: (None,))
    for h, shape in ((nested, "n"), (in_jit, "n"), (in_scan, "3, n")):
        cert = verigrad.certify(h, shapes={"x": shape})
        assert cert.status == "UNKNOWN", (h, cert.status)
        assert "not the derivative of its primal body" in cert.detail, cert.detail


def test_rt35_a_stopped_rule_is_not_differentiated():
    """A disagreeing rule whose value is only seen through stop_gradient: JAX's derivative
    is zero there either way, so nothing stands in the way of the proof."""
    h = _vjp(lambda x: x + lax.stop_gradient(scale_grad(x)), lambda x, g: (g,))
    assert verigrad.certify(h, shapes={"x": "n"}).status == "PROVED"


@jax.custom_jvp
def by_size(x):
    return x


@by_size.defjvp
def _by_size_rule(p, t):
    if p[0].shape[0] > 4:          # right at the sizes a check samples first, wrong from 5 on
        return p[0], 0.5 * t[0]
    return p[0], t[0]


def test_rt35_a_rule_that_depends_on_the_size():
    h = _vjp(lambda x: 2.0 * by_size(x), lambda x, g: (2.0 * g,))
    cert = verigrad.certify(h, shapes={"x": "n"})
    assert cert.status == "UNKNOWN" and "branches on the size" in cert.detail, cert.detail
    assert verigrad.certify(h, shapes={"x": "3"}).status == "PROVED"      # at n = 3 the rule is right


def test_rt35_the_probe_keeps_the_rules():
    """Code the importer refuses anyway (``floor``): the probe's reference is jax.vjp of the
    forward with its custom rules, so a backward that matches JAX is not refuted."""
    h = _vjp(lambda x: 2.0 * scale_grad(x) + 0.0 * jnp.floor(x), lambda x, g: (1.0 * g,))
    assert verigrad.certify(h, shapes={"x": "n"}).status == "UNKNOWN"


# -- neighbours: rules that agree with their bodies stay PROVED --------------------------------

def test_rt35_jax_custom_jvp_activations_still_prove():
    """In jax 0.10.2 ``relu``, ``relu6``, ``softplus`` (``logaddexp``) and ``xlogy`` are
    custom_jvp; their rules agree with their bodies off a kink."""
    def prims(fn, *a):
        return [e.primitive.name for e in jax.make_jaxpr(fn)(*a).jaxpr.eqns]
    for fn in (jax.nn.relu, jax.nn.relu6):
        assert "custom_jvp_call" in prims(fn, jnp.ones(3))
    assert "custom_jvp_call" in str(jax.make_jaxpr(jax.nn.softplus)(jnp.ones(3)))

    def fwd(x):
        return jax.nn.relu(x) * x + jax.nn.softplus(x) + jax.nn.relu6(x)

    def bwd(x, g):
        return ((2.0 * jax.nn.relu(x) + jax.nn.sigmoid(x) + ((x > 0) & (x < 6)).astype(x.dtype)) * g,)
    cert = verigrad.certify(_vjp(fwd, bwd), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail
    rules = cert.settings["custom_rules"]
    assert "agrees" in rules and "relu" in rules and "logaddexp" in rules

    def fwd_x(x):
        return jax.scipy.special.xlogy(x * x + 1.0, x * x + 1.0)

    def bwd_x(x, g):
        return ((2.0 * x * jnp.log(x * x + 1.0) + 2.0 * x) * g,)
    assert verigrad.certify(_vjp(fwd_x, bwd_x), shapes={"x": "n"}).status == "PROVED"


def test_rt35_softmax_gelu_logsumexp_still_prove():
    """Not custom_jvp in jax 0.10.2 (softmax and logsumexp hold their maximum with
    stop_gradient); unaffected."""
    for fn in (jax.nn.softmax, jax.nn.gelu, jax.nn.logsumexp):
        assert "custom_jvp_call" not in str(jax.make_jaxpr(fn)(jnp.ones((2, 3))))

    def fwd(x):
        return jax.nn.softmax(x, axis=-1) + jax.nn.logsumexp(x, axis=-1, keepdims=True)

    def bwd(x, g):
        y = jax.nn.softmax(x, axis=-1)
        return (y * (g - jnp.sum(g * y, -1, keepdims=True)) + y * jnp.sum(g, -1, keepdims=True),)
    assert verigrad.certify(_vjp(fwd, bwd), shapes={"x": "b, n"}).status == "PROVED"

    def fwd_g(x):
        return jax.nn.gelu(x, approximate=True)

    def bwd_g(x, g):
        c = jnp.sqrt(2.0 / jnp.pi)
        u = c * (x + 0.044715 * x ** 3)
        t = jnp.tanh(u)
        return ((0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)) * g,)
    assert verigrad.certify(_vjp(fwd_g, bwd_g), shapes={"x": "n"}).status == "PROVED"
