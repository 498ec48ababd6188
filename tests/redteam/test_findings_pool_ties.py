"""Red team RT-29 (fixed): the render tie accepted a side condition because the certified
math has a kink there, but a kink argument of the math can vanish
on a set of positive measure: the CNN's 2x2 max pool compares relu outputs,
``u = relu(h1) - relu(h2)``, and ``u = 0`` wherever both pre-activations are negative (an
open set). The tie's conditions ``s6[i, j, l, p] - s7[i, j, l, p] != 0 (off the kink)``
(``s6``, ``s7`` two strided slices of the first relu's output; likewise for the other
pairs and the pool's second level) are accepted as the math's own kinks, so the kernel
proves nothing on that region, and the text may do anything there.

Edit of a rendered CNN (default widths, sgd, batch 2), before the return, the new
``head/b`` replaced by ``%rt9`` (since RT15 the CNN pools before its relu; the edit now
compares the first relu's outputs in a window, which tie wherever they are all 0):

    t = all(%8 == %9) * all(%10 == %11) * all(%12 == %13)     (every pool pair of layer 1 tied)
    %rt9 = head/b' + t * [1, 0, ..., 0]

with the manifest's sha256 updated: ``ensure_tied`` accepts it (every result CHECKED,
XLA AGREES: no random draw has every relu output 0, and the exception-set probe moves one
entry onto one pair's tie only). Yet the edit fires on an open set of inputs: wherever
every first-layer pre-activation is negative (for instance ``conv1/b < -1`` with the
small weights and data of ``step_args``), ``head/b[0]`` gets 1 added at every step.

Fix: the tie rests on no side condition (RT-30 passed the null-set rule that first fixed
this: training's inputs are not drawn from a density); the StableHLO importer reads a
maximum as the jaxpr importer does, so the unedited nets need none and the edited step
is UNKNOWN, NotTied.
"""
import json
import re

import numpy as np
import pytest
from _tie_edits import edited_head_bias, run_step, step_args

from verigrad.render import check, render
from verigrad.render.tie import NotTied, ensure_tied

ONE_HOT = ", ".join(["1.000000e+00"] + ["0.000000e+00"] * 9)


def _all_pairs_tied(relu, shape):
    """The edit: ``t = 1`` where the first relu's outputs ``relu`` (of ``shape``, NHWC) tie in
    each of three pairs of a 2x2 window, everywhere (all 0 wherever the first layer's
    pre-activations are negative: an open set)."""
    b, h, w, c = (int(d) for d in shape.split("x"))
    half = f"{b}x{h // 2}x{w // 2}x{c}"

    def window(name, r, q):
        return (f"{name} = stablehlo.slice {relu} [0:{b}, {r}:{h}:2, {q}:{w}:2, 0:{c}] : "
                f"(tensor<{shape}xf32>) -> tensor<{half}xf32>")

    def body(y, ys, new_b):
        lines = ["%rtz = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                 "%rtone = stablehlo.constant dense<1.000000e+00> : tensor<f32>",
                 window("%rtw00", 0, 0), window("%rtw01", 0, 1), window("%rtw10", 1, 0), window("%rtw11", 1, 1)]
        for tag, a, b_ in (("A", "%rtw00", "%rtw01"), ("B", "%rtw10", "%rtw11"), ("C", "%rtw00", "%rtw10")):
            lines += [f"%rtc{tag} = stablehlo.compare EQ, {a}, {b_}, FLOAT : (tensor<{half}xf32>, "
                      f"tensor<{half}xf32>) -> tensor<{half}xi1>",
                      f"%rtT{tag} = stablehlo.constant dense<true> : tensor<i1>",
                      f"%rtd{tag} = stablehlo.reduce(%rtc{tag} init: %rtT{tag}) applies stablehlo.and across "
                      f"dimensions = [0, 1, 2, 3] : (tensor<{half}xi1>, tensor<i1>) -> tensor<i1>",
                      f"%rtt{tag} = stablehlo.select %rtd{tag}, %rtone, %rtz : tensor<i1>, tensor<f32>"]
        return lines + ["%rtAB = stablehlo.multiply %rttA, %rttB : tensor<f32>",
                        "%rtt = stablehlo.multiply %rtAB, %rttC : tensor<f32>",
                        "%rtb = stablehlo.broadcast_in_dim %rtt, dims = [] : (tensor<f32>) -> tensor<10xf32>",
                        f"%rtu = stablehlo.constant dense<[{ONE_HOT}]> : tensor<10xf32>",
                        "%rtv = stablehlo.multiply %rtb, %rtu : tensor<10xf32>",
                        f"%rt9 = stablehlo.add {new_b}, %rtv : tensor<10xf32>"]
    return body


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    src = render("cnn", tmp_path_factory.mktemp("rt29") / "cnn", batch=2, opt="sgd", tie=False)
    text = (src / "train_step.mlir").read_text()
    # the first relu (after the first max pool, since RT15): select(x > 0, x, 0)
    relu = re.search(r"(%\d+) = stablehlo\.select %\d+, %\d+, %\d+ : tensor<[0-9x]+xi1>, tensor<([0-9x]+)xf32>", text)
    assert relu is not None, "the first relu moved; update the edit"
    edited, k = edited_head_bias(src, tmp_path_factory.mktemp("rt29") / "edited", _all_pairs_tied(*relu.groups()))
    return src, edited, k


def test_rt29_the_edit_fires_on_an_open_set(dirs):
    src, edited, k = dirs
    ins = [p["name"] for p in json.loads((src / "manifest.json").read_text())["train_step"]["inputs"]]
    b1 = next(i for i, n in enumerate(ins) if n.endswith("conv1/b"))
    args = step_args(src)
    assert all(np.array_equal(g, w) for g, w in zip(run_step(edited, args), run_step(src, args)))
    for seed in range(2):
        args = step_args(src)
        args[b1] = (-1.0 - np.random.default_rng(seed).uniform(0, 1, args[b1].shape)).astype(np.float32)
        want, got = run_step(src, args), run_step(edited, args)
        assert got[k][0] - want[k][0] == pytest.approx(1.0, abs=1e-6)
        assert np.array_equal(got[k][1:], want[k][1:])


def test_rt29_not_tied(dirs):
    with pytest.raises(NotTied, match="the tie rests on none"):
        ensure_tied(dirs[1])


def test_rt29_the_unedited_cnn_rests_on_no_condition(dirs):
    """The unedited CNN ties CHECKED with no side condition: the pool's maxima are read
    alike by both importers, so no kink of relu outputs is needed."""
    tie = check(dirs[0])
    assert tie.ok
    assert all(r.status == "CHECKED" for rep in tie.modules.values() for r in rep.results)
