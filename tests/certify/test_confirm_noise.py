"""A counterexample is confirmed only if JAX's own derivative of the forward differs too:
finite differences of a forward that is constant in an input are rounding noise (about
1e-12), which used to confirm a refutation of a correct backward against an exact 0
(found on the corpus of issue 12: a masked attention whose backward zeroes the masked
scores, REFUTED at m = 1 with "expected -2.15e-12, got 0")."""
import importlib.util
import textwrap

import numpy as np

from verigrad.certify.obligations import Settings, from_custom_vjp
from verigrad.certify.specs import parse_spec
from verigrad.certify.validate import confirm
from verigrad.cli import main

MODULE = textwrap.dedent("""
    import jax
    import jax.numpy as jnp

    def _probs(mask, q, k):
        s = jnp.where(mask, q @ k.T, -1e30)
        m = jnp.max(s, axis=-1, keepdims=True)
        e = jnp.exp(s - m)
        z = jnp.sum(e, axis=-1, keepdims=True)
        return e / z, m + jnp.log(z)

    @jax.custom_vjp
    def attn(mask, q, k, v):
        return _probs(mask, q, k)[0] @ v

    def attn_fwd(mask, q, k, v):
        p, lse = _probs(mask, q, k)
        return p @ v, (mask, q, k, v, lse)

    def attn_bwd(res, do):
        mask, q, k, v, lse = res
        p = jnp.exp(jnp.where(mask, q @ k.T, -1e30) - lse)
        dp = do @ v.T
        ds = jnp.where(mask, p * (dp - jnp.sum(dp * p, axis=-1, keepdims=True)), 0.0)
        return None, ds @ k, ds.T @ q, p.T @ do

    attn.defvjp(attn_fwd, attn_bwd)

    @jax.custom_vjp
    def attn_wrong(mask, q, k, v):
        return _probs(mask, q, k)[0] @ v

    def attn_wrong_bwd(res, do):
        mask, q, k, v, lse = res
        p = jnp.exp(jnp.where(mask, q @ k.T, -1e30) - lse)
        dp = do @ v.T
        ds = jnp.where(mask, p * dp, 0.0)          # the row term dropped
        return None, ds @ k, ds.T @ q, p.T @ do

    attn_wrong.defvjp(attn_fwd, attn_wrong_bwd)
""")

ARGS = ["--shape", "mask=n,m:bool", "--shape", "q=n,d", "--shape", "k=m,d", "--shape", "v=m,d", "--wrt", "q"]


def test_rounding_noise_of_a_constant_forward_does_not_refute(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    assert main(["certify", f"{f}:attn", *ARGS, "--claim-timeout", "20"]) != 1
    assert capsys.readouterr().out.strip().splitlines()[-1] != "REFUTED"
    assert main(["certify", f"{f}:attn_wrong", *ARGS]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "REFUTED"


def _load(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("confirm_noise_m", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_confirmation_rejects_finite_difference_noise(tmp_path):
    """At the former counterexample (m = 1: the softmax over one key is constant, so the
    exact dq is 0) finite differences read 2e-12, the backward 0: not confirmed. The
    wrong twin at the same point differs by far more than the noise: confirmed."""
    mod = _load(tmp_path)
    specs = {k: parse_spec(k, v) for k, v in dict(mask="n,m:bool", q="n,d", k="m,d", v="m,d").items()}
    for fn, refuted in ((mod.attn, False), (mod.attn_wrong, True)):
        ob = from_custom_vjp(fn, specs, {}, fn.__name__, Settings())
        V = {s.name: v for s, v in ob.args}
        values = {V["mask"]: np.array([[True], [True]]), V["q"]: np.array([[8.802603], [6.578008]]),
                  V["k"]: np.array([[1.926959]]), V["v"]: np.array([[-18.150022]]),
                  ob.cots[0]: np.array([[20.715348], [-6.059254]])}
        expected, got, ok = confirm(ob, "q", (0, 0), values, {})
        assert bool(ok) is refuted, (fn.__name__, expected, got)
        if not refuted:
            assert got == 0.0 and 0 < abs(expected) < 1e-10     # the noise that used to confirm
