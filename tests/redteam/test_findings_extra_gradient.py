"""Red team RT-46-e5 (rt2-e, fixed): a layer's backward returned a gradient for a parameter
it does not declare, and the combinators passed it on, overwriting another layer's.

Certification reads, of each layer's backward, the gradient of each *declared* parameter
(``compose._leaf``: ``grads[p] for p in pnames``); ``chain`` and ``fan_in`` merged the
children's gradient dicts with ``grads.update(g)``, ``named`` renamed every key, and
``residual`` passed the branch's dict on as it was. A ``Custom`` piece without parameters
is not put under a name scope (``builder._build``), so its keys reach the network as
written::

    def act(x):                                   # y = 2 x; dx = 2 dy: its own VJP is right
        backward(params, x, dy) = 2 dy, {"dense1/W": zeros((8, 8))}

    nb.network("ex", [nb.Dense(8), nb.Custom(act), nb.Dense(8), nb.Head()], input=(8,), classes=3)
    render(..., batch=4, opt=sgd, certify=True)
      -> network_backward PROVED, loss_backward PROVED, render_tie CHECKED

``chain``'s backward runs dense1's backward before act's, so act's ``dense1/W: 0``
replaced dense1's gradient: the tied step left ``dense1/W`` where it was (``jax.grad``'s
update: max 10.2 at lr 1), every other parameter exact.

Fix (``combinators._declared``): every combinator keeps, of a child's gradients, those of
the child's declared parameters, which are the ones certified.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from verigrad.nn import builder as nb
from verigrad.nn import combinators as C
from verigrad.nn import layers as L


def _act(extra):
    def make(x):
        def forward(params, x):
            return 2.0 * x

        def backward(params, x, dy):
            return 2.0 * dy, ({"dense1/W": jnp.zeros((8, 8), dy.dtype)} if extra else {})
        return L.Layer("twice", tuple(x), tuple(x), forward, backward)
    return make


def _grads(model):
    net = model.build(4)
    params = net.init(0)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 8)), jnp.float32)
    dy = jnp.asarray(np.random.default_rng(1).standard_normal((4, 3)), jnp.float32)
    _, vjp = jax.vjp(lambda p: net.forward(p, x), params)
    (want,) = vjp(dy)
    _, got = net.backward(params, x, None, dy)
    return got, want


def test_rt46_e5_an_undeclared_gradient_does_not_reach_another_layer():
    model = nb.network("ex", [nb.Dense(8), nb.Custom(_act(True)), nb.Dense(8), nb.Head()], input=(8,), classes=3)
    assert model.certificate.proved          # act's VJP is right: the certificate stands
    got, want = _grads(model)
    assert set(got) == set(want)
    assert float(np.max(np.abs(np.asarray(want["dense1/W"])))) > 0.1
    for k in want:
        assert np.allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-4, atol=1e-5), k


def test_rt46_e5_every_combinator_keeps_only_declared_gradients():
    x = (4, 8)
    junk = _act(True)(x)
    for node in (C.chain(L.dense(x, 8), junk), C.fan_in(L.dense(x, 8), junk), C.residual(junk),
                 C.site_residual(junk), C.named("n", C.chain(junk, L.dense(x, 8)))):
        params = node.init(0)
        args = [jnp.ones((4,), jnp.float32)] * len(node.aux)
        _, grads = node.backward(params, jnp.ones(x, jnp.float32), *args, jnp.ones(node.y, jnp.float32))
        assert set(grads) == set(node.param_names), (node.name, sorted(grads))


def test_rt46_e5_a_true_parameter_free_custom_piece_keeps_its_proof_and_gradients():
    model = nb.network("ok", [nb.Dense(8), nb.Custom(_act(False)), nb.Dense(8), nb.Head()], input=(8,), classes=3)
    assert model.certificate.proved
    got, want = _grads(model)
    for k in want:
        assert np.allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-4, atol=1e-5), k
