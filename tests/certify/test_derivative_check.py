"""The derivative check (``validate._derivatives``): translation validation compares
values, so an importer misreading that changes only the derivative (a predicate behind
``stop_gradient``, the two branches of a ``where`` with one value) would reach the kernel
unseen; at N(0,1) inputs the backward is also compared with JAX's own derivative of the
forward, and a claim proved while they differ is not PROVED.

The misreading is simulated by restoring the importer bug red team rt6b found
(``x < max(x)`` read as never true): with it, and without this check, a zero backward was
PROVED."""
import jax
import jax.numpy as jnp
import pytest

import verigrad
from verigrad.frontends import jaxpr_rules
from verigrad.kernel import Num


def _rule(fwd, bwd, res=lambda x: x):
    f = jax.custom_vjp(fwd)
    f.defvjp(lambda *a: (fwd(*a), res(*a)), bwd)
    return f


def _below(x):
    return jnp.where(x < jnp.max(x, -1, keepdims=True), x, jax.lax.stop_gradient(x))


@pytest.fixture
def misreading_importer(monkeypatch):
    """The importer as it was before rt6b's fix: a strict comparison with the extremum is 0."""
    original = jaxpr_rules._against_extremum

    def never(ta, tb, rel):
        known = original(ta, tb, rel)
        return Num(0) if known is not None and rel in ("<", ">") else known
    monkeypatch.setattr(jaxpr_rules, "_against_extremum", never)


def test_a_claim_the_import_misreads_is_not_proved(misreading_importer):
    cert = verigrad.certify(_rule(_below, lambda x, g: (jnp.zeros_like(g),)), shapes={"x": "n, d"})
    assert cert.status != "PROVED"
    assert "JAX's derivative of the forward" in cert.detail and "misreads" in cert.detail


def test_the_right_backward_is_proved_with_the_right_import():
    bwd = lambda x, g: (jnp.where(x == jnp.max(x, -1, keepdims=True), 0.0, g),)  # noqa: E731
    cert = verigrad.certify(_rule(_below, bwd), shapes={"x": "n, d"})
    assert cert.status == "PROVED", cert.detail


def test_a_straight_through_estimator_is_compared_as_jax_differentiates_it():
    # the forward binarizes, its derivative is the identity through stop_gradient
    def ste(x):
        return x + jax.lax.stop_gradient(jnp.where(x > 0, 1.0, -1.0) - x)
    cert = verigrad.certify(_rule(ste, lambda x, g: (g,)), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail
    cert = verigrad.certify(_rule(ste, lambda x, g: (0.5 * g,)), shapes={"x": "n"})
    assert cert.status == "REFUTED"


def test_an_output_not_claimed_keeps_its_cotangent_at_zero():
    # the backward ignores output 1's cotangent: right for --output 0, the check agrees
    def two(x):
        return jnp.sin(x), x * x
    cert = verigrad.certify(_rule(two, lambda x, g: (jnp.cos(x) * g[0],)), shapes={"x": "n"}, output=[0])
    assert cert.status == "PROVED", cert.detail


def test_with_inner_rules_proved_a_misread_claim_is_not_proved_either(misreading_importer):
    # jax.nn.relu is a custom_jvp JAX differentiates through: its rule is proved, so the
    # difference is the misreading's, judged after the inner rules
    def fwd(x):
        return _below(jax.nn.relu(x) + x)
    cert = verigrad.certify(_rule(fwd, lambda x, g: (jnp.zeros_like(g),)), shapes={"x": "n, d"})
    assert cert.status != "PROVED"
    assert "misreads" in cert.detail, cert.detail
