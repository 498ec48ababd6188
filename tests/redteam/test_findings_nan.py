"""Red-team finding RT-3 (false PROVED through certify): a backward that JAX/XLA
computes as NaN where the forward is finite is PROVED.

Forward ``2 x``; backward ``2 g + 0 * log(x)`` (or ``2 g + 0 * (1 / (x - x))``). The
kernel's total conventions (``log x = log |x|``, ``0^-1 = 0``) make the imported
backward ``2 g`` = J^T dy, so the kernel's theorem is true of the *term*; but XLA
computes NaN for every ``x < 0`` (everywhere for the ``1 / (x - x)`` form), where the
forward is finite and the claim is supposed to cover. Translation validation
(``validate._compare``) skips entries where JAX's value is not finite, and nothing
checks that the backward is finite where the forward is, so ``verigrad certify``
reports PROVED for a backward that returns NaN on half (or all) of its domain.

Fixed: validation notes where JAX's backward is not finite while the forward is
(``validate._note_nonfinite_backward``), and such a claim is not PROVED.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import verigrad


def _f(nan_everywhere: bool):
    f = jax.custom_vjp(lambda x: x * 2.0)

    def bwd(x, g):
        junk = 1.0 / (x - x) if nan_everywhere else jnp.log(x)
        return (g * 2.0 + 0.0 * junk,)
    f.defvjp(lambda x: (x * 2.0, x), bwd)
    return f


@pytest.mark.parametrize("everywhere", [False, True])
def test_rt3_the_backward_is_nan_where_the_forward_is_finite(everywhere):
    x = jnp.array([-1.0, 2.0, -3.0])
    got = np.asarray(jax.vjp(_f(everywhere), x)[1](jnp.ones(3))[0])
    assert np.all(np.isfinite(np.asarray(_f(everywhere)(x))))
    assert np.isnan(got[0]) and np.isnan(got[2])


@pytest.mark.parametrize("everywhere", [False, True])
def test_rt3_nan_backward_is_not_proved(everywhere):
    cert = verigrad.certify(_f(everywhere), shapes={"x": "n"})
    assert cert.status != "PROVED" and "where the forward is finite" in cert.detail, cert.detail


def test_rt3_a_where_guarded_backward_is_not_refuted():
    """NaN in a branch that ``where`` does not select is not in the backward's value, so
    it must never be REFUTED. It is not PROVED either, today: its finiteness claim (G1)
    needs the square root's nonzero base, which the kernel records without the guard
    ``x > 0`` around it, so the condition fails at negative inputs. Incomplete, sound;
    when the kernel records a condition under its guard this becomes PROVED again."""
    f = jax.custom_vjp(lambda x: jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0))
    f.defvjp(lambda x: (f(x), x),
             lambda x, g: (g * jnp.where(x > 0, 0.5 / jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0),))
    cert = verigrad.certify(f, shapes={"x": "n"}, search_seconds=2)
    assert cert.status == "UNKNOWN" and "finite" in cert.detail, cert.detail
