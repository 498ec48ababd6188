"""A counterexample is confirmed only if JAX's own derivative of the forward differs too:
finite differences of a forward that is constant in an input are rounding noise (about
1e-12), which used to confirm a refutation of a correct backward against an exact 0
(found on the corpus of issue 12: a masked attention whose backward zeroes the masked
scores, REFUTED at m = 1 with "expected -2.15e-12, got 0")."""
import textwrap

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
