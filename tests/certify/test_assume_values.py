"""``--assume`` values are numbers as written: one float64 cannot hold, or a division by
zero (which the kernel's total ``1/0 = 0`` would read as ``x >= 0``, silently another
assumption), is refused with a message naming it, not read otherwise or a traceback."""
import jax
import jax.numpy as jnp
import pytest

import verigrad
from verigrad.certify.obligations import BadInput


@jax.custom_vjp
def positive_log(x):
    return jnp.log(x)


positive_log.defvjp(lambda x: (jnp.log(x), x), lambda x, g: (g / x,))


@pytest.mark.parametrize("text, says", [("x >= 1e308*10", "beyond float64"), ("x >= 1/0", "divides by zero"),
                                        ("x > 1/(2 - 2)", "divides by zero")])
def test_a_value_not_a_number_is_refused(text, says):
    with pytest.raises(BadInput, match=says):
        verigrad.certify(positive_log, {"x": "n"}, assume=[text])


def test_a_value_that_is_a_number_is_taken():
    """The neighbours: a large finite bound and a division by a nonzero number."""
    for text in ("x >= 1/2", "x > 1e-300", "x >= 1e308"):
        cert = verigrad.certify(positive_log, {"x": "n"}, assume=[text])
        assert any(text in h for h in cert.hypotheses), cert.hypotheses
