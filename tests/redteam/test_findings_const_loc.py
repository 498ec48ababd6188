"""Red team RT-13 (fixed: a large constant is named by its contents): two different large constants given one source location are read as one
kernel variable; the tie proves ``c2 - c1 = 0`` while XLA computes their difference, so a
rendered step that changes a parameter update in training is tied and trained.

``stablehlo_rules._constant`` reads a dense constant of more than ``MAX_LITERAL_ENTRIES``
(256) entries as a free variable named after its location, ``Var("const@LINE:COL")``, and
stores its value in ``interp.constants[var]``. The location comes from the text, which
may write it (``loc("rt":1:1)``). Kernel variables are hash-consed by name and shape, so
two constants of one shape at one location are *the same variable* (and the dict keeps
the last value): the kernel sees ``c - c``, which normalizes to 0, for two arrays that
differ. The XLA check runs the text itself, so the difference is gated by a trigger that
its random draws (standard normal targets) never meet but every training batch does:
all targets >= 0 (smoothed one-hot). Edit of a rendered MLP (sgd) ``train_step.mlir``,
inserted before the return, the new ``head/b`` replaced by ``%rt9``:

    %rt0 = stablehlo.constant dense<[1.0, 0.0 x 256]> : tensor<257xf32> loc("rt":1:1)
    %rt1 = stablehlo.constant dense<[2.0, 0.0 x 256]> : tensor<257xf32> loc("rt":1:1)
    %rt2 = stablehlo.subtract %rt1, %rt0               (XLA: [1, 0, ...]; the kernel: c - c = 0)
    %rt4 = stablehlo.slice %rt2 [0:10]
    %rt5 = reduce(y init: +inf) minimum                  (min over the batch's targets)
    %rt7 = select(compare GE %rt5, 0.0, 1.0, 0.0)        (1 in training, 0 at the tie's draws)
    %rt9 = head/b' + %rt4 * %rt7                         (head/b[0] += 1 every training step)

with the manifest's sha256 updated. ``verigrad render DIR`` reports CHECKED (kernel and
"XLA agrees"), ``ensure_tied`` accepts it, and ``verigrad train DIR --epochs 1`` on the
64-128-10 MLP at batch 8 runs it: loss 6.63 and test accuracy 0.325 (render_tie
CHECKED), against 2.006 and 0.78 for the rendered text. With a smoothed one-hot target
XLA's new ``head/b`` differs from the original text's by exactly 1.0 at index 0.

Fix direction: name a large constant by something the text cannot alias (a counter, or
its content: identical constants may share a variable), or refuse two constants that
would get one name.
"""
import shutil

import numpy as np
import pytest

from _tie_edits import edited_head_bias, rendered_mlp, repin, run_step, step_args
from verigrad.render.tie import NotTied, ensure_tied


def _body(y, ys, new_b):
    """The aliased-constant edit (see the docstring)."""
    a = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 256)
    b = ", ".join(["2.000000e+00"] + ["0.000000e+00"] * 256)
    return [f'%rt0 = stablehlo.constant dense<[{a}]> : tensor<257xf32> loc("rt":1:1)',
            f'%rt1 = stablehlo.constant dense<[{b}]> : tensor<257xf32> loc("rt":1:1)',
            "%rt2 = stablehlo.subtract %rt1, %rt0 : tensor<257xf32>",
            "%rt4 = stablehlo.slice %rt2 [0:10] : (tensor<257xf32>) -> tensor<10xf32>",
            "%rtinf = stablehlo.constant dense<0x7F800000> : tensor<f32>",
            f"%rt5 = stablehlo.reduce(%arg{y} init: %rtinf) applies stablehlo.minimum across dimensions = [0, 1] "
            f": (tensor<{ys}>, tensor<f32>) -> tensor<f32>",
            "%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
            "%rt6 = stablehlo.compare GE, %rt5, %rtz, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
            "%rt7 = stablehlo.select %rt6, %rtone, %rtz : tensor<i1>, tensor<f32>",
            "%rt7b = stablehlo.broadcast_in_dim %rt7, dims = [] : (tensor<f32>) -> tensor<10xf32>",
            "%rt8 = stablehlo.multiply %rt4, %rt7b : tensor<10xf32>",
            f"%rt9 = stablehlo.add {new_b}, %rt8 : tensor<10xf32>"]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    src = rendered_mlp(tmp_path_factory, "rt13")
    return src, *edited_head_bias(src, tmp_path_factory.mktemp("rt13") / "edited", _body)


def test_rt13_the_edit_changes_the_update_in_training(dirs):
    src, edited, k = dirs
    args = step_args(src)                  # smoothed one-hot targets, as training feeds them
    want, got = run_step(src, args), run_step(edited, args)
    assert np.array_equal(got[k][1:], want[k][1:]) and got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)


def test_rt13_not_tied(dirs):
    _, edited, _ = dirs
    with pytest.raises(NotTied):
        ensure_tied(edited)


def test_rt13_a_location_without_line_and_column_is_refused_not_a_crash(dirs, tmp_path):
    _, edited, _ = dirs
    dst = tmp_path / "noloc"
    shutil.copytree(edited, dst)
    path = dst / "train_step.mlir"
    path.write_text(path.read_text().replace('loc("rt":1:1)', 'loc("rt")'))
    repin(dst)
    with pytest.raises(NotTied):
        ensure_tied(dst)
