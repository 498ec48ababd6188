"""A side condition under a precondition (--assume 'x > c') is a term at the
reparametrized point (a kernel At); it is real-analytic when its body and the values are,
so it is accepted as the kink/nonzero conditions are (it was read as piecewise, and a
clipped square root's backward, PROVED before, became UNKNOWN: issue 12 corpus,
recurrentgemma's sqrt_bound_derivative)."""
import textwrap

from verigrad.cli import main

MODULE = textwrap.dedent("""
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def root(x):
        return jnp.sqrt(x)

    def fwd(x):
        return jnp.sqrt(x), x

    def bwd(x, g):
        return (g / (2 * jnp.sqrt(jnp.maximum(x, 0.25))),)

    root.defvjp(fwd, bwd)
""")


def test_condition_at_the_reparametrized_point_is_analytic(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    assert main(["certify", f"{f}:root", "--shape", "x=n", "--assume", "x > 0.25"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "PROVED"
    assert main(["certify", f"{f}:root", "--shape", "x=n"]) == 1       # below 1/4 the backward clips
    assert capsys.readouterr().out.strip().splitlines()[-1] == "REFUTED"
