"""Red team RT-41 (helper rt2-b, fixed: a float literal is widened only when it is a number of
its own type): the StableHLO importer read a narrow float literal, then widened, as the
decimal it stands for, not as the number it is, so a rendered step whose edit changes a
parameter update on every training batch was tied (CHECKED, "XLA agrees") and trained.

A float literal denotes the shortest decimal that rounds to it in its type
(``stablehlo_rules._number``): ``0.91 : f16`` is read 91/100, though its value is
0.91015625. No f16 value lies between the two, so comparisons in f16 cannot tell them
apart; but ``convert`` to f32 keeps the value exactly (the rule returned its operand
unchanged), and f32 values can: ``[y >= convert(0.91 : f16)]`` of an f32 ``y`` was read
``[y - 91/100 >= 0]``, the very atom of ``[y >= 0.91 : f32]``. The same for ``f32 -> f64``
(0.91f is 0.9100000262...) and for a contraction whose result type is wider than an
operand's (``dot_general`` of an f16 literal with an f32 vector). Edit of a rendered MLP
(sgd) ``train_step.mlir``, before the return, the new ``head/b`` replaced by ``%rt9``:

    %rtk16 = convert(constant 0.91 : f16) : f32        (read 91/100; XLA 0.91015625)
    %rtt = select(y[0,0] >= 0.91, 1, 0) - select(y[0,0] >= %rtk16, 1, 0)
    %rt9 = head/b' + %rtt * [1, 0, ..., 0]

The kernel proves ``%rtt = 0`` with no side condition; XLA's ``%rtt`` is 1 exactly when
``y[0, 0] = 0.91f`` (the first example's label is class 0: a tenth of training batches),
and 0 at the XLA check's normal draws (unless one falls in [0.91, 0.91015625)).

Fixed (``stablehlo_rules._widened``): widening a float value (``convert``, or a contraction
operand narrower than its result) is refused when a literal in it is not exactly a number
of its own type; a literal that is (0.5 : f16) and any argument are widened as before.
"""
import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.frontends.stablehlo import StableHLOError, import_module
from verigrad.frontends.stablehlo_check import validate
from verigrad.kernel import Num, Theorem, prove_equal
from verigrad.render.tie import NotTied, ensure_tied, tie_directory
from verigrad.run import backend as B

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _module(literal, narrow="f16", wide="f32", shift="0.0"):
    """``[y >= c] - [y >= convert(c : narrow)]`` with ``y = y0 - shift`` computed in ``wide``
    from an f32 argument ``y0`` (the result an f32)."""
    w = f"tensor<{wide}>"
    return f"""
func.func @main(%y0: tensor<f32>) -> tensor<f32> {{
  %yw = stablehlo.convert %y0 : (tensor<f32>) -> {w}
  %s = stablehlo.constant dense<{shift}> : {w}
  %y = stablehlo.subtract %yw, %s : {w}
  %n = stablehlo.constant dense<{literal}> : tensor<{narrow}>
  %c = stablehlo.convert %n : (tensor<{narrow}>) -> {w}
  %d = stablehlo.constant dense<{literal}> : {w}
  %p = stablehlo.compare GE, %y, %d : ({w}, {w}) -> tensor<i1>
  %q = stablehlo.compare GE, %y, %c : ({w}, {w}) -> tensor<i1>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %a = stablehlo.select %p, %one, %zero : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %b = stablehlo.select %q, %one, %zero : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = stablehlo.subtract %a, %b : tensor<f32>
  return %r : tensor<f32>
}}
"""


def _xla(text, *args):
    exe = B.compile(text, "xla", [f"a{k}" for k in range(len(args))], "<text>")
    return [np.asarray(B.to_host(x)) for x in exe(*args)]


@pytest.mark.parametrize("narrow, wide, shift", [("f16", "f32", "0.0"), ("bf16", "f32", "0.0"), ("f32", "f64", "2.0e-08")])
def test_rt41_xla_tells_the_widened_literal_from_its_decimal(narrow, wide, shift):
    """The counterexample: XLA's result is 1 at ``y0 = 0.91f`` (0 by the old reading: both
    compares were one atom); now the importer refuses the widening."""
    text = _module("0.91", narrow, wide, shift)
    assert _xla(text, np.asarray(np.float32(0.91)))[0] == 1.0
    with pytest.raises(StableHLOError, match=f"stablehlo.convert: widens a {narrow} value with the literal"):
        import_module(text)


def test_rt41_an_exact_literal_and_an_argument_still_widen():
    """The true neighbours: ``0.5 : f16`` is exactly a number of f16 (the module is 0, and
    the kernel proves it); a widened f16 argument is read as before."""
    imported = import_module(_module("0.5"))
    assert isinstance(prove_equal(imported.results[0], Num(0)), Theorem)
    validate(_module("0.5"), imported, inputs=[np.asarray(np.float32(0.5))])
    text = """
func.func @main(%h: tensor<3xf16>) -> tensor<3xf32> {
  %c = stablehlo.convert %h : (tensor<3xf16>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}
"""
    validate(text, import_module(text))


def test_rt41_a_mixed_contraction_widens_its_narrow_operand():
    text = """
func.func @main(%y: tensor<1xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<[LIT]> : tensor<1xf16>
  %r = stablehlo.dot_general %c, %y, contracting_dims = [0] x [0] : (tensor<1xf16>, tensor<1xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
"""
    assert _xla(text.replace("LIT", "0.91"), np.ones(1, np.float32))[0] == np.float32(0.91015625)
    with pytest.raises(StableHLOError, match="dot_general: widens a f16 value with the literal 91/100"):
        import_module(text.replace("LIT", "0.91"))
    validate(text.replace("LIT", "0.25"), import_module(text.replace("LIT", "0.25")))


def _edit(literal):
    def body(y, ys, new_b):
        return [f"%rts = stablehlo.slice %arg{y} [0:1, 0:1] : (tensor<{ys}>) -> tensor<1x1xf32>",
                "%rtr = stablehlo.reshape %rts : (tensor<1x1xf32>) -> tensor<f32>",
                "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                f"%rth = stablehlo.constant dense<{literal}> : tensor<f16>",
                "%rtk16 = stablehlo.convert %rth : (tensor<f16>) -> tensor<f32>",
                f"%rtk = stablehlo.constant dense<{literal}> : tensor<f32>",
                "%rtc1 = stablehlo.compare GE, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtc2 = stablehlo.compare GE, %rtr, %rtk16, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rt1 = stablehlo.select %rtc1, %rtone, %rtz : tensor<i1>, tensor<f32>",
                "%rt2 = stablehlo.select %rtc2, %rtone, %rtz : tensor<i1>, tensor<f32>",
                "%rtt = stablehlo.subtract %rt1, %rt2 : tensor<f32>",
                "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
                f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
                "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
                f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]
    return body


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return rendered_mlp(tmp_path_factory, "rt41")


def test_rt41_the_edited_step_is_not_tied(src, tmp_path):
    edited, k = edited_head_bias(src, tmp_path / "f16", _edit("9.100000e-01"))
    args = step_args(src)                   # smoothed targets; the first example's label is 0
    want, got = run_step(src, args), run_step(edited, args)
    assert got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)      # what training would run
    results = tie_directory(edited).modules["train_step"].results
    assert results[k].status != "CHECKED" and "widens a f16 value" in results[k].reason
    with pytest.raises(NotTied, match="widens a f16 value"):
        ensure_tied(edited)


def test_rt41_the_same_edit_with_an_exact_literal_is_tied(src, tmp_path):
    """0.5 is a number of f16: the edit is 0 in XLA as in the reading, and ties."""
    edited, _ = edited_head_bias(src, tmp_path / "half", _edit("5.000000e-01"))
    assert tie_directory(edited).ok
