"""Red team rt8b (open): a side condition on the *cotangent*, ``dy != 0`` (off the kink),
is accepted as holding almost everywhere, but JAX hands a backward exact zero
cotangents all the time, so a backward wrong exactly where ``dy = 0`` is PROVED and then
computes wrong gradients on ordinary calls.

Attacked: ``conditions.failing`` (``u != 0`` accepted when ``u`` is real-analytic in the
inputs and not identically zero), with ``u`` an entry of a cotangent variable. In the
claim ``bwd(x, dy) = J^T dy`` the cotangent is one more real input, and ``dy[i]`` is
analytic and not identically zero, so the condition passes. For a VJP that is the wrong
measure: ``dy = 0`` is not a rare input. JAX instantiates a symbolic-zero cotangent as an
array of zeros for every output the loss does not use (a ``custom_vjp`` without
``symbolic_zeros``), a masked loss puts exact zeros on masked entries, and ``jax.jacrev``
and one-hot seeds are mostly zeros. (The render tie refuses side conditions for the same
reason: "training feeds exactly such sets", RT-27/29/30. Certify does not.)

Counterexample 1, two outputs, the loss uses only the first::

    fwd(x) = (2 x, sin x)
    bwd(x, (g0, g1)) = 2 g0 + where(g1 != 0, g1 cos x, 1)

``verigrad.certify(f, shapes={"x": "n"})`` is PROVED, side condition
``dy1[i] != 0 (off the kink) for every i<n``. ``jax.grad(lambda x: f(x)[0].sum())`` at
``x = [0.3, -1.2, 2.0]`` gives ``[3, 3, 3]``; ``jax.vjp`` of the undecorated forward gives
``[2, 2, 2]``: wrong at every input.

Counterexample 2, one output, a masked loss::

    fwd(x) = 2 x;   bwd(x, g) = 2 g + 5 [g == 0]

PROVED (side condition ``dy[i] != 0``). ``jax.grad(lambda x: (f(x) * m).sum())`` with
``m = [1, 0, 1]`` gives ``[2, 5, 2]``; the true gradient is ``[2, 0, 2]``.

Expected: a condition on a cotangent is not accepted as measure zero (``dy = 0`` is fed),
so neither is PROVED (nor CHECKED).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad

NOT_OK = ("PROVED", "CHECKED")


def _unused_output():
    def fwd(x):
        return 2.0 * x, jnp.sin(x)

    f = jax.custom_vjp(fwd)

    def bwd(x, g):
        g0, g1 = g
        return (2.0 * g0 + jnp.where(g1 != 0, g1 * jnp.cos(x), 1.0),)
    f.defvjp(lambda x: (fwd(x), x), bwd)
    return f, fwd


def _masked_loss():
    def fwd(x):
        return 2.0 * x

    f = jax.custom_vjp(fwd)
    f.defvjp(lambda x: (fwd(x), x), lambda x, g: (2.0 * g + 5.0 * (g == 0),))
    return f, fwd


def test_unused_output_gradient_is_wrong():
    f, fwd = _unused_output()
    x = jnp.array([0.3, -1.2, 2.0])
    got = np.asarray(jax.grad(lambda x: f(x)[0].sum())(x))
    want = np.asarray(jax.grad(lambda x: fwd(x)[0].sum())(x))
    assert np.allclose(want, 2.0) and np.allclose(got, 3.0)


def test_unused_output_not_proved():
    f, _ = _unused_output()
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status not in NOT_OK, (cert.status, cert.side_conditions)


def test_masked_loss_gradient_is_wrong():
    f, fwd = _masked_loss()
    x, m = jnp.array([0.3, -1.2, 2.0]), jnp.array([1.0, 0.0, 1.0])
    got = np.asarray(jax.grad(lambda x: (f(x) * m).sum())(x))
    want = np.asarray(jax.grad(lambda x: (fwd(x) * m).sum())(x))
    assert np.allclose(want, [2, 0, 2]) and np.allclose(got, [2, 5, 2])


def test_masked_loss_not_proved():
    f, _ = _masked_loss()
    cert = verigrad.certify(f, shapes={"x": "n"})
    assert cert.status not in NOT_OK, (cert.status, cert.side_conditions)
