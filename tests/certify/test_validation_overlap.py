"""Translation validation runs XLA (compile and run) in a thread while the imported terms
are evaluated: the verdicts are those of the sequential order (a JAX failure first, then
assignment by assignment: an evaluation failure, or a disagreement)."""
import importlib

import jax.numpy as jnp
import pytest

from verigrad.certify.evaluate import EvalError
from verigrad.certify.obligations import from_pair
from verigrad.frontends.jaxpr import ArgSpec

VA = importlib.import_module("verigrad.certify.validate")


def _ob():
    def f(x):
        return jnp.tanh(x)

    def b(x, dy):
        return (dy * (1 - jnp.tanh(x) ** 2),)
    return from_pair(f, b, {"x": ArgSpec("x", ("n",))})


def test_agreement():
    assert VA.check(_ob()).problem is None


def test_an_evaluation_failure_names_its_assignment(monkeypatch):
    real, calls = VA.evaluate_many, []

    def second_fails(terms, sizes, *a, **k):
        calls.append(dict(sizes))
        if len(calls) == 2:
            raise EvalError("boom")
        return real(terms, sizes, *a, **k)
    monkeypatch.setattr(VA, "evaluate_many", second_fails)
    problem = VA.check(_ob()).problem
    where = ", ".join(f"{s.name}={v}" for s, v in calls[1].items())
    assert problem == f"could not evaluate the imported terms at {where}: boom"


def test_a_disagreement_before_the_failing_assignment_is_reported_first(monkeypatch):
    real, calls = VA.evaluate_many, []

    def first_wrong_second_fails(terms, sizes, *a, **k):
        calls.append(dict(sizes))
        if len(calls) == 2:
            raise EvalError("boom")
        return [v + 1.0 for v in real(terms, sizes, *a, **k)]
    monkeypatch.setattr(VA, "evaluate_many", first_wrong_second_fails)
    assert "disagrees with JAX" in VA.check(_ob()).problem


def test_a_jax_failure_comes_before_an_evaluation_failure(monkeypatch):
    def broken(*a, **k):
        raise ValueError("the user's code failed")

    monkeypatch.setattr(VA, "compile_lowered", lambda lowered, options=None: broken)
    monkeypatch.setattr(VA, "evaluate_many", lambda *a, **k: (_ for _ in ()).throw(EvalError("boom")))
    assert VA.check(_ob()).problem.endswith("with JAX failed: ValueError: the user's code failed")


def test_a_compile_failure_is_reported(monkeypatch):
    def no_compile(lowered, options=None):
        raise RuntimeError("XLA refused")
    monkeypatch.setattr(VA, "compile_lowered", no_compile)
    assert VA.check(_ob()).problem.endswith("with JAX failed: RuntimeError: XLA refused")


def test_the_background_thread_reraises():
    with pytest.raises(ZeroDivisionError):
        VA._Background(lambda: 1 / 0).result()
    assert VA._Background(lambda a, b: a + b, 2, 3).result() == 5
