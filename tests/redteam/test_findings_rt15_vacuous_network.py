"""Red team RT15 (found 2026-12-03, fixed the same day): a network is "certified for every batch
size" although the side conditions of its composed theorems hold nowhere, and its
backward is wrong at every input.

Two user layers (``builder.Custom``), each certified alone and correctly:
``dup(x) = [x, x]`` (backward ``dy[:, :n] + dy[:, n:]``) and ``pairmax(u) = max(u[:, :n],
u[:, n:])`` whose backward sends ``dy`` to the strictly larger half and nothing at a tie
(``where(a > b, dy, 0)``, ``where(b > a, dy, 0)``): PROVED for pairmax under the condition
``a - b != 0`` off the kink, true and fine for that layer alone (a null set).
``network("dupmax", [Dense(8), Custom(dup), Custom(pairmax), Head()])`` builds and reads
"certified for every batch size". Composition substitutes ``u := dup(...)`` into the
condition, which becomes ``h - h != 0``: false at every input. The network's backward
sends 0 through the pair, while ``max(h, h) = h`` has derivative 1: wrong everywhere.

Root: ``compose`` carries each layer's side conditions through the substitution (as it
must), but nothing asked of the composed network's theorems what certify and verify ask
of theirs: that each condition fails only on a set of measure zero. Nor is a check for
conditions false at EVERY input enough: ``dup``, then ``[a, b] -> [a, relu(b)]`` (certified
alone), then pairmax ties on the half space ``h >= 0``, where the backward is 0 and the
derivative 1. The zoo's own CNN (relu, then max pool) had the same gap: a window of four
relus that are all 0 ties on a set of positive measure.

Fixed: ``compose.certify`` asks ``verigrad.nn.almost_everywhere`` of the composed
theorems' conditions, as functions of the network's input and parameters, that each
fails only on a null set (see its docstring), and a network whose conditions are not
shown has no certificate (``NetworkError``; an UNKNOWN record in ``certificates`` and
``render``). The builder builds ``Relu(), MaxPool()`` as ``MaxPool(), Relu()``, the same
function, whose conditions are shown; the zoo CNN pools first.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.nn import builder as nb
from verigrad.nn.layers.core import Layer


def dup(x):
    B, n = x
    return Layer("dup", (B, n), (B, 2 * n), lambda params, x: jnp.concatenate([x, x], axis=1),
                 lambda params, x, dy: (dy[:, :n] + dy[:, n:], {}))


def pairmax(x):
    B, m = x
    n = m // 2

    def backward(params, x, dy):
        a, b = x[:, :n], x[:, n:]
        return jnp.concatenate([jnp.where(a > b, dy, 0.0), jnp.where(b > a, dy, 0.0)], axis=1), {}
    return Layer("pairmax", (B, m), (B, n), lambda params, x: jnp.maximum(x[:, :n], x[:, n:]), backward)


def relu_second_half(x):
    """``[a, b] -> [a, relu(b)]``. After ``dup``: ``[h, relu(h)]``, a pair that ties wherever
    ``h >= 0``, half of the space, so a check for conditions false at every input would
    not catch it."""
    B, m = x
    n = m // 2
    return Layer("relu_second_half", (B, m), (B, m),
                 lambda params, x: jnp.concatenate([x[:, :n], jnp.maximum(x[:, n:], 0.0)], axis=1),
                 lambda params, x, dy: (jnp.concatenate([dy[:, :n], jnp.where(x[:, n:] > 0, dy[:, n:], 0.0)], axis=1),
                                        {}))


def test_the_composed_backward_is_wrong_at_every_input():
    """The premise, checked numerically: dup then pairmax, backward against jax.vjp."""
    x = jnp.asarray(np.random.default_rng(0).normal(size=(3, 4)), jnp.float32)
    d, p = dup((3, 4)), pairmax((3, 8))
    y, vjp = jax.vjp(lambda x: p.forward({}, d.forward({}, x)), x)
    dy = jnp.ones_like(y)
    hand = d.backward({}, x, p.backward({}, d.forward({}, x), dy)[0])[0]
    assert np.allclose(vjp(dy)[0], 1.0) and np.allclose(hand, 0.0)


def test_with_relu_then_pairmax_is_wrong_on_half_the_space():
    x = jnp.asarray(np.random.default_rng(1).normal(size=(3, 4)), jnp.float32)
    d, r, p = dup((3, 4)), relu_second_half((3, 8)), pairmax((3, 8))
    y, vjp = jax.vjp(lambda x: p.forward({}, r.forward({}, d.forward({}, x))), x)
    dy = jnp.ones_like(y)
    u = d.forward({}, x)
    hand = d.backward({}, x, r.backward({}, u, p.backward({}, r.forward({}, u), dy)[0])[0])[0]
    positive = np.asarray(x) > 0
    assert positive.any() and np.allclose(np.asarray(vjp(dy)[0])[positive], 1.0)
    assert np.allclose(np.asarray(hand)[positive], 0.0)      # the true derivative is 1 there


@pytest.mark.parametrize("middle", [[dup], [dup, relu_second_half]], ids=["nowhere", "half_the_space"])
def test_a_network_whose_conditions_fail_on_a_set_of_positive_measure_is_not_certified(middle):
    with pytest.raises(nb.NetworkError, match="almost every input.*side condition"):
        nb.network("pairs", [nb.Dense(8), *map(nb.Custom, middle), nb.Custom(pairmax), nb.Head(pool="flatten")],
                   input=(8,), classes=3)
