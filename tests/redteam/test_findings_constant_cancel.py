"""Red team RT-47-h5 (helper rt2-h; fixed): the render tie's domain check decides a
constant argument of a partial operation by its value in float64
(``render.domains._constant_inside``), but the importer's reading of the constant is
exact and XLA's is float32. ``0.1 + 0.2 - 0.3`` (three f32 literals, read 1/10, 2/10,
3/10) is exactly 0 in the reading and 0 in XLA's float32, and 5.55e-17 in float64: the
divisor was "nonzero", while the reading took ``1/0 = 0`` and XLA ``inf``.

Edit of a rendered MLP (sgd) ``train_step.mlir`` (the harness of
``test_findings_outside_domain``):

    %rtinf = divide(1, 0.1 + 0.2 - 0.3)               (read 0^-1 = 0; XLA +inf)
    %rtc = compare GT, %rtinf, 0                       (read 0; XLA 1)
    %rt9 = head/b' + select(%rtc, [y[0,0] == 0.01], 0) * [1, 0, ..., 0]

Every result was CHECKED (the kernel proves the gate 0; the float64 random point and
XLA's draws have ``y[0, 0] != 0.01``), and on a training batch whose first label is not
class 0 XLA moves ``head/b[0]`` by 1. Fixed: a constant is inside the domain only where
its float64 value is away from 0 by ``MARGIN`` (1e-6) of the largest of its literals and
of the terms of its sums, so neither the exact nor the float32 value can be 0 there.

The same float64 decision let a constant ``select`` predicate (RT-47-h3's fix) through:
``[1 / (0.1 + 0.2 - 0.3) > 1e20]`` is 0 in float64 (1.8e16) and 1 in XLA (``inf``), so
``select(p, +inf, 1) > 2`` gated the same edit. Both checks now share
``stablehlo_rules.constant_inside``.
"""
from fractions import Fraction

import pytest

from _tie_edits import edited_head_bias, run_step
from test_findings_outside_domain import _edit, _training_args, src  # noqa: F401  (the module's fixture)
from verigrad.certify.vectorized import Vectorized
from verigrad.kernel import terms as T
from verigrad.render.domains import _constant_inside
from verigrad.render.tie import tie_directory


def _gate(c):
    """``%rtc = [1 / (0.1 + 0.2 - c) > 0]``."""
    return ["%rta = stablehlo.constant dense<1.000000e-01> : tensor<f32>",
            "%rtb2 = stablehlo.constant dense<2.000000e-01> : tensor<f32>",
            f"%rtc3 = stablehlo.constant dense<{c}> : tensor<f32>",
            "%rtab = stablehlo.add %rta, %rtb2 : tensor<f32>",
            "%rtw = stablehlo.subtract %rtab, %rtc3 : tensor<f32>",
            "%rtinf = stablehlo.divide %rtone, %rtw : tensor<f32>",
            "%rtc = stablehlo.compare LT, %rtinf, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"
            if c != "3.000000e-01" else
            "%rtc = stablehlo.compare GT, %rtinf, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"]


def test_rt47_h5_a_cancelling_constant_is_not_shown_nonzero():
    ev, n = Vectorized({}, {}), lambda p, q: T.Num(Fraction(p, q))
    assert not _constant_inside(ev, T.Add((n(1, 10), n(2, 10), n(-3, 10))), Fraction(-1))
    assert not _constant_inside(ev, T.Add((n(1, 10), n(2, 10), n(-3, 10))), Fraction(1, 2))
    assert _constant_inside(ev, T.Add((n(1, 10), n(2, 10), n(-1, 10))), Fraction(-1))      # 0.2
    assert _constant_inside(ev, T.Num(0), Fraction(1, 2))                                   # sqrt(0)
    assert not _constant_inside(ev, T.Num(0), Fraction(-1))


@pytest.fixture(scope="module")
def edited(src, tmp_path_factory):  # noqa: F811
    return edited_head_bias(src, tmp_path_factory.mktemp("rt47h5") / "cancel", _edit(_gate("3.000000e-01")))


def test_rt47_h5_xla_moves_the_bias_on_training_batches(src, edited):  # noqa: F811
    path, k = edited
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt47_h5_the_edited_step_is_not_tied(edited):
    path, k = edited
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "a division" in r.reason and "constant outside" in r.reason, r.reason


def test_rt47_h5_a_constant_away_from_zero_still_ties(src, tmp_path):  # noqa: F811
    """``[1 / (0.1 + 0.2 - 0.1) < 0]`` is 0 in XLA as in the reading: the edit ties."""
    edited, _ = edited_head_bias(src, tmp_path / "away", _edit(_gate("1.000000e-01")))
    assert tie_directory(edited).ok


PREDICATE = ["%rta = stablehlo.constant dense<1.000000e-01> : tensor<f32>",
             "%rtb2 = stablehlo.constant dense<2.000000e-01> : tensor<f32>",
             "%rtc3 = stablehlo.constant dense<3.000000e-01> : tensor<f32>",
             "%rtab = stablehlo.add %rta, %rtb2 : tensor<f32>",
             "%rtw = stablehlo.subtract %rtab, %rtc3 : tensor<f32>",
             "%rtinf0 = stablehlo.divide %rtone, %rtw : tensor<f32>",
             "%rtbig = stablehlo.constant dense<1.000000e+20> : tensor<f32>",
             "%rtp = stablehlo.compare GT, %rtinf0, %rtbig, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
             "%rtI = stablehlo.constant dense<0x7F800000> : tensor<f32>",
             "%rts2 = stablehlo.select %rtp, %rtI, %rtone : tensor<i1>, tensor<f32>",
             "%rttwo = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
             "%rtc = stablehlo.compare GT, %rts2, %rttwo, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"]


def test_rt47_h5_a_cancelling_constant_predicate_is_refused(src, tmp_path):  # noqa: F811
    path, k = edited_head_bias(src, tmp_path / "pred", _edit(PREDICATE))
    args = _training_args(src)
    assert run_step(path, args)[k][0] - run_step(src, args)[k][0] == pytest.approx(1.0, abs=1e-6)
    r = tie_directory(path).modules["train_step"].results[k]
    assert r.status == "UNKNOWN" and "a predicate that applies a partial operation" in r.reason, r.reason
