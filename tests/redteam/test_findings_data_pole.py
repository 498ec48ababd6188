"""Red team RT-46-f1 (helper rt2-f; fixed): the render
tie's RT-42 check (``render.tie._outside_domain``) evaluates each divisor, log argument,
root and negative-power base of the text at the tie's random point only. A divisor that
is 0 only where training data are special (``y[0,0] - 0.01f``, 0 whenever the first
example's class-0 target is the smoothed 0.01f) is nonzero at the random point and at
the XLA check's draws, so nothing refuses it, and the kernel's total reading
(``0 * u^-1 = 0``) erases the pole that XLA computes (``0 * inf = NaN``).

Edit of a rendered MLP (sgd) ``train_step.mlir``, before the return, the new ``head/b``
replaced by ``%rt9`` (the harness of ``test_findings_outside_domain``):

    %rtinf = divide(1, y[0,0] - 0.01)                  (XLA at y[0,0] = 0.01f: inf)
    %rtp = multiply(0, %rtinf)                         (read 0; XLA NaN there)
    %rtc = not(compare EQ, %rtp, 0)                    (read 0; XLA 1 there)
    %rt9 = head/b' + select(%rtc, [y[0,0] == 0.01], 0) * [1, 0, ..., 0]

The tie reports every result CHECKED (the kernel proves the added term 0 with no side
condition; XLA agrees at its normal draws), and a training batch whose first label is
not class 0 moves ``head/b[0]`` by 1. This is the measure-zero trap the tie's own
docstring names ("except on a set of measure zero says nothing of the inputs training
feeds"), reached through a partial operation instead of a side condition.

Fixed (``render.domains``): each partial operation of the text must be inside its domain
for every input that meets the step's preconditions (bias corrections positive, AdamW's
second moments nonnegative), shown from the structure of its argument (sums of
exponentials, ``v + eps``, squares); a numeric check at a point, which
``u * (1 - [y == 0.01])`` passes as ``u`` does, is not enough. ``y[0,0] - 0.01`` is not
shown positive, so every result computed from its division is UNKNOWN; the honest steps
of every net still tie (tests/render).
"""
import pytest

from _tie_edits import edited_head_bias, run_step
from test_findings_outside_domain import _edit, _training_args, src  # noqa: F401  (the module's fixture)
from verigrad.render.tie import tie_directory

POLE_AT_DATA = ["%rtd = stablehlo.subtract %rtr, %rtk : tensor<f32>",
                "%rtinf = stablehlo.divide %rtone, %rtd : tensor<f32>",
                "%rtp = stablehlo.multiply %rtz, %rtinf : tensor<f32>",
                "%rtc0 = stablehlo.compare EQ, %rtp, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtc = stablehlo.not %rtc0 : tensor<i1>"]


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):  # noqa: F811
    return edited_head_bias(src, tmp_path_factory.mktemp("rt46f1") / "pole", _edit(POLE_AT_DATA))


def test_rt46_f1_xla_moves_the_bias_on_training_batches(src, edited):  # noqa: F811
    path, k = edited
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt46_f1_the_edited_step_is_not_tied(edited):
    path, k = edited
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "a division" in r.reason and "not shown positive" in r.reason, r.reason
