"""Red team RT-27 (fixed: the XLA check also runs the text on each side condition's
exception set): a rendered step edited to add 1 to ``head/b[0]`` whenever a target
equals 0.91 (``compare EQ`` against a constant) was tied (CHECKED, "XLA agrees") and
trained, though training's smoothed one-hot targets are 0.91 and 0.01 exactly.

The importer reads a float ``compare EQ`` as ``[d >= 0] - [d > 0]`` (``d = y[0,0] -
91/100``), exactly. The kernel's decision, in its strict pass, reads ``[d >= 0]`` as
``[d > 0]`` off the kink ``d != 0`` and records that side condition, so the edited
result ``b' + ([d >= 0] - [d > 0]) e0`` equals the math's ``b'`` under it: CHECKED,
the condition listed as a measure-zero exception (``_Induction.violated`` refuses only
an integer-valued one). The XLA check's draws are continuous and never meet ``d = 0``.
Training does every time the first example's label is 0: its data are discrete. Two
compares (``GE`` minus ``GT`` against 0.01, every batch whose first label is not 0) and
an equality of two targets (``y[0,0] == y[0,1]``) pass alike. Edit of a rendered MLP
(sgd), before the return, the new ``head/b`` replaced by ``%rt9``:

    %rtr = reshape(slice(y [0:1, 0:1]))
    %rtc = compare EQ %rtr, 0.91                (kernel: 0 off d != 0; XLA: 1 on training targets)
    %rt9 = head/b' + select(%rtc, 1, 0) * [1, 0, ..., 0]

with the manifest's sha256 updated: ``ensure_tied`` accepted it (render_tie CHECKED,
condition ``-91/100 + y[0, 0] != 0 (off the kink)``), and XLA's new ``head/b`` on
smoothed targets differs from the rendered text's by 1.0 at index 0.

Root cause: the tie's side conditions are where the kernel proved nothing, and training
feeds exactly such points (smoothed targets are 0.91). A numeric probe of each
condition's exception set (066725b) and then a rule accepting only the math's own kinks
with a null exception set (93767d2, 00fe78a) were each passed by a later edit (RT-29,
RT-30); the fix now: the tie rests on no side condition, so each edit below is refused
by the kernel's side of the tie, before XLA runs: UNKNOWN, "the tie rests on none".
The nonlinear edit ``y[0,0] * y[0,0] == 0.8281`` fires on training targets too (0.91
squared is 0.8281 in float32).
"""
import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, run_step, step_args
from verigrad.render.tie import NotTied, ensure_tied, tie_directory

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _trigger(y, ys, new_b, compare):
    return [f"%rts = stablehlo.slice %arg{y} [0:1, 0:1] : (tensor<{ys}>) -> tensor<1x1xf32>",
            "%rtr = stablehlo.reshape %rts : (tensor<1x1xf32>) -> tensor<f32>",
            "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
            *compare,
            "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
            f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
            "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
            f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]


def _eq(y, ys, new_b):
    """head/b[0] += 1 where y[0, 0] == 0.91."""
    return _trigger(y, ys, new_b, [
        "%rtk = stablehlo.constant dense<9.100000e-01> : tensor<f32>",
        "%rtc = stablehlo.compare EQ, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%rtt = stablehlo.select %rtc, %rtone, %rtz : tensor<i1>, tensor<f32>"])


def _ge_minus_gt(y, ys, new_b):
    """head/b[0] += [y[0, 0] >= 0.01] - [y[0, 0] > 0.01]."""
    return _trigger(y, ys, new_b, [
        "%rtk = stablehlo.constant dense<0.00999999977> : tensor<f32>",
        "%rtc1 = stablehlo.compare GE, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%rtc2 = stablehlo.compare GT, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%rt1 = stablehlo.select %rtc1, %rtone, %rtz : tensor<i1>, tensor<f32>",
        "%rt2 = stablehlo.select %rtc2, %rtone, %rtz : tensor<i1>, tensor<f32>",
        "%rtt = stablehlo.subtract %rt1, %rt2 : tensor<f32>"])


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return rendered_mlp(tmp_path_factory, "rt27")


@pytest.fixture(scope="module")
def eq_dir(src, tmp_path_factory):
    return edited_head_bias(src, tmp_path_factory.mktemp("rt27") / "eq", _eq)


def test_rt27_the_edit_changes_the_update_on_training_targets_only(src, eq_dir):
    edited, k = eq_dir
    args = step_args(src)                   # smoothed one-hot targets; the first example's label is 0
    y = next(a for a in args if a.shape == (8, 10))
    assert y[0, 0] == np.float32(0.91)
    want, got = run_step(src, args), run_step(edited, args)
    assert np.array_equal(got[k][1:], want[k][1:]) and got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)
    args = step_args(src, smoothed=False)   # normal targets: no change
    assert all(np.array_equal(g, w) for g, w in zip(run_step(edited, args), run_step(src, args)))


def test_rt27_not_tied(eq_dir):
    with pytest.raises(NotTied, match="side condition"):
        ensure_tied(eq_dir[0])


def test_rt27_two_compares_not_tied(src, tmp_path):
    edited, _ = edited_head_bias(src, tmp_path / "gegt", _ge_minus_gt)
    with pytest.raises(NotTied, match="side condition"):
        ensure_tied(edited)


def _two_targets(y, ys, new_b):
    """head/b[0] += 1 where y[0, 0] == y[0, 1]."""
    return _trigger(y, ys, new_b, [
        f"%rts1 = stablehlo.slice %arg{y} [0:1, 1:2] : (tensor<{ys}>) -> tensor<1x1xf32>",
        "%rtk = stablehlo.reshape %rts1 : (tensor<1x1xf32>) -> tensor<f32>",
        "%rtc = stablehlo.compare EQ, %rtr, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%rtt = stablehlo.select %rtc, %rtone, %rtz : tensor<i1>, tensor<f32>"])


def _square(y, ys, new_b):
    """head/b[0] += 1 where y[0, 0] * y[0, 0] == 0.8281: a nonlinear condition."""
    return _trigger(y, ys, new_b, [
        "%rtq = stablehlo.multiply %rtr, %rtr : tensor<f32>",
        "%rtk = stablehlo.constant dense<8.281000e-01> : tensor<f32>",
        "%rtc = stablehlo.compare EQ, %rtq, %rtk, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%rtt = stablehlo.select %rtc, %rtone, %rtz : tensor<i1>, tensor<f32>"])


def _refused_as_no_kink(directory, k):
    """The kernel's side of the tie refuses the edited ``head/b`` (UNKNOWN, before XLA),
    naming its side condition: the tie rests on none; the other results stay CHECKED."""
    tie = tie_directory(directory)
    results = tie.modules["train_step"].results
    assert results[k].status == "UNKNOWN", results[k]
    assert "the tie rests on none" in results[k].reason and "y[0, 0]" in results[k].reason
    assert all(r.status == "CHECKED" for j, r in enumerate(results) if j != k)


@pytest.mark.parametrize("edit", [_eq, _ge_minus_gt, _two_targets, _square],
                         ids=["eq", "ge_minus_gt", "two_targets", "square"])
def test_rt27_condition_is_no_kink_of_the_math(src, tmp_path, edit):
    edited, k = edited_head_bias(src, tmp_path / edit.__name__.strip("_"), edit)
    _refused_as_no_kink(edited, k)
    with pytest.raises(NotTied, match="side condition"):
        ensure_tied(edited)


def test_rt27_square_changes_the_update_on_training_targets(src, tmp_path):
    edited, k = edited_head_bias(src, tmp_path / "square", _square)
    args = step_args(src)
    want, got = run_step(src, args), run_step(edited, args)
    assert got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)
