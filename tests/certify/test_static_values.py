"""--static values are values, never shapes: a string ('mean', 'flash') or a tuple of
integers held on the command line reaches the function as itself (it was read as a
shape: 'no value for mean')."""
import textwrap

from verigrad.cli import main

MODULE = textwrap.dedent("""
    from functools import partial
    import jax
    import jax.numpy as jnp

    @partial(jax.custom_vjp, nondiff_argnums=(1, 2))
    def reduce(x, mode, axes):
        return jnp.mean(x, axes) if mode == "mean" else jnp.sum(x, axes)

    def fwd(x, mode, axes):
        return reduce(x, mode, axes), x.shape

    def bwd(mode, axes, shape, dy):
        n = 1
        for a in axes:
            n *= shape[a]
        scale = 1 / n if mode == "mean" else 1.0
        return (jnp.broadcast_to(jnp.expand_dims(dy, axes), shape) * scale,)

    reduce.defvjp(fwd, bwd)

    @partial(jax.custom_vjp, nondiff_argnums=(1, 2))
    def reduce_wrong(x, mode, axes):
        return jnp.mean(x, axes) if mode == "mean" else jnp.sum(x, axes)

    reduce_wrong.defvjp(fwd, lambda mode, axes, shape, dy: (jnp.broadcast_to(jnp.expand_dims(dy, axes), shape),))
""")


def test_string_and_tuple_statics_are_values(tmp_path, capsys):
    f = tmp_path / "m.py"
    f.write_text(MODULE)
    for mode in ("'mean'", "sum", "'sum'"):
        assert main(["certify", f"{f}:reduce", "--shape", "x=n,d,m", "--static", f"mode={mode}",
                     "--static", "axes=(1, 2)"]) == 0, mode
        out = capsys.readouterr().out
        assert out.strip().splitlines()[-1] == "PROVED"
    assert main(["certify", f"{f}:reduce_wrong", "--shape", "x=n,d,m", "--static", "mode='mean'",
                 "--static", "axes=(1, 2)"]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "REFUTED"
