"""Every test here runs in float64: the hand-written backward is compared with jax.vjp
to ~1e-12, where float32 rounding would hide a small dropped term."""
import jax
import pytest


@pytest.fixture(autouse=True)
def float64():
    with jax.enable_x64(True):
        yield
