"""Each example custom_vjp is PROVED for every size; a copy of it with one realistic bug
is REFUTED, with a counterexample that JAX itself confirms."""
import pytest

import verigrad
from certify_examples import EXAMPLES, command_line, command_options, load

# example -> (what the bug is, text replaced, replacement)
MUTANTS = {
    "dense": ("db averaged instead of summed", "jnp.sum(dy, axis=0)", "jnp.mean(dy, axis=0)"),
    "batched_matmul": ("da divided by the batch size", "da = dc @ jnp.swapaxes(b, 1, 2)",
                       "da = dc @ jnp.swapaxes(b, 1, 2) / a.shape[0]"),
    "softmax": ("<dy, y> summed over the wrong axis", "jnp.sum(dy * y, axis=-1, keepdims=True)",
                "jnp.sum(dy * y, axis=0, keepdims=True)"),
    "log_softmax": ("log-probabilities used as probabilities", "dy - jnp.exp(y) * jnp.sum", "dy - y * jnp.sum"),
    "cross_entropy": ("label smoothing forgotten in the backward", "return g * (p - t) / p.shape[0], None",
                      "return g * (p - jax.nn.one_hot(labels, p.shape[-1])) / p.shape[0], None"),
    "layer_norm": ("dgamma scaled by rstd twice", "jnp.sum(dy * xhat, axis=0)", "jnp.sum(dy * xhat * rstd, axis=0)"),
    "rms_norm": ("r instead of r^3", "x * r ** 3 *", "x * r *"),
    "gelu_tanh": ("the 3 of d(x^3)/dx dropped", "(1 + 3 * 0.044715 * x * x)", "(1 + 0.044715 * x * x)"),
    "gelu_erf": ("the Gaussian density without its 1/2", "jnp.exp(-0.5 * x * x)", "jnp.exp(-x * x)"),
    "silu": ("the x s (1 - s) term dropped", "dy * s * (1 + x * (1 - s))", "dy * s"),
    "attention": ("dk without the 1/sqrt(d) scale", "ds.T @ q * scale", "ds.T @ q"),
    "multi_head_attention": ("dv with P instead of P^T", "dv = jnp.swapaxes(p, 1, 2) @ doh", "dv = p @ doh"),
    "drop_path_residual": ("the identity path of the residual dropped", "return dy + dz @ w.T", "return dz @ w.T"),
    "relu_mlp": ("the relu mask forgotten", "dz = dh * (z > 0)", "dz = dh"),
    "causal_attention": ("the backward's mask lets a query see the next key",
                         "keep = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]",
                         "keep = jnp.arange(n)[:, None] + 1 >= jnp.arange(n)[None, :]"),
    "soft_cross_entropy": ("dtargets with the wrong sign", "-g * logp", "g * logp"),
    "straight_through": ("the quantizer's own derivative instead of the identity", "return (dy,)",
                         "return (dy * (1 - jnp.tanh(z) ** 2),)"),
    "moe_route": ("the cotangent unrouted by the permutation instead of its inverse", "dh = dy[order]",
                  "dh = dy[inverse]"),
    "moe_experts": ("each expert's gradient averaged over the tokens instead of summed",
                    'jnp.einsum("nd,nm->ndm", x, dy))', 'jnp.einsum("nd,nm->ndm", x, dy) / x.shape[0])'),
    "sort_activation": ("the cotangent gathered by the sort order instead of the ranks",
                        "take_along_axis(dy, rank, axis=-1)", "take_along_axis(dy, order, axis=-1)"),
}
# claims that hold only off a kink or under an assumption say so
CONDITIONS = {"relu_mlp": "off the kink", "cross_entropy": "assumes 0 <= labels < k",
              "soft_cross_entropy": "assumes sum(targets, -1) == 1", "sort_activation": "1/2 + k - Sum",
              "moe_experts": "assumes 0 <= expert < k"}


def test_every_example_has_a_mutant_and_a_command_line():
    names = sorted(p.stem for p in EXAMPLES.glob("*.py"))
    assert len(names) >= 12
    assert sorted(MUTANTS) == names
    for p in EXAMPLES.glob("*.py"):
        command_line(p)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_example_is_proved_for_all_sizes(name):
    path = EXAMPLES / f"{name}.py"
    fn_name, shapes = command_line(path)
    cert = verigrad.certify(load(path, fn_name), shapes=shapes, **command_options(path))
    assert cert.status == "PROVED", cert.detail or [c.detail for c in cert.claims()]
    assert cert.validation.startswith("agrees with JAX")
    for c in cert.claims():
        assert c.status == "PROVED" and c.theorem is not None
    diff = [a for a, s in shapes.items() if ":" not in s]
    assert sorted(cert.wrt) == sorted(diff)
    assert "ring" in cert.axioms
    if name in CONDITIONS:
        assert any(CONDITIONS[name] in s for s in cert.side_conditions)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutated_example_is_refuted(name, tmp_path):
    what, old, new = MUTANTS[name]
    source = (EXAMPLES / f"{name}.py").read_text()
    assert source.count(old) == 1, f"the mutation of {name} must apply exactly once"
    path = tmp_path / f"{name}_bug.py"
    path.write_text(source.replace(old, new))
    fn_name, shapes = command_line(path)
    # the search stops at its first counterexample; its time limit only matters on a loaded machine
    cert = verigrad.certify(load(path, fn_name), shapes=shapes, search_seconds=60, **command_options(path))
    assert cert.status == "REFUTED", f"{what}: {cert.status} {cert.detail}"
    ce = cert.counterexample
    assert ce.argument in shapes
    assert abs(ce.expected - ce.got) > 1e-6 * max(abs(ce.expected), abs(ce.got), 1e-12)
    assert set(ce.sizes) and all(1 <= v <= 4 for v in ce.sizes.values())
    assert cert.wrt[ce.argument].status == "REFUTED"
