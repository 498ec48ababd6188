"""Differential tests of the jaxpr importer (issue 11, item 5): for every rule of
``jaxpr_rules.RULES``, functions using the primitive are imported at symbolic sizes, the
terms are evaluated in float64 at several concrete sizes and at adversarial inputs
(integers negative, past the end of an axis and across the whole int32 range; reals at
0, negative, at the boundaries of ``log`` and ``sqrt``), and compared with XLA running
the same function. Where XLA's value is NaN or infinite the kernel's total conventions
fill in, and the entry is not compared; ``is_finite`` and comparisons, whose results are
always finite, are compared everywhere.

A test lists the rule table and fails on a rule no case exercises. Refused primitives
raise ``JaxprImportError`` naming the primitive and this file's line."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from verigrad.certify.evaluate import evaluate
from verigrad.frontends.jaxpr import ArgSpec, JaxprImportError, import_function, symbolic_structs, trace
from verigrad.frontends.jaxpr_rules import RULES

# -- values --------------------------------------------------------------------------------

SPECIALS = np.array([0.0, -1.0, 1.0, -4.0, 4.0, 0.5, -0.5, 2.0, -3.0])


def real_values(shape, rng):
    """N(0, 1), some entries wide, some exactly at the specials (domain boundaries)."""
    x = rng.standard_normal(shape)
    wide = rng.random(shape) < 0.2
    x = np.where(wide, x * 10, x)
    special = rng.random(shape) < 0.3
    return np.where(special, rng.choice(SPECIALS, shape), x)


SAMPLERS = {
    "real": lambda shape, rng: real_values(shape, rng),
    "pos": lambda shape, rng: np.abs(rng.standard_normal(shape)) + 0.1,
    "small": lambda shape, rng: rng.integers(-7, 10, shape).astype(np.float64),        # negative, past an axis
    "tiny": lambda shape, rng: rng.integers(-3, 4, shape).astype(np.float64),
    "wide": lambda shape, rng: np.where(rng.random(shape) < 0.5, rng.integers(-2 ** 31, 2 ** 31, shape),
                                        rng.integers(-40, 40, shape)).astype(np.float64),
    "uwide": lambda shape, rng: rng.integers(0, 2 ** 32, shape).astype(np.float64),
    "bool": lambda shape, rng: rng.standard_normal(shape),
    "ties": lambda shape, rng: rng.choice(np.array([-1.0, -0.0, 0.0, 1.0, 2.5]), shape),   # sorts with ties
    # top_k ranks 0.0 above -0.0 (one real): ties without signed zeros
    "ties0": lambda shape, rng: rng.choice(np.array([-1.0, 0.0, 1.0, 2.5]), shape),
}


def _default_sampler(spec):
    if spec.dtype == "bool":
        return "bool"
    if spec.dtype.startswith(("int", "uint")):
        return "small"
    return "real"


def size_assignments(symbols, sizes):
    """Each symbol varied independently: equal values, then a mixed assignment."""
    out = [{s: v for s in symbols} for v in sizes]
    if len(symbols) > 1:
        out.append({s: sizes[(k + 1) % len(sizes)] for k, s in enumerate(symbols)})
    return out


def _concrete(imp, sz):
    from verigrad.certify.evaluate import concrete_shape
    return [concrete_shape(v.shape, sz) for v in imp.variables]


def check(fn, specs, values=None, sizes=(1, 2, 3, 5), rtol=1e-9, seed=0):
    """Import ``fn`` and compare every output with XLA at each size assignment."""
    imp = import_function(fn, specs)
    terms = [o.term() for o in imp.outputs]
    assert not imp.importer.onehot_vars, "a case with a one-hot model samples labels in range (see its own test)"
    symbols = sorted({s for v in imp.variables for s in v.sizes}, key=lambda s: s.name)
    values = values or {}
    for k, sz in enumerate(size_assignments(symbols, sizes)):
        rng = np.random.default_rng(1000 * seed + k)
        vals, args = {}, []
        for spec, var, shape in zip(specs, imp.variables, _concrete(imp, sz)):
            v = SAMPLERS[values.get(spec.name, _default_sampler(spec))](shape, rng)
            vals[var] = v
            if spec.dtype == "bool":
                args.append(v > 0)
            elif spec.dtype == "float":
                args.append(v)
            else:
                args.append(v.astype(spec.dtype))
        with jax.enable_x64(True):
            want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        assert len(want) == len(terms)
        where = ", ".join(f"{s.name}={v}" for s, v in sz.items())
        for j, (t, w) in enumerate(zip(terms, want)):
            w = np.asarray(w)
            want64 = w.astype(np.float64)
            got = np.asarray(evaluate(t, sz, vals), dtype=np.float64)
            assert got.shape == want64.shape, f"output {j} at {where}: shape {got.shape}, XLA {want64.shape}"
            defined = np.isfinite(want64)
            if w.dtype == np.bool_:
                assert defined.all()
            scale = 1.0 + np.max(np.abs(np.where(defined, want64, 0.0)), initial=0.0)
            diff = np.abs(np.where(defined, got - want64, 0.0))
            bad = diff > rtol * scale
            if w.dtype.kind in "biu":
                bad = diff != 0
            assert not bad.any(), (f"output {j} at {where}: imported {got[bad][:5]}, XLA {want64[bad][:5]} "
                                   f"(inputs {[a[...].ravel()[:8] for a in args]})")
    return imp


def primitives(fn, specs) -> set:
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


# -- the cases -------------------------------------------------------------------------------

X = ArgSpec("x", ("n", "d"))
Y = ArgSpec("y", ("n", "d"))
V = ArgSpec("x", ("n",))
K = ArgSpec("k", ("n",), "int32")
U = ArgSpec("k", ("n",), "uint32")
B = ArgSpec("b", ("n", "d"), "bool")
C = ArgSpec("c", ("n", "d"), "bool")
S0 = ArgSpec("s", (), "int32")


def _iota(x, dtype=jnp.int32):
    return jnp.arange(x.shape[0], dtype=dtype)


I32 = jnp.int32


def _dim(x, axis):
    """A size as an integer value (``dim_as_value``)."""
    return jnp.asarray(x.shape[axis])


def _i64(x):
    return jnp.arange(x.shape[0], dtype=jnp.int64)


@jax.custom_vjp
def _cube(x):
    return x * x * x


_cube.defvjp(lambda x: (x * x * x, x), lambda x, g: (3 * x * x * g,))


# (name, primitives it must exercise, function, specs, sampler per argument, options)
CASES = [
    # arithmetic, reals and integers
    ("real arithmetic", {"add", "sub", "mul", "neg"}, lambda x, y: (x + y, x - y, x * y, -x), [X, Y], {}, {}),
    ("add_any", {"add_any"}, lambda x: jax.vjp(lambda z: (z, 2 * z), x)[1]((x, x))[0], [X], {}, {}),
    ("integer arithmetic of data", {"add", "sub", "mul", "neg"},
     lambda k: (k + 3, k - _iota(k), k * k, -k, 2 * k - 7), [K], {"k": "small"}, {}),
    ("integer arithmetic of indices", {"add", "sub", "mul"},
     lambda x: (_iota(x) * 3 - 5) * x + (_iota(x) - 2) * (_iota(x) + 1), [V], {}, {}),
    ("exp log", {"exp", "log", "log1p", "expm1", "exp2"},
     lambda x: (jnp.exp(x), jnp.log(x), jnp.log1p(x), jnp.expm1(x), jnp.exp2(x)), [X], {}, {}),
    ("tanh erf erfc logistic", {"tanh", "erf", "erfc", "logistic"},
     lambda x: (jnp.tanh(x), jax.scipy.special.erf(x), jax.scipy.special.erfc(x), jax.nn.sigmoid(x)), [X], {}, {}),
    ("sin cos", {"sin", "cos"}, lambda x: (jnp.sin(x), jnp.cos(x), jnp.sin(x) ** 2 + jnp.cos(x) ** 2), [X], {}, {}),
    ("roots", {"sqrt", "rsqrt", "square"}, lambda x: (jnp.sqrt(x), lax.rsqrt(x), jnp.square(x)), [X], {}, {}),
    ("abs sign", {"abs", "sign"}, lambda x: (jnp.abs(x), jnp.sign(x)), [X], {}, {}),
    ("abs sign of integers", {"abs", "sign"},
     lambda k: (jnp.abs(k), jnp.sign(k), jnp.abs(_iota(k) - 2), jnp.sign(_iota(k) - 2)), [K], {}, {}),
    ("integer_pow", {"integer_pow"}, lambda x, k: (x ** 3, x ** -2, x ** 0, k ** 2), [V, K], {}, {}),
    ("pow", {"pow"}, lambda x: (x ** 2.5, 2.0 ** x, x ** -1.5, x ** 2.0, x ** -1.0), [X], {}, {}),
    ("div of reals", {"div"}, lambda x, y: (x / y, 1.0 / x, x / 4.0), [X, Y], {}, {}),
    ("div of integers truncates", {"div"},
     lambda x: (lax.div(_i64(x) - 5, 3), lax.div(_i64(x) - 5, -3), lax.div(_i64(x), _i64(x)[-1] + 1),
                jnp.floor_divide(_i64(x) - 5, 3)), [V], {}, {}),
    ("rem", {"rem"}, lambda x: (lax.rem(_i64(x) - 5, 3), lax.rem(_i64(x), -4), jnp.remainder(_i64(x) - 7, 3),
                                lax.rem(_iota(x, jnp.float64) - 4.0, 3.0)), [V], {}, {}),
    ("max min", {"max", "min"}, lambda x, y: (jnp.maximum(x, y), jnp.minimum(x, 0.5), jnp.maximum(x, -jnp.inf)),
     [X, Y], {}, {}),
    ("max min of integers and booleans", {"max", "min"},
     lambda k, b, c: (jnp.maximum(k, _iota(k)), jnp.minimum(k, 3), jnp.maximum(_iota(k) - 2, 1 - _iota(k)),
                      jnp.maximum(b, c), jnp.minimum(b, c)), [K, ArgSpec("b", ("n",), "bool"),
                                                               ArgSpec("c", ("n",), "bool")], {}, {}),
    ("clamp", {"clamp"},
     lambda x, k: (lax.clamp(-0.5, x, 1.0), lax.clamp(I32(-2), k, I32(3)), lax.clamp(1.0, x, -1.0)),
     [V, K], {}, {}),
    # comparisons
    ("comparisons of reals", {"eq", "ne", "lt", "le", "gt", "ge"},
     lambda x, y: (x == y, x != y, x < y, x <= 0.5, x > -1.0, x >= y, x == 0.0), [X, Y], {}, {}),
    ("comparisons of integer data and indices", {"eq", "ne", "lt", "le", "gt", "ge"},
     lambda k: (k == 2 * _iota(k), k != _iota(k) + 1, _iota(k) < k, _iota(k) <= k, k > 2, k >= _iota(k) - 1),
     [K], {"k": "small"}, {}),
    ("comparisons of booleans", {"eq", "ne", "lt", "le", "gt", "ge"},
     lambda b, c: (b == c, b != c, b < c, b <= c, b > c, b >= c), [B, C], {}, {}),
    ("comparisons of integer-valued reals", {"lt", "ge", "eq", "convert_element_type"},
     lambda k, x: (_iota(x, jnp.float64) < k.astype(jnp.float64), k.astype(jnp.float64) >= 2.0,
                   k.astype(jnp.float64) == 2.5), [K, V], {"k": "small"}, {}),
    ("comparisons against infinities and NaN", {"lt", "eq", "ne", "gt"},
     lambda x: (x < jnp.inf, x == jnp.inf, x != jnp.nan, x > -jnp.inf, jnp.isinf(x), jnp.isnan(x)), [X], {}, {}),
    ("a value that may be NaN compares false", {"lt", "ne", "eq"},
     lambda x: (jnp.sqrt(x) < 1.0, jnp.isnan(jnp.sqrt(x)), jnp.sqrt(x) == jnp.sqrt(-x), jnp.sqrt(x) != 0.0),
     [X], {}, {}),
    # bitwise and shifts
    ("logic of booleans", {"and", "or", "xor", "not"}, lambda b, c: (b & c, b | c, b ^ c, ~b), [B, C], {}, {}),
    ("bitwise of indices and constants", {"and", "or", "xor", "not"},
     lambda x: (_iota(x) & 1, (_iota(x) - 5) & 6, (_iota(x) - 9) & -4, _iota(x) | 1, (_iota(x) - 3) | 5,
                (_iota(x) - 4) ^ 3, ~(_iota(x) - 2), _iota(x, jnp.uint32) & 5, ~_iota(x, jnp.uint32),
                _iota(x, jnp.uint8) | 3), [ArgSpec("x", ("n",))], {}, {"sizes": (1, 3, 7, 13)}),
    ("unsigned index arithmetic wraps", {"sub", "convert_element_type"},
     lambda x: (_iota(x, jnp.uint32) - 2, (_iota(x) - 3).astype(jnp.uint32), _iota(x, jnp.uint8) * 40 - 7),
     [V], {}, {"sizes": (1, 3, 7)}),
    ("bitwise of integer data", {"and", "or", "xor", "not"},
     lambda k: (~k, k & -1, k & 0, k | 0, k | -1, k ^ 0, k ^ -1), [K], {"k": "wide"}, {}),
    ("bitwise of unsigned data", {"and", "or", "xor", "not"},
     lambda k: (~k, k & 0xFFFFFFFF, k ^ 0xFFFFFFFF, k | 0), [U], {"k": "uwide"}, {}),
    ("shifts", {"shift_left", "shift_right_arithmetic", "shift_right_logical"},
     lambda x: (_iota(x) << 3, lax.shift_right_arithmetic(_iota(x) - 9, I32(2)),
                lax.shift_right_logical(_iota(x) - 9, I32(2)),
                lax.shift_right_logical(_iota(x, jnp.uint32), jnp.uint32(1)),
                lax.shift_left(_iota(x), I32(40)), lax.shift_right_arithmetic(_iota(x) - 2, I32(33)),
                lax.shift_right_logical(_iota(x) - 2, I32(-1))),
     [V], {}, {"sizes": (1, 4, 11)}),
    ("shifts of data", {"shift_left", "shift_right_arithmetic", "shift_right_logical"},
     lambda k: (k << 2, lax.shift_right_arithmetic(k, I32(32)), lax.shift_right_logical(k, I32(35)), k >> 0),
     [K], {"k": "small"}, {}),
    # select
    ("select_n", {"select_n"}, lambda b, x, y: (jnp.where(b, x, y), jnp.where(x > 0, jnp.log(x), 0.0)),
     [B, X, Y], {}, {}),
    ("select_n with an integer predicate clamps", {"select_n"},
     lambda k, x: (lax.select_n(k, x, 2 * x, 3 * x), lax.select_n(_iota(k) - 1, x, -x), lax.select_n(k, x)),
     [K, V], {"k": "small"}, {}),
    # casts
    ("convert_element_type", {"convert_element_type"},
     lambda b, k, x: (b.astype(jnp.float64), k.astype(jnp.float64), k.astype(jnp.int64) * 2,
                      _iota(x, jnp.float64).astype(jnp.int32), k.astype(bool), x.astype(bool), b.astype(jnp.int32),
                      k.astype(jnp.int8), x.astype(jnp.float32).astype(jnp.float64)),
     [ArgSpec("b", ("n",), "bool"), K, V], {"k": "small"}, {"rtol": 1e-6}),
    ("reduce_precision", {"reduce_precision"},
     lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=23), [X], {}, {"rtol": 1e-6}),
    ("is_finite", {"is_finite"},
     lambda x, y: (jnp.isfinite(jnp.log(x + 4)), jnp.isfinite(x / y), jnp.isfinite(jnp.sqrt(x) + lax.rsqrt(y)),
                   jnp.isfinite(x), jnp.isfinite(jnp.where(x > 0, jnp.log(x), 0.0)), jnp.isfinite(x ** -2),
                   jnp.isfinite(jnp.log1p(x)), jnp.isfinite(jnp.exp(jnp.sqrt(x)))), [X, Y], {}, {}),
    ("is_finite through structure and sums", {"is_finite", "reduce_sum", "dot_general", "cumsum", "transpose",
                                               "reshape", "broadcast_in_dim", "concatenate", "pad"},
     lambda x, y: (jnp.isfinite(jnp.sum(jnp.log(x), 1)), jnp.isfinite(jnp.log(x) @ y.T),
                   jnp.isfinite(jnp.cumsum(jnp.sqrt(x), 1)), jnp.isfinite(jnp.log(x).T),
                   jnp.isfinite(jnp.log(x).reshape(-1)), jnp.isfinite(jnp.log(x[:, :1]) + y),
                   jnp.isfinite(jnp.concatenate([x, jnp.log(y)], 1)), jnp.isfinite(jnp.pad(jnp.log(x), 1))),
     [X, Y], {}, {}),
    # identities
    ("identities", {"stop_gradient", "copy", "optimization_barrier", "sharding_constraint"},
     lambda x: (lax.stop_gradient(x) * 2, jnp.array(x, copy=True) + 1, lax.optimization_barrier(x) * 3,
                lax.with_sharding_constraint(x, jax.sharding.SingleDeviceSharding(jax.devices()[0])) - 1),
     [X], {}, {}),
    ("iota dim_as_value", {"iota", "dim_as_value"},
     lambda x: (x * x.shape[0], jnp.arange(x.shape[1]) + jnp.arange(x.shape[0])[:, None]), [X], {}, {}),
    # reductions
    ("reductions", {"reduce_sum", "reduce_max", "reduce_min"},
     lambda x, k: (jnp.sum(x, 1), jnp.max(x, 0), jnp.min(x), jnp.sum(k), jnp.max(k), jnp.min(k - 3)),
     [X, K], {}, {}),
    ("reduce_or reduce_and", {"reduce_or", "reduce_and"}, lambda b: (jnp.any(b, 1), jnp.all(b, 0), jnp.any(b)),
     [B], {}, {}),
    ("argmax argmin with ties", {"argmax", "argmin"},
     lambda x, k: (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(k), jnp.argmin(k)), [X, K], {"k": "tiny"}, {}),
    ("cumsum", {"cumsum"}, lambda x, k: (jnp.cumsum(x, 1), lax.cumsum(x, 0, reverse=True), jnp.cumsum(k)),
     [X, K], {}, {}),
    # structure
    ("broadcast reshape transpose squeeze rev", {"broadcast_in_dim", "reshape", "transpose", "squeeze", "rev"},
     lambda x: (x.reshape(-1)[None, :] + x.T.reshape(1, -1), jnp.squeeze(x[:, :1], 1), jnp.flip(x, (0, 1))),
     [X], {}, {}),
    ("slice concatenate pad", {"slice", "concatenate", "pad"},
     lambda x: (lax.slice(x, (1, 0), x.shape, (1, 2)), x[1:, ::2], jnp.concatenate([x, 2 * x], 1)[:, 1:],
                lax.pad(x, 0.5, ((1, -1, 1), (0, 2, 0))),
                lax.pad(x, 0.0, ((0, 0, 2), (1, 0, 0)))), [ArgSpec("x", ("n+1", "2*d"))], {}, {}),
    ("stack tile split", {"stack", "tile", "split"},
     lambda x: (jnp.stack([x, 2 * x], 1), jnp.tile(x, (2, 1)), jnp.split(x, 2, 0)[1]), [ArgSpec("x", ("2*n", "d"))],
     {}, {}),
    ("dynamic_slice clamps its start", {"dynamic_slice"},
     lambda x: (lax.dynamic_slice(x, (x.shape[0] - 1,), (2,)), lax.dynamic_slice(x, (5,), (2,)),
                lax.dynamic_slice(x, (-3,), (2,)), lax.dynamic_slice(x, (jnp.int32(7),), (1,)),
                lax.dynamic_slice_in_dim(x, x.shape[0] // 2, 2)),
     [ArgSpec("x", ("n+1",))], {}, {"sizes": (1, 2, 3, 6)}),
    ("dynamic_slice in two axes", {"dynamic_slice"},
     lambda x: lax.dynamic_slice(x, (x.shape[0], 3), (2, 1)), [ArgSpec("x", ("n+1", "d"))], {}, {}),
    ("dynamic_update_slice clamps its start", {"dynamic_update_slice"},
     lambda x, y: (lax.dynamic_update_slice(x, y[:2], (x.shape[0] - 1,)), lax.dynamic_update_slice(x, y[:1], (4,)),
                   lax.dynamic_update_slice(x, -y[:2], (-5,)), lax.dynamic_update_slice(x, y[:2], (1,))),
     [ArgSpec("x", ("n+1",)), ArgSpec("y", ("n+1",))], {}, {"sizes": (1, 2, 4)}),
    ("gather clip and fill", {"gather"},
     lambda x: (x[:, 0], x[:, -1], x.at[_dim(x, 0) + 1].get(mode="fill", fill_value=-7.0),
                x.at[_dim(x, 0) + 1].get(mode="clip"), x.at[_dim(x, 0) - 1].get(mode="fill"),
                x.at[:, _dim(x, 1)].get(mode="fill"), x.at[_dim(x, 0) + 2].get(mode="clip")),
     [X], {}, {}),
    ("gather of integers fills with the dtype's minimum", {"gather"},
     lambda k: (k.at[_dim(k, 0)].get(mode="fill"), k.at[_dim(k, 0) - 1].get(mode="fill")), [K], {}, {}),
    # sorting and indexing by data (jaxpr_perm): ties, repeats, indices off the axis
    ("sort values and argsort, ties by index", {"sort", "iota"},
     lambda x, y: (jnp.sort(x, 1), jnp.argsort(x, 1), jnp.sort(x, 0), jnp.argsort(x, 0), lax.sort(x, 1, is_stable=False),
                   lax.sort((x, y), 1, num_keys=1)[1], jnp.argsort(jnp.argsort(x, 1), 1)), [X, Y], {"x": "ties"}, {}),
    ("sort of an operand that may be NaN, by a finite key", {"sort", "is_finite"},
     lambda x, y: (jnp.isfinite(lax.sort((x, jnp.log(y)), 1, num_keys=1)[1]), lax.sort((x, jnp.log(y)), 1, num_keys=1)[1],
                   jnp.isfinite(jnp.take_along_axis(jnp.log(y), jnp.argsort(x, 1), 1))), [X, Y], {"x": "ties"}, {}),
    ("top_k with ties, the lower index first", {"top_k"},
     lambda x, k: (lax.top_k(x, 1), lax.top_k(x, 2), lax.top_k(k[:, None] * 1, 1)),
     [ArgSpec("x", ("n", "d+1")), K], {"x": "ties0", "k": "tiny"}, {}),
    ("sort of integer data with repeats", {"sort"}, lambda k: (jnp.sort(k), jnp.argsort(k), jnp.argsort(-k)),
     [K], {"k": "tiny"}, {}),
    ("floor_divide and remainder of integer data by a size", {"jit"},
     lambda k: (k // 3, jnp.floor_divide(k, _dim(k, 0)), jnp.argsort(k) // 2, k // 1, k % 3, jnp.remainder(k, _dim(k, 0))),
     [K], {"k": "wide"}, {}),
    ("div and rem of integer data by 1", {"div", "rem"},
     lambda k: (lax.div(k, I32(1)), lax.rem(k, I32(1)), k // 1, jnp.argsort(k) // 1), [K], {"k": "wide"}, {}),
    ("gather by data indices", {"gather"},
     lambda x, k: (x[k], x.at[k].get(mode="clip"), x.at[k].get(mode="fill", fill_value=-3.0), x[jnp.argsort(x)],
                   jnp.take_along_axis(x, jnp.argsort(x), 0), x.at[k].get(mode="promise_in_bounds")),
     [V, K], {"k": "small"}, {}),
    ("gather rows and along an axis by data", {"gather"},
     lambda x, k: (x[k[:, 0]], jnp.take_along_axis(x, k, 1, mode="clip"), jnp.take_along_axis(x, jnp.argsort(x, 1), 1),
                   jnp.take_along_axis(x, k, 1, mode="fill", fill_value=0.5)),
     [X, ArgSpec("k", ("n", "d"), "int32")], {"k": "small"}, {}),
    ("is_finite of a gather's finite fill", {"gather", "is_finite"},
     lambda x, k: (jnp.isfinite(jnp.sqrt(x).at[_dim(x, 0) + 1].get(mode="fill", fill_value=2.0)),
                   jnp.isfinite(jnp.sqrt(x).at[k].get(mode="fill", fill_value=2.0)),
                   jnp.isfinite(jnp.sqrt(x).at[_dim(x, 0) + 1].get(mode="fill"))), [V, K], {"k": "small"}, {}),
    ("gather at a size computed as a value", {"gather"},
     lambda x: (x.at[_dim(x, 0) - 3].get(mode="clip"), x.at[_dim(x, 0) - 3, 0].get(mode="fill", fill_value=1.0)),
     [X], {}, {}),
    ("scatter-add drops or clamps", {"scatter-add"},
     lambda x, k: (jnp.zeros_like(x).at[k].add(x), x.at[k].add(2 * x, mode="clip"), x.at[jnp.argsort(x)].add(x)),
     [V, K], {"k": "small"}, {}),
    ("scatter-add of rows", {"scatter-add"}, lambda x, k: (jnp.zeros_like(x).at[k].add(x), x.at[k].add(-x, mode="clip")),
     [X, K], {"k": "tiny"}, {}),
    ("dot_general", {"dot_general"},
     lambda a, b, k: (jnp.einsum("bij,bjk->bik", a, b), a[0] @ b[0], k @ k), [
         ArgSpec("a", ("m", "n", "d")), ArgSpec("b", ("m", "d", "n")), K], {"k": "small"}, {}),
    ("conv", {"conv_general_dilated"},
     lambda x, w: (lax.conv_general_dilated(x, w, (1,), [(1, 1)]), lax.conv_general_dilated(x, w, (2,), "VALID"),
                   lax.conv_general_dilated(x, w, (1,), [(0, 0)], lhs_dilation=(2,))),
     [ArgSpec("x", ("b", "c", "2*n+3")), ArgSpec("w", ("o", "c", "3"))], {}, {}),
    ("pooling", {"reduce_window_sum", "reduce_window_max", "reduce_window_min"},
     lambda x: (lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"),
                lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), [(0, 0), (1, 1)]),
                lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 1), "VALID"),
                lax.reduce_window(x, jnp.inf, lax.min, (2, 1), (1, 1), "VALID")),
     [ArgSpec("x", ("n+1", "d+1"))], {}, {}),
    ("scan unrolled at a concrete length", {"scan"},      # more in tests/frontends/test_scan.py
     lambda x, w: (lax.scan(lambda c, r: (c * w + r, jnp.log(c * c)), jnp.ones(x.shape[1:]), x),
                   lax.scan(lambda c, r: (c + r, (c, r > 0)), jnp.int32(0), x[:, 0] > 0, reverse=True)),
     [ArgSpec("x", ("4", "d")), ArgSpec("w", ("d",))], {}, {}),
    ("calls", {"jit", "custom_jvp_call", "custom_vjp_call", "remat2"},
     lambda x: (jax.nn.relu(x), jax.jit(lambda z: z * 3)(x), _cube(x), jax.checkpoint(lambda z: jnp.tanh(z) * z)(x)),
     [X], {}, {}),
]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_rule_agrees_with_xla(name):
    _, prims, fn, specs, values, opts = next(c for c in CASES if c[0] == name)
    assert prims <= primitives(fn, specs), "the case must exercise the primitives it names"
    check(fn, specs, values, **opts)


def test_every_rule_has_a_differential_case():
    covered = set().union(*(c[1] for c in CASES))
    missing = sorted(set(RULES) - covered)
    assert not missing, f"rules without a differential test: {missing}"
    unknown = sorted(covered - set(RULES))
    assert not unknown, f"cases name primitives without a rule: {unknown}"


def test_one_hot_model_agrees_with_xla_for_every_label():
    """``labels == iota`` is the one-hot model, exact for every label: inside the range and
    outside it (a -1 or a label past the classes has a zero row), with no assumption;
    ``labels == 2 * iota`` is no one-hot and is compared across out-of-range labels above."""
    from verigrad.certify.inputs import Domain
    fn = lambda lab, x: jax.nn.one_hot(lab, x.shape[-1]) * x  # noqa: E731
    specs = [ArgSpec("lab", ("n",), "int32"), X]
    imp = import_function(fn, specs)
    (t,) = [o.term() for o in imp.outputs]
    assert imp.importer.assumptions == []
    domain = Domain.of(imp.importer, {v: s.kind for s, v in zip(specs, imp.variables)},
                       {v: s.dtype for s, v in zip(specs, imp.variables)})
    outside = 0
    for size, kind in ((1, "N(0,1)"), (3, "N(0,1)"), (3, "mixed"), (4, "straddle"), (2, "negative")):
        sz = {s: size for v in imp.variables for s in v.sizes}
        vals = domain.draw(set(imp.variables), sz, kind, np.random.default_rng(size))
        lab = vals[imp.variables[0]]
        outside += int(np.sum((lab < 0) | (lab >= size)))
        args = [domain.jax_value(v, vals[v]) for v in imp.variables]
        with jax.enable_x64(True):
            want = np.asarray(jax.jit(fn)(*args))
        np.testing.assert_allclose(np.asarray(evaluate(t, sz, vals)), want, rtol=1e-12, atol=1e-12)
    assert outside > 0          # labels outside the range were drawn and read exactly


# -- refusals: a JaxprImportError naming the primitive and this file's line ------------------------

HERE = r"test_jaxpr_differential\.py:\d+"

REFUSED = [
    ("and", "two non-constant", lambda x: x * (_iota(x) & (_iota(x) + 1)), [V]),
    ("and", "floor division of a data", lambda k, x: x * (k & 6), [K, V]),
    ("or", "floor division of a data", lambda k, x: x * (k | 5), [K, V]),
    ("xor", "floor division of a data", lambda k, x: x * (k ^ 3), [K, V]),
    ("shift_right_arithmetic", "of integer data", lambda k, x: x * (k >> 1), [K, V]),
    ("shift_right_logical", "of integer data", lambda k, x: x * lax.shift_right_logical(k, I32(1)), [K, V]),
    ("shift_left", "non-constant amount", lambda x: x * (_iota(x) << _iota(x)), [V]),
    ("div", "of data", lambda k, x: x * lax.div(k, I32(2)), [K, V]),
    ("div", "not provably non-zero", lambda x: x * lax.div(_i64(x), _i64(x) - 1), [V]),
    ("rem", "rem of real values", lambda x, y: lax.rem(x, y), [X, Y]),
    ("pow", "non-constant exponent", lambda x, y: x ** y, [X, Y]),
    ("exp", r"infinite \(from log at", lambda x: jnp.exp(jnp.log(x)), [X]),
    ("tanh", "infinite", lambda x: jnp.tanh(1.0 / x), [X]),
    ("div", "infinite divisor", lambda x, y: y / jnp.log(x), [X, Y]),
    ("lt", "infinite", lambda x: jnp.where(jnp.log(x) < 0.0, x, 0.0), [X]),
    ("max", "NaN", lambda x: jnp.maximum(jnp.sqrt(x), 0.0), [X]),
    ("clamp", "NaN", lambda x: lax.clamp(0.0, jnp.sqrt(x), 1.0), [X]),
    ("reduce_max", "infinite", lambda x: jnp.max(jnp.log(x), 1), [X]),
    ("argmax", "infinite", lambda x: jnp.argmax(jnp.log(x), 1) * 1.0, [X]),
    ("reduce_window_max", "NaN", lambda x: lax.reduce_window(jnp.sqrt(x), -jnp.inf, lax.max, (2, 1), (1, 1),
                                                             "VALID"), [ArgSpec("x", ("n+1", "d"))]),
    ("conv_general_dilated", "infinite", lambda x, w: lax.conv_general_dilated(x, jnp.log(w), (1,), [(1, 1)]),
     [ArgSpec("x", ("b", "c", "n")), ArgSpec("w", ("o", "c", "3"))]),
    ("convert_element_type", "truncation", lambda x: x.astype(jnp.int32) * 1.0, [X]),
    ("convert_element_type", "NaN to True", lambda x: jnp.sqrt(x).astype(bool) * x, [X]),
    ("dynamic_slice", "not an integer expression", lambda s, x: lax.dynamic_slice(x, (s,), (1,)), [S0, V]),
    ("sort", "by 2 keys", lambda x, y: lax.sort((x, y), num_keys=2)[0], [X, Y]),
    ("sort", "unstable sort of several", lambda x, y: lax.sort((x, y), is_stable=False, num_keys=1)[1], [X, Y]),
    ("sort", "NaN", lambda x: jnp.sort(jnp.sqrt(x)), [X]),
    ("gather", "fills a value", lambda k, x: jnp.take_along_axis(x, k, 0), [K, V]),
    ("scatter-add", "may be out of bounds", lambda k, x: x.at[k].add(x, mode="promise_in_bounds"), [K, V]),
    ("scatter-add", "unique_indices", lambda k, x: x.at[k].add(x, unique_indices=True), [K, V]),
    ("scatter-add", "narrower than the operand", lambda k, x: x.at[k, :1].add(x[:, :1]), [K, X]),
    ("dynamic_slice", "not an integer expression", lambda x: x.at[_dim(x, 0) - 3].get(mode="clip"), [V]),
    ("population_count", "unsupported primitive", lambda k, x: x * lax.population_count(k), [K, V]),
    ("atan2", "unsupported primitive", lambda x: jnp.arctan2(x, x + 1), [X]),
]


@pytest.mark.parametrize("prim,why,fn,specs", REFUSED, ids=[f"{r[0]}: {r[1]}" for r in REFUSED])
def test_refusal_names_the_primitive_and_the_line(prim, why, fn, specs):
    assert prim in primitives(fn, specs)
    with pytest.raises(JaxprImportError) as info:
        imp = import_function(fn, specs)
        for o in imp.outputs:
            o.term()
    msg = str(info.value)
    assert re.search(rf"\b{prim}'? at .*{HERE}", msg), msg
    assert re.search(why, msg), msg


def test_a_positive_argument_of_log_is_not_a_risk():
    """The static sign analysis: log(x*x + 1) is finite, so exp of it is modelled (its
    twin exp(log(x)) is refused above)."""
    check(lambda x: (jnp.exp(jnp.log(x * x + 1)), jnp.tanh(jax.nn.log_softmax(x)), jnp.exp(jnp.log(jax.nn.softmax(x)))),
          [X])


# -- assumptions: what is read as exact only by assumption is recorded ---------------------------

def _assumptions(fn, specs):
    imp = import_function(fn, specs)
    for o in imp.outputs:
        o.term()
    return imp.importer.assumptions


def test_narrowing_casts_and_reduce_precision_are_assumptions():
    (a,) = _assumptions(lambda x: x.astype(jnp.float32).astype(jnp.float64) * 2, [X])
    assert re.fullmatch(rf"computes in float32 at .*{HERE}.*; the claim is about exact reals", a), a
    (b,) = _assumptions(lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2), [X])
    assert re.fullmatch(rf"computes with 5 exponent and 2 mantissa bits at .*{HERE}.*; the claim is about exact reals",
                        b), b
    assert _assumptions(lambda x: lax.reduce_precision(x, exponent_bits=11, mantissa_bits=52) * 2, [X]) == []
    assert _assumptions(lambda x: x.astype(jnp.float64) * 2, [X]) == []


def test_integer_data_arithmetic_and_casts_state_their_range():
    a, conv = _assumptions(lambda k, x: x * (k + 1), [K, V])
    assert re.fullmatch(rf"integer arithmetic does not overflow int32 \(add at .*{HERE}.*\)", a), a
    assert "the integers converted to float32" in conv, conv    # x's float64 is float32 with x64 off
    with jax.enable_x64(True):
        assert _assumptions(lambda x: x * (_iota(x) + 1), [V]) == []      # index expressions: sizes fit
    (f32,) = _assumptions(lambda x: x * (_iota(x) + 1), [V])              # x64 off: in float32, up to 2^24
    assert "the integers converted to float32" in f32 and f32.endswith("for sizes up to 16777216)"), f32
    scaled = _assumptions(lambda x: x * (_iota(x) * 3 + 1), [V])          # a scaled one states it fits
    index = [a for a in scaled if not a.startswith("the integers converted to float32")]   # (x64 off)
    assert index and all(re.fullmatch(rf"index arithmetic does not overflow int32 \((mul|add) at .*", a)
                         for a in index), scaled
    (b,) = _assumptions(lambda k, x: x * k.astype(jnp.float32), [K, V])
    assert "the integers converted to float32" in b and re.search(HERE, b)
    with jax.enable_x64(True):                  # float64 holds every int32
        assert _assumptions(lambda k, x: x * k.astype(jnp.float64), [K, V]) == []
    (b64,) = _assumptions(lambda k, x: x * k.astype(jnp.float64), [K, V])
    assert "the integers converted to float32" in b64, b64    # float64 runs as float32 with x64 off
    (c,) = _assumptions(lambda k, x: x * k.astype(jnp.int8), [K, V])
    assert "the integers converted to int8" in c
    with jax.enable_x64(True):                  # wraps below 0, modelled (2^32 - 1 is exact in float64)
        assert _assumptions(lambda x: x * (_iota(x, jnp.uint32) - 1), [V]) == []
    with pytest.raises(JaxprImportError, match="float32 rounds them"):   # x64 off: float32 rounds 2^32 - 1
        _assumptions(lambda x: x * (_iota(x, jnp.uint32) - 1), [V])
    d, _ = _assumptions(lambda k, x: x * (k - 1), [U, V])     # (and: converted to float32, exactly)
    assert "does not overflow uint32" in d
