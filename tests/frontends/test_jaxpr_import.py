"""The jaxpr importer: every primitive it covers imports to terms that compute what JAX
computes (at two concrete size assignments), and what it does not cover is a clear error."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.certify.evaluate import evaluate
from verigrad.certify.inputs import Domain
from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError, dim_poly, import_function, symbolic_structs, trace
from verigrad.kernel import SizeSym
from verigrad.kernel.sizes import Poly

X = ArgSpec("x", ("n", "d"))


def primitives(fn, specs) -> set:
    """Names of the primitives in fn's jaxpr, nested calls included."""
    closed, _ = trace(fn, symbolic_structs(specs))
    out, stack = set(), [closed.jaxpr]
    while stack:
        jaxpr = stack.pop()
        for eqn in jaxpr.eqns:
            out.add(eqn.primitive.name)
            for p in eqn.params.values():
                inner = getattr(p, "jaxpr", p)
                if hasattr(inner, "eqns"):
                    stack.append(inner)
    return out


def agrees_with_jax(fn, specs, sizes=(2, 3)):
    """Import ``fn`` and compare each output's term with running JAX, per size value."""
    imp = import_function(fn, specs)
    terms = [o.term() for o in imp.outputs]
    kinds = {v: s.kind for s, v in zip(specs, imp.variables)}
    domain = Domain.of(imp.importer, kinds, {v: s.dtype for s, v in zip(specs, imp.variables)})
    symbols = sorted({s for v in imp.variables for s in v.sizes}, key=lambda s: s.name)
    for value in sizes:
        sz = {s: value for s in symbols}
        values = domain.sample(set(imp.variables), sz, np.random.default_rng(value))
        args = [domain.jax_value(v, values[v]) for v in imp.variables]
        with jax.enable_x64(True):
            want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        assert len(want) == len(terms)
        for t, w in zip(terms, want):
            got = np.asarray(evaluate(t, sz, values))
            np.testing.assert_allclose(got, np.asarray(w, dtype=np.float64), rtol=1e-9, atol=1e-9)
    return terms


# (name, function, argument specs, primitives that must occur in its jaxpr)
CASES = [
    ("arithmetic", lambda x: (x + 1) * x - x / (x * x + 2) + (-x), [X], {"add", "sub", "mul", "div", "neg"}),
    ("max min", lambda x: jnp.maximum(x, 0.3) + jnp.minimum(x, -x), [X], {"max", "min"}),
    ("abs sign", lambda x: jnp.abs(x) + jnp.sign(x), [X], {"abs", "sign"}),
    ("exp log", lambda x: jnp.exp(x) + jnp.log(x * x + 1) + jnp.log1p(x * x) + jnp.expm1(x), [X],
     {"exp", "log", "log1p", "expm1"}),
    ("roots and powers", lambda x: jnp.sqrt(x * x + 1) + jax.lax.rsqrt(x * x + 1) + x ** 3 + (x * x + 1) ** 1.5,
     [X], {"sqrt", "rsqrt", "integer_pow", "pow"}),
    ("tanh logistic erf", lambda x: jnp.tanh(x) + jax.nn.sigmoid(x) + jax.scipy.special.erf(x), [X],
     {"tanh", "logistic", "erf"}),
    ("comparisons and select", lambda x: jnp.where(x > 0.2, x, 0.0) + (x <= 0.1) + (x == x.T[:1, :1])
     + (x != 0) + jnp.where(x < 0, 1.0, 2.0) * (x >= -0.5), [X], {"select_n", "gt", "le", "eq", "ne", "lt", "ge"}),
    ("reductions", lambda x: (jnp.sum(x, 1), jnp.max(x, 0), jnp.min(x, (0, 1))), [X],
     {"reduce_sum", "reduce_max", "reduce_min"}),
    ("argmax", lambda x: jnp.argmax(x, 1).astype(jnp.float64) + jnp.argmin(x, 0).sum(), [X], {"argmax", "argmin"}),
    ("broadcast reshape transpose", lambda x: x.reshape(-1)[None, :] + x.T.reshape(1, -1), [X],
     {"broadcast_in_dim", "reshape", "transpose"}),
    ("dot_general batched", lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
     [ArgSpec("a", ("m", "n", "d")), ArgSpec("b", ("m", "d", "n"))], {"dot_general"}),
    ("squeeze expand_dims", lambda x: jnp.squeeze(x[:, :1], 1) + jnp.expand_dims(x, 0)[0, :, 0], [X],
     {"squeeze", "broadcast_in_dim"}),
    ("convert_element_type", lambda x: (x > 0).astype(jnp.float64) + jnp.arange(x.shape[1]).astype(jnp.float64), [X],
     {"convert_element_type", "iota"}),
    ("slice gather", lambda x: jax.lax.slice(x, (1, 0), x.shape).sum(0) + x[1:, :].sum(0) + x[:, 0].sum()
     + x[:, -1].sum() + x[::2, :].sum(), [ArgSpec("x", ("2*n", "d"))], {"slice", "gather"}),
    ("concatenate pad", lambda x: (jnp.concatenate([x, 2 * x], 1)[:, 1:], jax.lax.pad(x, 0.0, ((0, 0, 0), (1, 0, 0)))
     + jax.lax.pad(x, 2.0, ((0, 0, 0), (0, 1, 0))), jax.lax.pad(x, 1.0, ((1, -1, 0), (0, 0, 0)))),
     [X], {"concatenate", "pad"}),
    ("interior padding", lambda x: jax.lax.pad(x, 0.5, ((0, 0, 0), (1, 0, 1))), [X], {"pad"}),
    ("iota cumsum", lambda x: jnp.cumsum(x, 1) + jax.lax.cumsum(x, 0, reverse=True) * jnp.arange(x.shape[0])[:, None],
     [X], {"cumsum", "iota"}),
    ("stop_gradient", lambda x: x - jax.lax.stop_gradient(x.max(1, keepdims=True)), [X], {"stop_gradient"}),
    ("stack tile split", lambda x: (jnp.stack([x, 2 * x], 1), jnp.tile(x, (2, 1)), jnp.split(x, 2, 0)[1]),
     [ArgSpec("x", ("2*n", "d"))], {"stack", "tile", "split"}),
    ("calls: relu gelu softmax", lambda x: jax.nn.relu(x) + jax.nn.gelu(x) + jax.nn.softmax(x) + jax.nn.silu(x)
     + jax.nn.log_softmax(x) + jax.nn.logsumexp(x, 1, keepdims=True), [X], {"custom_jvp_call", "jit"}),
    ("conv 1-d padded", lambda x, w: jax.lax.conv_general_dilated(x, w, (1,), [(1, 1)]),
     [ArgSpec("x", ("b", "c", "n")), ArgSpec("w", ("o", "c", "3"))], {"conv_general_dilated"}),
    ("conv 2-d strided grouped", lambda x, w: jax.lax.conv_general_dilated(x, w, (2, 2), "VALID", feature_group_count=2),
     [ArgSpec("x", ("b", "4", "2*n", "2*n")), ArgSpec("w", ("6", "2", "2", "2"))], {"conv_general_dilated"}),
    ("average pooling", lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2), (1, 2, 2), "VALID") / 4,
     [ArgSpec("x", ("b", "2*n", "2*n"))], {"reduce_window_sum"}),
    ("max pooling", lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2), (1, 1, 1), "VALID"),
     [ArgSpec("x", ("b", "n+1", "n+1"))], {"reduce_window_max"}),
    ("integer labels one-hot", lambda lab, x: jax.nn.one_hot(lab, x.shape[-1]) * x,
     [ArgSpec("lab", ("n",), "int32"), X], {"eq", "iota"}),
    ("boolean mask", lambda m, x: jnp.where(m, x, 0.0) + (m & (x > 0)) + (m | ~m),
     [ArgSpec("m", ("n", "d"), "bool"), X], {"select_n", "and", "or", "not"}),
    ("custom_vjp inside", lambda x: _inner(x) * 2, [X], {"custom_vjp_call"}),
]


@jax.custom_vjp
def _inner(x):
    return jnp.tanh(x)


_inner.defvjp(lambda x: (jnp.tanh(x), x), lambda x, g: (g * 0.0,))


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_primitive_imports_to_what_jax_computes(name):
    _, fn, specs, prims = next(c for c in CASES if c[0] == name)
    assert prims <= primitives(fn, specs), "the case must exercise the primitives it names"
    agrees_with_jax(fn, specs)


def test_indexing_stays_compact():
    """Indexing goes through transposes and reshapes: no Lamda is indexed in the result."""
    (t,) = agrees_with_jax(lambda x: x.T.T.reshape(x.shape[0], -1) * 2, [X])
    assert repr(t) == "Lamda[i0<n, j1<d](x[i0, j1]*2)"


def test_one_hot_of_labels_is_modelled_exactly_without_an_assumption():
    """Every label, in range or not: the rows' sums are a variable (0 for a label outside)."""
    imp = import_function(lambda lab, x: jax.nn.one_hot(lab, x.shape[-1]) * x,
                          [ArgSpec("lab", ("n",), "int32"), X])
    t = imp.outputs[0].term()
    assert imp.importer.assumptions == []
    ((_, r),) = imp.importer.inrange_vars.items()
    assert r in t.atoms and not imp.importer.int_ranges


def test_dimension_expressions_become_polys():
    n, d = (SizeSym(s) for s in "nd")
    structs = symbolic_structs([ArgSpec("x", ("n+1", "2*n", "n*d", "3"))])
    polys = [dim_poly(s) for s in structs[0].shape]
    assert polys == [Poly.sym(n) + 1, 2 * Poly.sym(n), Poly.sym(n) * Poly.sym(d), Poly.const(3)]


def test_unsupported_primitive_names_itself_and_the_source_line():
    def f(x):
        return jnp.arctan2(x, x + 1)  # the kernel has no atan2
    with pytest.raises(JaxprImportError, match=r"unsupported primitive 'atan2' at .*test_jaxpr_import.py:\d+"):
        import_function(f, [X])


def test_shape_the_kernel_cannot_range_over_is_a_clear_error():
    """``x[::2]`` of an odd length n has ceil(n / 2) rows, a floor division the kernel
    cannot range an index over."""
    with pytest.raises(JaxprImportError, match=r"floor\(\(n \+ 1\)/\(2\)\)"):
        import_function(lambda x: x[::2, :] * 2, [X]).outputs[0].term()


def test_data_dependent_gather_is_modelled_or_refused():
    """``x[i]`` by data is a sum over the clamped index (issue 12); a gather that fills NaN
    where a data index may fall outside (``take_along_axis``) is refused."""
    imp = import_function(lambda i, x: x[i], [ArgSpec("i", ("n",), "int32"), X])
    imp.outputs[0].term()
    with pytest.raises(JaxprImportError, match="gather"):
        imp = import_function(lambda i, x: jnp.take_along_axis(x, i, 0), [ArgSpec("i", ("n", "d"), "int32"), X])
        imp.outputs[0].term()
