"""The seed-003 ViT block with two drop-path sites, numerically: the flat let-chain is
the composed block (forward and backward), both are jax.vjp, absent sites give the
drop-free block, and the seed's three controls are caught."""
import jax
import numpy as np
import pytest

from nn_oracle import FAIL, PASS, compiled, disallowed, mismatch, random_case
from verigrad.nn.nets import CONTROLS, vit_block, vit_block_flat

SIZES = [dict(B=2, n=3, heads=2, e=2, hidden=5, gelu="tanh"),
         dict(B=1, n=4, heads=3, e=1, hidden=4, gelu="erf")]


def blocks(B, n, heads, e, hidden, gelu, **kw):
    x = (B, n, heads * e)
    return vit_block_flat(x, heads, hidden, gelu, **kw), vit_block(x, heads, hidden, gelu)


def run_both(a, b, case, sites=None, other=None):
    """Forward and backward of layers ``a`` and ``b`` on one case, in one compile;
    ``sites`` overrides the case's (sA, sM), ``other`` those for ``b``."""
    params, x, aux, dy = case
    aux = aux if sites is None else list(sites)
    aux_b = aux if other is None else list(other)
    fn = lambda p, x, s, t, dy: ((a.forward(p, x, *s), a.backward(p, x, *s, dy)),
                                 (b.forward(p, x, *t), b.backward(p, x, *t, dy)))
    return jax.tree.map(np.asarray, compiled(fn, params, x, aux, aux_b, dy)(params, x, aux, aux_b, dy))


def assert_same(u, v, atol=1e-12):
    (ya, (dxa, ga)), (yb, (dxb, gb)) = u, v
    np.testing.assert_allclose(ya, yb, atol=atol)
    np.testing.assert_allclose(dxa, dxb, atol=atol)
    assert set(ga) == set(gb)
    for k in gb:
        np.testing.assert_allclose(ga[k], gb[k], atol=atol, err_msg=k)


@pytest.mark.parametrize("size", [0, 1])
def test_flat_chain_is_the_composed_block(size):
    """cotInD_eq_vjp's two sides: the renderer's chain and the two site residuals'
    VJP, at random (real-valued) sites."""
    flat, composed = blocks(**SIZES[size])
    assert flat.param_names == composed.param_names and flat.aux_names == composed.aux_names == ("sA", "sM")
    assert_same(*run_both(flat, composed, random_case(composed, seed=size)))


def test_block_is_two_site_residuals():
    """fwdOD_eq_sites: the composed block is the MLP site residual after the attention one."""
    _, composed = blocks(**SIZES[0])
    first, second = composed.children
    assert (first.name, first.hyper["site"], second.name, second.hyper["site"]) == \
        ("site_residual", "sA", "site_residual", "sM")
    assert [c.name for c in first.children[0].children] == ["ln1", "attn"]
    assert [c.name for c in second.children[0].children] == ["ln2", "mlp"]


@pytest.mark.parametrize("size", [0, 1])
def test_flat_block_backward_is_the_vjp(size):
    flat, _ = blocks(**SIZES[size])
    assert mismatch(flat, random_case(flat, seed=size)) < PASS


def test_composed_block_backward_is_the_vjp():
    _, composed = blocks(**SIZES[1])
    assert mismatch(composed, random_case(composed, seed=3)) < PASS


def test_absent_sites_give_the_drop_free_block():
    """fwdOD_none and cotInD_none: at sA = sM = None the flat chain is the block built
    from plain residuals."""
    size = SIZES[0]
    flat, _ = blocks(**size)
    plain = vit_block((size["B"], size["n"], size["heads"] * size["e"]), size["heads"], size["hidden"],
                      size["gelu"], sites=False)
    assert plain.aux == ()
    params, x, _, dy = case = random_case(flat, seed=5)
    fn = lambda p, x, dy: ((flat.forward(p, x, None, None), flat.backward(p, x, None, None, dy)),
                           (plain.forward(p, x), plain.backward(p, x, dy)))
    assert_same(*jax.tree.map(np.asarray, compiled(fn, params, x, dy)(params, x, dy)))
    assert mismatch(flat, case, backward=lambda p, x, sA, sM, dy: flat.backward(p, x, None, None, dy),
                    forward=lambda p, x, sA, sM: flat.forward(p, x, None, None)) < PASS


def test_sites_of_one_are_absent_sites():
    flat, _ = blocks(**SIZES[0])
    ones = np.ones(SIZES[0]["B"])
    assert_same(*run_both(flat, flat, random_case(flat, seed=2), sites=(ones, ones), other=(None, None)))


@pytest.mark.parametrize("control", sorted(CONTROLS))
def test_seed_controls_are_caught(control):
    size = SIZES[0]
    bad, _ = blocks(**size, control=control)
    assert mismatch(bad, random_case(bad, seed=1)) > FAIL, CONTROLS[control]


def test_unknown_control_is_refused():
    with pytest.raises(ValueError, match="unknown control 'typo'"):
        blocks(**SIZES[0], control="typo")


@pytest.mark.parametrize("sites", [(), ("sA", "sM"), ("sM",)])
def test_flat_block_traces_at_symbolic_sizes(sites):
    B, n, H, e, m = jax.export.symbolic_shape("B, n, H, e, m")
    flat = vit_block_flat((B, n, H * e), H, m, "erf")
    assert disallowed(flat, aux_none=sites) == set()
