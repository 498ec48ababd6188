"""Certificates by construction: leaves proved by the kernel, nodes by the rules."""
import jax
import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.kernel import Theorem, vjp_statement
from verigrad.nn import combinators as C
from verigrad.nn import compose
from verigrad.nn import layers as L

(B,) = jax.export.symbolic_shape("B")


def _net(site=True):
    """dense -> relu -> (x + s * dense(x)) : a chain, a residual with a site, named layers."""
    inner = C.chain(C.named("up", L.dense((B, 4), 4)), C.named("act", L.relu((B, 4))))
    block = C.site_residual(inner, "s") if site else C.residual(inner)
    return C.chain(C.named("fc", L.dense((B, 3), 4)), block)


def _values(cert, sizes, seed=0):
    rng = np.random.default_rng(seed)
    vals = {}
    for v in [cert.x, cert.dy] + list(cert.params.values()) + list(cert.aux.values()):
        from verigrad.certify.evaluate import concrete_shape
        vals[v] = rng.standard_normal(concrete_shape(v.shape, sizes))
    return vals


@pytest.mark.parametrize("site", [True, False])
def test_every_parameter_and_the_input_are_proved(site):
    cert = compose.certify(_net(site))
    assert set(cert.theorems) == {cert.x.name, "fc/W", "fc/b", "up/W", "up/b"}
    assert all(isinstance(t, Theorem) for t in cert.theorems.values())
    assert ("drop-path site" in cert.rules) == site
    for name, th in cert.theorems.items():
        var = cert.x if name == cert.x.name else cert.params[name]
        # What is proved is exactly: backward = the transpose-Jacobian of the network's forward.
        assert th.rhs is vjp_statement(cert.forward, var, cert.dy)
        assert "at_elim" in th.axioms() and "congruence" in th.axioms()


def test_the_composed_backward_is_the_networks_backward():
    """The kernel-built backward agrees with the network's JAX backward and jax.vjp."""
    layer = _net(True)
    cert = compose.certify(layer)
    sizes = {s: 2 for s in cert.forward.sizes}
    vals = _values(cert, sizes)
    x = vals[cert.x]
    params = {n: vals[v] for n, v in cert.params.items()}
    s, dy = vals[cert.aux["s"]], vals[cert.dy]
    with jax.enable_x64(True):
        dx, grads = layer.backward(params, x, s, dy)
        _, vjp = jax.vjp(lambda p, xx: layer.forward(p, xx, s), params, x)
        ref_p, ref_x = vjp(dy)
    np.testing.assert_allclose(evaluate(cert.theorems[cert.x.name].lhs, sizes, vals), dx, rtol=1e-10)
    for n in params:
        ours = evaluate(cert.theorems[n].lhs, sizes, vals)
        np.testing.assert_allclose(ours, grads[n], rtol=1e-10)
        np.testing.assert_allclose(ours, ref_p[n], rtol=1e-10)
    np.testing.assert_allclose(dx, ref_x, rtol=1e-10)


def test_a_wrong_leaf_backward_is_never_proved_upstream():
    """A control at a leaf (the dense backward with W not transposed) makes every
    certificate that needs it unproved: nothing downstream can make it PROVED."""
    bad = L.dense((B, 4), 4)
    bad = bad.with_backward(lambda p, x, dy: (dy @ p["W"], {"W": x.T @ dy, "b": dy.sum(0)}))
    layer = C.chain(C.named("fc", L.dense((B, 3), 4)), C.named("up", bad))
    cert = compose.certify(layer)
    assert not isinstance(cert.theorems[cert.x.name], Theorem)
    assert not isinstance(cert.theorems["fc/W"], Theorem)       # reads up's dx
    assert isinstance(cert.theorems["up/W"], Theorem)           # up's dW is right
