"""Combinators: each rule's backward is jax.vjp of its forward (over real branches, two
sizes), and the realistic bugs of each rule are caught by the same check."""
import jax
import numpy as np
import pytest

from nn_oracle import FAIL, PASS, disallowed, mismatch, random_case
from verigrad.nn import combinators as C
from verigrad.nn import layers as L
from verigrad.nn.layers.core import scale_examples

SIZES = [dict(B=2, n=3, d=4), dict(B=3, n=2, d=3)]


def mlp_branch(B, n, d):
    """LN -> transformer MLP over tokens: a branch with parameters of its own."""
    x = (B, n, d)
    return C.chain(C.named("ln", L.layer_norm(x)), C.named("mlp", L.transformer_mlp(x, 2 * d)))


def attn_branch(B, n, d):
    x = (B, n, d)
    return C.chain(C.named("ln", L.layer_norm(x)), C.named("attn", L.mhsa(x, 1)))


def built(rule, B, n, d):
    x = (B, n, d)
    return {
        "chain": lambda: C.chain(C.named("fc", L.dense(x, d + 1)), L.gelu((B, n, d + 1), "erf"),
                                 C.named("ln", L.layer_norm((B, n, d + 1)))),
        "fan_in": lambda: C.fan_in(C.named("a", L.dense(x, d)), C.named("b", mlp_branch(B, n, d))),
        "residual": lambda: C.residual(mlp_branch(B, n, d)),
        "site_residual": lambda: C.site_residual(attn_branch(B, n, d), "s"),
        "per_example": lambda: C.per_example(C.site_residual(per_token(n, d), "s", batched=False), B),
    }[rule]()


def per_token(n, d):
    """A branch written for ONE example (n tokens): LN then a dense layer."""
    return C.chain(C.named("ln", L.layer_norm((n, d))), C.named("fc", L.dense((n, d), d)))


RULES = ["chain", "fan_in", "residual", "site_residual", "per_example"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("size", [0, 1])
def test_rule_backward_is_the_vjp(rule, size):
    layer = built(rule, **SIZES[size])
    assert mismatch(layer, random_case(layer, seed=size)) < PASS


@pytest.mark.parametrize("rule", RULES)
def test_rule_traces_at_symbolic_sizes(rule):
    B, n, d = jax.export.symbolic_shape("B, n, d")
    assert disallowed(built(rule, B, n, d)) == set()


# -- the rules' realistic bugs ----------------------------------------------------------


def _site_controls(branch):
    def skip_reads_dropped(p, x, s, dy):
        dxf, g = branch.backward(p, x, scale_examples(s, dy))
        return scale_examples(s, dy) + dxf, g

    def branch_reads_raw(p, x, s, dy):
        dxf, g = branch.backward(p, x, dy)
        return dy + dxf, g

    return {"skip reads the dropped cotangent": skip_reads_dropped,
            "branch reads the raw cotangent": branch_reads_raw}


@pytest.mark.parametrize("bug", ["skip reads the dropped cotangent", "branch reads the raw cotangent"])
def test_site_residual_controls_are_caught(bug):
    branch = attn_branch(**SIZES[0])
    layer = C.site_residual(branch, "s")
    assert mismatch(layer, random_case(layer), backward=_site_controls(branch)[bug]) > FAIL


def test_site_after_the_skip_add_is_caught():
    """Forward ``s * (x + f(x))`` does not have the site residual's backward."""
    branch = mlp_branch(**SIZES[0])
    layer = C.site_residual(branch, "s")
    wrong = lambda p, x, s: scale_examples(s, x + branch.forward(p, x))
    assert mismatch(layer, random_case(layer), forward=wrong) > FAIL


def test_chain_control_reads_the_wrong_save():
    """The second layer's backward evaluated at the chain's input, not at f(x)."""
    f, g = C.named("ln", L.layer_norm((2, 3, 4))), L.gelu((2, 3, 4))
    layer = C.chain(f, g)

    def wrong(p, x, dy):
        dh, _ = g.backward({}, x, dy)
        return f.backward(p, x, dh)
    assert mismatch(layer, random_case(layer), backward=wrong) > FAIL


def test_fan_in_control_drops_a_branch():
    layer = built("fan_in", **SIZES[0])
    a, b = layer.children
    wrong = lambda p, x, dy: (a.backward({k: p[k] for k in a.param_names}, x, dy)[0],
                              {**layer.backward(p, x, dy)[1]})
    assert mismatch(layer, random_case(layer), backward=wrong) > FAIL


def test_residual_control_drops_the_skip():
    layer = built("residual", **SIZES[0])
    (branch,) = layer.children
    assert mismatch(layer, random_case(layer), backward=branch.backward) > FAIL


@pytest.mark.parametrize("bug", ["first example only", "mean over examples"])
def test_shared_parameter_gradient_must_sum_over_examples(bug):
    layer = built("per_example", **SIZES[0])
    (inner,) = layer.children

    def wrong(p, x, s, dy):
        dx, grads = jax.vmap(lambda xb, sb, db: inner.backward(p, xb, sb, db))(x, s, dy)
        pick = (lambda g: g[0]) if bug == "first example only" else (lambda g: g.mean(axis=0))
        return dx, {k: pick(g) for k, g in grads.items()}
    assert mismatch(layer, random_case(layer), backward=wrong) > FAIL


# -- ties between the rules ----------------------------------------------------------


def test_absent_site_is_the_plain_residual():
    branch = attn_branch(**SIZES[0])
    with_site, plain = C.site_residual(branch, "s"), C.residual(branch)
    params, x, _, dy = random_case(with_site)
    np.testing.assert_array_equal(with_site.forward(params, x, None), plain.forward(params, x))
    (dx1, g1), (dx2, g2) = with_site.backward(params, x, None, dy), plain.backward(params, x, dy)
    np.testing.assert_array_equal(dx1, dx2)
    assert all(np.array_equal(g1[k], g2[k]) for k in g2)


def test_per_example_map_with_its_own_scalar_is_the_batched_site_residual():
    """One scalar per example through ``per_example`` equals the batched site: the
    per-example gradients of the shared parameters summed."""
    B, n, d = 3, 2, 4
    lifted = built("per_example", B, n, d)
    batched = C.site_residual(C.chain(C.named("ln", L.layer_norm((B, n, d))),
                                      C.named("fc", L.dense((B, n, d), d))), "s")
    assert lifted.aux[0].shape == (B,) and batched.param_names == lifted.param_names
    params, x, (s,), dy = random_case(batched)
    np.testing.assert_allclose(lifted.forward(params, x, s), batched.forward(params, x, s), atol=1e-12)
    (dx1, g1), (dx2, g2) = lifted.backward(params, x, s, dy), batched.backward(params, x, s, dy)
    np.testing.assert_allclose(dx1, dx2, atol=1e-12)
    for k in g2:
        np.testing.assert_allclose(g1[k], g2[k], atol=1e-12)


# -- names and shapes ------------------------------------------------------------------


def test_named_prefixes_parameters_and_sites():
    layer = C.named("block0", C.site_residual(mlp_branch(2, 3, 4), "sA"))
    assert layer.aux_names == ("block0/sA",)
    assert "block0/mlp/fc1/W" in layer.param_names and "block0/ln/g" in layer.param_names
    assert layer.children[0].name == "site_residual"


def test_a_name_used_twice_is_refused():
    with pytest.raises(ValueError, match="parameter 'W' is declared by two.*named"):
        C.chain(L.dense((2, 3), 3), L.dense((2, 3), 3))
    with pytest.raises(ValueError, match="auxiliary input 's'"):
        C.chain(L.drop_path((2, 3)), L.drop_path((2, 3)))


def test_shapes_must_fit():
    with pytest.raises(ValueError, match="chain: dense gives \\(2, 4\\) but relu takes \\(2, 3\\)"):
        C.chain(L.dense((2, 3), 4), L.relu((2, 3)))
    with pytest.raises(ValueError, match="residual: .*skip needs equal shapes"):
        C.residual(L.dense((2, 3), 4))
    with pytest.raises(ValueError, match="fan_in: branch"):
        C.fan_in(L.relu((2, 3)), L.relu((2, 4)))
