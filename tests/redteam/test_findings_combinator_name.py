"""Red team RT-19 (fixed: only a node a combinator made is certified by its rule): a combinator node is certified by its *name*, not by its code. The
network certificate (``verigrad.nn.compose._certify``) decides what a node is from
``layer.name in COMBINATORS`` (and ``_is_named`` from ``hyper``/``children``) and builds
the node's backward from the composition rule over ``layer.children``; it never looks at
``layer.forward`` / ``layer.backward`` of that node. Training runs exactly those
functions (``Network.backward`` -> ``Layer.backward``), and the render tie ties the
emitted text to *them* (the JAX step function), not to the composed kernel term. So a
node that carries a combinator's name and children but another backward is reported
PROVED, the text is CHECKED, and XLA trains on a wrong gradient.

The documented way in: ``nb.Custom(fn)``, ``fn(input_shape) -> Layer`` ("a Layer with a
forward and a hand-written backward, or a combinator tree of them"), and
``Layer.with_backward`` (the public "same layer with another backward" a control uses)::

    # /tmp/rt_nn/wres.py
    from verigrad.nn import builder as nb, combinators as C, layers as L

    def wrong_residual(x):
        good = C.residual(L.dense(x, x[-1]))                  # x + dense(x)
        def backward(params, xx, dy):                          # hand-written, wrong by 2x / 3x
            dx, grads = good.backward(params, xx, dy)
            return 2.0 * dx, {k: 3.0 * g for k, g in grads.items()}
        return good.with_backward(backward)

    net = nb.network("wres", [nb.Dense(8), nb.Custom(wrong_residual), nb.Head()], input=(8,), classes=3)

    $ verigrad render /tmp/rt_nn/wres.py:net --out /tmp/rt_nn/out --opt sgd --batch 4
    network_backward: PROVED (7/7 proved, for all B)
    render tie: train_step CHECKED (XLA agrees), forward CHECKED

Running the tied ``train_step.mlir`` through XLA (sgd, lr 1) against
``verigrad.render.autodiff.reference_step`` (``jax.value_and_grad``): the gradients of
``dense0/W``, ``dense0/b`` are 2.000x, of ``custom0/W``, ``custom0/b`` 3.000x the true
ones (max |diff| 0.96, 0.99, 1.52, 0.94); only ``head/*`` agree. A leaf with the same
``with_backward`` is refused (its backward is imported and the kernel refutes it).

The same hole holds for the forward: a node named ``"residual"`` whose forward is
``2 x + f(x)`` is certified as ``x + f(x)`` (the rule's forward), so the certificate is
about a different network than the one trained.

Root cause: ``compose._certify`` trusts ``Layer.name`` / ``children`` / ``hyper`` of a
node as the combinator's identity; nothing ties a node's own forward/backward to the
rule's (e.g. importing the node's functions and proving them equal to the composed
term, or refusing combinator names for layers that ``combinators`` did not make).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn import builder as nb
from verigrad.nn import combinators as C
from verigrad.nn import layers as L


def _close(a, b):
    return np.allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)


def _wrong_residual(x):
    good = C.residual(L.dense(x, x[-1]))

    def backward(params, xx, dy):
        dx, grads = good.backward(params, xx, dy)
        return 2.0 * dx, {k: 3.0 * g for k, g in grads.items()}
    return good.with_backward(backward)


def _good_residual(x):
    return C.residual(L.dense(x, x[-1]))


def _pieces(custom):
    return [nb.Dense(8), nb.Custom(custom), nb.Head()]


def _grads(net):
    n = net.build(4)
    params = n.init(0)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 8)), jnp.float32)
    dy = jnp.asarray(np.random.default_rng(1).standard_normal((4, 3)), jnp.float32)
    _, vjp = jax.vjp(lambda p, xx: n.forward(p, xx), params, x)
    want_p, want_x = vjp(dy)
    got_x, got_p = n.backward(params, x, None, dy)
    return got_x, want_x, got_p, want_p


def test_rt19_the_trained_backward_is_wrong():
    net = nb.network("wres", _pieces(_wrong_residual), input=(8,), classes=3, certify=False)
    got_x, want_x, got_p, want_p = _grads(net)
    assert _close(got_x, 2 * want_x) and not _close(got_x, want_x)
    assert _close(got_p["custom0/W"], 3 * want_p["custom0/W"])
    assert _close(got_p["dense0/W"], 2 * want_p["dense0/W"])


def test_rt19_a_true_combinator_tree_keeps_its_proof():
    net = nb.network("gres", _pieces(_good_residual), input=(8,), classes=3)
    assert net.certificate.proved
    got_x, want_x, got_p, want_p = _grads(net)
    assert _close(got_x, want_x) and all(_close(got_p[k], want_p[k]) for k in want_p)


def test_rt19_not_proved():
    try:
        net = nb.network("wres", _pieces(_wrong_residual), input=(8,), classes=3)
    except nb.NetworkError:
        return                                   # refused: no false claim
    assert not net.certificate.proved, {k: type(v).__name__ for k, v in net.certificate.theorems.items()}
