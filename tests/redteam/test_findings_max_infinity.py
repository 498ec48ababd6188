"""Red team RT-47-h6 (helper rt2-h; fixed): the StableHLO importer read ``max(+inf, y)``
(and ``min(-inf, y)``) as the infinity, dropping ``y``; XLA's maximum and minimum
propagate NaN, so where ``y`` is NaN the result is NaN. Since an infinity is not a term,
nothing computed from it mentions ``y``, and the render tie's domain check, which marks
the values computed from a partial operation not shown inside its domain, lost the trace.

Edit of a rendered MLP (sgd) ``train_step.mlir`` (the harness of
``test_findings_outside_domain``):

    %rtp = multiply(0, divide(1, y[0,0] - 0.01))     (marked: a division not shown positive)
    %rtm = maximum(+inf, %rtp)                        (read +inf; XLA NaN at y[0,0] = 0.01f)
    %rtn = minimum(%rtm, 1)                           (read 1, a constant: untainted; XLA NaN)
    %rtc = not(compare EQ, %rtn, 1)                   (read 0; XLA 1 on training data)
    %rt9 = head/b' + select(%rtc, [y[0,0] == 0.01], 0) * [1, 0, ..., 0]

Every result was CHECKED, and on a training batch whose first label is not class 0 XLA
moves ``head/b[0]`` by 1. Fixed (``stablehlo_rules._max_min``): the infinity absorbs only
a value that is provably finite (an input, a constant, a bounded function of them);
otherwise the importer refuses the text, naming the operation.
"""
import pytest

from _tie_edits import edited_head_bias, run_step
from test_findings_outside_domain import _edit, _training_args, src  # noqa: F401  (the module's fixture)
from verigrad.render.tie import tie_directory


def _gate(absorbed):
    return ["%rtd = stablehlo.subtract %rtr, %rtk : tensor<f32>",
            "%rtinf = stablehlo.divide %rtone, %rtd : tensor<f32>",
            "%rtp = stablehlo.multiply %rtz, %rtinf : tensor<f32>",
            "%rtI = stablehlo.constant dense<0x7F800000> : tensor<f32>",
            f"%rtm = stablehlo.maximum %rtI, {absorbed} : tensor<f32>",
            "%rtn = stablehlo.minimum %rtm, %rtone : tensor<f32>",
            "%rtc0 = stablehlo.compare EQ, %rtn, %rtone, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rtc = stablehlo.not %rtc0 : tensor<i1>"]


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):  # noqa: F811
    return edited_head_bias(src, tmp_path_factory.mktemp("rt47h6") / "maxinf", _edit(_gate("%rtp")))


def test_rt47_h6_xla_moves_the_bias_on_training_batches(src, edited):  # noqa: F811
    path, k = edited
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt47_h6_the_edited_step_is_not_tied(edited):
    path, k = edited
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "an infinity and a value that is not provably finite" in r.reason, r.reason


def test_rt47_h6_an_infinity_absorbing_a_finite_value_still_ties(src, tmp_path):  # noqa: F811
    """``max(+inf, y[0, 0])``: +inf in XLA as in the reading, and the edit is 0."""
    edited, _ = edited_head_bias(src, tmp_path / "finite", _edit(_gate("%rtr")))
    assert tie_directory(edited).ok
