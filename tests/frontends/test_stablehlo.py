"""The StableHLO importer: parse errors with line:col, one rule per operation checked by
translation validation against XLA, and a wrong rule caught by that validation."""
import dataclasses
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from verigrad.frontends import stablehlo_rules
from verigrad.frontends.stablehlo import StableHLOError, import_module, parse, signature
from verigrad.frontends.stablehlo_check import TranslationMismatch, validate
from verigrad.kernel import Lamda, Num, Var


def lower(f, *shapes):
    return jax.jit(f).lower(*[jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]).as_text()


def test_parse_error_names_line_and_column():
    text = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %b : tensor<2xf32>\n" \
           "  return %0 : tensor<2xf32>\n}"
    with pytest.raises(StableHLOError, match=r"step\.mlir:2:\d+: use of undeclared SSA value"):
        parse(text, "step.mlir")


def test_verifier_rejects_wrong_result_type():
    text = "func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  return %a : tensor<2xf32>\n}"
    with pytest.raises(StableHLOError, match=r"<text>:2:\d+"):
        parse(text)


def test_unsupported_operation_is_named_with_its_line():
    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.cosine %a : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
    with pytest.raises(StableHLOError, match=r"m\.mlir:2:\d+: unsupported operation stablehlo\.cosine"):
        import_module(text, path="m.mlir")


def test_signature_and_variable_names():
    text = lower(lambda w, x: (x @ w, jnp.sum(w)), (3, 2), (4, 3))
    sig = signature(text)
    assert [s.shape for s in sig.inputs] == [(3, 2), (4, 3)] and [s.dtype for s in sig.outputs] == ["f32", "f32"]
    default = import_module(text)
    assert [v.name for v in default.inputs] == ["arg0", "arg1"]
    named = import_module(text, names=["W", "x"], result_names=["y", "total"])
    assert named.inputs == (Var("W", (3, 2)), Var("x", (4, 3)))
    assert named.result("total").atoms == {Var("W", (3, 2))}
    with pytest.raises(StableHLOError, match="2 arguments"):
        import_module(text, names=["W"])


def test_float_literal_is_the_decimal_it_prints_as():
    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %c = stablehlo.constant dense<1.000000e-01> : tensor<2xf32>\n"
            "  %0 = stablehlo.multiply %a, %c : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
    (r,) = import_module(text).results
    c = r.terms[1]
    assert isinstance(c, Lamda) and c.body is Num(Fraction(1, 10))


def test_infinity_only_as_identity_of_max():
    ok = lower(lambda x: jnp.max(x, axis=1), (3, 4))
    validate(ok)
    bad = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
           "  %c = stablehlo.constant dense<0xFF800000> : tensor<2xf32>\n"
           "  %0 = stablehlo.add %a, %c : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}")
    with pytest.raises(StableHLOError, match=r":3:\d+: stablehlo.add: uses the non-finite constant"):
        import_module(bad)


def test_rounding_conversion_is_refused():
    text = lower(lambda x: x.astype(jnp.int32).astype(jnp.float32), (3,))
    with pytest.raises(StableHLOError, match="conversion from f32 to i32"):
        import_module(text)


def _conv(x, w, **kw):
    return jax.lax.conv_general_dilated(x, w, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


CASES = {
    "elementwise": (lambda x, y: (jnp.exp(x) * jnp.log(jnp.abs(y) + 1) - jnp.tanh(x) / (1 + y * y),
                                  jnp.sqrt(jnp.abs(x) + 0.5) + jax.lax.rsqrt(y * y + 1), (jnp.abs(x) + 1) ** 1.5,
                                  jax.nn.sigmoid(x), jax.scipy.special.erf(y), jnp.sign(x) * jnp.clip(y, -0.3, 0.4),
                                  jnp.maximum(x, y) - jnp.minimum(x, 0.2), jnp.log1p(x * x), jnp.expm1(y), -x),
                    [(3, 4), (3, 4)]),
    "compare_select": (lambda x, y: (jnp.where(x > y, x, 2 * y), jnp.where((x >= 0) & (y < 0.5), 1.0, -x),
                                     jnp.where((x == x) | (y != y), y, 0.0), jnp.where(~(x <= y), x, y)),
                       [(5,), (5,)]),
    "dot_general": (lambda a, b, c: (a @ b, jnp.einsum("bij,bjk->bki", c, jnp.ones((2, 4, 3)) + c[:, :, :3].sum()),
                                     jnp.dot(a[0], b), jnp.einsum("ij,ij->", a, a)),
                    [(3, 4), (4, 5), (2, 3, 4)]),
    "shape": (lambda x, v: (x.reshape(4, 6), x.reshape(2, 12).T, jnp.transpose(x.reshape(2, 3, 4), (2, 0, 1)),
                            jnp.broadcast_to(v[:, None], (3, 5)), x[1:3, ::3], x[::2, 1::2],
                            jnp.concatenate([x, 2 * x[:1]], axis=0), jnp.concatenate([x, jnp.tile(v[:1], (4, 2))], 1)),
              [(4, 6), (3,)]),
    "reduce": (lambda x: (jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.min(x), jnp.mean(x, axis=(0, 2)),
                          jax.nn.logsumexp(x, axis=-1), jax.nn.softmax(x, axis=1)),
               [(2, 3, 4)]),
    "constants_iota": (lambda x: (x + jnp.array([[1.0, -2.0, 0.5]]), x * jnp.arange(3.0),
                                  jax.nn.one_hot(jnp.arange(2), 3) * x, x + 0.1),
                       [(2, 3)]),
    "pad": (lambda x: (jnp.pad(x, ((1, 2), (0, 1))), jnp.pad(x, ((0, 0), (2, 0)), constant_values=1.5),
                       jax.lax.pad(x, 0.0, ((1, 0, 1), (0, -1, 2)))),
            [(3, 4)]),
    "convolution": (lambda x, w: (_conv(x, w, window_strides=(1, 1), padding="SAME"),
                                  _conv(x, w, window_strides=(2, 1), padding=((1, 0), (0, 1)), rhs_dilation=(1, 2)),
                                  jax.grad(lambda x, w: jnp.sum(jnp.tanh(_conv(x, w, window_strides=(2, 2), padding="SAME"))),
                                           argnums=(0, 1))(x, w)),
                    [(2, 5, 5, 3), (3, 3, 3, 4)]),
    "grouped_convolution": (lambda x, w: (_conv(x, w, window_strides=(1, 1), padding="VALID", feature_group_count=2),
                                          jax.grad(lambda w: jnp.sum(_conv(x, w, window_strides=(1, 1), padding="SAME",
                                                                           feature_group_count=2) ** 2))(w)),
                            [(2, 4, 4, 4), (2, 2, 2, 6)]),
    "pooling": (lambda x: (jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
                           jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0,
                           jax.grad(lambda x: jnp.sum(jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1),
                                                                            (1, 2, 2, 1), "VALID") ** 2))(x)),
                [(2, 4, 4, 3)]),
    "calls": (lambda x: jax.jit(lambda y: jax.nn.relu(y) * 2)(x) + jax.jit(jnp.tanh)(x), [(3,)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_import_agrees_with_xla(name):
    f, shapes = CASES[name]
    checks = validate(lower(f, *shapes), seed=1)
    assert checks and all(c.ok for c in checks)


def test_sharding_annotation_is_the_identity():
    text = ("func.func public @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
            "  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = \"{replicated}\"} : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
            "  %1 = stablehlo.tanh %0 : tensor<4x2xf32>\n  return %1 : tensor<4x2xf32>\n}")
    validate(text)


def test_a_wrong_rule_is_caught_by_validation(monkeypatch):
    """The control: an importer whose transpose forgets to permute must be caught."""
    f, shapes = CASES["dot_general"]
    text = lower(lambda a, b: (a @ b).T @ jnp.ones((3, 2)), (3, 4), (4, 3))
    validate(text)
    good = stablehlo_rules.RULES["stablehlo.transpose"]
    monkeypatch.setitem(stablehlo_rules.RULES, "stablehlo.transpose", dataclasses.replace(good, fn=lambda op, x: x))
    with pytest.raises(TranslationMismatch, match=r"disagree .*result"):
        validate(text)


def test_a_wrong_constant_is_caught_by_validation(monkeypatch):
    text = lower(lambda x: x * 3.0 + 1.0, (4,))
    monkeypatch.setattr(stablehlo_rules, "_number", lambda v, spec: Fraction(v) + Fraction(1, 1000))
    with pytest.raises(TranslationMismatch):
        validate(text)


def test_import_of_a_train_step_agrees_with_xla(tmp_path):
    from verigrad.run import manifest, reference
    m = manifest.load(reference.write(tmp_path, batch=4, hidden=5, inputs=6, classes=3))
    ts = m.train_step
    imp = import_module(m.text(ts), [p.name for p in ts.inputs], [p.name for p in ts.outputs])
    assert imp.result("params/fc1/W").shape == Var("W", (6, 5)).shape
    positive = [p.name for p in ts.inputs if p.role != "param" and p.role not in ("batch_x", "batch_y")]
    checks = validate(m.text(ts), imp, positive=positive)
    assert [c.name for c in checks] == [p.name for p in ts.outputs]
    assert np.max([c.max_error for c in checks]) < 1e-5


def _block(x, wq, wk, wv, w1):
    """A tiny pre-norm transformer block: layer norm, 2-head attention, GELU MLP."""
    def ln(h):
        mu = jnp.mean(h, -1, keepdims=True)
        return (h - mu) * jax.lax.rsqrt(jnp.var(h, -1, keepdims=True) + 1e-5)
    h = ln(x)
    q, k, v = [(h @ w).reshape(3, 2, 2).transpose(1, 0, 2) for w in (wq, wk, wv)]
    a = jax.nn.softmax(jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(2.0), axis=-1)
    x = x + jnp.einsum("hqk,hkd->qhd", a, v).reshape(3, 4)
    return x + jax.nn.gelu(ln(x) @ w1, approximate=False) @ w1.T + jax.nn.gelu(x, approximate=True)


def test_transformer_block_and_its_gradient_agree_with_xla():
    shapes = [(3, 4), (4, 4), (4, 4), (4, 4), (4, 6)]
    f = lambda *a: (_block(*a), jax.grad(lambda *b: jnp.sum(jnp.sin(_block(*b))), argnums=(0, 1, 4))(*a))  # noqa: E731
    text = lower(f, *shapes)
    with pytest.raises(StableHLOError, match="unsupported operation stablehlo.(sine|cosine)"):
        import_module(text)
    g = lambda *a: (_block(*a), jax.grad(lambda *b: jnp.sum(jnp.tanh(_block(*b))), argnums=(0, 1, 4))(*a))  # noqa: E731
    checks = validate(lower(g, *shapes), seed=2)
    assert len(checks) == 4 and all(c.ok for c in checks)
