"""Red team RT-10: float underflow is outside what PROVED claims, and certificates say so.

``exp`` (and ``logistic``) are positive in the exact reals, so ``log`` / ``div`` / ``rsqrt``
of them need no finiteness claim. In float arithmetic ``exp(-1e-6 x^2)`` underflows to 0
for |x| > ~27300 (float64), so XLA's ``log(exp(-1e-6 x^2))`` is -inf there (exact value
-1e-6 x^2, small and finite), and ``0.0 * log(...)`` is NaN. The kernel reads 0 everywhere,
rightly in the reals: certify reports PROVED for a backward that XLA computes as NaN on
|x| > 27300 while the forward ``2 x`` is finite.

Decision (2026-12-01): a PROVED is a statement in exact real arithmetic, for every size;
float rounding, overflow and underflow are outside it, like the rounding every float
program has. Modelling them would need a float semantics in the kernel (declaring ``exp``
merely non-negative in the importer does not help: the kernel then proves it positive).
What the project owes the user is to say so: every certificate carries the scope
(``Certificate.as_dict()["scope"]``, the CLI report, the notebook card, README).
"""
import jax
import jax.numpy as jnp
import numpy as np

import verigrad
from verigrad.certify.certificate import SCOPE
from verigrad.certify.report import print_report


def _fwd(x):
    return 2.0 * x


def _bwd(x, g):
    return (2.0 * g + 0.0 * jnp.log(jnp.exp(-1e-6 * x * x)),)


def _f():
    f = jax.custom_vjp(_fwd)
    f.defvjp(lambda x: (_fwd(x), x), _bwd)
    return f


def test_rt10_the_backward_is_nan_where_the_forward_is_finite():
    with jax.enable_x64(True):
        x = jnp.array([1.0, 5e4])
        assert np.all(np.isfinite(np.asarray(_fwd(x))))
        got = np.asarray(jax.vjp(_f(), x)[1](jnp.ones(2))[0])
        assert got[0] == 2.0 and np.isnan(got[1])


def test_rt10_the_certificate_states_that_underflow_is_outside_the_claim():
    from rich.console import Console
    with jax.enable_x64(True):
        cert = verigrad.certify(_f(), shapes={"x": "n"})
    assert cert.status == "PROVED", cert.detail        # true in the exact reals
    assert "exact real" in SCOPE and "underflow" in SCOPE and "overflow" in SCOPE
    assert cert.as_dict()["scope"].startswith(SCOPE)
    assert "tells one concrete size from another" in cert.as_dict()["scope"]      # RT4-A's unfixable cases
    console = Console(record=True, width=200)
    print_report(cert, console=console)
    assert SCOPE in console.export_text()
