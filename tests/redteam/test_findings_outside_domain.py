"""Red team RT-42 (helper rt2-b, fixed: the tie refuses a text that leaves a partial
operation's domain at its random point): a division by zero in the text was read by the
kernel's total convention (``1/0 = 0``) and hidden from the XLA check by a ``select``, so a
rendered step whose edit changes a parameter update on most training batches was tied
(CHECKED, "XLA agrees") and trained.

The importer's model is exact "where no operation is applied outside its real domain"
(``stablehlo_rules``); nothing checked that the text's operations stay there. Edit of a
rendered MLP (sgd) ``train_step.mlir``, before the return, the new ``head/b`` replaced by
``%rt9``:

    %rtinf = divide(1, 0)                              (XLA: inf; read 0^-1 = 0)
    %rtc = compare GT, %rtinf, 0                       (XLA: 1; read [0 > 0] = 0)
    %rtt = select(%rtc, select(y[0,0] == 0.01, 1, 0), 0)
    %rt9 = head/b' + %rtt * [1, 0, ..., 0]

The kernel proves ``%rtt = 0`` with no side condition (the trigger's ``[d >= 0] - [d > 0]``
is multiplied by ``[0 > 0] = 0``); XLA's ``%rtt`` is the trigger, 1 whenever the first
example's label is not class 0 (its target is then exactly 0.01f), 0 at the XLA check's
normal draws. ``1 / (y - y)``, ``rsqrt(0)`` and ``power(0, -1)`` passed alike.

Fixed (``render.domains``): every divisor, base of a negative power, root and log argument
of the text must be shown inside its domain, a constant by its value, anything else by its
structure over the step's preconditions (a point check, this fix's first form, was bypassed
by a pole only training data meet: RT-46-f1, test_findings_data_pole.py); an operation not
shown so leaves every result computed from it UNKNOWN, naming it. A division by a nonzero
constant ties as before.
"""
import re

import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.render.tie import NotTied, ensure_tied, tie_directory

DOMAIN = re.compile(r"outside its real domain|not shown (positive|nonnegative) for every input")
ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _edit(gate):
    """``head/b[0] += select(gate, [y[0, 0] == 0.01], 0)``; ``gate`` defines ``%rtc``."""
    def body(y, ys, new_b):
        return [f"%rts = stablehlo.slice %arg{y} [0:1, 0:1] : (tensor<{ys}>) -> tensor<1x1xf32>",
                "%rtr = stablehlo.reshape %rts : (tensor<1x1xf32>) -> tensor<f32>",
                "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                "%rtk = stablehlo.constant dense<0.00999999977> : tensor<f32>",
                "%rtq = stablehlo.compare EQ, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                "%rtqq = stablehlo.select %rtq, %rtone, %rtz : tensor<i1>, tensor<f32>",
                *gate,
                "%rtt = stablehlo.select %rtc, %rtqq, %rtz : tensor<i1>, tensor<f32>",
                "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
                f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
                "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
                f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]
    return body


GT0 = "%rtc = stablehlo.compare GT, %rtinf, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"
GATES = {
    "one_over_zero": ["%rtinf = stablehlo.divide %rtone, %rtz : tensor<f32>", GT0],
    "one_over_y_minus_y": ["%rtd = stablehlo.subtract %rtr, %rtr : tensor<f32>",
                           "%rtinf = stablehlo.divide %rtone, %rtd : tensor<f32>", GT0],
    "rsqrt_zero": ["%rtinf = stablehlo.rsqrt %rtz : tensor<f32>", GT0],
    "power_zero_minus_one": ["%rtm = stablehlo.constant dense<-1.000000e+00> : tensor<f32>",
                             "%rtinf = stablehlo.power %rtz, %rtm : tensor<f32>", GT0],
}


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return rendered_mlp(tmp_path_factory, "rt42")


def _training_args(src):
    """Step inputs whose first example has label 3: its class-0 target is 0.01f."""
    args = step_args(src)
    k = next(k for k, a in enumerate(args) if a.shape == (8, 10))
    y = args[k].copy()
    y[0], y[0, 3] = 0.01, 0.91
    args[k] = y
    return args


@pytest.mark.parametrize("gate", sorted(GATES))
def test_rt42_the_edited_step_is_not_tied(src, tmp_path, gate):
    edited, k = edited_head_bias(src, tmp_path / gate, _edit(GATES[gate]))
    args = _training_args(src)
    want, got = run_step(src, args), run_step(edited, args)
    assert got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)      # what training would run
    results = tie_directory(edited).modules["train_step"].results
    # a constant outside the domain is named so; a varying argument is not shown inside it
    assert results[k].status == "UNKNOWN" and DOMAIN.search(results[k].reason), results[k]
    assert all(r.status == "CHECKED" for j, r in enumerate(results) if j != k)
    with pytest.raises(NotTied, match=DOMAIN.pattern):
        ensure_tied(edited)


def test_rt42_a_division_by_a_nonzero_constant_still_ties(src, tmp_path):
    """``[1/2 < 0]`` is 0 in XLA as in the reading: the edit is 0, and ties."""
    gate = ["%rttwo = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
            "%rth = stablehlo.divide %rtone, %rttwo : tensor<f32>",
            "%rtc = stablehlo.compare LT, %rth, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>"]
    edited, _ = edited_head_bias(src, tmp_path / "half", _edit(gate))
    assert tie_directory(edited).ok
