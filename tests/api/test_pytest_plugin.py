"""The pytest plugin (verigrad/pytest_plugin.py, registered as the pytest11 entry point
``verigrad``): a project's suite, run by pytest in its own folder, gets a test per
``@verigrad.certified`` function and the ``verigrad`` fixture."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS = '''
import jax
import jax.numpy as jnp
import verigrad


@verigrad.certified(x="n, d")
@jax.custom_vjp
def rms_norm(x):
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


def _fwd(x):
    return rms_norm(x), x


def _bwd(x, dy):
    r = jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)
    d = x.shape[-1]
    return (dy / r - x * jnp.sum(dy * x, axis=-1, keepdims=True) / (d * r ** 3),)


rms_norm.defvjp(_fwd, _bwd)


@verigrad.certified(x="n, d")
@jax.custom_vjp
def rms_norm_wrong(x):                 # its backward forgets the second term
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


rms_norm_wrong.defvjp(lambda x: (rms_norm_wrong(x), x),
                      lambda x, dy: (dy / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6),))


@jax.custom_vjp
def square(x):
    return x * x


square.defvjp(lambda x: (square(x), x), lambda x, dy: (2 * x * dy,))
'''

TESTS = '''
import jax
import pytest
from layers import rms_norm, rms_norm_wrong, square       # the marked ones become tests here


def test_fixture_proves_with_a_struct(verigrad):
    cert = verigrad.assert_proved(square, x=jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), "float32"))
    assert cert.status == "PROVED"


def test_fixture_uses_the_marked_shapes_once_per_session(verigrad):
    a = verigrad.assert_proved(rms_norm)
    b = verigrad.certify(rms_norm, {"x": "n, d"})
    assert a is b


def test_fixture_refutes(verigrad):
    cert = verigrad.assert_refuted(rms_norm_wrong)
    assert cert.counterexample is not None


def test_fixture_fails_an_unproved_one(verigrad):
    with pytest.raises(AssertionError, match="counterexample"):
        verigrad.assert_proved(rms_norm_wrong)


def test_no_shapes_is_a_type_error(verigrad):
    with pytest.raises(TypeError, match="no shapes"):
        verigrad.certify(square)
'''


def test_certified_functions_become_tests_and_the_fixture_works(tmp_path):
    (tmp_path / "layers.py").write_text(textwrap.dedent(LAYERS))
    (tmp_path / "test_layers.py").write_text(textwrap.dedent(TESTS))
    env = dict(os.environ, JAX_PLATFORMS="cpu", VERIGRAD_WITNESS="0",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_layers.py"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    out = r.stdout + r.stderr
    # the correct one passes, the wrong one fails with its counterexample; the fixture tests pass
    assert "PASSED test_layers.py::rms_norm[certified]" in out, out
    assert "FAILED test_layers.py::rms_norm_wrong[certified]" in out, out
    assert "rms_norm_wrong is not PROVED" in out and "counterexample" in out, out
    assert "1 failed, 6 passed" in out, out
    assert r.returncode == 1


def test_without_the_plugin_nothing_is_collected_from_marks(tmp_path):
    (tmp_path / "layers.py").write_text(textwrap.dedent(LAYERS))
    (tmp_path / "test_layers.py").write_text("from layers import rms_norm\n\ndef test_nothing():\n    pass\n")
    env = dict(os.environ, JAX_PLATFORMS="cpu", VERIGRAD_WITNESS="0",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:verigrad",
                        "test_layers.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert "1 passed" in r.stdout and "certified" not in r.stdout, r.stdout
