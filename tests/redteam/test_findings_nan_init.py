"""Red team RT-15 (fixed: only the identity infinity is dropped) (open): a ``minimum`` reduction whose initial value is NaN is read as the
minimum of its operand; XLA computes NaN. A rendered step that changes a parameter
update in training is tied (CHECKED, "XLA agrees") and trained.

``stablehlo_rules._combine`` drops an ``Infinity`` initial value as the identity unless
``(init.sign < 0) != (kind == "max")``. A NaN constant is ``Infinity(0, ...)``
(``_literal``): for ``max`` the test fires (refused), for ``min`` it does not, so
``reduce(x init: NaN) applies minimum`` (and ``reduce_window`` likewise) reads as
``min_r x[r]``, and ``_reduction_info`` even marks it *provably finite*. StableHLO's
``minimum`` propagates NaN (spec: IEEE-754 ``minimum``), and so does XLA: the result
is NaN for every input. The kernel then proves ``m_nan - m = 0`` for ``m`` the honest
minimum, while XLA computes NaN; ``compare EQ`` of NaN is false, so
``select(m_nan - m == 0, 0, 1)`` is 0 for the kernel and 1 for XLA. The XLA check runs
the text, so that 1 is gated by a trigger its draws (standard normal targets) never meet
but every training batch does: all targets >= 0 (smoothed one-hot). Edit of a rendered
MLP (sgd) ``train_step.mlir``, inserted before the return, the new ``head/b`` replaced
by ``%rt9``:

    %rtm1 = reduce(y init: NaN) minimum      (kernel: min(y); XLA: NaN)
    %rtm2 = reduce(y init: +inf) minimum     (min(y) for both)
    %rte  = select(compare EQ (%rtm1 - %rtm2), 0.0;  0.0, 1.0)   (kernel 0, XLA 1)
    %rtt  = select(compare GE %rtm2, 0.0;  %rte, 0.0)           (XLA: 1 in training, 0 at the draws)
    %rt9  = head/b' + %rtt * [1, 0, ..., 0]                       (head/b[0] += 1 every training step)

with the manifest's sha256 updated. ``verigrad render DIR`` reports CHECKED (train_step
5/5, "xla": "AGREES"), ``ensure_tied`` accepts it, and ``verigrad train DIR --epochs 1``
on the 64-16-10 MLP at batch 8 runs it: loss 10.81 and test accuracy 0.236 (render_tie
CHECKED), against 2.143 and 0.361 for the rendered text. With a smoothed one-hot target
XLA's new ``head/b`` differs from the original text's by exactly 1.0 at index 0.

Fix direction: in ``_combine``, accept an ``Infinity`` initial value only when it is
the identity (``-inf`` for max, ``+inf`` for min; ``sign == 0`` never); refuse a NaN
(``Infinity`` of sign 0) wherever a rule accepts an infinity as an identity.
"""
import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.frontends.stablehlo import StableHLOError, import_module
from verigrad.render.tie import NotTied, ensure_tied
from verigrad.run import backend as B

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _body(y, ys, new_b):
    """The NaN-initial-value edit (see the docstring)."""
    return ["%rtnan = stablehlo.constant dense<0x7FC00000> : tensor<f32>",
            f"%rtm1 = stablehlo.reduce(%arg{y} init: %rtnan) applies stablehlo.minimum across dimensions = [0, 1] "
            f": (tensor<{ys}>, tensor<f32>) -> tensor<f32>",
            "%rtinf = stablehlo.constant dense<0x7F800000> : tensor<f32>",
            f"%rtm2 = stablehlo.reduce(%arg{y} init: %rtinf) applies stablehlo.minimum across dimensions = [0, 1] "
            f": (tensor<{ys}>, tensor<f32>) -> tensor<f32>",
            "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
            "%rtd = stablehlo.subtract %rtm1, %rtm2 : tensor<f32>",
            "%rtc = stablehlo.compare EQ, %rtd, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rte = stablehlo.select %rtc, %rtz, %rtone : tensor<i1>, tensor<f32>",
            "%rtg = stablehlo.compare GE, %rtm2, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rtt = stablehlo.select %rtg, %rte, %rtz : tensor<i1>, tensor<f32>",
            "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
            f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
            "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
            f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    src = rendered_mlp(tmp_path_factory, "rt15")
    return src, *edited_head_bias(src, tmp_path_factory.mktemp("rt15") / "edited", _body)


def test_rt15_the_edit_changes_the_update_in_training_only(dirs):
    src, edited, k = dirs
    args = step_args(src)                  # smoothed one-hot targets, as training feeds them
    want, got = run_step(src, args), run_step(edited, args)
    assert np.array_equal(got[k][1:], want[k][1:]) and got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)
    args = step_args(src, smoothed=False)   # normal targets: no change
    want, got = run_step(src, args), run_step(edited, args)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


T = """func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %r = stablehlo.reduce(%x init: %nan) applies stablehlo.minimum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}"""


def test_rt15_xla_propagates_the_nan_initial_value():
    exe = B.compile(T, "xla", ["x"], "<rt15>")
    assert np.isnan(np.asarray(B.to_host(exe(np.array([3.0, 1.0, 2.0, 5.0], np.float32))[0])))


def test_rt15_the_importer_refuses_a_nan_initial_value():
    with pytest.raises(StableHLOError):
        import_module(T)


def test_rt15_not_tied(dirs):
    _, edited, _ = dirs
    with pytest.raises(NotTied):
        ensure_tied(edited)
