"""Red team RT-43 (helper rt2-b, fixed: a subnormal float literal is refused): XLA on the CPU
flushes subnormal operands to zero at run time (though not when it folds constants), and
the importer read a subnormal literal as the real it denotes, so a rendered step whose
edit changes a parameter update on most training batches was tied (CHECKED) and trained.

``1.401298e-45 : f32`` (the smallest subnormal) was read as 1/10^45: ``[c * y > 0]`` is
``[y > 0]`` for the reading (the kernel proves it), while XLA's ``c * y`` is 0 for every
``|y| < 2^-126 / c``. Edit of a rendered MLP (sgd), before the return, the new ``head/b``
replaced by ``%rt9``:

    %rtc = xor([c * y[0,0] > 0], [y[0,0] > 0])         (read 0; XLA [y[0,0] > 0])
    %rtt = select(%rtc, select(y[0,0] == 0.01, 1, 0), 0)
    %rt9 = head/b' + %rtt * [1, 0, ..., 0]

The kernel proves ``%rtt = 0`` with no side condition; XLA's is 1 whenever the first
example's class-0 target is 0.01f (its label is not class 0), 0 at the XLA check's draws.

Fixed (``stablehlo_rules._number``): a subnormal literal of any float type is refused,
naming it; the smallest normal literal (``1.17549435e-38 : f32``) is read as before.
"""
import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.frontends.stablehlo import StableHLOError, import_module
from verigrad.frontends.stablehlo_check import validate
from verigrad.render.tie import NotTied, ensure_tied, tie_directory
from verigrad.run import backend as B

TEXT = """
func.func @main(%y: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<LIT> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.multiply %c, %y : tensor<f32>
  %d = stablehlo.compare GT, %b, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %e = stablehlo.select %d, %one, %z : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %e : tensor<f32>
}
"""


def test_rt43_xla_flushes_a_subnormal_literal():
    text = TEXT.replace("LIT", "1.401298e-45")
    exe = B.compile(text, "xla", ["y"], "<text>")
    assert float(np.asarray(B.to_host(exe(np.asarray(np.float32(1.0)))[0]))) == 0.0      # the reading: 1
    for lit in ("1.401298e-45", "0x00000001", "-1.0e-40"):
        with pytest.raises(StableHLOError, match="stablehlo.constant: the subnormal f32 literal"):
            import_module(TEXT.replace("LIT", lit))
    with pytest.raises(StableHLOError, match="subnormal f16 literal"):
        import_module(TEXT.replace("dense<LIT> : tensor<f32>", "dense<[1.0e-05, 1.0]> : tensor<2xf16>")
                      .replace("%c = ", "%c0 = ").replace("multiply %c,", "multiply %y,"))


def test_rt43_the_smallest_normal_literal_is_read():
    text = TEXT.replace("LIT", "1.17549435e-38")
    validate(text, import_module(text), inputs=[np.asarray(np.float32(1.0))])


ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _edit(lit):
    def body(y, ys, new_b):
        return [f"%rts = stablehlo.slice %arg{y} [0:1, 0:1] : (tensor<{ys}>) -> tensor<1x1xf32>",
                "%rtr = stablehlo.reshape %rts : (tensor<1x1xf32>) -> tensor<f32>",
                "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                "%rtk = stablehlo.constant dense<0.00999999977> : tensor<f32>",
                "%rtq = stablehlo.compare EQ, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtqq = stablehlo.select %rtq, %rtone, %rtz : tensor<i1>, tensor<f32>",
                f"%rtdn = stablehlo.constant dense<{lit}> : tensor<f32>",
                "%rtdy = stablehlo.multiply %rtdn, %rtr : tensor<f32>",
                "%rtd1 = stablehlo.compare GT, %rtdy, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtd2 = stablehlo.compare GT, %rtr, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtc = stablehlo.xor %rtd1, %rtd2 : tensor<i1>",
                "%rtt = stablehlo.select %rtc, %rtqq, %rtz : tensor<i1>, tensor<f32>",
                "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
                f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
                "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
                f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]
    return body


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return rendered_mlp(tmp_path_factory, "rt43")


def test_rt43_the_edited_step_is_not_tied(src, tmp_path):
    edited, k = edited_head_bias(src, tmp_path / "subnormal", _edit("1.401298e-45"))
    args = step_args(src)
    j = next(j for j, a in enumerate(args) if a.shape == (8, 10))
    args[j] = args[j].copy()
    args[j][0], args[j][0, 3] = 0.01, 0.91          # the first example's label: 3
    want, got = run_step(src, args), run_step(edited, args)
    assert got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)      # what training would run
    results = tie_directory(edited).modules["train_step"].results
    assert results[k].status != "CHECKED" and "subnormal" in results[k].reason
    with pytest.raises(NotTied, match="subnormal"):
        ensure_tied(edited)


def test_rt43_the_same_edit_with_a_normal_literal_is_tied(src, tmp_path):
    """With a normal ``c`` (1.0) XLA's ``c * y[0, 0]`` keeps the sign: the edit is 0 in XLA
    too, and ties."""
    edited, _ = edited_head_bias(src, tmp_path / "normal", _edit("1.000000e+00"))
    assert tie_directory(edited).ok
