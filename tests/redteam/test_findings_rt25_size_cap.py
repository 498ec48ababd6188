"""Red team RT25 (2026-12-05, this session's own tries; fixed): validation ran past the
sizes an import's assumptions hold up to.

``(arange(n) + 250).astype(uint8)`` is read as ``i + 250`` with the stated assumption "the
integers converted to uint8 fit its range (... for sizes up to 6)". A right backward was
still reported "TRANSLATION VALIDATION FAILED (an importer bug ...)", UNKNOWN, because
validation ran at n = 7, where XLA wraps 256 to 0: outside the claim, not an importer bug.
A cap of 648 (``i + 2147483000`` in int32) was never reached by validation's sizes, so the
verdict depended on how small the cap was.

Fixed: the importer records the least such cap (``Importer.size_cap``) and validation,
the side-condition check and the counterexample search use no size assignment past it;
the validation line says so.
"""
import jax
import jax.numpy as jnp

import verigrad


def _vjp(shift, bwd_shift, bwd_type=jnp.uint8):
    def weight(x, s, dt):
        i = jnp.arange(x.shape[0])
        return (i + s).astype(dt).astype(x.dtype)
    f = jax.custom_vjp(lambda x: x * weight(x, shift, jnp.uint8))
    f.defvjp(lambda x: (x * weight(x, shift, jnp.uint8), (x,)),
             lambda r, g: (g * weight(r[0], bwd_shift, bwd_type),))
    return f


def test_a_right_backward_is_proved_within_its_stated_sizes():
    c = verigrad.certify(_vjp(250, 250), shapes={"x": ("n",)})
    assert c.status == "PROVED", c.detail
    assert any("uint8" in a and "sizes up to 6" in a for a in c.assumptions), c.assumptions
    assert "none past 6" in c.validation and "{1, 2, 3, 4, 5, 6}" in c.validation, c.validation


def test_a_wrong_backward_within_the_stated_sizes_is_not_proved():
    c = verigrad.certify(_vjp(250, 251), shapes={"x": ("n",)})
    assert c.status in ("REFUTED", "UNKNOWN"), c.status
    assert c.status != "PROVED"


def test_without_a_small_cap_validation_keeps_its_sizes():
    c = verigrad.certify(_vjp(100, 100), shapes={"x": ("n",)})    # fits uint8 for sizes up to 156
    assert c.status == "PROVED", c.detail
    assert "none past" not in c.validation and "11" in c.validation, c.validation
