"""A leaf's translation validation is skipped only for a leaf whose import read the same
thing as one already validated: the same jaxprs (as ``build`` traced them) and the same
values of their constants, which a jaxpr's text names but does not print."""
import importlib

import jax
import numpy as np

from verigrad.nn import combinators as C
from verigrad.nn import compose
from verigrad.nn.layers.core import Layer

VA = importlib.import_module("verigrad.certify.validate")
(B,) = jax.export.symbolic_shape("B")


def _scaled(c):
    c = np.asarray(c, dtype=np.float64)

    def forward(params, x):
        return x * c

    def backward(params, x, dy):
        return dy * c, {}
    return Layer("scale", (B, 4), (B, 4), forward, backward)


def _validated(monkeypatch, layer):
    calls = []
    real = VA.validate

    def spy(ob, *a, **k):
        calls.append(ob.name)
        return real(ob, *a, **k)
    monkeypatch.setattr(VA, "validate", spy)
    monkeypatch.setattr(compose, "_VALIDATED", set())     # what earlier tests validated does not count
    cert = compose.certify(layer)
    assert cert.proved
    return calls


def test_leaves_alike_but_for_a_constant_are_each_validated(monkeypatch):
    rng = np.random.default_rng(20261201)
    c1, c2 = rng.standard_normal(4), rng.standard_normal(4)
    assert _validated(monkeypatch, C.chain(_scaled(c1), _scaled(c2))) == ["scale@net.0", "scale@net.1"]


def test_identical_leaves_are_validated_once(monkeypatch):
    c = np.random.default_rng(20261202).standard_normal(4)
    assert _validated(monkeypatch, C.chain(_scaled(c), _scaled(c.copy()))) == ["scale@net.0"]


def test_the_key_reads_the_constants():
    import jax.numpy as jnp
    s = jax.ShapeDtypeStruct((4,), jnp.float64)
    with jax.enable_x64(True):
        one, two = (jax.make_jaxpr(lambda x, c=c: x * c)(s) for c in (np.arange(4.0), 2 * np.arange(4.0)))
    assert str(one) == str(two)                       # the text alone cannot tell them apart
    assert compose._const_values(one) != compose._const_values(two)
